// The host bridge keeps nothing of a call once it has settled: an embedded app resizes on every
// height change and may stay open for hours. Run in Node with two bridge ends joined by
// EventTargets, which is all `openBridge` needs of a window.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openBridge, type MessagePeer } from '../../src/shared/bridge.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const HOST = 'https://dashboard.example';
const APP = 'https://app.example';

function connectedPair(context: () => string) {
  const hostSide = new EventTarget();
  const appSide = new EventTarget();
  const deliver = (target: EventTarget, origin: string, source: MessagePeer) => (data: string) =>
    queueMicrotask(() => target.dispatchEvent(Object.assign(new Event('message'), { data, origin, source })));
  const toApp: MessagePeer = { postMessage: (data) => deliver(appSide, HOST, toHost)(data) };
  const toHost: MessagePeer = { postMessage: (data) => deliver(hostSide, APP, toApp)(data) };
  const self = (target: EventTarget) => target as unknown as Parameters<typeof openBridge>[0]['self'];
  const host = openBridge({ side: 'host', self: self(hostSide), peer: toApp, origin: APP, handlers: { getContext: () => ({ context: context() }) } });
  const app = openBridge({ side: 'app', self: self(appSide), peer: toHost, origin: HOST, handlers: {} });
  return { host, app };
}

const heapMb = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
};

describe('host bridge memory', () => {
  it('keeps no result of a settled call while the bridge stays open', async () => {
    let n = 0;
    // 3,000 answers of 16 KB each: 48 MB if each were kept until destroy().
    const { host, app } = connectedPair(() => `${n++}`.padEnd(16_000, 'x'));
    await app.ready;
    await app.call('getContext', {});
    const before = heapMb();
    for (let i = 0; i < 3_000; i++) await app.call('getContext', {});
    const grown = heapMb() - before;
    app.destroy();
    host.destroy();
    assert.ok(grown < 10, `the heap grew by ${grown.toFixed(1)} MB over 3,000 calls`);
  });

  it('keeps nothing of calls that timed out waiting for a handshake that never comes', async () => {
      const silent: MessagePeer = { postMessage: () => undefined };
    const self = new EventTarget() as unknown as Parameters<typeof openBridge>[0]['self'];
    const app = openBridge({ side: 'app', self, peer: silent, origin: HOST, handlers: {} });
    // Params of 1 KB each: 20 MB if each call were kept until the handshake.
    const title = 'x'.repeat(200);
    const batch = () => Promise.all(Array.from({ length: 1_000 }, () => app.call('setTitle', { title }, { timeoutMs: 1 }).catch(() => undefined)));
    await batch();
    const before = heapMb();
    for (let i = 0; i < 20; i++) await batch();
    const grown = heapMb() - before;
    app.destroy();
    assert.ok(grown < 10, `the heap grew by ${grown.toFixed(1)} MB over 20,000 timed-out calls`);
  });

  it('still rejects a call under way with ERR_BRIDGE_CLOSED when the bridge closes', async () => {
    const { host, app } = connectedPair(() => 'ctx');
    await app.ready;
    host.destroy(); // the host never answers now
    const pending = app.call('getContext', {}, { timeoutMs: 60_000 });
    app.destroy();
    await assert.rejects(pending, { code: 'ERR_BRIDGE_CLOSED' });
  });
});
