// Code comments cite the docs pages that hold a decision (`docs/decisions.md#webhooks`), never a
// document outside the repository: each cited page and heading must exist, so a renamed heading
// or a moved page fails here until the comments follow.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { anchorsOf, prose, readDoc, root } from '../support/docs.js';

/** A page's headings as written, in lower case. */
const headingsOf = (text: string) => new Set([...prose(text).matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) => heading!.trim().toLowerCase()));

/** The source files of the repository: src, test, demo and scripts. */
function sourceFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(`${root}${dir}`, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(`${dir}${entry.name}/`) : /\.(ts|js|mjs|html|json)$/.test(entry.name) ? [`${dir}${entry.name}`] : [],
    );
  return ['src/', 'test/', 'demo/', 'scripts/'].flatMap(walk);
}

describe('doc citations in the code', () => {
  const files = sourceFiles().map((file) => ({ file, text: readFileSync(`${root}${file}`, 'utf8') }));

  it('cite pages and headings that exist', () => {
    const broken: string[] = [];
    let count = 0;
    for (const { file, text } of files) {
      // A page with an anchor (`#webhooks`), or with a heading in its words and quotes, after a comma
      // or not (a comment may wrap it).
      for (const [, page, anchor, quoted] of text.matchAll(/\b(docs\/[\w/-]+\.md)(?:#([\w-]+)|,? "([^"]{1,80})")?/g)) {
        count++;
        if (!existsSync(`${root}${page}`)) broken.push(`${file}: ${page} does not exist`);
        else if (anchor && !anchorsOf(readDoc(page!)).has(anchor)) broken.push(`${file}: ${page} has no heading #${anchor}`);
        else if (quoted) {
          const heading = quoted.replace(/\s*(?:\*|\/\/)?\s*\n\s*(?:\*|\/\/)?\s*/g, ' ').replace(/^#+ /, '').trim().toLowerCase();
          if (!headingsOf(readDoc(page!)).has(heading)) broken.push(`${file}: ${page} has no heading "${heading}"`);
        }
      }
    }
    assert.ok(count >= 50, `only ${count} citations found`);
    assert.deepEqual(broken, []);
  });

  it('cite no document outside the repository', () => {
    // The design notes and the marketplace's text the kit was first written from are not in the
    // repository: docs/decisions.md and docs/marketplace.md hold what they said.
    // (Written so that this file does not match itself.)
    const outside = /DESIGN [A-H]\b|DESIGN ["“]|seed \u00a7|\bthe see[d]\b/i;
    const found = files.flatMap(({ file, text }) => text.split('\n').flatMap((line, i) => (outside.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])));
    assert.deepEqual(found, []);
  });
});
