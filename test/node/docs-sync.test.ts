// The docs' reference lists say what the code has: every option of an options interface (and
// only those) in its table or section, every error code in docs/errors.md, the flags `mpkit --help`
// lists, what each public entry exports (from the built declarations: `npm run build` first), the
// shared custom properties with their defaults, and the generated element pages (rendered again
// from custom-elements.json). Read with regexes from the sources (TypeScript 7 has no compiler API
// for JS), so a new, renamed or removed option fails here until its page follows.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { elementsOf, pagePath, readManifest, renderElementPage } from '../../scripts/element-docs.js';
import { markdownFiles, prose, readDoc } from '../support/docs.js';
import { exportedNames } from '../support/public-exports.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const page = readDoc;

/** `file` from the line that starts with `start` up to the next line that starts with `end` (or to its end). */
function section(file: string, start: string, end?: string): string {
  const text = page(file);
  const from = text.startsWith(start) ? 0 : text.indexOf(`\n${start}`);
  assert.ok(from >= 0, `${file} has no line starting ${start}`);
  if (end === undefined) return text.slice(from);
  const to = text.indexOf(`\n${end}`, from + 1);
  assert.ok(to >= 0, `${file} has no line starting ${end} after ${start}`);
  return text.slice(from, to);
}

/** The top-level members of `export interface name` in a source file (two-space indented). */
function members(file: string, name: string): string[] {
  const source = readFileSync(`${root}${file}`, 'utf8');
  const body = new RegExp(`^export interface ${name}\\b[^{]*\\{\\n([\\s\\S]*?)^\\}`, 'm').exec(source)?.[1];
  assert.ok(body, `${file} has no interface ${name}`);
  return [...body.matchAll(/^ {2}(?:readonly )?(\w+)\??[:(]/gm)].map((match) => match[1]!);
}

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

/**
 * Whether `text` names `name` as code: in a code span or a code block, not only in a sentence
 * (`now`, `secret` or `origin` are words a paragraph may hold about something else).
 */
function namesInCode(text: string, name: string): boolean {
  const code = [...text.matchAll(/```[\s\S]*?```|`[^`\n]+`/g)].map((match) => match[0]).join('\n');
  return new RegExp(`\\b${name}\\b`).test(code);
}

describe('docs: options', () => {
  // Each interface whose page has a table of its options: the table names each option once.
  const TABLES = [
    { name: 'KitOptions', file: 'src/runtime/options.ts', page: 'docs/runtime.md', heading: '## `createKit(options): Promise<Kit>`', next: '## The kit' },
    { name: 'AppBackendOptions', file: 'src/server/backend.ts', page: 'docs/server.md', heading: '## `createAppBackend(options)` options', next: '## Adapters and headers' },
    { name: 'SimulatorOptions', file: 'src/simulator/options.ts', page: 'docs/simulator.md', heading: '## From code: `startSimulator(options)`', next: '## Users and plans' },
  ];
  for (const { name, file, page: doc, heading, next } of TABLES) {
    it(`lists every member of ${name}, and nothing else, in its table in ${doc}`, () => {
      const table = section(doc, heading, next).split('\n\n').find((block) => block.trimStart().startsWith('| option'));
      assert.ok(table, `${doc} has no table under ${heading}`);
      const listed = table.split('\n').slice(2).flatMap((row) => [...row.split('|')[1]!.matchAll(/`(\w+)/g)].map((match) => match[1]!));
      assert.deepEqual(sorted(listed), sorted(members(file, name)));
    });
  }

  // Options described in a section's text and examples rather than a table: each is named there.
  const SECTIONS = [
    { name: 'MarketplaceClientOptions', file: 'src/server/client.ts', page: 'docs/server.md', heading: '## Marketplace client', next: '## Webhooks' },
    { name: 'VerifyWebhookOptions', file: 'src/server/webhooks.ts', page: 'docs/server.md', heading: '## Webhooks', next: '## Replay store' },
    { name: 'VerifyContextTokenOptions', file: 'src/server/context-token.ts', page: 'docs/server.md', heading: '## Context tokens', next: '## Session tokens' },
    { name: 'SignSessionOptions', file: 'src/server/session.ts', page: 'docs/server.md', heading: '## Session tokens' },
    { name: 'VerifySessionOptions', file: 'src/server/session.ts', page: 'docs/server.md', heading: '## Session tokens' },
    { name: 'SignContextTokenOptions', file: 'src/server/signers.ts', page: 'docs/server.md', heading: '## Session tokens' },
    { name: 'NodeAdapterOptions', file: 'src/server/adapters/handler.ts', page: 'docs/server.md', heading: '## Adapters and headers', next: '## Marketplace client' },
    { name: 'ExpressAdapterOptions', file: 'src/server/adapters/express.ts', page: 'docs/server.md', heading: '## Adapters and headers', next: '## Marketplace client' },
    { name: 'EarlyLaunchOptions', file: 'src/shared/early-launch.ts', page: 'docs/runtime.md', heading: '## Start sooner', next: '## On your own site' },
    { name: 'ConnectAppOptions', file: 'src/host/index.ts', page: 'docs/host.md', heading: '# The dashboard side', next: '## The bridge protocol' },
    { name: 'HostHandlers', file: 'src/host/index.ts', page: 'docs/host.md', heading: '# The dashboard side', next: '## The bridge protocol' },
  ];
  for (const { name, file, page: doc, heading, next } of SECTIONS) {
    it(`names every member of ${name} under "${heading}" in ${doc}`, () => {
      const text = section(doc, heading, next);
      assert.deepEqual(members(file, name).filter((member) => !namesInCode(text, member)), []);
    });
  }
});

