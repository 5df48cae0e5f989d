// The README's reference lists say what the code has: every option of an options interface (and
// only those) in its README table or section, every error code, the flags `mpkit --help` lists and
// what each public entry exports (from the built declarations: `npm run build` first), and each
// element's attributes, parts, events and custom properties with their defaults. Read with
// regexes from the sources (TypeScript 7 has no compiler API for JS), so a new, renamed or removed
// option fails here until the README follows.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ELEMENT_API } from '../support/element-api.js';
import { exportedNames } from '../support/public-exports.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');

/** The README from the line that starts with `start` up to the next line that starts with `end`. */
function section(start: string, end: string): string {
  const from = readme.indexOf(`\n${start}`);
  assert.ok(from >= 0, `README has no line starting ${start}`);
  const to = readme.indexOf(`\n${end}`, from + 1);
  assert.ok(to >= 0, `README has no line starting ${end} after ${start}`);
  return readme.slice(from, to);
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

describe('README options', () => {
  // Each interface whose README has a table of its options: the table names each option once.
  const TABLES = [
    { name: 'KitOptions', file: 'src/runtime/options.ts', heading: '### `createKit(options): Promise<Kit>`', next: '### The kit' },
    { name: 'AppBackendOptions', file: 'src/server/backend.ts', heading: '### `createAppBackend(options)` options', next: '### Adapters and headers' },
    { name: 'SimulatorOptions', file: 'src/simulator/options.ts', heading: '### From code: `startSimulator(options)`', next: '### Users and plans' },
  ];
  for (const { name, file, heading, next } of TABLES) {
    it(`lists every member of ${name}, and nothing else, in its table`, () => {
      const table = section(heading, next).split('\n\n').find((block) => block.trimStart().startsWith('|'));
      assert.ok(table, `README has no table under ${heading}`);
      const listed = table.split('\n').slice(2).flatMap((row) => [...row.split('|')[1]!.matchAll(/`(\w+)/g)].map((match) => match[1]!));
      assert.deepEqual(sorted(listed), sorted(members(file, name)));
    });
  }

  // Options described in a section's text and examples rather than a table: each is named there.
  const SECTIONS = [
    { name: 'MarketplaceClientOptions', file: 'src/server/client.ts', heading: '### Marketplace client', next: '### Webhooks' },
    { name: 'VerifyWebhookOptions', file: 'src/server/webhooks.ts', heading: '### Webhooks', next: '### Replay store' },
    { name: 'VerifyContextTokenOptions', file: 'src/server/context-token.ts', heading: '### Context tokens', next: '### Session tokens' },
    { name: 'SignSessionOptions', file: 'src/server/session.ts', heading: '### Session tokens', next: '### Webhook verification speed' },
    { name: 'VerifySessionOptions', file: 'src/server/session.ts', heading: '### Session tokens', next: '### Webhook verification speed' },
    { name: 'SignContextTokenOptions', file: 'src/server/signers.ts', heading: '### Session tokens', next: '### Webhook verification speed' },
    { name: 'NodeAdapterOptions', file: 'src/server/adapters.ts', heading: '### Adapters and headers', next: '### Marketplace client' },
    { name: 'ExpressAdapterOptions', file: 'src/server/adapters.ts', heading: '### Adapters and headers', next: '### Marketplace client' },
    { name: 'EarlyLaunchOptions', file: 'src/shared/early-launch.ts', heading: '### Start sooner', next: '### On your own site' },
    { name: 'ConnectAppOptions', file: 'src/host/index.ts', heading: '### The dashboard side', next: '### The bridge protocol' },
    { name: 'HostHandlers', file: 'src/host/index.ts', heading: '### The dashboard side', next: '### The bridge protocol' },
  ];
  for (const { name, file, heading, next } of SECTIONS) {
    it(`names every member of ${name} under "${heading}"`, () => {
      const text = section(heading, next);
      assert.deepEqual(members(file, name).filter((member) => !namesInCode(text, member)), []);
    });
  }
});

describe('README error codes', () => {
  it('names every ErrorCode, and no code that is not one', () => {
    const source = readFileSync(`${root}src/shared/errors.ts`, 'utf8');
    const union = /^export type ErrorCode =([\s\S]*?);$/m.exec(source)?.[1] ?? '';
    const codes = [...union.matchAll(/'(ERR_\w+)'/g)].map((match) => match[1]!);
    assert.ok(codes.length > 40, `found only ${codes.length} codes in src/shared/errors.ts`);
    const named = new Set([...readme.matchAll(/\bERR_[A-Z0-9_]+/g)].map((match) => match[0]));
    assert.deepEqual(codes.filter((code) => !named.has(code)), [], 'codes the README never names');
    // `ERR_SESSION_*` stands for several codes: a prefix of one counts.
    const unknown = [...named].filter((code) => (code.endsWith('_') ? !codes.some((known) => known.startsWith(code)) : !codes.includes(code)));
    assert.deepEqual(unknown, [], 'codes the README names that ErrorCode does not have');
  });
});

describe('README mpkit flags', () => {
  it('lists in its Flags table the flags of mpkit --help, and no other', () => {
    // From the sources (tsx), as `npm run simulate` runs it: no build needed.
    const help = execFileSync(process.execPath, ['--import', 'tsx', `${root}src/cli.ts`, '--help'], { cwd: root, encoding: 'utf8' });
    // Option lines start with their flags ("  -h, --help   Show…"); continuation lines do not.
    const options = help.slice(help.indexOf('Options:'), help.indexOf('Commands:'));
    const flags = options.split('\n').flatMap((line) => /^ {2}(-.*?)(?: {2,}|$)/.exec(line)?.[1]!.match(/--?[a-z][a-z-]*/g) ?? []);
    assert.ok(flags.length >= 10, `found only ${flags.length} flags in mpkit --help`);
    const table = section('### Flags', 'A bad flag');
    const listed = table.split('\n').filter((row) => row.startsWith('| `')).flatMap((row) => row.split('|')[1]!.match(/--?[a-z][a-z-]*/g) ?? []);
    assert.deepEqual(sorted(listed), sorted(flags));
  });
});

describe('README public exports', () => {
  // Where the README lists each entry's exports. The server's are spread over its whole section
  // (each function where it is explained, the rest in "Also exported" and "Types").
  const LISTS = [
    { entry: 'runtime', start: '`marketplace-app-kit` (`src/runtime/index.ts`):', end: '`marketplace-app-kit/host`' },
    { entry: 'host', start: '`marketplace-app-kit/host` (`src/host/index.ts`):', end: '### Measured' },
    { entry: 'elements', start: '### Other exports of `marketplace-app-kit/elements`', end: 'The package has named exports only' },
    { entry: 'simulator', start: '### From code: `startSimulator(options)`', end: '| option |' },
    { entry: 'server', start: '## Backend module', end: '## The local marketplace' },
  ];
  for (const { entry, start, end } of LISTS) {
    it(`names every export of marketplace-app-kit${entry === 'runtime' ? '' : `/${entry}`}, and lists nothing it lacks`, () => {
      const exported = exportedNames(`${root}dist/${entry}/index.d.ts`);
      assert.ok(exported.length > 5, `found only ${exported.length} exports in dist/${entry}/index.d.ts`);
      const text = section(start, end);
      assert.deepEqual(exported.filter((name) => !namesInCode(text, name)), [], 'exports the README does not name');
      // The name each item of a list starts with ("- `createKit(options)`: …", "- type `Kit`: …").
      const listed = [...text.matchAll(/^- (?:types? )?`(\w+)/gm)].map((match) => match[1]!);
      assert.deepEqual(listed.filter((name) => !exported.includes(name)), [], 'listed names the entry does not export');
    });
  }
});

describe('README elements', () => {
  /** The backticked names in `text` between `from` and the first of `to` after it, outside parentheses. */
  const namesBetween = (text: string, from: RegExp, to: RegExp, shape: RegExp) => {
    const start = from.exec(text);
    if (!start) return [];
    const rest = text.slice(start.index + start[0].length);
    const end = rest.search(to);
    return [...rest.slice(0, end < 0 ? undefined : end).replace(/\([^)]*\)/g, '').matchAll(/`([^`]+)`/g)].map((match) => match[1]!).filter((name) => shape.test(name));
  };

  // test/support/element-api.ts is what the manifest and style tests check the elements against.
  for (const [tag, api] of Object.entries(ELEMENT_API)) {
    it(`lists the attributes, parts, events and custom properties of <${tag}>`, () => {
      const text = section(`### \`<${tag}>\``, '### ');
      const table = text.slice(text.indexOf('\n| attribute |')).split('\n\n')[0]!;
      const attributes = table.split('\n').filter((row) => row.startsWith('| `')).map((row) => /`([\w-]+)`/.exec(row.split('|')[1]!)?.[1]);
      assert.deepEqual(sorted(attributes.filter((name) => name !== undefined)), sorted(api.attributes), 'attributes');
      assert.deepEqual(sorted(namesBetween(text, /Parts:/, /Custom\s+properties:/, /^[a-z-]+$/)), sorted(api.parts), 'parts');
      assert.deepEqual(sorted(namesBetween(text, /Custom\s+properties:/, /Events:|Strings:/, /^--mp-/)), sorted(api.cssProperties), 'custom properties');
      assert.deepEqual(sorted(namesBetween(text, /Events:/, /Strings:/, /^mp-/)), sorted(api.events ?? []), 'events');
    });
  }

  it('gives the defaults of the shared custom properties as the styles have them', () => {
    const styles = readFileSync(`${root}src/elements/base/base.styles.ts`, 'utf8');
    const code = [...styles.matchAll(/var\((--mp-[\w-]+), (?:light-dark\(([^,]+), ([^)]+)\)|([^)]+))\)/g)].map(
      ([, name, light, dark, both]) => `${name} ${light ?? both} ${dark ?? ''}`.trim(),
    );
    assert.ok(code.length >= 10, `found only ${code.length} custom properties in base.styles.ts`);
    const table = section('| custom property | light default | dark default |', 'Each element');
    const documented = [...table.matchAll(/^\| `(--mp-[\w-]+)` \| `([^`]+)` \| (?:`([^`]+)` )?\|$/gm)].map(
      ([, name, light, dark]) => `${name} ${light} ${dark ?? ''}`.trim(),
    );
    assert.deepEqual(documented, code);
  });
});
