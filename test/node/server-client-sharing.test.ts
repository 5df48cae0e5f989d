// What clients share (issue: concurrent fresh lookups, one pacer per API key): concurrent
// `entitlements({ fresh: true })` calls of one user share one upstream request, and every client of
// one API key in a process is paced by one window.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMarketplaceClient, createMemoryPacing } from '../../src/server/index.js';
import { API_KEY, ENTITLEMENT, NOW, createVirtualClock, sendJson, startHttpServer, type TestServer } from '../support/server-http.js';
import { deferred, until } from '../support/waiting.js';

let server: TestServer;
/** While set, the fake marketplace holds its answers until the test releases them. */
let held: Promise<void> | null = null;
before(async () => {
  server = await startHttpServer(async (req, res) => {
    await held;
    sendJson(res, 200, { ...ENTITLEMENT, user_id: new URL(req.url!, 'http://x').searchParams.get('user_id') });
  });
});
after(() => server.close());

describe('client sharing', () => {
  it('100 concurrent fresh lookups of one user make one upstream call; a fresh lookup after it was sent makes another', async () => {
    server.requests.length = 0;
    const client = createMarketplaceClient({ siteUrl: server.url, apiKey: API_KEY, clock: createVirtualClock(NOW) });
    const answers = await Promise.all(Array.from({ length: 100 }, () => client.entitlements({ userId: 'usr_1', fresh: true })));
    assert.equal(server.requests.length, 1);
    assert.ok(answers.every((answer) => answer === answers[0]));
    // A fresh call made while a load is already on the wire wants an answer from after its call.
    const gate = deferred();
    held = gate.promise;
    const first = client.entitlements({ userId: 'usr_1', fresh: true });
    await until(() => server.requests.length === 2, 'the first load reached the marketplace');
    const second = client.entitlements({ userId: 'usr_1', fresh: true });
    held = null;
    gate.resolve();
    await Promise.all([first, second]);
    assert.equal(server.requests.length, 3);
    // A plain lookup meanwhile joins the fresh load that is running.
    const [, plain] = await Promise.all([client.entitlements({ userId: 'usr_2', fresh: true }), client.entitlements({ userId: 'usr_2' })]);
    assert.equal(plain?.user_id, 'usr_2');
    assert.equal(server.requests.length, 4);
  });

  it('two clients on one API key share one pacer: together they send no more than the key allows', async () => {
    server.requests.length = 0;
    const clock = createVirtualClock(NOW);
    const options = { siteUrl: server.url, apiKey: API_KEY, clock, entitlementTtlMs: 0, maxQueueWaitMs: Infinity, rateLimit: { limit: 2, windowMs: 60_000 } };
    const [a, b] = [createMarketplaceClient(options), createMarketplaceClient(options)];
    await Promise.all([a.entitlements({ userId: 'usr_1' }), b.entitlements({ userId: 'usr_2' }), a.entitlements({ userId: 'usr_3' }), b.entitlements({ userId: 'usr_4' })]);
    assert.equal(server.requests.length, 4);
    assert.deepEqual(clock.sleeps.length > 0, true, 'the third call waited for the window');
    assert.ok(clock.now() - NOW >= 60_000, `two windows for four calls at two a window, not one each (${clock.now() - NOW} ms)`);

    // Clients given pacing stores of their own pace alone.
    const own = createVirtualClock(NOW);
    const apart = { ...options, clock: own };
    const [c, d] = [createMarketplaceClient({ ...apart, stores: { pacing: createMemoryPacing() } }), createMarketplaceClient({ ...apart, stores: { pacing: createMemoryPacing() } })];
    await Promise.all([c.entitlements({ userId: 'usr_1' }), d.entitlements({ userId: 'usr_2' }), c.entitlements({ userId: 'usr_3' }), d.entitlements({ userId: 'usr_4' })]);
    assert.equal(own.now(), NOW, 'no wait: two windows of their own');
  });
});