describe('docs: the README is the way in', () => {
  it('links every page under docs/ from README.md', () => {
    const linked = new Set([...prose(page('README.md')).matchAll(/\]\((docs\/[^)#\s]+\.md)(?:#[^)\s]*)?\)/g)].map((match) => match[1]!));
    const pages = markdownFiles().filter((file) => file.startsWith('docs/'));
    assert.ok(pages.length >= 20, `found only ${pages.length} pages under docs/`);
    assert.deepEqual(pages.filter((file) => !linked.has(file)), [], 'pages the README does not link');
  });

  it('lists every entry point of package.json in its "What is in the package" table', () => {
    const { exports } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, unknown> };
    // The named entries; the files a bundler or a script tag reaches by path are listed by their pages.
    const entries = Object.keys(exports)
      .filter((key) => !key.startsWith('./dist/') && !/\.json$/.test(key))
      .map((key) => (key === '.' ? 'marketplace-app-kit' : `marketplace-app-kit/${key.slice(2)}`));
    assert.ok(entries.length >= 8, `found only ${entries.length} entries in package.json`);
    const table = section('README.md', '## What is in the package', '**Security');
    const listed = new Set([...table.matchAll(/^\| ([^|]+)\|/gm)].flatMap((row) => [...row[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)));
    assert.deepEqual(entries.filter((entry) => !listed.has(entry)), [], 'entries the table lacks');
  });
});

describe('docs: the starter', () => {
  it('quotes the starter\'s files as mpkit init writes them', () => {
    // A block after `<!-- the starter's file: PATH -->` is templates/starter/PATH, whole.
    const quoted = markdownFiles().flatMap((file) => [...page(file).matchAll(/^<!-- the starter's file: (\S+) -->\n```\w*\n([\s\S]*?)^```$/gm)].map((match) => ({ file, path: match[1]!, code: match[2]! })));
    assert.ok(quoted.length >= 2, `only ${quoted.length} quoted starter files`);
    for (const { file, path, code } of quoted) assert.equal(code, readFileSync(`${root}templates/starter/${path}`, 'utf8'), `${file} quotes an old templates/starter/${path}`);
  });
});

describe('docs: error codes', () => {
  const source = readFileSync(`${root}src/shared/errors.ts`, 'utf8');
  const union = /^export type ErrorCode =([\s\S]*?);$/m.exec(source)?.[1] ?? '';
  const codes = [...union.matchAll(/'(ERR_\w+)'/g)].map((match) => match[1]!);

  it('docs/errors.md has one row per ErrorCode, and no row for a code that is not one', () => {
    assert.ok(codes.length > 40, `found only ${codes.length} codes in src/shared/errors.ts`);
    // Rows start with the code: | `ERR_X` | meaning | usual cause | fix |
    const rows = [...page('docs/errors.md').matchAll(/^\| `(ERR_\w+)` \|(.*)\|$/gm)];
    const listed = rows.map((row) => row[1]!);
    assert.deepEqual(listed.filter((code, i) => listed.indexOf(code) !== i), [], 'codes listed twice');
    assert.deepEqual(sorted(listed), sorted(codes));
    // Each row fills its three columns: meaning, usual cause, fix.
    const thin = rows.filter((row) => row[2]!.split(' | ').map((column) => column.trim()).filter(Boolean).length < 3).map((row) => row[1]);
    assert.deepEqual(thin, [], 'rows without meaning, cause and fix');
  });

  it('no page names a code that ErrorCode does not have', () => {
    for (const file of markdownFiles()) {
      const named = new Set([...page(file).matchAll(/\bERR_[A-Z0-9_]+/g)].map((match) => match[0]));
      // `ERR_SESSION_*` stands for several codes: a prefix of one counts.
      const unknown = [...named].filter((code) => (code.endsWith('_') ? !codes.some((known) => known.startsWith(code)) : !codes.includes(code)));
      assert.deepEqual(unknown, [], `codes ${file} names that ErrorCode does not have`);
    }
  });
});

describe('docs: mpkit flags', () => {
  it('lists in its Flags table the flags of mpkit --help, and no other', () => {
    // From the sources (tsx), as `npm run simulate` runs it: no build needed.
    const help = execFileSync(process.execPath, ['--import', 'tsx', `${root}src/cli.ts`, '--help'], { cwd: root, encoding: 'utf8' });
    // Option lines start with their flags ("  -h, --help   Show…"); continuation lines do not.
    const options = help.slice(help.indexOf('Options:'), help.indexOf('Commands:'));
    const flags = options.split('\n').flatMap((line) => /^ {2}(-.*?)(?: {2,}|$)/.exec(line)?.[1]!.match(/--?[a-z][a-z-]*/g) ?? []);
    assert.ok(flags.length >= 10, `found only ${flags.length} flags in mpkit --help`);
    const table = section('docs/simulator.md', '## Flags', 'A bad flag');
    const listed = table.split('\n').filter((row) => row.startsWith('| `')).flatMap((row) => row.split('|')[1]!.match(/--?[a-z][a-z-]*/g) ?? []);
    assert.deepEqual(sorted(listed), sorted(flags));
  });
});

describe('docs: public exports', () => {
  // Where the docs list each entry's exports. The server's are spread over its whole page (each
  // function where it is explained, the rest in "Also exported" and "Types").
  const LISTS = [
    { entry: 'runtime', page: 'docs/runtime.md', start: '## Public exports' },
    { entry: 'host', page: 'docs/host.md', start: '## Public exports' },
    { entry: 'elements', page: 'docs/elements.md', start: '## Other exports of `marketplace-app-kit/elements`', end: 'The package has named exports only' },
    { entry: 'simulator', page: 'docs/simulator.md', start: '## From code: `startSimulator(options)`', end: '| option |' },
    { entry: 'server', page: 'docs/server.md', start: '# The backend module' },
    // Its Node face (index) and its browser face, together.
    { entry: 'testing', page: 'docs/testing.md', start: '## Public exports', faces: ['index', 'browser'] },
  ];
  for (const { entry, page: doc, start, end, faces = ['index'] } of LISTS) {
    it(`names every export of marketplace-app-kit${entry === 'runtime' ? '' : `/${entry}`} in ${doc}, and lists nothing it lacks`, () => {
      const exported = [...new Set(faces.flatMap((face) => exportedNames(`${root}dist/${entry}/${face}.d.ts`)))];
      assert.ok(exported.length > 5, `found only ${exported.length} exports in dist/${entry}/index.d.ts`);
      const text = section(doc, start, end);
      assert.deepEqual(exported.filter((name) => !namesInCode(text, name)), [], 'exports the page does not name');
      // The name each item of a list starts with ("- `createKit(options)`: …", "- type `Kit`: …").
      const listed = [...text.matchAll(/^- (?:types? )?`(\w+)/gm)].map((match) => match[1]!);
      assert.deepEqual(listed.filter((name) => !exported.includes(name)), [], 'listed names the entry does not export');
    });
  }
});

describe('docs: elements', () => {
  it('gives the defaults of the shared custom properties as the styles have them', () => {
    const styles = readFileSync(`${root}src/elements/base/base.styles.ts`, 'utf8');
    const code = [...styles.matchAll(/var\((--mp-[\w-]+), (?:light-dark\(([^,]+), ([^)]+)\)|([^)]+))\)/g)].map(
      ([, name, light, dark, both]) => `${name} ${light ?? both} ${dark ?? ''}`.trim(),
    );
    assert.ok(code.length >= 10, `found only ${code.length} custom properties in base.styles.ts`);
    const table = section('docs/elements.md', '| custom property | light default | dark default |', 'Each element');
    const documented = [...table.matchAll(/^\| `(--mp-[\w-]+)` \| `([^`]+)` \| (?:`([^`]+)` )?\|$/gm)].map(
      ([, name, light, dark]) => `${name} ${light} ${dark ?? ''}`.trim(),
    );
    assert.deepEqual(documented, code);
  });

  // custom-elements.json is what `npm run build` (its `cem` step) wrote from the doc comments.
  const elements = elementsOf(readManifest());
  it('has a page for each element of custom-elements.json', () => {
    assert.ok(elements.length >= 6, `found only ${elements.length} elements in custom-elements.json`);
    assert.deepEqual(
      elements.filter(({ element }) => !existsSync(pagePath(element.tagName))).map(({ element }) => element.tagName),
      [],
      'pages missing: run npm run docs:elements',
    );
  });
  for (const { module, element } of elements) {
    it(`docs/elements/${element.tagName}.md is what npm run docs:elements writes from custom-elements.json`, () => {
      const file = pagePath(element.tagName);
      const written = readFileSync(file, 'utf8');
      assert.equal(written, renderElementPage(written, module, element), `docs/elements/${element.tagName}.md is out of date: run npm run docs:elements`);
    });
  }
});
