// The package as an app installs it: every entry of the exports map resolves to built files with
// types, and the Node entries load by name (self-reference). Needs `npm run build` first, as
// `npm test` does.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import vm from 'node:vm';

const root = fileURLToPath(new URL('../..', import.meta.url));
type Target = string | { types: string; default: string; node?: { types: string; default: string } };
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  exports: Record<string, Target>;
  bin: Record<string, string>;
  version: string;
};

describe('package', () => {
  it('has built files and types for every entry of the exports map', () => {
    for (const [entry, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      // An entry with a Node face and a browser face (./testing) has both built.
      for (const file of [target.types, target.default, target.node?.types, target.node?.default].filter((file) => file !== undefined)) {
        assert.ok(existsSync(`${root}${file}`), `${entry}: ${file} is missing (run npm run build)`);
      }
    }
  });

  it('loads the Node entries by package name', async () => {
    const server = await import('marketplace-app-kit/server');
    assert.equal(typeof server.createAppBackend, 'function');
    assert.equal(typeof server.verifyWebhook, 'function');
    const simulator = await import('marketplace-app-kit/simulator');
    assert.equal(typeof simulator.startSimulator, 'function');
    // One error class for the whole package: a simulator's error is a kit error to the server's isKitError.
    assert.equal(simulator.MarketplaceKitError, server.MarketplaceKitError);
    assert.equal(simulator.isKitError, server.isKitError);
  });

  // A server-side render (Next.js, Vite SSR) evaluates an app's browser modules in Node. In a
  // child process, so Lit's stand-ins for the DOM stay out of the other tests.
  it('imports the browser entries in Node without throwing, and createKit there rejects with ERR_CONFIG', async () => {
    const code = `
      const runtime = await import('marketplace-app-kit');
      const elements = await import('marketplace-app-kit/elements');
      const gate = await import('marketplace-app-kit/dist/elements/gate/gate.js');
      const host = await import('marketplace-app-kit/host');
      const error = await runtime.createKit({ backend: 'https://app.example/api/marketplace', hostOrigins: [] }).then(() => null, (e) => e);
      console.log(JSON.stringify({ getKit: runtime.getKit(), same: gate.MpGate === elements.MpGate, hostErrors: host.isKitError === runtime.isKitError && host.MarketplaceKitError === runtime.MarketplaceKitError, kitError: runtime.isKitError(error), code: error?.code, message: error?.message }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { cwd: root });
    assert.deepEqual(JSON.parse(stdout), {
      getKit: null,
      same: true,
      hostErrors: true,
      kitError: true,
      code: 'ERR_CONFIG',
      message: 'createKit needs a browser: create the kit from client-only code, not in a server-side render',
    });
  });

  it('lets an app import the modules custom-elements.json names, and no internal module of the elements', () => {
    // The public ones are checked by test/e2e/cdn-manifest.test.ts, against every path the manifest holds.
    assert.ok(fileURLToPath(import.meta.resolve('marketplace-app-kit/dist/elements/gate/gate.js')).endsWith('/dist/elements/gate/gate.js'));
    for (const internal of ['gate/gate.styles.js', 'base/plans.js', 'base/bidi.js', 'base/base.styles.js']) {
      const file = `dist/elements/${internal}`;
      assert.ok(existsSync(`${root}${file}`), `${file} is missing (run npm run build)`);
      assert.throws(() => import.meta.resolve(`marketplace-app-kit/${file}`), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' }, file);
    }
  });

  it('lets code that needs only the event classes import them without Lit or any registration', () => {
    const events = readFileSync(`${root}dist/elements/events.js`, 'utf8');
    assert.doesNotMatch(events, /\bimport\b|customElements/);
    assert.match(events, /export class MpUpgradeEvent\b/);
  });

  it('has Node entry types that compile in a project without the DOM library', async () => {
    // A backend's tsconfig has lib ES20xx and types node, and often skipLibCheck off.
    const tsc = `${root}node_modules/typescript/bin/tsc`;
    const run = promisify(execFile)(process.execPath, [tsc, '-p', `${root}test/support/node-only/tsconfig.json`], { cwd: root });
    const { stdout } = await run.catch((error: { stdout?: string }) => assert.fail(`tsc found errors:\n${error.stdout ?? String(error)}`));
    assert.equal(stdout.trim(), '');
  });

  it('ships source maps that carry their sources (src/ is not in the package)', () => {
    const maps = readdirSync(`${root}dist`, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.map'));
    assert.ok(maps.length > 0, 'dist has no source maps (run npm run build)');
    for (const file of maps) {
      const map = JSON.parse(readFileSync(`${root}dist/${file}`, 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
      assert.equal(map.sourcesContent?.filter((source) => typeof source === 'string').length, map.sources.length, `dist/${file} lacks sourcesContent`);
    }
  });

  it('resolves the script-tag files by package name, so a server can serve them from node_modules', () => {
    for (const file of ['marketplace-app-kit.js', 'marketplace-app-kit.dev.js', 'marketplace-app-kit-bridge.js', 'marketplace-app-kit-bridge.dev.js', 'marketplace-host.js']) {
      const resolved = fileURLToPath(import.meta.resolve(`marketplace-app-kit/dist/cdn/${file}`));
      assert.equal(resolved, `${root}dist/cdn/${file}`);
      assert.ok(existsSync(resolved), `${resolved} is missing (run npm run build)`);
    }
  });

  it("the dashboard's script tag defines MarketplaceHost and zod's shared config, nothing else (as docs/host.md says)", () => {
    const page = vm.createContext({});
    const before = new Set(Reflect.ownKeys(page));
    vm.runInContext(readFileSync(`${root}dist/cdn/marketplace-host.js`, 'utf8'), page);
    assert.deepEqual(Reflect.ownKeys(page).filter((key) => !before.has(key)).map(String).sort(), ['MarketplaceHost', '__zod_globalConfig']);
  });

  it('ships the mpkit bin as an executable Node script that knows its version', async () => {
    const bin = `${root}${pkg.bin.mpkit}`;
    assert.ok(existsSync(bin), `${bin} is missing (run npm run build)`);
    assert.match(readFileSync(bin, 'utf8'), /^#!\/usr\/bin\/env node\n/);
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--version']);
    assert.equal(stdout, `${pkg.version}\n`);
  });

  it("ships FakeKit in marketplace-app-kit/testing on the runtime's public entry alone", () => {
    // A FakeKit registers as the page's kit exactly as createKit's does only if it shares the
    // runtime's registry and events: so it imports that entry and nothing else, in the sources
    // and in the built file the package ships.
    const imports = (file: string) =>
      // Static (`from '…'`), bare (`import '…'`) and dynamic (`import('…')`) imports, either quote.
      [...readFileSync(`${root}${file}`, 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)].map((match) => match[1]);
    assert.deepEqual(imports('src/testing/fake-kit.ts'), ['../runtime/index.js']);
    assert.deepEqual(imports('dist/testing/fake-kit.js'), ['../runtime/index.js']);
    assert.equal(fileURLToPath(import.meta.resolve('marketplace-app-kit/testing')), `${root}dist/testing/index.js`, 'Node gets the signers and the simulator helpers');
  });
});
