import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  createAppBackend,
  createMarketplaceClient,
  createMemoryReplayStore,
  createMemoryRevocationStore,
  isKitError,
  MAX_SESSION_TTL_SECONDS,
  MarketplaceApiError,
  MarketplaceKitError,
  OAUTH_STATE_COOKIE,
  REFRESH_MIN_INTERVAL_MS,
  SESSION_COOKIE,
  signContextToken,
  signSessionToken,
  signWebhookBody,
  toErrorResponse,
  toNodeHandler,
  WEBHOOK_COPY_WAIT_MS,
  buildAuthorizationUrl,
  frameAncestors,
  pkceChallenge,
  receiveWebhook,
  verifyContextToken,
  verifySessionToken,
  verifyWebhook,
  type AppBackend,
  type AppBackendOptions,
  type Clock,
  type WebhookDelivery,
} from '../../src/server/index.js';
import { sleep } from '../../src/server/lib/clock.js';
import { SessionResponse } from '../../src/shared/schemas.js';
import {
  backendOptions,
  API_KEY,
  CLIENT_ID,
  CLIENT_SECRET,
  DASHBOARD,
  ENTITLEMENT,
  NOW,
  SESSION_SECRET,
  USER,
  WEBHOOK_SECRET,
  createVirtualClock,
  asyncReplayStore,
  rawRequest,
  sendJson,
  type RawHandler,
  startFakeMarketplace,
  type FakeMarketplace,
  at,
} from '../support/server-http.js';
import { deferred, until } from '../support/waiting.js';

const APP = 'https://app.example';
const BASE = `${APP}/api/marketplace`;
// The protocol's time stands at NOW, but waits take real time (the virtual clock's sleeps end at once).
const realTimeAtNow = { now: () => NOW, sleep };
/** As `realTimeAtNow`, keeping the signal of every wait asked for with one. */
function watchedClock() {
  const waits: AbortSignal[] = [];
  const clock = {
    now: () => NOW,
    sleep: (ms: number, signal?: AbortSignal) => {
      if (signal) waits.push(signal);
      return sleep(ms, signal);
    },
  };
  return { clock, waits };
}
// On https the kit's cookies are __Host- prefixed.
const SESSION = `__Host-${SESSION_COOKIE}`;
const STATE = `__Host-${OAUTH_STATE_COOKIE}`;

let market: FakeMarketplace;
before(async () => {
  market = await startFakeMarketplace();
});
after(() => market.close());
beforeEach(() => {
  market.override = null;
  market.entitlements.set(USER.id, ENTITLEMENT);
  market.calls.clear();
});

function backendWith(overrides: Partial<AppBackendOptions> = {}) {
  const clock = createVirtualClock(NOW);
  const events: WebhookDelivery[] = [];
  const backend = createAppBackend({
    ...backendOptions(market.siteUrl),
    publicOrigin: APP,
    clock,
    onEvent: (delivery) => {
      events.push(delivery);
    },
    // Quiet: the tests that look at what is reported pass their own.
    onError: () => {},
    ...overrides,
  });
  return { backend, clock, events };
}

const contextToken = (overrides: Partial<Parameters<typeof signContextToken>[0]> = {}) =>
  signContextToken({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: market.siteUrl, host: DASHBOARD, appId: 'app_1', user: USER, now: NOW, ...overrides });

