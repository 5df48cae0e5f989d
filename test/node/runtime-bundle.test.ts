// What the runtime entry pulls in when an app's bundler builds it for the browser (Vite, ES,
// minified: test/support/bundles.ts, as for the size report): no Lit and no element, and the host
// bridge only in a chunk of its own, which the kit loads when it opens the bridge.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BROWSER_UI, HOST_BRIDGE, bundle, libraryBuild } from '../support/bundles.js';

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
