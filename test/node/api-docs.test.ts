// Every name a public entry exports has a doc comment, so an editor's hover says what it is.
// Read from the built declarations (tsc keeps the comments), as an app's editor sees them; needs
// `npm run build` first, as `npm test` does.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DECLARATION, ENTRIES, exportedNames, target } from '../support/public-exports.js';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));

const sources = new Map<string, string[]>();
function lines(file: string): string[] {
  let text = sources.get(file);
  if (!text) {
    assert.ok(existsSync(file), `${relative(dist, file)} is missing (run npm run build)`);
    text = readFileSync(file, 'utf8').split('\n');
    sources.set(file, text);
  }
  return text;
}

/** Whether the lines above `index` (blank lines aside) end a comment that opens with `/**`. */
function hasDocComment(text: string[], index: number): boolean {
  let above = index - 1;
  while (above >= 0 && text[above]!.trim() === '') above--;
  if (above < 0 || !text[above]!.trim().endsWith('*/')) return false;
  while (above > 0 && !text[above]!.includes('/*')) above--;
  return text[above]!.trimStart().startsWith('/**');
}

/** Whether `name`'s declaration, followed through re-exports from `file`, has a doc comment. */
function documented(file: string, name: string, seen = new Set<string>()): boolean | undefined {
  const key = `${file}#${name}`;
  if (seen.has(key)) return undefined;
  seen.add(key);
  const text = lines(file);
  let found: boolean | undefined;
  text.forEach((line, index) => {
    if (DECLARATION.exec(line)?.[1] !== name) return;
    // A name may be declared twice (a schema and its type); one doc comment is enough.
    found = found || hasDocComment(text, index);
  });
  if (found !== undefined) return found;
  // `export { a, b as c } from './x.js'`, `import { a } from …` then `export { a }`, `export * from …`.
  const joined = text.join('\n');
  for (const match of joined.matchAll(/(?:export|import)(?: type)? \{([^}]*)\} from '([^']+)'/g)) {
    for (const part of match[1]!.split(',')) {
      const [original, alias] = part.replace(/\btype\b/, '').trim().split(/\s+as\s+/);
      if ((alias ?? original) === name && original) return documented(target(file, match[2]!), original, seen);
    }
  }
  for (const match of joined.matchAll(/export \* from '([^']+)'/g)) {
    const result = documented(target(file, match[1]!), name, seen);
    if (result !== undefined) return result;
  }
  return undefined;
}

describe('public API docs', () => {
  for (const entry of ENTRIES) {
    it(`documents every export of dist/${entry}`, () => {
      const file = resolve(dist, entry);
      const names = exportedNames(file, (path) => lines(path).join('\n'));
      assert.ok(names.length > 0, `found no exports in dist/${entry}`);
      const missing = names.filter((name) => documented(file, name) === false);
      const unresolved = names.filter((name) => documented(file, name) === undefined);
      assert.deepEqual(unresolved, [], `exports whose declaration the test could not find in dist/${entry}`);
      assert.deepEqual(missing, [], `exports of dist/${entry} without a doc comment`);
    });
  }
});
