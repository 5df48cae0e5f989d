// What the runtime entry pulls in when an app's bundler builds it for the browser (Vite, ES,
// minified: test/support/bundles.ts, as for the size report): no Lit and no element, and the host
// bridge only in a chunk of its own, which the kit loads when it opens the bridge.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BROWSER_UI, HOST_BRIDGE, bundle, bundleCode, libraryBuild, root } from '../support/bundles.js';

const isBridge = (id: string) => HOST_BRIDGE.test(id) || id.endsWith('/src/shared/bridge.ts');

describe('the runtime bundle', () => {
  it('pulls in no Lit and no element, and the host bridge only as a chunk loaded on demand', async () => {
    const runtime = await bundle(libraryBuild('src/runtime/index.ts'));
    assert.deepEqual(runtime.modules.filter((id) => BROWSER_UI.test(id)), []);
    assert.ok(runtime.modules.some(isBridge), 'the bridge is part of the bundle');
    assert.ok(runtime.startUp, 'the bundle is split');
    assert.deepEqual(runtime.startUp.modules.filter(isBridge), [], 'nothing of the bridge is loaded before the kit is ready');
    assert.ok(runtime.startUp.modules.some((id) => id.endsWith('/src/runtime/kit.ts')));
  });
});

describe('the production build (the exports map\'s production condition)', () => {
  const joined = async (production: boolean) => {
    const config = libraryBuild('src/runtime/index.ts');
    if (!production) config.plugins = config.plugins!.filter((plugin) => (plugin as { name?: string }).name !== 'mpkit:production');
    const { code } = await bundleCode(config);
    return code;
  };

  it('leaves the long explanations and the helpers only they use out; the development build keeps them', async () => {
    const [development, production] = await Promise.all([joined(false), joined(true)]);
    for (const text of ['createKit needs a browser', 'does not match its schema', 'must be an exact http(s) origin']) {
      assert.ok(development.includes(text), `the development build says "${text}"`);
      assert.ok(!production.includes(text), `the production build leaves "${text}" out`);
    }
    // What an error says instead: its code and where it is explained.
    assert.ok(production.includes('docs/errors.md of marketplace-app-kit'));
  });

  it('dist/production: every module reads DEV as a constant false of its own (npm run build)', () => {
    const dir = join(root, 'dist/production');
    assert.ok(existsSync(dir), 'dist/production is missing (run npm run build)');
    const modules = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.js'));
    assert.ok(modules.length > 20);
    for (const name of modules) {
      const code = readFileSync(join(dir, name), 'utf8');
      assert.doesNotMatch(code, /import \{ DEV \}/, `${name} imports DEV`);
    }
    assert.match(readFileSync(join(dir, 'runtime/kit.js'), 'utf8'), /^const DEV = false;$/m);
  });
});
