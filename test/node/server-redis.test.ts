// Several app backends on one real redis-server (createRedisStores), in one process, against the
// fake marketplace: launches, webhooks, invalidation, revocation, the launch cap and the refresh
// single flight hold across instances, and a Redis that fails or loses its data fails closed and
// recovers by itself. (test/e2e/several-instances.test.ts runs them as separate processes.)
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createRedisStores } from '../../src/redis/index.js';
import {
  createAppBackend,
  createMarketplaceClient,
  isKitError,
  receiveWebhook,
  signContextToken,
  signWebhookBody,
  verifyWebhook,
  type AppBackend,
  type AppBackendOptions,
  type MarketplaceStores,
} from '../../src/server/index.js';
import { REDIS_CLIENTS, startRedis, type TestRedis } from '../support/redis-server.js';
import { deferred, HANG_MS, until } from '../support/waiting.js';
import { API_KEY, CLIENT_ID, CLIENT_SECRET, DASHBOARD, ENTITLEMENT, USER, WEBHOOK_SECRET, backendOptions, startFakeMarketplace, type FakeMarketplace } from '../support/server-http.js';

let redis: TestRedis;
let market: FakeMarketplace;
const closers: Array<() => Promise<void>> = [];
let prefix = 0;

before(async () => {
  [redis, market] = await Promise.all([startRedis(), startFakeMarketplace()]);
});
after(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  await Promise.all([redis?.stop(), market?.close()]);
});
beforeEach(() => {
  market.override = null;
  market.entitlements.set(USER.id, ENTITLEMENT);
  market.calls.clear();
  prefix += 1;
});

/** `count` instances' stores, each on its own connection, all under this test's prefix. */
async function sharedStores(count: number, client: keyof typeof REDIS_CLIENTS = 'node-redis', log: (line: string) => void = () => undefined): Promise<MarketplaceStores[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const { client: connection, close } = await REDIS_CLIENTS[client](redis.url);
      closers.push(close);
      return createRedisStores({ client: connection, prefix: `t${prefix}:`, timeoutMs: 300, log });
    }),
  );
}

function instances(stores: MarketplaceStores[], overrides: Partial<AppBackendOptions> = {}): AppBackend[] {
  return stores.map((shared) => createAppBackend({ ...backendOptions(market.siteUrl), publicOrigin: 'https://app.example', onError: () => undefined, stores: shared, ...overrides }));
}

const BASE = 'https://app.example/api/marketplace';
const contextToken = (userId = USER.id) => signContextToken({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: market.siteUrl, host: DASHBOARD, appId: 'app_1', user: { ...USER, id: userId }, now: Date.now() });
const launch = (backend: AppBackend, context: string) =>
  backend(new Request(`${BASE}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ context, host: DASHBOARD }) }));
function delivery(event: string, data: Record<string, unknown>, id = `evt_${Math.random().toString(36).slice(2)}`): string {
  return JSON.stringify({ id, event, timestamp: new Date().toISOString(), data });
}
const post = (backend: AppBackend, body: string) =>
  backend(new Request(`${BASE}/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) } }));
const code = async (response: Response) => ((await response.clone().json()) as { error?: { code: string } }).error?.code;
const paid = (backend: AppBackend, token: string) =>
  backend.requireEntitlement(new Request('https://app.example/api/export', { headers: { authorization: `Bearer ${token}` } }), { feature: 'export' });

