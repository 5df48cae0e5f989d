// The docs' complete examples (README.md and every page under docs/) type-check as an app
// developer's project would see them: strict
// TypeScript, the package installed by name (its exports map and built declarations), a Node
// project without the DOM library for backend code and a bundler project for page code. An
// example is checked when the line before its fence says `<!-- checked: node -->` or
// `<!-- checked: browser -->`; reference blocks that list calls out of context are not marked.
// What an example leaves to the reader (`res`, `iframe`, …) is declared below, and the app's own
// functions that the quick starts import from `./your-app.js` are in that module. Needs
// `npm run build` first, as `npm test` does.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { anchorsOf, markdownFiles, prose, readDoc, root } from '../support/docs.js';

type Kind = 'node' | 'browser';

/** The marked examples, named after the page and line of their fence so that tsc's errors point there. */
function checkedExamples(): Array<{ kind: Kind; file: string; code: string }> {
  const examples: Array<{ kind: Kind; file: string; code: string }> = [];
  for (const doc of markdownFiles()) {
    const text = readDoc(doc);
    for (const match of text.matchAll(/^<!-- checked: (\w+) -->\n```(ts|js)\n([\s\S]*?)^```$/gm)) {
      const kind = match[1];
      assert.ok(kind === 'node' || kind === 'browser', `${doc}: "<!-- checked: ${kind} -->" names neither node nor browser`);
      const line = text.slice(0, match.index).split('\n').length + 1;
      // A ```js example is JavaScript, checked as such (checkJs: its types from JSDoc and
      // inference), so TypeScript syntax in it fails as it would under node.
      // `export {}`: each example is a module of its own (top-level await, no clashing names).
      examples.push({ kind, file: `${doc.replace(/\.md$/, '').replace(/\W+/g, '-')}-line-${line}.${match[2]}`, code: `${match[3]}export {};\n` });
    }
  }
  return examples;
}

/** The app's own code that the Node quick starts import (`./your-app.js`), as the README says. */
const YOUR_APP = `
export declare function yourApp(request: Request): Promise<Response>;
export declare function forgetUser(userId: string): Promise<void>;
export declare function exportCsv(userId: string): Promise<string>;
export declare function notesOf(userId: string): Promise<string[]>;
`;

const PLACEHOLDERS: Record<Kind, string> = {
  node: `
declare const res: import('node:http').ServerResponse;
declare const request: Request;
declare const marketplace: import('marketplace-app-kit/server').AppBackend;
declare const clientId: string;
declare const clientSecret: string;
declare const code: string;
`,
  browser: `
declare function greet(name: string): void;
declare function showProblem(code: string): void;
declare function showSignIn(): void;
declare const exportButton: HTMLButtonElement;
declare const iframe: HTMLIFrameElement;
declare const heading: HTMLElement;
declare const embedUrl: string;
declare function mintContextToken(): Promise<string>;
declare function currentTheme(): 'light' | 'dark';
declare function currentLocale(): string;
declare function choosePlan(plan: string | undefined, feature: string | undefined): Promise<'upgraded' | 'dismissed'>;
// Returns an id, as toast libraries do: a result-less handler may return anything.
declare function showToast(message: string, tone: string | undefined): string;
`,
};

/**
 * Every optional option takes `undefined` too, as `publicOrigin: process.env.PUBLIC_ORIGIN` passes
 * it: with exactOptionalPropertyTypes (on in a new project) `name?: T` alone would refuse it. Each
 * type listed must pass `TakesUndefined`.
 */
const OPTIONAL_TAKES_UNDEFINED: Record<Kind, { imports: string[]; types: string[] }> = {
  node: {
    imports: ["import type * as server from 'marketplace-app-kit/server';", "import type * as simulator from 'marketplace-app-kit/simulator';"],
    types: [
      'server.AppBackendOptions',
      'server.MarketplaceClientOptions',
      "NonNullable<server.MarketplaceClientOptions['rateLimit']>",
      'server.AuthorizationUrlOptions',
      'server.VerifyWebhookOptions',
      'server.VerifyContextTokenOptions',
      'server.SignSessionOptions',
      'server.VerifySessionOptions',
      'server.SignContextTokenOptions',
      'server.NodeAdapterOptions',
      'server.ExpressAdapterOptions',
      'server.EarlyLaunchOptions',
      'server.MarketplaceKitErrorOptions',
      'server.MarketplaceApiErrorOptions',
      'server.AccessRequirement',
      'simulator.SimulatorOptions',
      // Options objects of functions and methods.
      "Parameters<server.MarketplaceClient['authorizationUrl']>[0]",
      "Parameters<server.MarketplaceClient['exchangeCode']>[0]",
      "NonNullable<Parameters<server.MarketplaceClient['refresh']>[1]>",
      // Not accessToken?: never / userId?: never: those say which of the two a selector has.
      "Pick<Parameters<server.MarketplaceClient['entitlements']>[0], 'fresh' | 'signal'>",
      'NonNullable<Parameters<typeof server.createMemoryReplayStore>[0]>',
      'NonNullable<Parameters<typeof server.jsonResponse>[1]>',
      "Parameters<simulator.Simulator['configure']>[0]",
    ],
  },
  browser: {
    imports: ["import type * as runtime from 'marketplace-app-kit';", "import type * as host from 'marketplace-app-kit/host';"],
    types: [
      'runtime.KitOptions',
      "NonNullable<Parameters<runtime.Kit['upgrade']>[0]>",
      "NonNullable<Parameters<runtime.HostBridge['openUpgrade']>[0]>",
      'host.ConnectAppOptions',
      'host.HostHandlers',
      "Awaited<ReturnType<host.HostHandlers['getContext']>>",
    ],
  },
};