const postSession = (backend: AppBackend, body: unknown) =>
  backend(new Request(`${BASE}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));

async function errorCode(response: Response): Promise<string> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  assert.equal(typeof body.error.message, 'string');
  return body.error.code;
}

describe('createAppBackend: session exchange (docs/decisions.md#session-exchange)', () => {
  it('POST /session turns a context token into a session; GET /session reads it back', async () => {
    const { backend } = backendWith();
    const response = await postSession(backend, { context: await contextToken(), host: DASHBOARD });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const body = SessionResponse.parse(await response.json());
    assert.deepEqual(body.user, USER);
    assert.deepEqual(body.entitlement, ENTITLEMENT);
    assert.equal(body.host, DASHBOARD);
    assert.equal(body.session.expires_at, at(900));

    const again = await backend(new Request(`${BASE}/session`, { headers: { authorization: `Bearer ${body.session.token}` } }));
    assert.equal(again.status, 200);
    const read = SessionResponse.parse(await again.json());
    assert.deepEqual(read.user, USER);
    assert.equal(read.session.token, body.session.token);
    assert.equal(market.calls.get('/api/v1/whoami'), undefined, 'the profile comes from the session token');
    assert.equal(market.calls.get('/api/v1/entitlements'), 1, 'the second read is served from the cache');

    const session = await backend.requireSession(new Request(BASE, { headers: { authorization: `Bearer ${body.session.token}` } }));
    assert.deepEqual(
      { userId: session.userId, appId: session.appId, host: session.host, expiresAt: session.expiresAt },
      { userId: 'usr_1', appId: 'app_1', host: DASHBOARD, expiresAt: NOW + 900_000 },
    );
  });

  it('GET /session?refresh=1 reloads the entitlement from the marketplace, at most once per user every 5 s, and never answers a refresh from the cache', async () => {
    // Virtual time that moves only when the test lets a wait end: the whole burst asks first.
    const clock = createVirtualClock(NOW);
    let endWaits!: () => void;
    const waitsEnd = new Promise<void>((resolve) => (endWaits = resolve));
    clock.sleep = async (ms) => {
      clock.sleeps.push(ms);
      await waitsEnd;
      clock.advance(ms);
    };
    const { backend } = backendWith({ clock });
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    market.entitlements.set(USER.id, { ...ENTITLEMENT, plan: 'business' });
    const headers = { authorization: `Bearer ${body.session.token}` };
    const read = async (query: string) => SessionResponse.parse(await (await backend(new Request(`${BASE}/session${query}`, { headers }))).json());
    assert.equal((await read('')).entitlement?.plan, 'pro', 'cached');
    assert.equal((await read('?refresh=1')).entitlement?.plan, 'business', 'reloaded');
    market.entitlements.set(USER.id, { ...ENTITLEMENT, plan: 'enterprise' });
    clock.advance(1_000);
    // A refresh within the interval asks whether the entitlement is cached, then waits (or joins
    // the wait): the wait ends once all twenty have asked.
    let askedCache = 0;
    const isCached = backend.client.isCached.bind(backend.client);
    backend.client.isCached = (userId) => (askedCache++, isCached(userId));
    const asking = Promise.all(Array.from({ length: 20 }, () => read('?refresh=1')));
    await until(() => askedCache === 20, 'all twenty refreshes wait');
    endWaits();
    const burst = await asking;
    // Within 5 s of the last reload: all wait for the interval to end, then share one reload.
    assert.ok(burst.every((answer) => answer.entitlement?.plan === 'enterprise'), 'the change is seen, not the cached plan');
    assert.equal(market.calls.get('/api/v1/entitlements'), 3, 'the burst cost the API key one call');
    assert.deepEqual(clock.sleeps, [REFRESH_MIN_INTERVAL_MS - 1_000], 'one wait, to the end of the interval');
    assert.equal(clock.now(), NOW + REFRESH_MIN_INTERVAL_MS);
    // The next refresh within the new interval waits for its end in turn: the finished wait is not
    // handed out again with its old answer.
    market.entitlements.set(USER.id, { ...ENTITLEMENT, plan: 'lifetime' });
    clock.advance(1_000);
    assert.equal((await read('?refresh=1')).entitlement?.plan, 'lifetime');
    assert.equal(market.calls.get('/api/v1/entitlements'), 4);
    assert.equal(clock.now(), NOW + 2 * REFRESH_MIN_INTERVAL_MS);
    clock.advance(REFRESH_MIN_INTERVAL_MS);
    market.entitlements.set(USER.id, { ...ENTITLEMENT, plan: 'business' });
    assert.equal((await read('?refresh=1')).entitlement?.plan, 'business', 'reloaded at once 5 s later');
    assert.equal(market.calls.get('/api/v1/entitlements'), 5);
  });

  it('GET /session?refresh=1 costs one marketplace call for a burst of refreshes, also with an empty cache', async () => {
    const { backend } = backendWith();
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    const headers = { authorization: `Bearer ${body.session.token}` };
    backend.client.invalidate(USER.id);
    // The marketplace answers once all ten have asked the client: a request that came after the
    // answer would find the entitlement cached and rightly wait for the next interval instead.
    const burst = 10;
    let asked = 0;
    let everyoneAsked!: () => void;
    const asking = new Promise<void>((resolve) => (everyoneAsked = resolve));
    const entitlements = backend.client.entitlements.bind(backend.client);
    backend.client.entitlements = (who) => {
      if (++asked === burst) everyoneAsked();
      return entitlements(who);
    };
    const loads: string[] = [];
    market.override = async (req, res) => {
      loads.push(new URL(req.url ?? '/', market.siteUrl).pathname);
      await asking;
      sendJson(res, 200, ENTITLEMENT);
    };
    await Promise.all(Array.from({ length: burst }, () => backend(new Request(`${BASE}/session?refresh=1`, { headers }))));
    assert.deepEqual(loads, ['/api/v1/entitlements'], 'the burst shared one load');
  });

  it('GET /session?refresh=1 within 5 s of a reload sees what a webhook changed, at once', async () => {
    const { backend, clock } = backendWith();
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    const headers = { authorization: `Bearer ${body.session.token}` };
    const read = async () => SessionResponse.parse(await (await backend(new Request(`${BASE}/session?refresh=1`, { headers }))).json());
    assert.equal((await read()).entitlement?.plan, 'pro');
    market.entitlements.set(USER.id, { ...ENTITLEMENT, status: 'cancelled' });
    const delivery = JSON.stringify({ event: 'subscription.cancelled', timestamp: at(0), data: { user_id: USER.id, plan: 'pro' } });
    const hook = await backend(
      new Request(`${BASE}/webhooks`, { method: 'POST', body: delivery, headers: { 'x-service-signature': signWebhookBody(delivery, WEBHOOK_SECRET) } }),
    );
    assert.equal(hook.status, 200);
    assert.equal((await read()).entitlement?.status, 'cancelled');
    assert.deepEqual(clock.sleeps, [], 'no wait for the interval: the webhook said it changed');
  });

  it('GET /session?refresh=1 answers 503 ERR_RATE_LIMITED with Retry-After when the API key is exhausted', async () => {
    const clock = createVirtualClock(NOW);
    const client = createMarketplaceClient({ siteUrl: market.siteUrl, apiKey: API_KEY, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, clock, rateLimit: { limit: 1 } });
    const { backend } = backendWith({ clock, client });
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    const refused = await backend(new Request(`${BASE}/session?refresh=1`, { headers: { authorization: `Bearer ${body.session.token}` } }));
    assert.equal(refused.status, 503);
    assert.equal(await errorCode(refused), 'ERR_RATE_LIMITED');
    assert.equal(refused.headers.get('retry-after'), '60', 'the slot taken by POST /session frees up 60 s later');
    assert.equal(market.calls.get('/api/v1/entitlements'), 1);
  });

  it('POST /session refused for a marketplace failure (503) leaves the context token usable for the retry', async () => {
    const clock = createVirtualClock(NOW);
    const client = createMarketplaceClient({ siteUrl: market.siteUrl, apiKey: API_KEY, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, clock, rateLimit: { limit: 1 } });
    const { backend } = backendWith({ clock, client });
    await client.entitlements({ userId: 'usr_other' }); // takes the only slot of the minute
    const request = { context: await contextToken(), host: DASHBOARD };
    const refused = await postSession(backend, request);
    assert.equal(refused.status, 503);
    assert.equal(await errorCode(refused), 'ERR_RATE_LIMITED');
    clock.advance(Number(refused.headers.get('retry-after')) * 1000);
    const retried = await postSession(backend, request);
    assert.equal(retried.status, 200, 'the jti was freed: the retry is not a replay');
    assert.equal(await errorCode(await postSession(backend, request)), 'ERR_CONTEXT_TOKEN_REPLAYED', 'once it made a session, the token is spent');
  });

  it('POST /session: a store whose release throws is reported, and the marketplace failure still answers', async () => {
    const clock = createVirtualClock(NOW);
    const client = createMarketplaceClient({ siteUrl: market.siteUrl, apiKey: API_KEY, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, clock, rateLimit: { limit: 1 } });
    const claimed = new Set<string>();
    const errors: unknown[] = [];
    const replayStore = {
      claim: (key: string) => !claimed.has(key) && !!claimed.add(key),
      release: (): void => {
        throw new Error('store down');
      },
    };
    const { backend } = backendWith({ clock, client, replayStore, onError: (error) => errors.push(error) });
    await client.entitlements({ userId: 'usr_other' });
    const refused = await postSession(backend, { context: await contextToken(), host: DASHBOARD });
    assert.deepEqual([refused.status, await errorCode(refused), refused.headers.has('retry-after')], [503, 'ERR_RATE_LIMITED', true]);
    assert.deepEqual(
      errors.map((error) => (error as MarketplaceKitError).code ?? (error as Error).message),
      ['store down', 'ERR_RATE_LIMITED'],
      'the release failure, then the answer (a 503) itself',
    );
  });

  it('builds its client with the fetch and entitlementTtlMs it is given', async () => {
    const fetched: string[] = [];
    const spy: typeof fetch = (input, init) => {
      fetched.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
      return fetch(input, init);
    };
    const { backend } = backendWith({ fetch: spy, entitlementTtlMs: 0 });
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    const headers = { authorization: `Bearer ${body.session.token}` };
    for (let read = 0; read < 2; read += 1) assert.equal((await backend(new Request(`${BASE}/session`, { headers }))).status, 200);
    assert.deepEqual(fetched, Array(3).fill('/api/v1/entitlements'), 'through the given fetch, and without a cache every read asks');
  });

  it('answers entitlement null when the marketplace holds none', async () => {
    market.entitlements.delete(USER.id);
    const { backend } = backendWith();
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    assert.equal(body.entitlement, null);
  });

  it('refuses an mp_host outside hostOrigins, a host claim that differs from mp_host, and a replayed token', async () => {
    const { backend } = backendWith();
    const other = await contextToken({ host: 'https://evil.example' });
    const outside = await postSession(backend, { context: other, host: 'https://evil.example' });
    assert.equal(outside.status, 401);
    assert.equal(await errorCode(outside), 'ERR_CONTEXT_TOKEN_HOST');

    const mismatch = await postSession(backend, { context: await contextToken({ host: 'https://other.example' }), host: DASHBOARD });
    assert.equal(mismatch.status, 401);
    assert.equal(await errorCode(mismatch), 'ERR_CONTEXT_TOKEN_HOST');

    const token = await contextToken();
    assert.equal((await postSession(backend, { context: token, host: DASHBOARD })).status, 200);
    const replay = await postSession(backend, { context: token, host: DASHBOARD });
    assert.equal(replay.status, 401);
    assert.equal(await errorCode(replay), 'ERR_CONTEXT_TOKEN_REPLAYED');
  });

  it('answers 503 ERR_REPLAY_STORE_FULL, reported to onError, when the memory store is full of live tokens', async () => {
    const errors: unknown[] = [];
    const { backend } = backendWith({ replayStore: createMemoryReplayStore({ maxEntries: 2 }), onError: (error) => errors.push(error) });
    const first = await contextToken();
    assert.equal((await postSession(backend, { context: first, host: DASHBOARD })).status, 200);
    assert.equal((await postSession(backend, { context: await contextToken(), host: DASHBOARD })).status, 200);
    const full = await postSession(backend, { context: await contextToken(), host: DASHBOARD });
    assert.equal(full.status, 503);
    // The browser hears that the server is busy; the sizes and settings go to onError only.
    assert.deepEqual(await full.json(), { error: { code: 'ERR_REPLAY_STORE_FULL', message: 'This server is busy: retry in a few minutes' } });
    // When the older half has expired: the first token's five minutes (and the 10 s of leeway) from NOW.
    assert.equal(full.headers.get('retry-after'), '310');
    assert.deepEqual(errors.map((error) => isKitError(error) && error.code), ['ERR_REPLAY_STORE_FULL']);
    assert.match((errors[0] as Error).message, /maxEntries/);
    assert.equal(await errorCode(await postSession(backend, { context: first, host: DASHBOARD })), 'ERR_CONTEXT_TOKEN_REPLAYED', 'the first token is not forgotten');
  });

  it('caps the context tokens one user exchanges in five minutes: 429 ERR_RATE_LIMITED with Retry-After, the refused token stays usable', async () => {
    const { backend, clock } = backendWith({ maxExchangesPerUser: 2 });
    const launch = async (overrides: Parameters<typeof contextToken>[0] = {}) => postSession(backend, { context: await contextToken(overrides), host: DASHBOARD });
    assert.equal((await launch()).status, 200);
    clock.advance(60_000);
    assert.equal((await launch({ now: NOW + 60_000 })).status, 200);
    const refusedToken = await contextToken({ now: NOW + 60_000 });
    const refused = await postSession(backend, { context: refusedToken, host: DASHBOARD });
    assert.deepEqual([refused.status, await errorCode(refused), refused.headers.get('retry-after')], [429, 'ERR_RATE_LIMITED', '240']);
    clock.advance(500);
    const later = await postSession(backend, { context: await contextToken({ now: NOW + 60_500 }), host: DASHBOARD });
    assert.equal(later.headers.get('retry-after'), '240', '239.5 s rounds up: a client that waits as told is not refused again');
    assert.equal(((await later.json()) as { error: { message: string } }).error.message, 'Too many sessions started for this user: retry in 240 s', 'the message says the same');
    assert.equal((await launch({ now: NOW + 60_000, user: { ...USER, id: 'usr_2' } })).status, 200, 'another user is counted apart');

    // The window began with the first exchange: at its end the user may start sessions again, and
    // the refused token (still within its own five minutes) was not spent.
    clock.advance(240_000);
    assert.equal((await postSession(backend, { context: refusedToken, host: DASHBOARD })).status, 200);
  });

  it('does not count a launch the marketplace failed against the user (their retries during an outage)', async () => {
    const { backend } = backendWith({ maxExchangesPerUser: 1 });
    market.override = (_req, res) => res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>down</h1>');
    const request = { context: await contextToken(), host: DASHBOARD };
    for (let retry = 0; retry < 3; retry++) assert.equal((await postSession(backend, request)).status, 502);
    market.override = null;
    assert.equal((await postSession(backend, request)).status, 200, 'the one exchange allowed is still there');
    assert.equal((await postSession(backend, { context: await contextToken(), host: DASHBOARD })).status, 429);
  });

  it('by default keeps launches and webhooks in separate replay stores: a flood of launches fills its own, webhooks still pass', async () => {
    const { backend, events } = backendWith({ maxExchangesPerUser: Infinity, replayStoreSize: 1_000 });
    let status = 200;
    for (let launches = 0; status === 200; launches++) {
      assert.ok(launches <= 1_000, 'the launches store holds at most replayStoreSize keys');
      status = (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).status;
    }
    assert.equal(status, 503);
    const body = JSON.stringify({ event: 'subscription.created', timestamp: at(0), data: { user_id: 'usr_1', plan: 'business' } });
    const delivered = await backend(
      new Request(`${BASE}/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) } }),
    );
    assert.equal(delivered.status, 200);
    assert.equal(events.length, 1);
  });

  it('with the default cap, one user cannot fill the replay store: other users still launch', async () => {
    const { backend } = backendWith();
    const statuses = new Map<number, number>();
    for (let i = 0; i < 40; i++) {
      const { status } = await postSession(backend, { context: await contextToken(), host: DASHBOARD });
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    // 30 + ceil(3000 / 900) with the default 900 s sessions.
    assert.deepEqual([...statuses], [[200, 34], [429, 6]]);
    assert.equal((await postSession(backend, { context: await contextToken({ user: { ...USER, id: 'usr_2' } }), host: DASHBOARD })).status, 200);
  });

  it('refuses a body without context or host, non-JSON, and a body over 16 KiB', async () => {
    const { backend } = backendWith();
    const big = await postSession(backend, { context: await contextToken(), host: DASHBOARD, padding: 'x'.repeat(16 * 1024) });
    assert.deepEqual([big.status, await errorCode(big)], [413, 'ERR_PAYLOAD_TOO_LARGE']);
    const noHost = await postSession(backend, { context: await contextToken() });
    assert.equal(noHost.status, 400);
    assert.equal(await errorCode(noHost), 'ERR_INVALID_INPUT');
    const notJson = await backend(new Request(`${BASE}/session`, { method: 'POST', body: '{"context":' }));
    assert.equal(notJson.status, 400);
    assert.equal(await errorCode(notJson), 'ERR_INVALID_INPUT');
  });

  it('never accepts a context token as a session, nor a session token as a context token', async () => {
    const { backend } = backendWith();
    const context = await contextToken();
    const asSession = await backend(new Request(`${BASE}/session`, { headers: { authorization: `Bearer ${context}` } }));
    assert.equal(asSession.status, 401);
    assert.equal(await errorCode(asSession), 'ERR_SESSION_INVALID');
    assert.equal(asSession.headers.get('www-authenticate'), 'Bearer');

    const body = SessionResponse.parse(await (await postSession(backend, { context, host: DASHBOARD })).json());
    const asContext = await postSession(backend, { context: body.session.token, host: DASHBOARD });
    assert.equal(asContext.status, 401);
    assert.match(await errorCode(asContext), /^ERR_CONTEXT_TOKEN_/);
  });

  it('expires sessions, and rejects missing and malformed credentials', async () => {
    const { backend, clock } = backendWith({ sessionTtlSeconds: 60 });
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    const headers = { authorization: `Bearer ${body.session.token}` };
    clock.advance(61_000);
    const expired = await backend(new Request(`${BASE}/session`, { headers }));
    assert.equal(expired.status, 401);
    assert.equal(await errorCode(expired), 'ERR_SESSION_EXPIRED');

    const missing = await backend(new Request(`${BASE}/session`));
    assert.equal(await errorCode(missing), 'ERR_SESSION_MISSING');
    const fresh = SessionResponse.parse(await (await postSession(backend, { context: await contextToken({ now: NOW + 61_000 }), host: DASHBOARD })).json());
    const lowerCase = await backend(new Request(`${BASE}/session`, { headers: { authorization: `bearer ${fresh.session.token}` } }));
    assert.equal(lowerCase.status, 200, 'the auth scheme is case-insensitive (RFC 7235)');
    for (const authorization of ['Bearer', 'Bearer  ', 'bearer a b']) {
      const malformed = await backend(new Request(`${BASE}/session`, { headers: { authorization } }));
      assert.equal(await errorCode(malformed), 'ERR_SESSION_INVALID', authorization);
    }
    // Another scheme (HTTP Basic in front of a staging site) is no session: the cookie decides.
    const basic = await backend(new Request(`${BASE}/session`, { headers: { authorization: 'Basic abc' } }));
    assert.equal(await errorCode(basic), 'ERR_SESSION_MISSING');
    const tampered = await backend(new Request(`${BASE}/session`, { headers: { authorization: `Bearer ${body.session.token}x` } }));
    assert.equal(await errorCode(tampered), 'ERR_SESSION_INVALID');
    // The whole header is the token: a valid one followed by more is no Bearer header.
    const trailing = await backend(new Request(`${BASE}/session`, { headers: { authorization: `Bearer ${fresh.session.token} extra` } }));
    assert.equal(await errorCode(trailing), 'ERR_SESSION_INVALID');
  });

  it('requireEntitlement grants by the shared access rules and refuses with 403 and a reason', async () => {
    const { backend } = backendWith();
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    const request = () => new Request(`${APP}/api/export`, { headers: { authorization: `Bearer ${body.session.token}` } });
    const granted = await backend.requireEntitlement(request(), { feature: 'export', plan: ['pro', 'business'] });
    assert.equal(granted.session.userId, 'usr_1');
    assert.equal(granted.entitlement?.plan, 'pro');
    await assert.rejects(backend.requireEntitlement(request(), { feature: 'audit-log' }), (error: Error & { code?: string; status?: number; reason?: string }) => {
      assert.equal(error.code, 'ERR_ACCESS_DENIED');
      assert.equal(error.status, 403);
      assert.equal(error.reason, 'feature');
      assert.match(error.message, /feature/);
      return true;
    });
    await assert.rejects(backend.requireEntitlement(new Request(APP)), { code: 'ERR_SESSION_MISSING', status: 401 });
    // A requirement it cannot read (from JSON config, say) fails closed, as a 500 the app hears of.
    const unreadable = JSON.parse('{"features": ["audit-log"]}') as Record<string, unknown>;
    await assert.rejects(backend.requireEntitlement(request(), unreadable), { code: 'ERR_CONFIG', status: 500 });
  });

  it('requireEntitlement refuses a revoked session as revoked, whatever becomes of the entitlement lookup it ran beside', async () => {
    const revocations = createMemoryRevocationStore();
    const { backend } = backendWith({ stores: { revocations } });
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    const request = () => new Request(`${APP}/api/export`, { headers: { authorization: `Bearer ${body.session.token}` } });
    // The session began at NOW (whole seconds): a cut-off a second later ends it.
    revocations.revoke('usr_1', NOW + 1_000, NOW + 3_600_000, NOW);
    // The lookup beside the check fails: the cached entitlement is gone and the marketplace is down.
    await backend.client.invalidate('usr_1');
    let refused = 0;
    market.override = (_req, res) => {
      refused += 1;
      sendJson(res, 503, { error: { code: 'down', message: 'down' } });
    };
    await assert.rejects(backend.requireEntitlement(request(), { feature: 'export' }), { code: 'ERR_SESSION_REVOKED', status: 401 });
    await until(() => refused > 0, 'the lookup beside the check reached the marketplace');
    // And when it succeeds.
    market.override = null;
    await assert.rejects(backend.requireEntitlement(request(), { feature: 'export' }), { code: 'ERR_SESSION_REVOKED', status: 401 });
  });

  it('answers 404 and 405 as JSON errors', async () => {
    const { backend } = backendWith();
    const unknown = await backend(new Request(`${BASE}/nope`));
    assert.equal(unknown.status, 404);
    assert.equal(await errorCode(unknown), 'ERR_NOT_FOUND');
    const wrongMethod = await backend(new Request(`${BASE}/webhooks`));
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
    assert.equal(await errorCode(wrongMethod), 'ERR_METHOD_NOT_ALLOWED');
  });

  it('answers HEAD on /session as GET without a body, errors included; not on the OAuth routes, whose GET acts', async () => {
    const { backend } = backendWith();
    const body = SessionResponse.parse(await (await postSession(backend, { context: await contextToken(), host: DASHBOARD })).json());
    const headers = { authorization: `Bearer ${body.session.token}` };
    const get = await backend(new Request(`${BASE}/session`, { headers }));
    const head = await backend(new Request(`${BASE}/session`, { method: 'HEAD', headers }));
    const seen = (answer: Response) => [answer.status, answer.headers.get('content-type'), answer.headers.get('cache-control')];
    assert.equal(get.status, 200);
    assert.deepEqual(seen(head), seen(get));
    assert.equal(await head.text(), '');
    const missing = await backend(new Request(`${BASE}/session`, { method: 'HEAD' }));
    assert.deepEqual([missing.status, missing.headers.get('www-authenticate'), await missing.text()], [401, 'Bearer', '']);
    const postOnly = await backend(new Request(`${BASE}/webhooks`, { method: 'HEAD' }));
    assert.deepEqual([postOnly.status, postOnly.headers.get('allow'), await postOnly.text()], [405, 'POST', '']);
    const unknown = await backend(new Request(`${BASE}/nope`, { method: 'HEAD' }));
    assert.deepEqual([unknown.status, await unknown.text()], [404, '']);
    for (const route of ['/oauth/start', '/oauth/callback']) {
      const oauth = await backend(new Request(`${BASE}${route}`, { method: 'HEAD' }));
      assert.deepEqual([oauth.status, oauth.headers.get('allow'), oauth.headers.get('set-cookie')], [405, 'GET', null], route);
    }
  });

  it('answers 404 ERR_NOT_FOUND to a path outside its basePath, also a custom one, and serves its routes under that basePath', async () => {
    const { backend } = backendWith({ basePath: '/mp/' });
    assert.equal(backend.basePath, '/mp');
    for (const path of ['/api/marketplace/session', '/mpx/session', '/']) {
      const outside = await backend(new Request(`${APP}${path}`));
      assert.equal(outside.status, 404, path);
      const body = (await outside.json()) as { error: { code: string; message: string } };
      assert.deepEqual([body.error.code, body.error.message], ['ERR_NOT_FOUND', `${path} is outside /mp`], path);
    }
    const session = await backend(new Request(`${APP}/mp/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ context: await contextToken(), host: DASHBOARD }) }));
    assert.equal(session.status, 200);
  });

  it('answers as it would have when onError itself throws: a failing logger changes no status and rejects nothing', async () => {
    const { backend } = backendWith({
      onError: () => {
        throw new Error('the log sink is down');
      },
      onEvent: () => Promise.reject(new Error('database down')),
    });
    const body = JSON.stringify({ event: 'user.revoked', timestamp: new Date(NOW).toISOString(), data: { user_id: 'usr_1' } });
    const signed = (secret: string) =>
      backend(new Request(`${BASE}/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, secret) } }));
    // Both are reported: a 5xx, and a signature that matches no secret.
    const forged = await signed('whsec_rotated_away');
    assert.equal(forged.status, 401);
    assert.equal(await errorCode(forged), 'ERR_WEBHOOK_SIGNATURE_MISMATCH');
    const failed = await signed(WEBHOOK_SECRET);
    assert.equal(failed.status, 500);
    assert.equal(await errorCode(failed), 'ERR_WEBHOOK_HANDLER_FAILED');
  });

  it('answers a request whose body was read before it with a typed 500 told to onError, not as an empty body', async () => {
    const errors: unknown[] = [];
    const { backend } = backendWith({ onError: (error) => errors.push(error) });
    const read = async (request: Request) => {
      await request.text(); // a middleware that called request.json() before the backend
      return backend(request);
    };
    const webhookBody = JSON.stringify({ event: 'user.revoked', timestamp: new Date(NOW).toISOString(), data: { user_id: 'usr_1' } });
    const webhook = await read(
      new Request(`${BASE}/webhooks`, { method: 'POST', headers: { 'x-service-signature': signWebhookBody(webhookBody, WEBHOOK_SECRET) }, body: webhookBody }),
    );
    const session = await read(
      new Request(`${BASE}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ context: await contextToken(), host: DASHBOARD }) }),
    );
    assert.deepEqual([webhook.status, await errorCode(webhook)], [500, 'ERR_WEBHOOK_BODY_PARSED']);
    assert.deepEqual([session.status, await errorCode(session)], [500, 'ERR_CONFIG']);
    assert.deepEqual(errors.map((error) => (error as { code?: string }).code), ['ERR_WEBHOOK_BODY_PARSED', 'ERR_CONFIG']);
    assert.match(String((errors[1] as Error).message), /read the request body before the kit could: .*request\.clone\(\)/);
  });

  it("answers 405 to a method named like an object's own (constructor, toString), never echoing the request", async () => {
    // node:http refuses such methods before the handler; Request-native runtimes (Deno, Bun,
    // Workers) and direct calls pass them on.
    const { backend } = backendWith({ corsOrigins: ['http://127.0.0.1:8000'] });
    for (const method of ['constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty']) {
      const headers = { origin: 'http://127.0.0.1:8000', cookie: '__Host-mp_session=secret-session-token' };
      const answer: unknown = await backend(new Request(`${BASE}/session`, { method, headers }));
      assert.ok(answer instanceof Response, `${method}: a Response`);
      assert.deepEqual([answer.status, answer.headers.get('cookie'), await errorCode(answer)], [405, null, 'ERR_METHOD_NOT_ALLOWED'], method);
      assert.equal(answer.headers.get('allow'), 'POST, GET, HEAD, DELETE');
    }
  });

  it('tells onError of signatures that match no secret (a wrong or rotated secret), not of other 4xx', async () => {
    const errors: unknown[] = [];
    const { backend } = backendWith({ onError: (error) => errors.push(error) });
    const forged = await postSession(backend, { context: await contextToken({ clientSecret: 'another-client-secret-0123456789' }), host: DASHBOARD });
    assert.equal(forged.status, 401);
    assert.match((await forged.json()).error.message, /is clientSecret this app's Client Secret from the marketplace\?/);
    const body = JSON.stringify({ event: 'user.revoked', timestamp: new Date(NOW).toISOString(), data: { user_id: 'usr_1' } });
    const signed = (secret: string) =>
      backend(new Request(`${BASE}/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, secret) } }));
    assert.equal((await signed('whsec_rotated_away')).status, 401);
    assert.equal((await postSession(backend, { context: 'not-a-token', host: DASHBOARD })).status, 401, 'a malformed token is not reported');
    assert.deepEqual(
      errors.map((error) => (error as MarketplaceKitError).code),
      ['ERR_CONTEXT_TOKEN_SIGNATURE', 'ERR_WEBHOOK_SIGNATURE_MISMATCH'],
    );
  });

  it('logs what it would report with console.error when no onError is given', async (t) => {
    const logged = t.mock.method(console, 'error', () => {});
    const { backend } = backendWith({ onError: undefined, onEvent: () => Promise.reject(new Error('database down')) });
    const body = JSON.stringify({ event: 'user.revoked', timestamp: new Date(NOW).toISOString(), data: { user_id: 'usr_1' } });
    const answer = await backend(
      new Request(`${BASE}/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) } }),
    );
    assert.equal(answer.status, 500);
    assert.equal(logged.mock.callCount(), 1);
    const [prefix, error] = logged.mock.calls[0]!.arguments as [string, MarketplaceKitError];
    assert.match(prefix, /^\[marketplace-app-kit\]/);
    assert.equal(error.code, 'ERR_WEBHOOK_HANDLER_FAILED');
    assert.equal((error.cause as Error).message, 'database down');
  });

  it("refuses options that a client of your own would make it ignore, and a client for another marketplace or app", () => {
    const oauth = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET };
    const client = createMarketplaceClient({ siteUrl: market.siteUrl, apiKey: API_KEY, ...oauth });
    assert.equal(backendWith({ client }).backend.client, client);
    assert.equal(client.clientId, CLIENT_ID);
    assert.throws(() => backendWith({ client, timeoutMs: 500, fetch }), {
      code: 'ERR_CONFIG',
      message: /^createAppBackend: fetch, timeoutMs would be ignored with your own client: pass them to createMarketplaceClient/,
    });
    assert.throws(() => backendWith({ client, entitlementTtlMs: 0 }), { code: 'ERR_CONFIG', message: /entitlementTtlMs would be ignored/ });
    assert.throws(() => backendWith({ client, apiBaseUrl: `${market.siteUrl}/api` }), { code: 'ERR_CONFIG', message: /apiBaseUrl would be ignored/ });
    assert.throws(() => backendWith({ client, tokenPath: '/oauth2/token' }), { code: 'ERR_CONFIG', message: /tokenPath would be ignored/ });
    const elsewhere = createMarketplaceClient({ siteUrl: 'https://other-marketplace.example', apiKey: API_KEY, ...oauth });
    assert.throws(() => backendWith({ client: elsewhere }), { code: 'ERR_CONFIG', message: /the client is for "https:\/\/other-marketplace\.example"/ });
    assert.throws(() => backendWith({ client, apiKey: 'sk_123' }), { code: 'ERR_CONFIG', message: /test_ \(development\) or live_/ });
    // The same marketplace written differently is the same marketplace.
    for (const siteUrl of [market.siteUrl.replace('http://', 'HTTP://'), `${market.siteUrl}/`]) {
      assert.equal(backendWith({ client: createMarketplaceClient({ siteUrl, apiKey: API_KEY, ...oauth }) }).backend.client.siteUrl, market.siteUrl);
    }
    // A client without the API key could not load any user's entitlement.
    assert.throws(() => backendWith({ client: createMarketplaceClient({ siteUrl: market.siteUrl, ...oauth }) }), { code: 'ERR_CONFIG', message: /the client has no API key/ });
    assert.throws(() => backendWith({ client, apiKey: 'live_other' }), { code: 'ERR_CONFIG', message: /a test API key, but apiKey is a live key/ });
    // The sign-in names options.clientId to the marketplace and has the client exchange the code:
    // a client without OAuth credentials, or another app's, would fail every sign-in at its callback.
    assert.throws(() => backendWith({ client: createMarketplaceClient({ siteUrl: market.siteUrl, apiKey: API_KEY }) }), {
      code: 'ERR_CONFIG',
      message: new RegExp(`the client has no clientId and clientSecret, not "${CLIENT_ID}"`),
    });
    assert.throws(() => backendWith({ client: createMarketplaceClient({ siteUrl: market.siteUrl, apiKey: API_KEY, clientId: CLIENT_ID }) }), {
      code: 'ERR_CONFIG',
      message: /the client has no clientId and clientSecret/,
    });
    assert.throws(() => backendWith({ client: createMarketplaceClient({ siteUrl: market.siteUrl, apiKey: API_KEY, clientId: 'cli_other', clientSecret: 'another_secret' }) }), {
      code: 'ERR_CONFIG',
      message: new RegExp(`the client's clientId is "cli_other", not "${CLIENT_ID}": create it with the same clientId and clientSecret`),
    });
  });

  it('refuses unsafe configuration', () => {
    assert.throws(() => backendWith({ sessionSecret: undefined as unknown as string }), {
      code: 'ERR_CONFIG',
      message: /^createAppBackend: sessionSecret is required: at least 32 random characters/,
    });
    assert.throws(() => backendWith({ sessionSecret: 'short' }), { code: 'ERR_CONFIG', message: /^createAppBackend: sessionSecret must be at least 32 characters: make one with `openssl rand -base64 32`/ });
    // Long enough, but typed by hand: too few different characters to be random. Never quoted.
    for (const sessionSecret of ['a'.repeat(40), 'ab'.repeat(20), 'passwordpassword'.repeat(3)]) {
      assert.throws(() => backendWith({ sessionSecret }), (error: MarketplaceKitError) => {
        assert.equal(error.code, 'ERR_CONFIG');
        assert.match(error.message, /^createAppBackend: sessionSecret has only \d different characters?: it looks typed by hand, not random; make one with `openssl rand -base64 32` or `node -p/);
        assert.ok(!error.message.includes(sessionSecret.slice(0, 16)), error.message);
        return true;
      }, sessionSecret);
    }
    // Random ones of the shortest length pass, in hex and in base64.
    for (let i = 0; i < 200; i++) {
      assert.doesNotThrow(() => backendWith({ sessionSecret: randomBytes(16).toString('hex') }));
      assert.doesNotThrow(() => backendWith({ sessionSecret: randomBytes(24).toString('base64') }));
    }
    assert.throws(() => backendWith({ sessionSecret: CLIENT_SECRET }), { code: 'ERR_CONFIG' });
    assert.throws(() => backendWith({ hostOrigins: [] }), { code: 'ERR_CONFIG' });
    assert.throws(() => backendWith({ hostOrigins: ['https://dash.example; script-src *'] }), { code: 'ERR_CONFIG' });
    assert.throws(() => backendWith({ apiKey: 'prod_123' }), { code: 'ERR_CONFIG' });
    // A public redirectUri without publicOrigin would let each request's Host decide whether the
    // backend runs on loopback (plain cookies, the request's own origin trusted).
    assert.throws(() => backendWith({ publicOrigin: undefined, redirectUri: `${APP}/api/marketplace/oauth/callback` }), {
      code: 'ERR_CONFIG',
      message: /redirectUri is on https:\/\/app\.example: set publicOrigin too/,
    });
    // The sign-in's state cookie stays on publicOrigin: a callback elsewhere never gets it.
    for (const redirectUri of ['https://www.app.example/api/marketplace/oauth/callback', 'http://app.example/api/marketplace/oauth/callback']) {
      assert.throws(() => backendWith({ redirectUri }), { code: 'ERR_CONFIG', message: /redirectUri must be on publicOrigin https:\/\/app\.example/ }, redirectUri);
    }
    for (const redirectUri of ['app.example/callback', 'ftp://app.example/callback']) {
      assert.throws(() => backendWith({ redirectUri }), { code: 'ERR_CONFIG', message: /redirectUri must be an http\(s\) URL/ }, redirectUri);
    }
    // RFC 6749 §3.1.2: a redirection endpoint URI must not include a fragment, not even an empty one.
    for (const redirectUri of [`${APP}/api/marketplace/oauth/callback#done`, `${APP}/api/marketplace/oauth/callback#`]) {
      assert.throws(() => backendWith({ redirectUri }), { code: 'ERR_CONFIG', message: /^createAppBackend: redirectUri must not include a fragment \(RFC 6749 §3\.1\.2\)/ }, redirectUri);
    }
    for (const host of ['127.0.0.1:3000', 'localhost:3000', '[::1]:3000']) {
      assert.doesNotThrow(() => backendWith({ publicOrigin: undefined, redirectUri: `http://${host}/api/marketplace/oauth/callback` }), host);
    }
    for (const sessionTtlSeconds of [901, 0, 0.5, 1.5, NaN]) {
      assert.throws(() => backendWith({ sessionTtlSeconds }), { code: 'ERR_CONFIG' }, String(sessionTtlSeconds));
    }
    // A required option left out (an unset environment variable) is named.
    for (const name of ['clientId', 'clientSecret', 'siteUrl', 'apiKey'] as const) {
      for (const value of [undefined, '']) {
        assert.throws(() => backendWith({ [name]: value }), { code: 'ERR_CONFIG', message: new RegExp(`^createAppBackend: ${name} is required$`) }, `${name} ${String(value)}`);
      }
    }
    // A basePath that is no path (a URL, a bare word, a query) would never match a request.
    for (const basePath of ['api/marketplace', 'https://app.example/api', '/api?x=1', '/api marketplace']) {
      assert.throws(() => backendWith({ basePath }), { code: 'ERR_CONFIG', message: /^createAppBackend: basePath must be a path like \/api\/marketplace$/ }, basePath);
    }
    // What plain JavaScript lets through: each named, with the value as given.
    assert.throws(() => createAppBackend(undefined as unknown as AppBackendOptions), { code: 'ERR_CONFIG', message: /pass the options object/ });
    assert.throws(() => backendWith({ sessionTtlSeconds: '600' as unknown as number }), { code: 'ERR_CONFIG', message: /got "600"$/ });
    assert.throws(() => backendWith({ hostOrigins: DASHBOARD as unknown as string[] }), { code: 'ERR_CONFIG', message: /hostOrigins must be an array of origins/ });
    assert.throws(() => backendWith({ corsOrigins: 'https://a.example' as unknown as string[] }), { code: 'ERR_CONFIG', message: /corsOrigins must be an array/ });
    // A rotation written as both options would silently drop one secret.
    assert.throws(() => backendWith({ webhookSecret: WEBHOOK_SECRET, webhookSecrets: ['whsec_old'] }), {
      code: 'ERR_CONFIG',
      message: /webhookSecret or webhookSecrets, not both/,
    });
    // The host root: context tokens name it exactly as their issuer.
    for (const siteUrl of ['https://marketplace.example/dashboard', 'https://marketplace.example/?x=1']) {
      assert.throws(() => backendWith({ siteUrl }), { code: 'ERR_CONFIG', message: /siteUrl must be the marketplace's host root.*got "/ }, siteUrl);
    }
    for (const siteUrl of ['marketplace.example', 'ftp://marketplace.example']) {
      assert.throws(() => backendWith({ siteUrl }), { code: 'ERR_CONFIG', message: /^createAppBackend: siteUrl must be an https URL, got "/ }, siteUrl);
    }
    // Over http, the client secret, the API key, tokens and sessions would travel in the clear:
    // http only on loopback (the simulator, a development server).
    const cleartext = /must use https, got "http:\/\/[^"]*": over http .* in the clear \(http is for localhost, 127\.0\.0\.1 and \[::1\]\)$/;
    for (const [name, value] of [
      ['siteUrl', 'http://marketplace.example'],
      ['apiBaseUrl', 'http://api.marketplace.example/v1'],
      ['tokenPath', 'http://marketplace.example/oauth/token'],
      ['publicOrigin', 'http://app.example'],
    ] as const) {
      assert.throws(() => backendWith({ [name]: value }), { code: 'ERR_CONFIG', message: new RegExp(`^createAppBackend: ${name} ${cleartext.source}`) }, name);
    }
    assert.throws(() => backendWith({ tokenPath: 'ftp://marketplace.example/token' }), { code: 'ERR_CONFIG', message: /^createAppBackend: tokenPath must be an https URL/ });
    assert.equal(backendWith({ siteUrl: 'http://localhost:4010', publicOrigin: 'http://127.0.0.1:3000', redirectUri: undefined }).backend.client.siteUrl, 'http://localhost:4010');
    // A credential with a space or a line break (a file's newline, a CRLF .env) is refused, unquoted.
    for (const name of ['clientId', 'clientSecret'] as const) {
      for (const value of ['SECRET_VALUE\n', 'SECRET_VALUE\r', ' SECRET_VALUE', 'SECRET VALUE']) {
        assert.throws(() => backendWith({ [name]: value }), (error: MarketplaceKitError) => {
          assert.equal(error.code, 'ERR_CONFIG');
          assert.match(error.message, new RegExp(`^createAppBackend: ${name} holds a space, a line break`));
          assert.doesNotMatch(error.message, /SECRET/);
          return true;
        }, `${name} ${JSON.stringify(value)}`);
      }
    }
    // A callback or store that is not one fails here, not at its first use (where onError: console
    // would silence every report, and onEvent: 42 would fail every delivery as the handler's fault).
    assert.throws(() => backendWith({ onError: console as never }), { code: 'ERR_CONFIG', message: /^createAppBackend: onError must be a function, got an object$/ });
    assert.throws(() => backendWith({ onEvent: 42 as never }), { code: 'ERR_CONFIG', message: /^createAppBackend: onEvent must be a function, got a number$/ });
    assert.throws(() => backendWith({ replayStore: {} as never }), { code: 'ERR_CONFIG', message: /^createAppBackend: replayStore must be an object with the methods claim and release: claim and release are missing$/ });
    assert.throws(() => backendWith({ replayStore: (() => true) as never }), { code: 'ERR_CONFIG', message: /replayStore must be an object with the methods claim and release, got a function$/ });
    // null (an unset store read from a config) is named, not a TypeError on reading its methods.
    assert.throws(() => backendWith({ replayStore: null as never }), { code: 'ERR_CONFIG', message: /^createAppBackend: replayStore must be an object with the methods claim and release, got null$/ });
    assert.throws(() => backendWith({ clock: null as never }), { code: 'ERR_CONFIG', message: /^createAppBackend: clock must be an object with the methods now and sleep, got null$/ });
    assert.throws(() => backendWith({ onError: [] as never }), { code: 'ERR_CONFIG', message: /^createAppBackend: onError must be a function, got an array$/ });
    // With a client of its own too: the backend keeps time and verifies context tokens itself.
    const client = createMarketplaceClient({ siteUrl: market.siteUrl, apiKey: API_KEY, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    for (const own of [{}, { client }]) {
      assert.throws(() => backendWith({ ...own, clock: { now: Date.now } as never }), { code: 'ERR_CONFIG', message: /^createAppBackend: clock must be an object with the methods now and sleep: sleep is missing$/ });
      assert.throws(() => backendWith({ ...own, clientSecret: `${CLIENT_SECRET}\n` }), { code: 'ERR_CONFIG', message: /^createAppBackend: clientSecret holds a space/ });
      // The backend reads clientId itself (context tokens' audience), whoever calls the marketplace.
      assert.throws(() => backendWith({ ...own, clientId: `${CLIENT_ID}\r` }), { code: 'ERR_CONFIG', message: /^createAppBackend: clientId holds a space/ });
    }
    // An option the backend passes on to its client is named as the backend's.
    assert.throws(() => backendWith({ fetch: 'fetch' as never }), { code: 'ERR_CONFIG', message: /^createAppBackend: fetch must be a function, got a string$/ });
    assert.throws(() => backendWith({ timeoutMs: 0 }), { code: 'ERR_CONFIG', message: /^createAppBackend: timeoutMs must be/ });
    // Number(process.env.X) of an unset variable: a NaN tolerance would accept any timestamp.
    for (const bad of [Number.NaN, -1, Infinity]) {
      assert.throws(() => backendWith({ webhookToleranceSeconds: bad }), { code: 'ERR_CONFIG', message: /webhookToleranceSeconds must be a finite number/ });
      assert.throws(() => backendWith({ timeoutMs: bad }), { code: 'ERR_CONFIG', message: /timeoutMs must be a finite number/ });
    }
  });

  it('accepts only exact origins, as the browser runtime does (no trailing slash, no upper case, no path)', () => {
    for (const origin of ['https://dashboard.example/', 'HTTPS://dashboard.example', 'https://Dashboard.example', 'https://dashboard.example/x', 'https://dashboard.example:443', 'ftp://dashboard.example']) {
      assert.throws(() => backendWith({ hostOrigins: [origin] }), { code: 'ERR_CONFIG', message: /hostOrigins must list exact http\(s\) origins/ }, origin);
      assert.throws(() => backendWith({ publicOrigin: origin }), { code: 'ERR_CONFIG', message: /publicOrigin must be an exact/ }, origin);
      assert.throws(() => backendWith({ corsOrigins: [origin] }), { code: 'ERR_CONFIG' }, origin);
    }
    assert.doesNotThrow(() => backendWith({ hostOrigins: ['http://127.0.0.1:4100', 'https://dashboard.example'], publicOrigin: 'http://[::1]:5173' }));
    assert.doesNotThrow(() => backendWith({ siteUrl: `${market.siteUrl}/` }), 'a trailing slash on the host root');
  });
});

describe('createAppBackend: OAuth sign-in outside the dashboard', () => {
  /** Follows the start → authorize → callback round trip with real HTTP to the fake marketplace. */
  async function signIn(backend: AppBackend, returnTo: string) {
    const start = await backend(new Request(`${BASE}/oauth/start?return_to=${encodeURIComponent(returnTo)}`));
    assert.equal(start.status, 303);
    const authorize = new URL(start.headers.get('location')!);
    assert.equal(authorize.origin + authorize.pathname, `${market.siteUrl}/oauth/authorize`);
    assert.equal(authorize.searchParams.get('client_id'), CLIENT_ID);
    assert.equal(authorize.searchParams.get('response_type'), 'code');
    assert.equal(authorize.searchParams.get('scope'), 'identity:read');
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorize.searchParams.get('redirect_uri'), `${BASE}/oauth/callback`);
    const stateCookie = start.headers.getSetCookie().find((c) => c.startsWith(`${STATE}=`))!;
    assert.match(stateCookie, /HttpOnly/);
    assert.match(stateCookie, /SameSite=Lax/);
    assert.match(stateCookie, /Secure/);
    assert.match(stateCookie, /Path=\/;/, '__Host- cookies must have Path=/');
    assert.match(stateCookie, /Max-Age=600;/, 'the sign-in has 10 minutes');
    assert.doesNotMatch(stateCookie, /Domain=/i);
    const approved = await fetch(authorize, { redirect: 'manual' });
    const callback = approved.headers.get('location')!;
    return { callback, cookie: stateCookie.split(';')[0]! };
  }

  /** Starts a sign-in and comes back to the callback as a denial, with `error` as the error. */
  async function deny(backend: AppBackend, returnTo: string, error = 'access_denied') {
    const attempt = await signIn(backend, returnTo);
    const url = new URL(attempt.callback);
    url.searchParams.delete('code');
    url.searchParams.set('error', error);
    return backend(new Request(url, { headers: { cookie: attempt.cookie } }));
  }

  it('round trip: start → authorize → callback sets the session cookie and redirects to return_to', async () => {
    const { backend } = backendWith();
    const { callback, cookie } = await signIn(backend, '/notes?tab=all#top');
    const done = await backend(new Request(callback, { headers: { cookie } }));
    assert.equal(done.status, 303);
    assert.equal(done.headers.get('location'), '/notes?tab=all#top');
    const cookies = done.headers.getSetCookie();
    const session = cookies.find((c) => c.startsWith(`${SESSION}=`))!;
    assert.match(session, /HttpOnly/);
    assert.match(session, /SameSite=Lax/);
    assert.match(session, /Secure/);
    assert.match(session, /Path=\//);
    assert.match(session, new RegExp(`Max-Age=${MAX_SESSION_TTL_SECONDS};`), 'the cookie lives as long as the session token');
    assert.doesNotMatch(session, /Domain=/i);
    assert.ok(cookies.some((c) => c.startsWith(`${STATE}=;`) && /Max-Age=0/.test(c)), 'the state cookie is cleared');

    const read = await backend(new Request(`${BASE}/session`, { headers: { cookie: session.split(';')[0]! } }));
    assert.equal(read.status, 200);
    // A site behind HTTP Basic auth (a staging password) has the browser send it along.
    const behindBasicAuth = await backend(new Request(`${BASE}/session`, { headers: { cookie: session.split(';')[0]!, authorization: 'Basic dXNlcjpwYXNz' } }));
    assert.equal(behindBasicAuth.status, 200);
    const body = SessionResponse.parse(await read.json());
    assert.deepEqual(body.user, USER);
    assert.equal(body.host, null);
    assert.equal(body.entitlement?.plan, 'pro');

    const signOut = await backend(new Request(`${BASE}/session`, { method: 'DELETE' }));
    assert.equal(signOut.status, 204);
    assert.match(signOut.headers.getSetCookie()[0]!, new RegExp(`^${SESSION}=;.*Max-Age=0`));

    // With the cookie, only the app's own origin signs the user out (no logout CSRF).
    const sessionCookie = session.split(';')[0]!;
    const signOutFrom = (origin: string, headers: Record<string, string> = {}) =>
      backend(new Request(`${BASE}/session`, { method: 'DELETE', headers: { cookie: sessionCookie, origin, ...headers } }));
    // Any Authorization header (a forged one included) changes nothing: the cookie decides.
    for (const foreign of [await signOutFrom('https://evil.example'), await signOutFrom('https://evil.example', { authorization: 'Bearer junk' })]) {
      assert.equal(foreign.status, 403);
      assert.equal(await errorCode(foreign), 'ERR_ORIGIN_REFUSED');
      assert.equal(foreign.headers.get('www-authenticate'), null, 'not a session problem: signing in again would not help');
      assert.deepEqual(foreign.headers.getSetCookie(), [], 'the cookie stays');
    }
    assert.equal((await signOutFrom(new URL(BASE).origin)).status, 204);
  });

  it('GET /session answers the session cookie with the profile, the entitlement and the expiry, and no token', async () => {
    const { backend } = backendWith();
    const { callback, cookie } = await signIn(backend, '/');
    const done = await backend(new Request(callback, { headers: { cookie } }));
    const sessionCookie = done.headers.getSetCookie().find((c) => c.startsWith(`${SESSION}=`))!.split(';')[0]!;
    const token = sessionCookie.slice(sessionCookie.indexOf('=') + 1);
    for (const path of ['/session', '/session?refresh=1']) {
      const read = await backend(new Request(`${BASE}${path}`, { headers: { cookie: sessionCookie } }));
      assert.equal(read.status, 200);
      const text = await read.text();
      // The HttpOnly cookie is the credential: a token in the body would let script carry the session away.
      assert.ok(!text.includes(token), `${path} answered the cookie's token`);
      const body = SessionResponse.parse(JSON.parse(text));
      assert.deepEqual(Object.keys(body.session), ['expires_at'], path);
      assert.equal(Date.parse(body.session.expires_at), (await verifySessionToken(token, { secret: SESSION_SECRET, audience: CLIENT_ID, now: NOW })).expiresAt);
      assert.deepEqual(body.user, USER);
      assert.equal(body.entitlement?.plan, 'pro');
    }
    // Sent with the bearer token (inside the dashboard), the answer carries it, as the exchange's does.
    const bearer = await backend(new Request(`${BASE}/session`, { headers: { authorization: `Bearer ${token}` } }));
    assert.equal(SessionResponse.parse(await bearer.json()).session.token, token);
    // A state-changing request with the cookie keeps its CSRF check: only the app's own origin
    // (or a CORS origin) is heard, by the kit's routes and by requireSession on the app's own.
    const post = (origin: string | null) => new Request(`${APP}/api/notes`, { method: 'POST', headers: { cookie: sessionCookie, ...(origin ? { origin } : {}) } });
    await assert.rejects(backend.requireSession(post('https://evil.example')), { code: 'ERR_ORIGIN_REFUSED', status: 403 });
    await assert.rejects(backend.requireSession(post(null)), { code: 'ERR_ORIGIN_REFUSED', status: 403 });
    assert.equal((await backend.requireSession(post(APP))).userId, USER.id);
    const foreignSignOut = await backend(new Request(`${BASE}/session`, { method: 'DELETE', headers: { cookie: sessionCookie, origin: 'https://evil.example' } }));
    assert.equal(foreignSignOut.status, 403);
  });

  it('uses an insecure cookie only when the public origin is http', async () => {
    const { backend } = backendWith({ publicOrigin: 'http://localhost:5173' });
    const start = await backend(new Request('http://localhost:5173/api/marketplace/oauth/start'));
    assert.doesNotMatch(start.headers.getSetCookie()[0]!, /Secure/);
  });

  it('refuses a tampered, missing or foreign state cookie, and a state that does not match', async () => {
    const { backend } = backendWith();
    const { callback, cookie } = await signIn(backend, '/');
    const [name, value] = cookie.split('=') as [string, string];
    const [header, payload, signature] = value.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), return_to: 'https://evil.example/' })).toString('base64url');
    const attempts: RequestInit[] = [
      { headers: { cookie: `${name}=${header}.${forged}.${signature}` } },
      // The signature's first character changed: its last carries bits a decoder may ignore, so a
      // change there can leave the same bytes (the test then failed about once in a thousand runs).
      { headers: { cookie: `${name}=${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}` } },
      { headers: {} },
    ];
    for (const init of attempts) {
      const response = await backend(new Request(callback, init));
      assert.equal(response.status, 400);
      assert.equal(await errorCode(response), 'ERR_OAUTH_STATE');
    }
    // Without any state cookie, the message says so (blocked cookies, another browser).
    const none = (await (await backend(new Request(callback))).json()) as { error: { message: string } };
    assert.match(none.error.message, /state cookie is missing/);
    const otherBackend = backendWith({ sessionSecret: 'another-session-secret-0123456789-abcdef' }).backend;
    const foreign = await otherBackend(new Request(callback, { headers: { cookie } }));
    assert.equal(await errorCode(foreign), 'ERR_OAUTH_STATE');

    const wrongState = new URL(callback);
    wrongState.searchParams.set('state', 'attacker-state');
    const csrf = await backend(new Request(wrongState, { headers: { cookie } }));
    assert.equal(csrf.status, 400);
    const { error } = (await csrf.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'ERR_OAUTH_STATE');
    assert.match(error.message, /does not match/);
    assert.equal(csrf.headers.getSetCookie().length, 0, 'no session is set');
  });

  it('finds its sign-in among several state cookies (one left over with another Path is sent first)', async () => {
    const { backend } = backendWith();
    for (const staleFirst of [true, false]) {
      const stale = await signIn(backend, '/old');
      const current = await signIn(backend, '/new');
      const cookie = staleFirst ? `${stale.cookie}; ${current.cookie}` : `${current.cookie}; ${stale.cookie}`;
      const done = await backend(new Request(current.callback, { headers: { cookie } }));
      assert.equal(done.status, 303);
      assert.equal(done.headers.get('location'), '/new', `stale first: ${staleFirst}`);
    }
    const stale = await signIn(backend, '/old');
    // Tampered values among them change nothing either.
    const noisy = await backend(new Request(stale.callback, { headers: { cookie: `${STATE}=x.y.z; ${stale.cookie}` } }));
    assert.equal(noisy.headers.get('location'), '/old');
  });

  it("refuses the state cookie of another app that shares the session secret (its audience is that app's Client ID)", async () => {
    const other = backendWith({ clientId: 'cli_other_app' }).backend;
    const start = await other(new Request(`${BASE}/oauth/start?return_to=%2F`));
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const cookie = start.headers.getSetCookie().find((line) => line.startsWith(`${STATE}=`))!.split(';')[0]!;
    const { backend } = backendWith();
    const response = await backend(new Request(`${BASE}/oauth/callback?code=code_1&state=${encodeURIComponent(state)}`, { headers: { cookie } }));
    assert.equal(response.status, 400);
    assert.equal(await errorCode(response), 'ERR_OAUTH_STATE');
  });

  it('exchanges the code with the redirectUri the sign-in started with, a configured one too', async () => {
    const redirectUri = `${APP}/signin/callback`;
    const { backend } = backendWith({ redirectUri });
    const start = await backend(new Request(`${BASE}/oauth/start?return_to=%2Fnotes`));
    const authorize = new URL(start.headers.get('location')!);
    assert.equal(authorize.searchParams.get('redirect_uri'), redirectUri);
    const cookie = start.headers.getSetCookie().find((c) => c.startsWith(`${STATE}=`))!.split(';')[0]!;
    const callback = new URL((await fetch(authorize, { redirect: 'manual' })).headers.get('location')!);
    assert.equal(`${callback.origin}${callback.pathname}`, redirectUri);
    // The app routes its callback path to the backend's.
    const done = await backend(new Request(`${BASE}/oauth/callback${callback.search}`, { headers: { cookie } }));
    assert.equal(done.headers.get('location'), '/notes');
    assert.ok(done.headers.getSetCookie().some((c) => c.startsWith(`${SESSION}=`) && !c.startsWith(`${SESSION}=;`)));
  });

  it('expires the state cookie after 10 minutes', async () => {
    const { backend, clock } = backendWith();
    const { callback, cookie } = await signIn(backend, '/');
    clock.advance(601_000);
    const late = await backend(new Request(callback, { headers: { cookie } }));
    assert.equal(await errorCode(late), 'ERR_OAUTH_STATE');
  });

  for (const evil of [
    '//evil.example',
    'https://evil.example/x',
    '/\\evil.example',
    '\\\\evil.example',
    'javascript:alert(1)',
    '/\t/evil.example',
    'http://app.example.evil.example/',
    ' //evil.example',
    'evil',
    '/.//evil.example',
    '/..//evil.example/x',
    '/a/..//evil.example',
    '/..//evil.example//x',
    '/%2e//evil.example',
    'https://app.example/.//evil.example',
  ]) {
    it(`never redirects off-origin: return_to=${JSON.stringify(evil)}`, async () => {
      const { backend } = backendWith();
      const { callback, cookie } = await signIn(backend, evil);
      const done = await backend(new Request(callback, { headers: { cookie } }));
      assert.equal(done.status, 303);
      assert.equal(done.headers.get('location'), '/');
    });
  }

  it('keeps the state cookie under the 4,096 bytes a browser keeps: the longest return_to it takes fits, a longer one once encoded becomes /', async () => {
    const { backend } = backendWith({ corsOrigins: ['https://site.example'] });
    const pair = (start: Response) => start.headers.getSetCookie().find((c) => c.startsWith(`${STATE}=`))!.split(';')[0]!;
    const longest = `https://site.example/${'a'.repeat(2048 - 'https://site.example/'.length)}`;
    const kept = await backend(new Request(`${BASE}/oauth/start?return_to=${encodeURIComponent(longest)}`));
    assert.ok(Buffer.byteLength(pair(kept)) <= 4096, `${Buffer.byteLength(pair(kept))} bytes`);
    // A page of 457 characters in Japanese is 4,000 once percent-encoded: the sign-in still
    // comes back (to /), rather than losing its state cookie and failing at the callback.
    const { callback, cookie } = await signIn(backend, `/docs/${'ページ'.repeat(150)}`);
    assert.ok(Buffer.byteLength(cookie) <= 4096, `${Buffer.byteLength(cookie)} bytes`);
    const done = await backend(new Request(callback, { headers: { cookie } }));
    assert.deepEqual([done.status, done.headers.get('location')], [303, '/']);
    // One over 2,048 characters as given is dropped at the start already, not only at the callback:
    // kept, it would make the state cookie too large to come back at all.
    const long = await signIn(backend, `/${'a'.repeat(5000)}`);
    assert.ok(Buffer.byteLength(long.cookie) <= 4096, `${Buffer.byteLength(long.cookie)} bytes`);
    const back = await backend(new Request(long.callback, { headers: { cookie: long.cookie } }));
    assert.deepEqual([back.status, back.headers.get('location')], [303, '/']);
  });

  it('refuses to start a sign-in on another loopback origin than redirectUri\'s (localhost vs 127.0.0.1), where its state cookie would never arrive', async () => {
    const { backend } = backendWith({ publicOrigin: undefined, redirectUri: 'http://127.0.0.1:3000/api/marketplace/oauth/callback' });
    const start = await backend(new Request('http://localhost:3000/api/marketplace/oauth/start'));
    assert.deepEqual([start.status, await errorCode(start)], [500, 'ERR_CONFIG']);
    const right = await backend(new Request('http://127.0.0.1:3000/api/marketplace/oauth/start'));
    assert.equal(right.status, 303);
  });

  it('keeps a same-origin absolute return_to as a path', async () => {
    const { backend } = backendWith();
    const { callback, cookie } = await signIn(backend, `${APP}/settings?x=1`);
    const done = await backend(new Request(callback, { headers: { cookie } }));
    assert.equal(done.headers.get('location'), '/settings?x=1');
  });

  it('returns to a page of a corsOrigins site (a backend on another origin), with its error too', async () => {
    const { backend } = backendWith({ corsOrigins: ['https://site.example'] });
    const { callback, cookie } = await signIn(backend, 'https://site.example/reports?tab=2');
    const done = await backend(new Request(callback, { headers: { cookie } }));
    assert.equal(done.headers.get('location'), 'https://site.example/reports?tab=2');
    const refused = await deny(backend, 'https://site.example/reports');
    assert.equal(refused.headers.get('location'), 'https://site.example/reports?mp_oauth_error=access_denied');
    const other = await signIn(backend, 'https://elsewhere.example/');
    const back = await backend(new Request(other.callback, { headers: { cookie: other.cookie } }));
    assert.equal(back.headers.get('location'), '/', 'an origin not in corsOrigins is no place to return to');
    // The callback checks return_to again: a backend that shares the session secret but not the
    // CORS origin (another deployment, a narrowed configuration) does not send the user there.
    const narrowed = backendWith().backend;
    const moved = await signIn(backend, 'https://site.example/reports');
    assert.equal((await narrowed(new Request(moved.callback, { headers: { cookie: moved.cookie } }))).headers.get('location'), '/');
  });

  it('returns to return_to with mp_oauth_error when the user denies or the exchange fails', async () => {
    const { backend } = backendWith();
    const response = await deny(backend, '/home');
    assert.equal(response.headers.get('location'), '/home?mp_oauth_error=access_denied');
    assert.ok(!response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION}=`)));

    const reused = await signIn(backend, '/home');
    const badCode = new URL(reused.callback);
    badCode.searchParams.set('code', 'code_unknown');
    const failed = await backend(new Request(badCode, { headers: { cookie: reused.cookie } }));
    assert.equal(failed.headers.get('location'), '/home?mp_oauth_error=invalid_grant', "the marketplace's RFC 6749 code");

    const codeless = await signIn(backend, '/home');
    const noCode = new URL(codeless.callback);
    noCode.searchParams.delete('code');
    const malformed = await backend(new Request(noCode, { headers: { cookie: codeless.cookie } }));
    assert.equal(malformed.headers.get('location'), '/home?mp_oauth_error=invalid_request', 'neither code nor error');
  });

  it('asks for the scope it is given (default identity:read)', async () => {
    const { backend } = backendWith({ scope: 'identity:read entitlements:read' });
    const start = await backend(new Request(`${BASE}/oauth/start`));
    assert.equal(new URL(start.headers.get('location')!).searchParams.get('scope'), 'identity:read entitlements:read');
  });

  it('sends back temporarily_unavailable when the marketplace is down or busy, server_error otherwise, never a kit code', async () => {
    const reported: unknown[] = [];
    const { backend } = backendWith({ onError: (error) => reported.push(error) });
    const cases: Array<[string, RawHandler, string]> = [
      ['rate limited', (_req, res) => res.writeHead(429, { 'retry-after': '3600' }).end(), 'temporarily_unavailable'],
      ['connection dropped', (_req, res) => res.socket?.destroy(), 'temporarily_unavailable'],
      ['a gateway\'s HTML error page', (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>'), 'temporarily_unavailable'],
      ['a gateway timeout', (_req, res) => res.writeHead(504).end(), 'temporarily_unavailable'],
      ['HTML error page', (_req, res) => res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>Internal error</h1>'), 'server_error'],
      ['OAuth body with markup', (_req, res) => sendJson(res, 400, { error: '<b>bad</b>' }), 'server_error'],
      // An error name in a 5xx body is no OAuth answer: it is not passed on.
      ['503 with an error name', (_req, res) => sendJson(res, 503, { error: 'maintenance' }), 'temporarily_unavailable'],
      ['500 with an error name', (_req, res) => sendJson(res, 500, { error: 'invalid_grant' }), 'server_error'],
      // The code of an API error body is the marketplace's API vocabulary, not RFC 6749's.
      ['API error body', (_req, res) => sendJson(res, 400, { error: { code: 'bad_request', message: 'Bad request' } }), 'server_error'],
    ];
    for (const [name, handler, expected] of cases) {
      market.override = null;
      const { callback, cookie } = await signIn(backend, '/home');
      market.override = handler;
      const failed = await backend(new Request(callback, { headers: { cookie } }));
      assert.equal(failed.headers.get('location'), `/home?mp_oauth_error=${expected}`, name);
    }
    assert.equal(reported.length, cases.length, 'each failed exchange reaches onError, with the details the page does not get');
    assert.ok(reported.every((error) => error instanceof MarketplaceApiError));

    // A marketplace that does not answer within timeoutMs.
    const impatient = backendWith({ timeoutMs: 100 }).backend;
    market.override = null;
    const { callback, cookie } = await signIn(impatient, '/home');
    market.override = () => undefined; // never answers
    const timedOut = await impatient(new Request(callback, { headers: { cookie } }));
    assert.equal(timedOut.headers.get('location'), '/home?mp_oauth_error=temporarily_unavailable', 'timed out');
  });

  it('never copies an error text of its own choosing onto the app page: markup or an overlong value becomes access_denied', async () => {
    const { backend } = backendWith();
    for (const error of ['<script>alert(1)</script>', 'x'.repeat(65), 'a b']) {
      const response = await deny(backend, '/home', error);
      assert.equal(response.headers.get('location'), '/home?mp_oauth_error=access_denied', error);
    }
  });
});

describe('createAppBackend: webhooks (docs/decisions.md#webhooks)', () => {
  const delivery = (overrides: Record<string, unknown> = {}) =>
    JSON.stringify({ event: 'subscription.created', timestamp: at(0), data: { user_id: 'usr_1', plan: 'business' }, ...overrides });
  const post = (backend: AppBackend, body: string, signature: string | null = signWebhookBody(body, WEBHOOK_SECRET)) =>
    backend(
      new Request(`${BASE}/webhooks`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'x-service-signature': signature }) },
      }),
    );

  it('hands a verified delivery to onEvent, invalidates the user, and answers duplicates with 200', async () => {
    const { backend, events } = backendWith();
    await backend.client.entitlements({ userId: 'usr_1' });
    market.entitlements.set(USER.id, { ...ENTITLEMENT, plan: 'business' });
    const body = delivery();
    const first = await post(backend, body);
    assert.equal(first.status, 200);
    assert.deepEqual(await first.json(), { received: true, event: 'subscription.created' });
    assert.equal(events.length, 1);
    assert.equal(events[0]!.event, 'subscription.created');
    assert.equal((await backend.client.entitlements({ userId: 'usr_1' }))?.plan, 'business', 'the cached entitlement was dropped');

    const again = await post(backend, body);
    assert.equal(again.status, 200);
    assert.deepEqual(await again.json(), { received: true, duplicate: true });
    assert.equal(events.length, 1, 'a duplicate is not handled twice');
  });

  it('answers a user.revoked it cannot record (a full revocation store) 503 with Retry-After, unhandled, so that the retry is', async () => {
    const revocations = createMemoryRevocationStore({ maxUsers: 1, onFull: () => undefined });
    const { backend, events } = backendWith({ stores: { revocations } });
    const revoked = (user: string) => JSON.stringify({ event: 'user.revoked', timestamp: at(0), data: { user_id: user } });
    assert.equal((await post(backend, revoked('usr_a'))).status, 200);
    const refused = await post(backend, revoked('usr_b'));
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), String(MAX_SESSION_TTL_SECONDS));
    assert.equal(await errorCode(refused), 'ERR_REPLAY_STORE_FULL');
    assert.deepEqual(events.map((event) => event.data.user_id), ['usr_a'], 'not handed to onEvent');
    assert.equal(revocations.revokedAt('usr_a', NOW), NOW, 'the held cut-off is kept');
    const retried = await post(backend, revoked('usr_b'));
    assert.equal(retried.status, 503, 'the retry is refused too, not taken for a duplicate');
  });

  it('answers 401 for signature problems and 400 for bad bodies and timestamps, without calling onEvent', async () => {
    const { backend, events } = backendWith();
    const cases: Array<[string, Promise<Response>, number, string]> = [
      ['missing header', post(backend, delivery(), null), 401, 'ERR_WEBHOOK_SIGNATURE_MISSING'],
      ['malformed header', post(backend, delivery(), 'sha1=abc'), 401, 'ERR_WEBHOOK_SIGNATURE_MALFORMED'],
      ['wrong secret', post(backend, delivery(), signWebhookBody(delivery(), 'other-secret')), 401, 'ERR_WEBHOOK_SIGNATURE_MISMATCH'],
      ['stale', post(backend, delivery({ timestamp: at(-600) })), 400, 'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE'],
      ['not a delivery', post(backend, '{"hello":1}'), 400, 'ERR_WEBHOOK_BODY_INVALID'],
    ];
    for (const [name, pending, status, code] of cases) {
      const response = await pending;
      assert.equal(response.status, status, name);
      assert.equal(await errorCode(response), code, name);
    }
    assert.equal(events.length, 0);
  });

  it('takes the timestamp tolerance from webhookToleranceSeconds, wider or narrower than the default 300 s', async () => {
    // 10 minutes old: refused by default (the test above), accepted with 15 minutes of tolerance.
    const wide = backendWith({ webhookToleranceSeconds: 900 });
    assert.equal((await post(wide.backend, delivery({ timestamp: at(-600) }))).status, 200);
    assert.equal(wide.events.length, 1);
    // 2 minutes in the future: accepted by default, refused with 1 minute of tolerance.
    const soon = delivery({ timestamp: at(120) });
    const narrow = backendWith({ webhookToleranceSeconds: 60 });
    const refused = await post(narrow.backend, soon);
    assert.equal(refused.status, 400);
    assert.equal(await errorCode(refused), 'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE');
    assert.equal(narrow.events.length, 0);
    assert.equal((await post(backendWith().backend, soon)).status, 200);
  });

  it('a copy sent while the first is handled waits for it: a duplicate if it succeeded (onEvent once)', async () => {
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    // Real waits, each watched: the copy's wait must be cancelled, not left to run out its 10 s.
    const { clock, waits } = watchedClock();
    const { backend, events } = backendWith({
      clock,
      onEvent: async (delivery) => {
        events.push(delivery);
        await gate;
      },
    });
    const body = delivery();
    const answers: string[] = [];
    const pending = [post(backend, body), post(backend, body)].map((answer) => answer.then(async (response) => answers.push(`${response.status} ${await response.text()}`)));
    await until(() => waits.length === 1, 'the copy waits for the first');
    assert.deepEqual(answers, [], 'neither is answered while the first is handled');
    finish();
    await Promise.all(pending);
    assert.deepEqual(answers.sort(), ['200 {"received":true,"duplicate":true}', '200 {"received":true,"event":"subscription.created"}']);
    assert.equal(events.length, 1);
    assert.equal(waits.length, 1, 'the copy waited');
    assert.ok(waits.every((signal) => signal.aborted), 'and its timer was cancelled once the first was done');
  });

  it('a copy waits at most WEBHOOK_COPY_WAIT_MS for a first copy that does not finish, then gets 503 and nothing stays claimed', async () => {
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const { backend, clock, events } = backendWith({
      onEvent: async (delivery) => {
        events.push(delivery);
        await gate;
      },
    });
    const first = post(backend, delivery({ id: 'evt_slow' }));
    await new Promise((resolve) => setImmediate(resolve));
    const copy = await post(backend, delivery({ id: 'evt_slow', timestamp: at(5) }));
    assert.equal(copy.status, 503);
    assert.equal(copy.headers.get('retry-after'), '10', 'docs/server.md promises a wait of 10 s');
    assert.equal(WEBHOOK_COPY_WAIT_MS, 10_000);
    assert.equal(await errorCode(copy), 'ERR_WEBHOOK_IN_PROGRESS');
    assert.deepEqual(clock.sleeps, [WEBHOOK_COPY_WAIT_MS], 'the virtual clock ran out the wait');
    finish();
    assert.equal((await first).status, 200);
    // The refused copy's own signature was released with it: sent again, it is a plain duplicate of the handled id.
    assert.deepEqual(await (await post(backend, delivery({ id: 'evt_slow', timestamp: at(5) }))).json(), { received: true, duplicate: true });
    assert.equal(events.length, 1);
  });

  it('WEBHOOK_COPY_WAIT_MS bounds the whole wait of a copy, also one that waits behind another waiting copy', async () => {
    // Sleeps end only when the test moves time past them.
    let now = NOW;
    const sleeping: Array<{ until: number; wake: () => void }> = [];
    const clock: Clock = {
      now: () => now,
      sleep: (ms, signal) =>
        new Promise<void>((resolve, reject) => {
          const entry = { until: now + ms, wake: resolve };
          sleeping.push(entry);
          signal?.addEventListener('abort', () => {
            sleeping.splice(sleeping.indexOf(entry), 1);
            reject(signal.reason);
          });
        }),
    };
    const settle = async () => {
      for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
    };
    const advanceTo = async (time: number) => {
      now = time;
      for (const entry of sleeping.filter(({ until }) => until <= now)) {
        sleeping.splice(sleeping.indexOf(entry), 1);
        entry.wake();
      }
      await settle();
    };
    const { backend } = backendWith({ clock, onEvent: () => new Promise<void>(() => {}) }); // the first never finishes
    void post(backend, delivery({ id: 'evt_1' }));
    await settle();
    const answers: string[] = [];
    const record = (name: string, pending: Promise<Response>) => void pending.then(async (response) => answers.push(`${name} ${response.status} ${await errorCode(response)}`));
    // The marketplace's re-signed retry waits for the first (same id) ...
    const retry = delivery({ id: 'evt_1', timestamp: at(1) });
    record('retry', post(backend, retry));
    await settle();
    // ... and 5 s later a copy of that retry waits for the retry (same signature), then for the first.
    await advanceTo(NOW + 5_000);
    record('copy', post(backend, retry));
    await settle();
    await advanceTo(NOW + WEBHOOK_COPY_WAIT_MS);
    assert.deepEqual(answers, ['retry 503 ERR_WEBHOOK_IN_PROGRESS']);
    await advanceTo(NOW + 5_000 + WEBHOOK_COPY_WAIT_MS);
    assert.deepEqual(answers, ['retry 503 ERR_WEBHOOK_IN_PROGRESS', 'copy 503 ERR_WEBHOOK_IN_PROGRESS'], 'the copy was answered once it had waited 10 s in all');
  });

  it('a copy sent while the first is handled is handled itself if the first fails, identical or re-signed', async () => {
    for (const resigned of [false, true]) {
      let fail!: () => void;
      const failing = new Promise<void>((_resolve, reject) => (fail = () => reject(new Error('database down'))));
      let calls = 0;
      const { clock, waits } = watchedClock();
      const { backend, events } = backendWith({
        clock,
        onEvent: async (delivery) => {
          calls += 1;
          if (calls === 1) await failing;
          events.push(delivery);
        },
      });
      const first = post(backend, delivery({ id: 'evt_1' }));
      // Re-signed: the marketplace's own retry, with a later timestamp and the same id.
      const copy = post(backend, delivery({ id: 'evt_1', ...(resigned ? { timestamp: at(5) } : {}) }));
      await until(() => waits.length === 1, 'the copy waits for the first');
      fail();
      assert.equal((await first).status, 500);
      const handled = await copy;
      assert.equal(handled.status, 200, `re-signed: ${resigned}`);
      assert.deepEqual(await handled.json(), { received: true, event: 'subscription.created' });
      assert.equal(events.length, 1, 'the event is not lost');
      assert.equal((await post(backend, delivery({ id: 'evt_1' }))).status, 200);
      assert.equal(calls, 2, 'and handled once more than the failure, not again');
    }
  });

  it('a third copy waits for the second too: if the first two fail, the third handles the event', async () => {
    const failures = [deferred(), deferred()];
    let calls = 0;
    const { clock, waits } = watchedClock();
    const { backend, events } = backendWith({
      clock,
      onEvent: async (delivery) => {
        const failure = failures[calls++];
        if (failure) await failure.promise;
        events.push(delivery);
      },
    });
    const body = delivery({ id: 'evt_3' });
    const answers = [post(backend, body), post(backend, body), post(backend, body)].map(async (answer) => {
      const response = await answer;
      return `${response.status} ${await response.text()}`;
    });
    await until(() => waits.length === 2, 'both copies wait for the first');
    failures[0]!.reject(new Error('database down'));
    // One copy takes over; the other waits again, now for it.
    await until(() => waits.length === 3 && calls === 2, 'the third copy waits for the second');
    failures[1]!.reject(new Error('database still down'));
    const settled = (await Promise.all(answers)).map((answer) => answer.replace(/^500 .*/, '500'));
    assert.deepEqual(settled.sort(), ['200 {"received":true,"event":"subscription.created"}', '500', '500']);
    assert.equal(events.length, 1, 'the event is not lost');
  });

  it('a delivery whose claim failed in the store is not left in progress: its retry is handled', async () => {
    const store = createMemoryReplayStore();
    let failClaim = true;
    const { backend, events } = backendWith({
      replayStore: {
        claim: async (key, expiresAt, now) => {
          if (failClaim) {
            failClaim = false;
            throw new Error('redis unreachable');
          }
          return store.claim(key, expiresAt, now);
        },
        release: (key) => store.release(key),
      },
    });
    const body = delivery({ id: 'evt_store' });
    assert.equal((await post(backend, body)).status, 500);
    const retried = await post(backend, body);
    assert.deepEqual([retried.status, await retried.json()], [200, { received: true, event: 'subscription.created' }]);
    assert.equal(events.length, 1);
  });

  it('copies wait until the failed first copy is released in the store, however slow the release', async () => {
    const store = createMemoryReplayStore();
    const releasing = deferred();
    const released = deferred();
    let calls = 0;
    const { clock, waits } = watchedClock();
    const { backend, events } = backendWith({
      clock,
      replayStore: {
        claim: (key, expiresAt, now) => store.claim(key, expiresAt, now),
        release: async (key) => {
          releasing.resolve();
          await released.promise;
          await store.release(key);
        },
      },
      onEvent: (delivery) => {
        calls += 1;
        if (calls === 1) throw new Error('database down');
        events.push(delivery);
      },
    });
    const body = delivery({ id: 'evt_release' });
    const answered: string[] = [];
    const send = () =>
      post(backend, body).then(async (response) => {
        answered.push(`${response.status} ${await response.text()}`);
      });
    const first = post(backend, body); // fails, then waits in release
    const during = send(); // sent while the first is handled
    await releasing.promise;
    const late = send(); // sent while the first is being released
    await until(() => waits.length === 2, 'both copies wait');
    assert.deepEqual(answered, [], 'no copy is answered before the release is done');
    released.resolve();
    assert.equal((await first).status, 500);
    await Promise.all([during, late]);
    assert.deepEqual(answered.sort(), ['200 {"received":true,"duplicate":true}', '200 {"received":true,"event":"subscription.created"}']);
    assert.equal(events.length, 1);
  });

  it('answers 500 when onEvent throws, releases the delivery and handles the retry', async () => {
    let fail = true;
    const seen: string[] = [];
    const errors: unknown[] = [];
    const { backend } = backendWith({
      onEvent: (d) => {
        seen.push(d.event);
        if (fail) throw new Error('database down');
      },
      onError: (error) => errors.push(error),
    });
    const body = delivery();
    const failed = await post(backend, body);
    assert.equal(failed.status, 500);
    assert.equal(await errorCode(failed), 'ERR_WEBHOOK_HANDLER_FAILED');
    assert.equal(errors.length, 1, 'onError hears of the failure once');
    assert.ok(isKitError(errors[0], 'ERR_WEBHOOK_HANDLER_FAILED'));
    assert.equal((errors[0] as Error & { cause: Error }).cause.message, 'database down');
    fail = false;
    const retried = await post(backend, body);
    assert.equal(retried.status, 200);
    assert.deepEqual(await retried.json(), { received: true, event: 'subscription.created' });
    assert.deepEqual(seen, ['subscription.created', 'subscription.created']);
    const again = await post(backend, body);
    assert.deepEqual(await again.json(), { received: true, duplicate: true }, 'handled once, the delivery stays claimed');
    assert.equal(seen.length, 2);
  });

  it('shares one asynchronous replayStore between webhooks and context tokens, under separate namespaces', async () => {
    const replayStore = asyncReplayStore();
    let fail = true;
    const { backend, events } = backendWith({
      replayStore,
      clock: realTimeAtNow,
      onEvent: (d) => {
        if (fail) throw new Error('database down');
        events.push(d);
      },
    });
    // A delivery id and a jti with the same text never collide.
    const token = await contextToken({ jti: 'same-0001' });
    assert.equal((await postSession(backend, { context: token, host: DASHBOARD })).status, 200);
    assert.equal(await errorCode(await postSession(backend, { context: token, host: DASHBOARD })), 'ERR_CONTEXT_TOKEN_REPLAYED');
    const body = delivery({ id: 'same-0001' });
    assert.equal((await post(backend, body)).status, 500);
    assert.deepEqual([...replayStore.keys.keys()], [`jti:${market.siteUrl} ${CLIENT_ID} same-0001`], 'the failed delivery was released');
    fail = false;
    const answers = await Promise.all([post(backend, body), post(backend, body)].map(async (answer) => JSON.stringify(await (await answer).json())));
    assert.deepEqual(answers.sort(), ['{"received":true,"duplicate":true}', '{"received":true,"event":"subscription.created"}']);
    assert.equal(events.length, 1);
    assert.deepEqual([...replayStore.keys.keys()].sort(), [
      `jti:${market.siteUrl} ${CLIENT_ID} same-0001`,
      `webhook:${signWebhookBody(body, WEBHOOK_SECRET).slice(7)}`,
      'webhook:id:same-0001',
    ]);
  });

  it('accepts rotated secrets and passes unknown event kinds on as generic events', async () => {
    const { backend, events } = backendWith({ webhookSecret: undefined, webhookSecrets: ['new-secret', WEBHOOK_SECRET] });
    const body = delivery({ event: 'app.renamed', data: { name: 'x' } });
    assert.equal((await post(backend, body)).status, 200);
    assert.equal(events[0]!.event, 'app.renamed');
    assert.deepEqual(events[0]!.data, { name: 'x' });
  });

  it('refuses bodies over 1 MB with 413', async () => {
    const { backend } = backendWith();
    const big = 'x'.repeat(1024 * 1024 + 1);
    const response = await post(backend, big, signWebhookBody(big, WEBHOOK_SECRET));
    assert.equal(response.status, 413);
    assert.equal(await errorCode(response), 'ERR_PAYLOAD_TOO_LARGE');
  });

  it('refuses at configuration time to start without a webhook secret', () => {
    const message = /webhookSecret .* is required; pass webhooks: false/;
    assert.throws(() => backendWith({ webhookSecret: undefined }), { code: 'ERR_CONFIG', message });
    assert.throws(() => backendWith({ webhookSecret: '' }), { code: 'ERR_CONFIG', message: /^createAppBackend: webhookSecret is empty or not a string/ });
    assert.throws(() => backendWith({ webhookSecret: undefined, webhookSecrets: [] }), { code: 'ERR_CONFIG', message });
    // One empty secret among several (an unset variable in the list) is named.
    assert.throws(() => backendWith({ webhookSecret: undefined, webhookSecrets: ['ok', ''] }), {
      code: 'ERR_CONFIG',
      message: /^createAppBackend: webhookSecrets\[1\] is empty or not a string \(an unset environment variable\?\)/,
    });
    assert.throws(() => backendWith({ webhooks: false }), { code: 'ERR_CONFIG', message: /exclude each other/ });
    // Only false means something; true (or a typo's value) is refused rather than read as "on".
    assert.throws(() => backendWith({ webhooks: true as unknown as false }), { code: 'ERR_CONFIG', message: /webhooks accepts only false/ });
  });

  it('with webhooks: false, needs no secret and answers POST /webhooks with 404', async () => {
    const { backend, events } = backendWith({ webhookSecret: undefined, webhooks: false });
    const response = await post(backend, delivery());
    assert.equal(response.status, 404);
    assert.equal(await errorCode(response), 'ERR_NOT_FOUND');
    assert.equal(events.length, 0);
  });
});

describe('toNodeHandler', () => {
  it('serves the backend over real HTTP, raw webhook bytes and multiple cookies included', async () => {
    const { backend, events } = backendWith({ publicOrigin: undefined });
    const server = createServer(toNodeHandler(backend));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const body = JSON.stringify({ event: 'user.revoked', timestamp: at(0), data: { user_id: 'usr_1', note: 'héllo ✓ 日本' } });
      const hook = await fetch(`${origin}/api/marketplace/webhooks`, {
        method: 'POST',
        body: Buffer.from(body),
        headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) },
      });
      assert.equal(hook.status, 200);
      assert.equal(events[0]!.data.note, 'héllo ✓ 日本');

      const session = await fetch(`${origin}/api/marketplace/session`, {
        method: 'POST',
        body: JSON.stringify({ context: await contextToken(), host: DASHBOARD }),
      });
      assert.equal(session.status, 200);
      SessionResponse.parse(await session.json());

      const start = await fetch(`${origin}/api/marketplace/oauth/start`, { redirect: 'manual' });
      assert.equal(start.status, 303);
      const redirectUri = new URL(start.headers.get('location')!).searchParams.get('redirect_uri');
      assert.equal(redirectUri, `${origin}/api/marketplace/oauth/callback`, 'derived from the request when publicOrigin is not set');
      assert.doesNotMatch(start.headers.getSetCookie()[0]!, /Secure/);

      const missing = await fetch(`${origin}/api/marketplace/missing`);
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'ERR_NOT_FOUND');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('createAppBackend: cookie sessions, CORS and upstream failures', () => {
  async function cookieSession(backend: AppBackend) {
    const start = await backend(new Request(`${BASE}/oauth/start`));
    const cookie = start.headers.getSetCookie()[0]!.split(';')[0]!;
    const approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    const done = await backend(new Request(approved.headers.get('location')!, { headers: { cookie } }));
    return done.headers.getSetCookie().find((c) => c.startsWith(`${SESSION}=`))!.split(';')[0]!;
  }

  it('accepts a cookie session for state-changing requests only from the app origin', async () => {
    const { backend } = backendWith({ corsOrigins: ['https://admin.example'] });
    const cookie = await cookieSession(backend);
    const post = (origin?: string) =>
      backend.requireSession(new Request(`${APP}/api/notes`, { method: 'POST', headers: { cookie, ...(origin ? { origin } : {}) } }));
    assert.equal((await post(APP)).userId, 'usr_1');
    assert.equal((await post('https://admin.example')).userId, 'usr_1');
    await assert.rejects(post('https://sibling.app.example'), { code: 'ERR_ORIGIN_REFUSED', status: 403, message: /own origin .*"https:\/\/sibling\.app\.example"/ });
    // Exact origins only: not one that merely starts with the app's, and not the dashboard, which
    // launches the app but is no origin of its own pages.
    for (const origin of [`${APP}.evil.example`, `${APP}:8443`, DASHBOARD]) await assert.rejects(post(origin), { code: 'ERR_ORIGIN_REFUSED' }, origin);
    await assert.rejects(post(), { code: 'ERR_ORIGIN_REFUSED', message: /no Origin header/ });
    assert.equal((await backend.requireSession(new Request(`${APP}/api/notes`, { headers: { cookie } }))).userId, 'usr_1', 'GET needs no Origin');
  });

  it('answers CORS preflights and adds CORS headers only for configured origins', async () => {
    const { backend } = backendWith({ corsOrigins: ['http://127.0.0.1:8000'] });
    const preflight = await backend(
      new Request(`${BASE}/session`, { method: 'OPTIONS', headers: { origin: 'http://127.0.0.1:8000', 'access-control-request-method': 'POST' } }),
    );
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'http://127.0.0.1:8000');
    assert.match(preflight.headers.get('access-control-allow-headers')!, /authorization/);
    // The runtime sends credentials (the cookie session) and signs out with DELETE.
    assert.equal(preflight.headers.get('access-control-allow-credentials'), 'true');
    assert.deepEqual(new Set(preflight.headers.get('access-control-allow-methods')!.split(/,\s*/)), new Set(['GET', 'POST', 'DELETE']));
    const allowed = await backend(new Request(`${BASE}/session`, { headers: { origin: 'http://127.0.0.1:8000' } }));
    assert.deepEqual([allowed.headers.get('access-control-allow-origin'), allowed.headers.get('access-control-allow-credentials')], ['http://127.0.0.1:8000', 'true']);
    // The browser kit reads a 429's or 503's Retry-After to pause its renewals: the answer lets it.
    assert.equal(allowed.headers.get('access-control-expose-headers'), 'retry-after, date');
    assert.equal(preflight.headers.get('access-control-expose-headers'), null, 'a preflight answers nothing to read');
    const asHost = await postSession(backend, { context: await contextToken({ host: 'http://127.0.0.1:8000' }), host: 'http://127.0.0.1:8000' });
    assert.deepEqual([asHost.status, await errorCode(asHost)], [401, 'ERR_CONTEXT_TOKEN_HOST'], 'a CORS origin may call the backend, not launch the app');
    const other = await backend(new Request(`${BASE}/session`, { headers: { origin: 'https://evil.example' } }));
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    const plain = backendWith().backend;
    const noCors = await plain(new Request(`${BASE}/session`, { method: 'OPTIONS', headers: { origin: 'http://127.0.0.1:8000' } }));
    assert.equal(noCors.status, 405);
    assert.equal(noCors.headers.get('access-control-allow-origin'), null);
  });

  it('answers 502 with a typed error when the marketplace fails during POST /session, and 504 on timeout', async () => {
    const { backend } = backendWith();
    market.override = (_req, res) => res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>oops</h1>');
    const failed = await postSession(backend, { context: await contextToken(), host: DASHBOARD });
    assert.equal(failed.status, 502);
    assert.equal(await errorCode(failed), 'ERR_HTTP');

    // The marketplace's own words (here: a revoked API key) go to onError, not to the browser.
    const errors: unknown[] = [];
    const logged = backendWith({ onError: (error) => errors.push(error) }).backend;
    market.override = (_req, res) => sendJson(res, 401, { error: { code: 'invalid_api_key', message: 'The API key test_secret_key is revoked' } });
    const refused = await postSession(logged, { context: await contextToken(), host: DASHBOARD });
    assert.equal(refused.status, 502);
    const text = await refused.text();
    assert.doesNotMatch(text, /invalid_api_key|test_secret_key|401/);
    assert.deepEqual(JSON.parse(text), { error: { code: 'ERR_HTTP', message: 'The marketplace could not complete the request' } });
    assert.equal(errors.length, 1, 'reported once');
    assert.match((errors[0] as Error).message, /HTTP 401: invalid_api_key: The API key test_secret_key is revoked/);

    const slow = backendWith({ timeoutMs: 100 }).backend;
    market.override = () => undefined;
    const timedOut = await postSession(slow, { context: await contextToken(), host: DASHBOARD });
    assert.equal(timedOut.status, 504);
    assert.equal(await errorCode(timedOut), 'ERR_TIMEOUT');
  });
});

describe('createAppBackend: the trusted origin (CSRF Origin check, redirect_uri, Secure cookies)', () => {
  // Under both names: requests to the https APP read __Host-mp_session, loopback http ones mp_session.
  const sessionCookie = async () => {
    const { token } = await signSessionToken({ secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, now: NOW });
    return `${SESSION}=${token}; ${SESSION_COOKIE}=${token}`;
  };
  const codeOf = (body: string) => (JSON.parse(body) as { error: { code: string } }).error.code;

  /** Serves the backend and an app route that needs the session over node:http on 127.0.0.1. */
  async function serve(backend: AppBackend, run: (server: string) => Promise<void>) {
    const server = createServer(
      toNodeHandler(async (request) => {
        if (new URL(request.url).pathname.startsWith('/api/marketplace/')) return backend(request);
        try {
          return Response.json({ user_id: (await backend.requireSession(request)).userId });
        } catch (error) {
          return toErrorResponse(error);
        }
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('answers 400 to request targets and Host headers that would choose the origin (//sibling/path)', async () => {
    const { backend } = backendWith({ publicOrigin: undefined });
    const cookie = await sessionCookie();
    await serve(backend, async (server) => {
      const attack = { host: 'app.example', origin: 'http://sib.app.example', cookie };
      for (const path of ['//sib.app.example/api/notes', '/\\sib.app.example/api/notes', 'http://sib.app.example/api/notes']) {
        const answer = await rawRequest(server, { method: 'POST', path, headers: attack });
        assert.equal(answer.status, 400, path);
        assert.equal(codeOf(answer.body), 'ERR_INVALID_INPUT', path);
      }
      for (const host of ['sib.app.example/x', 'me@sib.app.example', 'app.example:99999']) {
        const answer = await rawRequest(server, { method: 'POST', path: '/api/notes', headers: { ...attack, host } });
        assert.equal(answer.status, 400, host);
        assert.equal(codeOf(answer.body), 'ERR_INVALID_INPUT', host);
      }
    });
  });

  it('without publicOrigin, on a public host: refuses the OAuth sign-in with ERR_CONFIG, and reads no session cookie (the kit sets none there)', async () => {
    const { backend } = backendWith({ publicOrigin: undefined });
    const cookie = await sessionCookie();
    for (const method of ['GET', 'POST']) {
      const read = backend.requireSession(new Request(`${APP}/api/notes`, { method, headers: { cookie, origin: APP } }));
      await assert.rejects(read, { code: 'ERR_SESSION_MISSING', status: 401 }, `${method}: a cookie there was planted, never set by the kit`);
    }
    for (const route of ['oauth/start', 'oauth/callback?code=c&state=s']) {
      const answer = await backend(new Request(`${BASE}/${route}`, { headers: { cookie } }));
      assert.equal(answer.status, 500, route);
      assert.equal(await errorCode(answer), 'ERR_CONFIG', route);
    }
    assert.equal((await postSession(backend, { context: await contextToken(), host: DASHBOARD })).status, 200, 'Bearer sessions need no origin');
    await serve(backend, async (server) => {
      const answer = await rawRequest(server, { method: 'POST', path: '/api/notes', headers: { host: 'app.example', origin: 'http://app.example', cookie } });
      assert.equal(answer.status, 401);
      assert.equal(codeOf(answer.body), 'ERR_SESSION_MISSING');
      const signOut = await rawRequest(server, { method: 'DELETE', path: '/api/marketplace/session', headers: { host: 'app.example', cookie } });
      assert.equal(signOut.status, 204);
      assert.equal(signOut.headers['set-cookie'], undefined, 'no cookie to clear where none is set');
    });
  });

  it('on a loopback host (development), checks Origin against the request’s own origin', async () => {
    const { backend } = backendWith({ publicOrigin: undefined });
    const cookie = await sessionCookie();
    for (const origin of ['http://127.0.0.1:5173', 'http://localhost:3000', 'http://[::1]:8080']) {
      const post = (from: string) => backend.requireSession(new Request(`${origin}/api/notes`, { method: 'POST', headers: { cookie, origin: from } }));
      assert.equal((await post(origin)).userId, 'usr_1', origin);
      await assert.rejects(post('http://sib.app.example'), { code: 'ERR_ORIGIN_REFUSED' }, origin);
    }
    await serve(backend, async (server) => {
      const post = (origin: string) => rawRequest(server, { method: 'POST', path: '/api/notes', headers: { origin, cookie } });
      assert.equal((await post(server)).status, 200);
      assert.equal(codeOf((await post('http://sib.app.example')).body), 'ERR_ORIGIN_REFUSED');
    });
  });

  it('behind a TLS-terminating proxy, an https publicOrigin makes the cookies Secure and names redirect_uri', async () => {
    const { backend } = backendWith({ publicOrigin: APP });
    await serve(backend, async (server) => {
      const start = await rawRequest(server, { path: '/api/marketplace/oauth/start', headers: { host: 'internal:8080' } });
      assert.equal(start.status, 303);
      assert.match(String(start.headers['set-cookie']), /Secure/);
      assert.equal(new URL(start.headers.location!).searchParams.get('redirect_uri'), `${BASE}/oauth/callback`);
      const signOut = await rawRequest(server, { method: 'DELETE', path: '/api/marketplace/session', headers: { host: 'internal:8080' } });
      assert.equal(signOut.status, 204);
      assert.match(String(signOut.headers['set-cookie']), /Max-Age=0.*Secure/);
    });
  });

  it('names its cookies __Host- on https, so one tossed from a sibling subdomain is never read; plain on loopback http', async () => {
    const { token } = await signSessionToken({ secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, now: NOW });
    const secure = backendWith({ publicOrigin: APP }).backend;
    await serve(secure, async (server) => {
      const read = (cookie: string) => rawRequest(server, { path: '/api/notes', headers: { host: 'internal:8080', cookie } });
      const tossed = await read(`${SESSION_COOKIE}=${token}`);
      assert.equal(tossed.status, 401);
      assert.equal(codeOf(tossed.body), 'ERR_SESSION_MISSING');
      assert.equal((await read(`${SESSION}=${token}`)).status, 200);
      // Nor is a cookie whose name only ends with the kit's: the name must match whole.
      assert.equal((await read(`x${SESSION}=${token}`)).status, 401);
      const start = await rawRequest(server, { path: '/api/marketplace/oauth/start', headers: { host: 'internal:8080' } });
      assert.match(String(start.headers['set-cookie']), new RegExp(`^${STATE}=[^;]+; Path=/; .*Secure`));
    });
    const loopback = backendWith({ publicOrigin: undefined }).backend;
    await serve(loopback, async (server) => {
      const start = await rawRequest(server, { path: '/api/marketplace/oauth/start' });
      assert.match(String(start.headers['set-cookie']), new RegExp(`^${OAUTH_STATE_COOKIE}=[^;]+; Path=/; `));
      assert.equal((await rawRequest(server, { path: '/api/notes', headers: { cookie: `${SESSION_COOKIE}=${token}` } })).status, 200);
    });
  });
});

describe('server functions called from plain JavaScript with missing options', () => {
  it('throw typed errors (ERR_CONFIG, or ERR_INVALID_INPUT for a missing value), never a TypeError', async () => {
    type Loose = (...args: unknown[]) => unknown;
    const call = (fn: unknown, ...args: unknown[]) => (async () => (fn as Loose)(...args))();
    const cases: Array<[string, Promise<unknown>, string, RegExp]> = [
      ['createMarketplaceClient()', call(createMarketplaceClient), 'ERR_CONFIG', /createMarketplaceClient needs its options object/],
      ['tokenPath with a space', call(createMarketplaceClient, { siteUrl: 'https://mp.example', tokenPath: 'not a path' }), 'ERR_CONFIG', /tokenPath must be a path/],
      ['verifyWebhook(body, header)', call(verifyWebhook, '{}', 'sha256=00'), 'ERR_CONFIG', /verifyWebhook needs its options object/],
      ['receiveWebhook(body, header)', call(receiveWebhook, '{}', 'sha256=00'), 'ERR_CONFIG', /receiveWebhook needs its options object/],
      ['verifyContextToken(token)', call(verifyContextToken, 'a.b.c'), 'ERR_CONFIG', /verifyContextToken needs its options object/],
      [
        'verifyContextToken with now: NaN',
        call(verifyContextToken, 'a.b.c', { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: 'https://mp.example', now: Number.NaN }),
        'ERR_CONFIG',
        /verifyContextToken: now must be/,
      ],
      ['verifySessionToken(token)', call(verifySessionToken, 'a.b.c'), 'ERR_CONFIG', /verifySessionToken needs its options object/],
      ['verifySessionToken without a secret', call(verifySessionToken, 'a.b.c', { audience: CLIENT_ID, now: NOW }), 'ERR_CONFIG', /^verifySessionToken: secret must be at least 32/],
      // Without an audience jose checks none: any app's session signed with the secret would do.
      ['verifySessionToken without an audience', call(verifySessionToken, 'a.b.c', { secret: SESSION_SECRET }), 'ERR_CONFIG', /^verifySessionToken: audience must be the app's Client ID, got undefined/],
      ['verifySessionToken with an empty audience', call(verifySessionToken, 'a.b.c', { secret: SESSION_SECRET, audience: '' }), 'ERR_CONFIG', /^verifySessionToken: audience must be the app's Client ID, got ""/],
      ['signSessionToken without an audience', call(signSessionToken, { secret: SESSION_SECRET, user: USER, appId: 'app_1', host: null }), 'ERR_CONFIG', /^signSessionToken: audience must be/],
      ['signSessionToken with a short secret', call(signSessionToken, { secret: 'short', audience: CLIENT_ID, user: USER, appId: 'app_1', host: null }), 'ERR_CONFIG', /^signSessionToken: secret must be at least 32/],
      ['signWebhookBody without a secret', call(signWebhookBody, '{}'), 'ERR_CONFIG', /^signWebhookBody needs the webhook secret/],
      ['verifySessionToken with a short secret', call(verifySessionToken, 'a.b.c', { secret: 'short', audience: CLIENT_ID, now: NOW }), 'ERR_CONFIG', /at least 32/],
      ['verifySessionToken with an invalid Date', call(verifySessionToken, 'a.b.c', { secret: SESSION_SECRET, audience: CLIENT_ID, now: new Date('soon') }), 'ERR_CONFIG', /verifySessionToken: now must be a time/],
      ['signSessionToken with a text now', call(signSessionToken, { secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, now: String(NOW) }), 'ERR_CONFIG', /signSessionToken: now must be a time in ms since the epoch or a Date, got "/],
      ['signSessionToken()', call(signSessionToken), 'ERR_CONFIG', /signSessionToken needs its options object/],
      // What verifySessionToken would refuse is not signed.
      ['signSessionToken with avatar_url null', call(signSessionToken, { secret: SESSION_SECRET, audience: CLIENT_ID, user: { ...USER, avatar_url: null }, appId: 'app_1', host: null }), 'ERR_INVALID_INPUT', /^Invalid signSessionToken user, appId or host \(session claims\) at avatar_url/],
      ['signSessionToken without a user', call(signSessionToken, { secret: SESSION_SECRET, audience: CLIENT_ID, appId: 'app_1', host: null }), 'ERR_INVALID_INPUT', /at sub/],
      ['signSessionToken with a numeric appId', call(signSessionToken, { secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 7, host: null }), 'ERR_INVALID_INPUT', /at app_id/],
      ['frameAncestors()', call(frameAncestors), 'ERR_CONFIG', /frameAncestors: pass the dashboard origins/],
      ['pkceChallenge()', call(pkceChallenge), 'ERR_INVALID_INPUT', /pkceChallenge needs the code verifier/],
      ['buildAuthorizationUrl()', call(buildAuthorizationUrl), 'ERR_CONFIG', /buildAuthorizationUrl needs its options object/],
      ['buildAuthorizationUrl without clientId', call(buildAuthorizationUrl, { siteUrl: 'https://mp.example', redirectUri: 'https://app.example/cb' }), 'ERR_CONFIG', /needs clientId/],
      ['buildAuthorizationUrl with a bad siteUrl', call(buildAuthorizationUrl, { siteUrl: 'mp.example', clientId: CLIENT_ID, redirectUri: 'https://app.example/cb' }), 'ERR_CONFIG', /siteUrl must be/],
      ['buildAuthorizationUrl with a fragment in redirectUri', call(buildAuthorizationUrl, { siteUrl: 'https://mp.example', clientId: CLIENT_ID, redirectUri: 'https://app.example/cb#x' }), 'ERR_CONFIG', /redirectUri must not include a fragment/],
      ['buildAuthorizationUrl with an ftp siteUrl', call(buildAuthorizationUrl, { siteUrl: 'ftp://mp.example', clientId: CLIENT_ID, redirectUri: 'https://app.example/cb' }), 'ERR_CONFIG', /siteUrl must be/],
      ['signContextToken()', call(signContextToken), 'ERR_CONFIG', /signContextToken needs its options object/],
      // A number is no state, however many digits it has (the callback's state is text).
      ...['', 'short', `${'s'.repeat(20)} x`, 12345678901234567890].map((state): [string, Promise<unknown>, string, RegExp] => [
        `buildAuthorizationUrl with state ${JSON.stringify(state)}`,
        call(buildAuthorizationUrl, { siteUrl: 'https://mp.example', clientId: CLIENT_ID, redirectUri: 'https://app.example/cb', state }),
        'ERR_CONFIG',
        /state must be at least 16 visible ASCII characters/,
      ]),
      ...['', 'v'.repeat(42), 'v'.repeat(129), `${'v'.repeat(42)}+`].map((codeVerifier): [string, Promise<unknown>, string, RegExp] => [
        `buildAuthorizationUrl with a codeVerifier of ${codeVerifier.length}`,
        call(buildAuthorizationUrl, { siteUrl: 'https://mp.example', clientId: CLIENT_ID, redirectUri: 'https://app.example/cb', codeVerifier }),
        'ERR_CONFIG',
        /codeVerifier must be 43 to 128 of/,
      ]),
      ...[901, 0, 0.5, Number.NaN].map((ttlSeconds): [string, Promise<unknown>, string, RegExp] => [
        `signSessionToken with ttlSeconds: ${ttlSeconds}`,
        call(signSessionToken, { secret: SESSION_SECRET, audience: CLIENT_ID, user: USER, appId: 'app_1', host: null, now: NOW, ttlSeconds }),
        'ERR_CONFIG',
        /signSessionToken: ttlSeconds must be a whole number of seconds from 1 to 900/,
      ]),
      ...[301, 0, -5, 1.5, Number.NaN].map((ttlSeconds): [string, Promise<unknown>, string, RegExp] => [
        `signContextToken with ttlSeconds: ${ttlSeconds}`,
        call(signContextToken, { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: 'https://mp.example', host: DASHBOARD, appId: 'app_1', user: USER, ttlSeconds }),
        'ERR_CONFIG',
        /signContextToken: ttlSeconds must be/,
      ]),
    ];
    for (const [name, pending, code, message] of cases) {
      await assert.rejects(pending, (error: unknown) => {
        assert.ok(error instanceof MarketplaceKitError, `${name}: ${String(error)}`);
        assert.equal(error.code, code, name);
        assert.match(error.message, message, name);
        return true;
      });
    }
  });
});
