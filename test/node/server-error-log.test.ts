// The server's default log (createErrorLog): expected rejections in one line without a stack, at
// most one line per code every 10 s with a count of the repeats; unexpected errors with their
// stacks, every one; onError, when given, still told of every one. Time is a manual clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ContextTokenError,
  createAppBackend,
  createErrorLog,
  isExpectedRejection,
  MarketplaceKitError,
  signContextToken,
  signWebhookBody,
  toNodeHandler,
  WebhookVerificationError,
  type Clock,
} from '../../src/server/index.js';
import { backendOptions, DASHBOARD, NOW, USER } from '../support/server-http.js';

const SITE = 'https://marketplace.example';

/** A clock that moves only when the test says, firing the sleeps that are then due. */
function manualClock(start: number): Clock & { advance(ms: number): Promise<void> } {
  let now = start;
  const sleepers: Array<{ at: number; wake: () => void }> = [];
  return {
    now: () => now,
    sleep: (ms) => new Promise<void>((wake) => void sleepers.push({ at: now + ms, wake })),
    async advance(ms) {
      now += ms;
      for (const sleeper of sleepers.filter(({ at }) => at <= now)) {
        sleepers.splice(sleepers.indexOf(sleeper), 1);
        sleeper.wake();
      }
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** Everything written, one entry per call, as console.error would get it. */
function recorder() {
  const calls: unknown[][] = [];
  return { calls, write: (...parts: unknown[]) => void calls.push(parts), text: () => calls.map((parts) => parts.map(String).join(' ')) };
}

const forged = (index: number) => new WebhookVerificationError('ERR_WEBHOOK_SIGNATURE_MISMATCH', `forged ${index}`, { status: 401 });

describe('createErrorLog', () => {
  it('writes an expected rejection as one line without a stack, with the request’s method and path but not its query', () => {
    const { calls, write } = recorder();
    const log = createErrorLog({ write, clock: manualClock(NOW) });
    log(forged(1), new Request('https://app.example/api/marketplace/webhooks?token=secret', { method: 'POST' }));
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.length, 1, 'one string, no error object (whose stack console.error would print)');
    assert.equal(calls[0]![0], '[marketplace-app-kit] ERR_WEBHOOK_SIGNATURE_MISMATCH (401) POST /api/marketplace/webhooks: forged 1');
  });

  it('writes at most one line per code every 10 s, then the count of the repeats; a quiet code starts over', async () => {
    const clock = manualClock(NOW);
    const { write, text } = recorder();
    const log = createErrorLog({ write, clock });
    for (let i = 1; i <= 500; i++) log(forged(i));
    log(new ContextTokenError('ERR_CONTEXT_TOKEN_EXPIRED', 'expired', { status: 401 }));
    log(new ContextTokenError('ERR_CONTEXT_TOKEN_REPLAYED', 'replayed', { status: 401 }));
    assert.deepEqual(text(), [
      '[marketplace-app-kit] ERR_WEBHOOK_SIGNATURE_MISMATCH (401): forged 1',
      '[marketplace-app-kit] ERR_CONTEXT_TOKEN_EXPIRED (401): expired',
      '[marketplace-app-kit] ERR_CONTEXT_TOKEN_REPLAYED (401): replayed',
    ]);
    await clock.advance(9_999);
    assert.equal(text().length, 3, 'nothing more within the 10 s');
    await clock.advance(1);
    assert.deepEqual(text().slice(3), ['[marketplace-app-kit] ERR_WEBHOOK_SIGNATURE_MISMATCH: 499 more in the last 10 s (latest: ERR_WEBHOOK_SIGNATURE_MISMATCH (401): forged 500)']);
    // The attack goes on: one line every 10 s, each with its count.
    for (let i = 501; i <= 700; i++) log(forged(i));
    await clock.advance(10_000);
    assert.equal(text().length, 5);
    assert.match(text()[4]!, /: 200 more in the last 10 s \(latest: .*forged 700\)$/);
    // Then it stops: no line for a window without repeats, and the next one is written at once.
    await clock.advance(10_000);
    await clock.advance(10_000);
    assert.equal(text().length, 5);
    log(forged(701));
    assert.equal(text().at(-1), '[marketplace-app-kit] ERR_WEBHOOK_SIGNATURE_MISMATCH (401): forged 701');
  });

  it('counts in the next window a repeat that comes after the window ends, before its timer fires', async () => {
    let now = NOW;
    const pending: Array<() => void> = [];
    const clock: Clock = { now: () => now, sleep: () => new Promise<void>((wake) => void pending.push(wake)) };
    const { write, text } = recorder();
    const log = createErrorLog({ write, clock });
    log(forged(1));
    log(forged(2));
    now += 10_500; // the event loop was busy: the timer has not fired yet
    log(forged(3));
    assert.deepEqual(text().slice(1), ['[marketplace-app-kit] ERR_WEBHOOK_SIGNATURE_MISMATCH: 1 more in the last 10 s (latest: ERR_WEBHOOK_SIGNATURE_MISMATCH (401): forged 2)']);
    pending[0]!(); // the late timer of the first window changes nothing now
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(text().length, 2);
    now += 10_000;
    pending[1]!();
    await new Promise((resolve) => setImmediate(resolve));
    assert.match(text().at(-1)!, /: 1 more in the last 10 s \(latest: .*forged 3\)$/);
  });

  it('writes every unexpected error with its stack, never aggregated', () => {
    const { calls, write } = recorder();
    const log = createErrorLog({ write, context: 'app backend', clock: manualClock(NOW) });
    const bug = new TypeError('undefined is not a function');
    const down = new MarketplaceKitError('ERR_WEBHOOK_HANDLER_FAILED', 'The app failed', { status: 500, cause: bug });
    for (let i = 0; i < 3; i++) log(bug);
    log(down);
    assert.equal(calls.length, 4);
    for (const call of calls) assert.equal(call[0], '[marketplace-app-kit] app backend:');
    assert.equal(calls[0]![1], bug, 'the error itself, which console.error prints with its stack');
    assert.equal(calls[3]![1], down);
  });

  it('tells expected rejections (4xx kit errors, a full replay store, a rate limit) from the rest', () => {
    assert.equal(isExpectedRejection(forged(1)), true);
    assert.equal(isExpectedRejection(new MarketplaceKitError('ERR_REPLAY_STORE_FULL', 'full', { status: 503 })), true);
    assert.equal(isExpectedRejection(new MarketplaceKitError('ERR_RATE_LIMITED', 'slow down', { status: 429 })), true);
    assert.equal(isExpectedRejection(new MarketplaceKitError('ERR_CONFIG', 'no secret')), false);
    assert.equal(isExpectedRejection(new MarketplaceKitError('ERR_INTERNAL', 'oops', { status: 500 })), false);
    assert.equal(isExpectedRejection(new MarketplaceKitError('ERR_TIMEOUT', 'slow')), false);
    assert.equal(isExpectedRejection(new Error('plain')), false);
  });
});

describe('the backend under attack', () => {
  const body = JSON.stringify({ event: 'user.revoked', timestamp: new Date(NOW).toISOString(), data: { user_id: 'usr_1' } });
  const forgedDelivery = () =>
    new Request(`${SITE.replace('marketplace', 'app')}/api/marketplace/webhooks`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, 'whsec_not_the_secret') },
    });
  const forgedLaunch = async () =>
    new Request('https://app.example/api/marketplace/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        context: await signContextToken({ clientId: 'client_test_app', clientSecret: 'not-the-client-secret-0123456789', issuer: SITE, host: DASHBOARD, appId: 'app_1', user: USER, now: NOW }),
        host: DASHBOARD,
      }),
    });

  it('logs 2,000 forged webhooks and context tokens in a few short lines by default, and onError, when given, hears of every one', async (t) => {
    const logged = t.mock.method(console, 'error', () => {});
    const clock = manualClock(NOW);
    const quiet = createAppBackend({ ...backendOptions(SITE), clock });
    const told: unknown[] = [];
    const loud = createAppBackend({ ...backendOptions(SITE), clock, onError: (error) => told.push(error) });
    const launch = await forgedLaunch();
    for (let i = 0; i < 1_000; i++) {
      for (const backend of [quiet, loud]) {
        assert.equal((await backend(forgedDelivery())).status, 401);
        assert.equal((await backend(launch.clone())).status, 401);
      }
    }
    await clock.advance(10_000);
    const lines = logged.mock.calls.map((call) => call.arguments.map(String).join(' '));
    assert.deepEqual(
      lines.map((line) => line.replace(/: .*$/, '')),
      [
        '[marketplace-app-kit] ERR_WEBHOOK_SIGNATURE_MISMATCH (401) POST /api/marketplace/webhooks',
        '[marketplace-app-kit] ERR_CONTEXT_TOKEN_SIGNATURE (401) POST /api/marketplace/session',
        '[marketplace-app-kit] ERR_WEBHOOK_SIGNATURE_MISMATCH',
        '[marketplace-app-kit] ERR_CONTEXT_TOKEN_SIGNATURE',
      ],
    );
    assert.match(lines[2]!, /: 999 more in the last 10 s/);
    assert.ok(lines.join('\n').length < 1_500, `${lines.join('\n').length} characters of log`);
    assert.ok(lines.every((line) => !line.includes('    at ')), 'no stack');
    assert.equal(told.length, 2_000, 'onError is told of every one');
  });

  it('keeps the stack of an unexpected error, from the backend and from the adapter', async (t) => {
    const logged = t.mock.method(console, 'error', () => {});
    const backend = createAppBackend({ ...backendOptions(SITE), clock: manualClock(NOW), onEvent: () => Promise.reject(new Error('database down')) });
    const body = JSON.stringify({ event: 'user.revoked', timestamp: new Date(NOW).toISOString(), data: { user_id: 'usr_1' } });
    const signed = new Request('https://app.example/api/marketplace/webhooks', { method: 'POST', body, headers: { 'x-service-signature': signWebhookBody(body, backendOptions(SITE).webhookSecret) } });
    assert.equal((await backend(signed)).status, 500);
    const [prefix, error] = logged.mock.calls[0]!.arguments as [string, MarketplaceKitError];
    assert.equal(prefix, '[marketplace-app-kit] app backend:');
    assert.equal(error.code, 'ERR_WEBHOOK_HANDLER_FAILED');

    const { createServer } = await import('node:http');
    const bug = new TypeError('the handler has a bug');
    const server = createServer(toNodeHandler(async () => Promise.reject(bug)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as import('node:net').AddressInfo;
      assert.equal((await fetch(`http://127.0.0.1:${port}/x`)).status, 500);
      assert.deepEqual(logged.mock.calls[1]!.arguments, ['[marketplace-app-kit] the handler failed:', bug]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
