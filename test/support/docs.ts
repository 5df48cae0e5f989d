// The repository's documentation as the docs tests read it: README.md, CHANGELOG.md and every page
// under docs/, with GitHub's heading anchors.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** Every markdown page, as paths from the repository root (`docs/guides/testing-your-app.md`). */
export function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(`${root}${dir}`, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((entry) => (entry.isDirectory() ? walk(`${dir}${entry.name}/`) : entry.name.endsWith('.md') ? [`${dir}${entry.name}`] : []));
  return ['README.md', ...(existsSync(`${root}CHANGELOG.md`) ? ['CHANGELOG.md'] : []), ...walk('docs/')];
}

const texts = new Map<string, string>();
/** A page's text, read once. */
export function readDoc(file: string): string {
  let text = texts.get(file);
  if (text === undefined) {
    text = readFileSync(`${root}${file}`, 'utf8');
    texts.set(file, text);
  }
  return text;
}

/** The text outside fenced code blocks. */
export function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```$/gm, '');
}

/**
 * The anchors GitHub gives a page's headings: the text in lower case, without punctuation (code
 * spans keep their text), spaces as hyphens; a repeated heading gets -1, -2, ….
 */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/**
 * The docs' examples that run in a freshly written starter (test/e2e/starter.test.ts): a ```js
 * block after `<!-- runs in the starter: test/x.test.js -->`, written to that path in the starter
 * and run there with `node --test`.
 */
export function starterExamples(): Array<{ doc: string; line: number; path: string; code: string }> {
  const examples: Array<{ doc: string; line: number; path: string; code: string }> = [];
  for (const doc of markdownFiles()) {
    const text = readDoc(doc);
    for (const match of text.matchAll(/^<!-- runs in the starter: (\S+) -->\n```js\n([\s\S]*?)^```$/gm)) {
      examples.push({ doc, line: text.slice(0, match.index).split('\n').length + 1, path: match[1]!, code: match[2]! });
    }
  }
  return examples;
}

/** The code of the fenced block of `doc` whose first line is `firstLine` (`// server.js`). */
export function exampleStartingWith(doc: string, firstLine: string): string {
  const block = [...readDoc(doc).matchAll(/^```\w*\n([\s\S]*?)^```$/gm)].map((match) => match[1]!).find((code) => code.startsWith(`${firstLine}\n`));
  if (block === undefined) throw new Error(`${doc} has no code block starting with ${firstLine}`);
  return block;
}