describe('several instances on one Redis', () => {
  it('one context token sent to every instance at once makes exactly one session', async () => {
    const backends = instances(await sharedStores(3));
    const token = await contextToken();
    const answers = await Promise.all(backends.map((backend) => launch(backend, token)));
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 401, 401]);
    for (const answer of answers.filter((a) => a.status === 401)) assert.equal(await code(answer), 'ERR_CONTEXT_TOKEN_REPLAYED');
  });

  it('one delivery sent to every instance at once is handled once; a copy waits for a first that fails, and handles it', async () => {
    const handled: string[] = [];
    let fail = false;
    // Each handler holds until the test lets it go; the second instance tells when it found a delivery busy.
    let started = deferred();
    let release = deferred();
    let copyBusy = deferred();
    const stores = await sharedStores(3);
    const watched = stores[1]!.webhooks;
    stores[1] = {
      ...stores[1]!,
      webhooks: {
        begin: async (request) => {
          const claim = await watched.begin(request);
          if (claim.state === 'busy') copyBusy.resolve();
          return claim;
        },
        renew: (...args) => watched.renew(...args),
        finish: (...args) => watched.finish(...args),
        abandon: (...args) => watched.abandon(...args),
      },
    };
    const backends = instances(stores, {
      onEvent: async (event) => {
        started.resolve();
        await release.promise;
        if (fail) {
          fail = false;
          throw new Error('database down');
        }
        handled.push(String(event.data.user_id));
      },
    });
    const body = delivery('subscription.created', { user_id: USER.id, plan: 'pro' });
    const sent = Promise.all(backends.map((backend) => post(backend, body)));
    await started.promise;
    release.resolve();
    const answers = await sent;
    assert.deepEqual(answers.map((answer) => answer.status), [200, 200, 200]);
    assert.deepEqual((await Promise.all(answers.map((answer) => answer.json()))).filter((json) => (json as { duplicate?: boolean }).duplicate).length, 2);
    assert.deepEqual(handled, [USER.id], 'handled once');

    // The first copy fails while the second, on another instance, waits for it: the second handles it.
    [started, release, copyBusy] = [deferred(), deferred(), deferred()];
    fail = true;
    const second = delivery('subscription.created', { user_id: 'usr_2', plan: 'pro' });
    const first = post(backends[0]!, second);
    await started.promise;
    const copy = post(backends[1]!, second);
    await copyBusy.promise;
    release.resolve();
    assert.equal((await first).status, 500);
    assert.deepEqual(await (await copy).json(), { received: true, event: 'subscription.created' });
    assert.deepEqual(handled, [USER.id, 'usr_2']);
  });

  it('a cancellation reaching one instance ends the paid route on the others at once; user.revoked ends their sessions', async () => {
    const backends = instances(await sharedStores(3));
    const session = ((await (await launch(backends[0]!, await contextToken())).json()) as { session: { token: string } }).session.token;
    for (const backend of backends) assert.equal((await paid(backend, session)).entitlement?.plan, 'pro');
    const calls = market.calls.get('/api/v1/entitlements');
    assert.equal(calls, 1, 'one load, cached for every instance');

    market.entitlements.set(USER.id, { ...ENTITLEMENT, status: 'cancelled' });
    assert.equal((await post(backends[2]!, delivery('subscription.cancelled', { user_id: USER.id, plan: 'pro' }))).status, 200);
    for (const backend of backends) await assert.rejects(paid(backend, session), { code: 'ERR_ACCESS_DENIED' });

    // Sessions carry whole seconds, and one from the revoke's own second is kept: revoke in a later one.
    await new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() % 1_000) + 5));
    assert.equal((await post(backends[1]!, delivery('user.revoked', { user_id: USER.id }))).status, 200);
    for (const backend of backends) {
      await assert.rejects(backend.requireSession(new Request(BASE, { headers: { authorization: `Bearer ${session}` } })), { code: 'ERR_SESSION_REVOKED', status: 401 });
    }
  });

  it('maxExchangesPerUser is one cap for all instances', async () => {
    const backends = instances(await sharedStores(3), { maxExchangesPerUser: 2 });
    const statuses = [];
    for (const backend of backends) statuses.push((await launch(backend, await contextToken())).status);
    assert.deepEqual(statuses, [200, 200, 429]);
  });

  it('three clients on shared stores refresh one rotating refresh token with one token request, and share a failure too', async () => {
    const stores = await sharedStores(3);
    // Which clients took a turn at the single flight; the marketplace answers once all three have.
    const asked = new Set<number>();
    for (const [i, shared] of stores.entries()) {
      const flight = shared.refresh;
      stores[i] = { ...shared, refresh: { begin: (...args) => (asked.add(i), flight.begin(...args)), finish: (...args) => flight.finish(...args) } };
    }
    let requests = 0;
    const answerOnceAllAsked = (status: number, body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
      requests += 1;
      void until(() => asked.size === 3, 'all three clients asked for a refresh').then(() => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
    };
    market.override = answerOnceAllAsked(200, { access_token: 'at_new', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_next' });
    const clients = stores.map((shared) => createMarketplaceClient({ siteUrl: market.siteUrl, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, stores: shared }));
    const results = await Promise.all(clients.map((client) => client.refresh('rt_rotating')));
    assert.equal(requests, 1);
    assert.deepEqual(results.map((tokens) => tokens.refreshToken), ['rt_next', 'rt_next', 'rt_next']);
    const inspector = await REDIS_CLIENTS['node-redis'](redis.url);
    closers.push(inspector.close);
    const keys = (await inspector.client.keys(`t${prefix}:*`)).join(' ');
    assert.doesNotMatch(keys, /rt_|at_new/, 'no token in a key');

    // A refresh the marketplace refuses is refused for all three, after one request.
    requests = 0;
    asked.clear();
    market.override = answerOnceAllAsked(400, { error: 'invalid_grant' });
    const failures = await Promise.allSettled(clients.map((client) => client.refresh('rt_revoked')));
    assert.equal(requests, 1);
    assert.deepEqual(failures.map((failure) => failure.status === 'rejected' && [failure.reason.code, failure.reason.upstreamCode]), Array(3).fill(['ERR_OAUTH', 'invalid_grant']));
  });

  for (const client of ['node-redis', 'ioredis'] as const) {
    it(`with Redis down (${client}): 503 with Retry-After for launches and webhooks, one log line, no replay after it returns empty`, async () => {
      const lines: string[] = [];
      const backends = instances(await sharedStores(2, client, (line) => lines.push(line)));
      const used = await contextToken();
      assert.equal((await launch(backends[0]!, used)).status, 200);
      // Context tokens carry whole seconds: a Redis that comes back empty refuses what was issued
      // in an earlier second than its return (docs/redis.md), so the outage starts in a later one.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await redis.stop();
      try {
        for (const answer of [await launch(backends[1]!, await contextToken()), await launch(backends[1]!, used), await post(backends[0]!, delivery('user.authorized', { user_id: USER.id }))]) {
          assert.equal(answer.status, 503);
          assert.equal(await code(answer), 'ERR_STORE_UNAVAILABLE');
          assert.equal(answer.headers.get('retry-after'), '2');
        }
        assert.equal(lines.filter((line) => /unavailable/.test(line)).length, 2, `one line per instance: ${lines.join(' | ')}`);
      } finally {
        await redis.restart();
      }
      // Back, empty (no persistence): the clients reconnect by themselves.
      const deadline = Date.now() + HANG_MS;
      let fresh: Response;
      do {
        await new Promise((resolve) => setTimeout(resolve, 100));
        fresh = await launch(backends[1]!, await contextToken());
        // 503 until the clients reconnect; a token from an earlier second than Redis's return is a
        // possible replay (docs/redis.md): each try mints a fresh one.
      } while (fresh.status !== 200 && Date.now() < deadline);
      assert.equal(fresh.status, 200, 'service resumes');
      const replay = await launch(backends[0]!, used);
      assert.equal(replay.status, 401, 'the token used before Redis lost its data is still a replay');
      assert.equal(await code(replay), 'ERR_CONTEXT_TOKEN_REPLAYED');
      assert.equal((await post(backends[0]!, delivery('user.authorized', { user_id: USER.id }))).status, 200);
    });
  }

  for (const client of ['node-redis', 'ioredis'] as const) {
    it(`a Redis that refuses commands (${client}, out of memory under noeviction): 503 without Redis's words, one log line with the stack`, async () => {
      const lines: string[] = [];
      const backends = instances(await sharedStores(1, client, (line) => lines.push(line)));
      const reported: unknown[] = [];
      const quiet = instances(await sharedStores(1, client, () => undefined), { onError: (error) => reported.push(error) });
      // Context tokens carry whole seconds: the epoch that the first script starts is an earlier one.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const admin = await REDIS_CLIENTS['node-redis'](redis.url);
      closers.push(admin.close);
      await admin.client.configSet('maxmemory', '1');
      try {
        for (let i = 0; i < 5; i++) {
          const answer = await launch(backends[0]!, await contextToken());
          assert.equal(answer.status, 503);
          assert.equal(answer.headers.get('retry-after'), '2');
          const text = await answer.text();
          assert.equal(JSON.parse(text).error.code, 'ERR_STORE_UNAVAILABLE');
          assert.doesNotMatch(text, /OOM|maxmemory|script|Redis refused/i, 'Redis stays out of the answer');
        }
        const refusals = lines.filter((line) => /Redis refused a command/.test(line));
        assert.equal(refusals.length, 1, lines.join('\n---\n'));
        assert.match(refusals[0]!, /OOM command not allowed/, 'the log has Redis\'s words');
        assert.match(refusals[0]!, /\n +at /, 'and the stack');
        assert.equal(lines.length, 1, 'not taken for an outage');

        assert.equal((await launch(quiet[0]!, await contextToken())).status, 503);
        assert.equal(reported.length, 1);
        assert.ok(isKitError(reported[0], 'ERR_STORE_UNAVAILABLE'));
        assert.match(String((reported[0] as Error).cause), /OOM/, 'onError has the reply as the cause');
      } finally {
        await admin.client.configSet('maxmemory', '0');
      }
      assert.equal((await launch(backends[0]!, await contextToken())).status, 200);
    });
  }

  it('a Redis that stops answering (frozen) fails each call within timeoutMs: 503, never a hang', async () => {
    const backends = instances(await sharedStores(1));
    redis.freeze();
    try {
      const started = Date.now();
      const answer = await launch(backends[0]!, await contextToken());
      assert.equal(answer.status, 503);
      assert.equal(await code(answer), 'ERR_STORE_UNAVAILABLE');
      assert.ok(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`);
    } finally {
      redis.thaw();
    }
  });

  it('a replayed delivery is refused after Redis lost its data, whatever the tolerance (verifyWebhook, receiveWebhook, the legacy replayStore)', async () => {
    const [stores] = await sharedStores(1);
    const admin = await REDIS_CLIENTS['node-redis'](redis.url);
    closers.push(admin.close);
    /** Redis forgets this test's keys, its epoch among them, as a restart without persistence would. */
    const loseData = async () => {
      const keys = await admin.client.keys(`t${prefix}:*`);
      if (keys.length > 0) await admin.client.del(keys);
    };
    // Redis's epoch and the loss each start in a second of their own: what was issued in the very
    // second of a loss is not caught (docs/redis.md).
    const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() % 1_000) + 5));
    // Accepted within a tolerance of 10 minutes: longer than the 310 s a claim that does not say
    // when its item was issued is taken to have lived.
    const sent = (id: string) => JSON.stringify({ id, event: 'user.authorized', timestamp: new Date().toISOString(), data: { user_id: USER.id } });
    const options = { secret: WEBHOOK_SECRET, replayStore: stores!.replay, toleranceSeconds: 600 };
    for (const [name, verify] of [
      ['verifyWebhook', (body: string) => verifyWebhook(body, signWebhookBody(body, WEBHOOK_SECRET), options)],
      ['receiveWebhook', (body: string) => receiveWebhook(body, signWebhookBody(body, WEBHOOK_SECRET), options)],
    ] as const) {
      await nextSecond();
      const body = sent(`evt_${name}`);
      await verify(body);
      await nextSecond();
      await loseData();
      await assert.rejects(verify(body), { code: 'ERR_WEBHOOK_DUPLICATE' }, `${name}: sent before the loss`);
    }

    const [legacy] = instances([stores!], { stores: undefined, replayStore: stores!.replay, webhookToleranceSeconds: 600 });
    await nextSecond();
    const body = sent('evt_legacy');
    assert.equal((await post(legacy!, body)).status, 200);
    await nextSecond();
    await loseData();
    assert.deepEqual(await (await post(legacy!, body)).json(), { received: true, duplicate: true }, 'legacy replayStore: sent before the loss');
  });

  it('keeps every key under its prefix, and no token, secret or code in clear', async () => {
    const backends = instances(await sharedStores(1));
    const token = await contextToken();
    await launch(backends[0]!, token);
    const body = delivery('user.revoked', { user_id: USER.id });
    await post(backends[0]!, body);
    const { client, close } = await REDIS_CLIENTS['node-redis'](redis.url);
    closers.push(close);
    const keys = await client.keys('*');
    const mine = keys.filter((key) => key.startsWith(`t${prefix}:`));
    assert.ok(mine.length >= 4, mine.join(' '));
    const values = await Promise.all(mine.map(async (key) => JSON.stringify([await client.type(key), await client.dump(key)])));
    const everything = [...mine, ...values].join('\n');
    const jti = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).jti as string;
    for (const secret of [token, jti, signWebhookBody(body, WEBHOOK_SECRET).slice(7), API_KEY, CLIENT_SECRET, WEBHOOK_SECRET]) assert.ok(!everything.includes(secret), 'found a secret in Redis');
  });
});