/** The module that checks OPTIONAL_TAKES_UNDEFINED[kind]: a type that refuses `undefined` makes a `false`, which tsc refuses. */
function optionalOptionsCheck(kind: Kind): string {
  const { imports, types } = OPTIONAL_TAKES_UNDEFINED[kind];
  return `${imports.join('\n')}
type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T];
type TakesUndefined<T> = { [K in OptionalKeys<T>]: undefined } extends Pick<T, OptionalKeys<T>> ? true : false;
export const checked: Array<true> = [
${types.map((type) => `  true as TakesUndefined<${type}>,`).join('\n')}
];
`;
}

const COMPILER_OPTIONS: Record<Kind, object> = {
  node: { module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023'], types: ['node'] },
  browser: { module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2023', 'DOM', 'DOM.Iterable'], types: [] },
};

describe('docs examples', () => {
  const examples = checkedExamples();
  let project = '';

  before(() => {
    assert.ok(existsSync(`${root}dist/server/index.d.ts`), 'dist is missing (run npm run build)');
    // A project outside the repository, with the package "installed" as a link to it: imports by
    // name go through the exports map, as they do for an app.
    project = mkdtempSync(join(tmpdir(), 'mpkit-docs-'));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(root, join(project, 'node_modules/marketplace-app-kit'), 'dir');
    for (const name of ['@types', 'express']) symlinkSync(join(root, 'node_modules', name), join(project, 'node_modules', name), 'dir');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    for (const kind of ['node', 'browser'] as const) {
      mkdirSync(join(project, kind));
      writeFileSync(join(project, kind, 'placeholders.d.ts'), PLACEHOLDERS[kind]);
      writeFileSync(join(project, kind, 'optional-options.ts'), optionalOptionsCheck(kind));
      if (kind === 'node') writeFileSync(join(project, kind, 'your-app.ts'), YOUR_APP);
      // What `tsc --init` (TypeScript 7) turns on besides strict, as a new project has it.
      const compilerOptions = {
        target: 'ES2022',
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        verbatimModuleSyntax: true,
        isolatedModules: true,
        noUncheckedSideEffectImports: true,
        noEmit: true,
        skipLibCheck: false,
        allowJs: true,
        checkJs: true,
        ...COMPILER_OPTIONS[kind],
      };
      writeFileSync(join(project, `tsconfig.${kind}.json`), JSON.stringify({ compilerOptions, include: [`${kind}/*.ts`, `${kind}/*.js`] }));
    }
    for (const { kind, file, code } of examples) writeFileSync(join(project, kind, file), code);
  });

  after(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('marks the quick starts and the complete examples, for Node and for the browser', () => {
    // A marker lost in an edit would silently check less.
    const count = (kind: Kind) => examples.filter((example) => example.kind === kind).length;
    assert.ok(count('node') >= 10, `only ${count('node')} Node examples are marked`);
    assert.ok(count('browser') >= 5, `only ${count('browser')} browser examples are marked`);
  });

  it('links only to pages and headings that exist', () => {
    // Relative links ([text](../server.md#webhooks), [text](#flags)), resolved from each page.
    const broken: string[] = [];
    let count = 0;
    for (const doc of markdownFiles()) {
      for (const [, target] of prose(readDoc(doc)).matchAll(/\]\((?!https?:|mailto:)([^)\s]+)\)/g)) {
        count++;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const file = path ? relative(root, resolve(root, dirname(doc), path)) : doc;
        if (!existsSync(`${root}${file}`)) broken.push(`${doc}: ${target} (no file ${file})`);
        else if (anchor !== undefined && (!file.endsWith('.md') || !anchorsOf(readDoc(file)).has(anchor))) broken.push(`${doc}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
    assert.ok(count >= 40, `only ${count} relative links found`);
    assert.deepEqual(broken, []);
  });

  for (const kind of ['node', 'browser'] as const) {
    it(`type-checks the ${kind} examples under strict TypeScript against the built package`, async () => {
      const tsc = `${root}node_modules/typescript/bin/tsc`;
      const run = promisify(execFile)(process.execPath, [tsc, '-p', `tsconfig.${kind}.json`], { cwd: project });
      const { stdout } = await run.catch((error: { stdout?: string }) => assert.fail(`Docs examples do not compile:\n${error.stdout ?? String(error)}`));
      assert.equal(stdout.trim(), '');
    });
  }
});
