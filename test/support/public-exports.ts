// The names the package's public entries export, read from the built declarations (`npm run
// build` first) with regexes: TypeScript 7 has no compiler API for JS. Used by the doc-comment
// test (test/node/api-docs.test.ts) and the docs' export lists (test/node/docs-sync.test.ts).
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** The public entries, under dist/. */
export const ENTRIES = ['runtime/index.d.ts', 'elements/index.d.ts', 'server/index.d.ts', 'host/index.d.ts', 'simulator/index.d.ts', 'testing/index.d.ts', 'testing/browser.d.ts'];

/** A declaration line of a `.d.ts`, with its name. */
export const DECLARATION = /^export (?:declare )?(?:abstract )?(?:function|class|interface|type|const|enum) (\w+)/;

/** The `.d.ts` file an import specifier of `from` names. */
export const target = (from: string, specifier: string) => resolve(dirname(from), specifier.replace(/\.js$/, '.d.ts'));

/** The names a `.d.ts` file exports: its declarations, `export { … }` and `export * from …`. */
export function exportedNames(file: string, read: (file: string) => string = (path) => readFileSync(path, 'utf8')): string[] {
  const text = read(file);
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const name = DECLARATION.exec(line)?.[1];
    if (name) names.add(name);
  }
  for (const match of text.matchAll(/export(?: type)? \{([^}]*)\}/g)) {
    for (const part of match[1]!.split(',')) {
      const name = part.replace(/\btype\b/, '').trim().split(/\s+as\s+/).pop();
      if (name) names.add(name);
    }
  }
  for (const match of text.matchAll(/export \* from '([^']+)'/g)) {
    for (const name of exportedNames(target(file, match[1]!), read)) names.add(name);
  }
  return [...names];
}
