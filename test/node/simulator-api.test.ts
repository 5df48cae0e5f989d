import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMarketplaceClient, isKitError } from '../../src/server/index.js';
import { ApiErrorBody, Entitlement, Profile } from '../../src/shared/schemas.js';
import type { Simulator } from '../../src/simulator/index.js';
import { CALLBACK, codeFor, startTestSimulator, virtualClock } from '../support/simulator-harness.js';

async function apiError(response: Response, status: number, code: string): Promise<void> {
  assert.equal(response.status, status);
  assert.equal(ApiErrorBody.parse(await response.json()).error.code, code);
}

describe('simulator: /whoami and /entitlements', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startTestSimulator();
  });
  after(() => sim.close());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${sim.baseUrl}${path}`, { headers });

  it('answers with an API key and user_id, with the profile and entitlement schemas', async () => {
    const whoami = await get('/whoami?user_id=usr_ada', { 'x-api-key': sim.testApiKey });
    assert.equal(whoami.status, 200);
    const profile = Profile.parse(await whoami.json());
    assert.deepEqual(profile, { id: 'usr_ada', email: 'ada@example.test', name: 'Ada Lovelace', avatar_url: `${sim.siteUrl}/avatars/usr_ada.svg` });
    const avatar = await fetch(profile.avatar_url);
    assert.equal(avatar.headers.get('content-type'), 'image/svg+xml');
    // An SVG opened on its own is a document: it may run nothing and load nothing.
    assert.equal(avatar.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'");
    assert.match(await avatar.text(), /^<svg[^>]+>.*AL<\/text><\/svg>$/);

    const entitlements = await get('/entitlements?user_id=usr_katherine', { 'x-api-key': sim.liveApiKey });
    const lifetime = Entitlement.parse(await entitlements.json());
    assert.equal(lifetime.plan, 'lifetime');
    assert.equal(lifetime.expires_at, null);
    assert.deepEqual(lifetime.features, ['export', 'reports']);
  });

  it('puts the rate-limit headers on every answer to a known caller, errors included', async () => {
    const ok = await get('/entitlements?user_id=usr_ada', { 'x-api-key': sim.liveApiKey });
    assert.equal(ok.headers.get('x-ratelimit-limit'), '1000');
    assert.match(ok.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
    assert.ok(Number(ok.headers.get('x-ratelimit-reset')) > Date.now() / 1000);
    const missing = await get('/entitlements', { 'x-api-key': sim.testApiKey });
    assert.equal(missing.headers.get('x-ratelimit-limit'), '100');
    await apiError(missing, 400, 'missing_user_id');
  });

  it('answers bad callers with the API error shape and the right status', async () => {
    const anonymous = await get('/whoami');
    assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="marketplace"');
    await apiError(anonymous, 401, 'unauthorized');
    await apiError(await get('/whoami?user_id=usr_ada', { 'x-api-key': 'test_wrong' }), 401, 'invalid_api_key');
    await apiError(await get('/whoami?user_id=usr_ada', { 'x-api-key': `${sim.liveApiKey}x` }), 401, 'invalid_api_key');
    await apiError(await get('/whoami', { authorization: 'Bearer mpat_nope' }), 401, 'invalid_token');
    await apiError(await get('/whoami', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }), 401, 'invalid_token');
    await apiError(await get('/whoami?user_id=usr_ada', { authorization: 'Bearer x', 'x-api-key': sim.testApiKey }), 400, 'invalid_request');
    await apiError(await get('/whoami?user_id=usr_nobody', { 'x-api-key': sim.testApiKey }), 404, 'user_not_found');
    await apiError(await get('/whoami?user_id=ada', { 'x-api-key': sim.testApiKey }), 400, 'invalid_request');
    await apiError(await get('/whoami?user_id=usr_ada&user_id=usr_alan', { 'x-api-key': sim.testApiKey }), 400, 'invalid_request');
    await apiError(await get('/entitlements?user_id=usr_linus', { 'x-api-key': sim.testApiKey }), 404, 'entitlement_not_found');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const refused = await fetch(`${sim.baseUrl}/whoami?user_id=usr_ada`, { method, headers: { 'x-api-key': sim.testApiKey } });
      assert.equal(refused.headers.get('allow'), 'GET, HEAD', method);
      await apiError(refused, 405, 'method_not_allowed');
    }
  });

  it('works with the server client: by user id, and null for a user without entitlement', async () => {
    const client = createMarketplaceClient({ siteUrl: sim.siteUrl, apiKey: sim.testApiKey, entitlementTtlMs: 0 });
    assert.equal((await client.whoami({ userId: 'usr_alan' })).name, 'Alan Turing');
    assert.equal((await client.entitlements({ userId: 'usr_alan' }))?.plan, 'pro_annual');
    assert.equal(await client.entitlements({ userId: 'usr_linus' }), null);
    await assert.rejects(client.whoami({ userId: 'usr_nobody' }), (error) => isKitError(error) && error.status === 404);
  });

  it('records the calls an app makes, with their answers', async () => {
    await get('/entitlements?user_id=usr_grace', { 'x-api-key': sim.testApiKey });
    const [last] = sim.state().api_calls;
    assert.equal(last?.path, '/api/v1/entitlements?user_id=usr_grace');
    assert.equal(last?.auth, 'test_key');
    assert.equal(last?.user_id, 'usr_grace');
    assert.equal(last?.status, 200);
    assert.equal((last?.response as Entitlement).plan, 'pro_monthly');
  });
});

describe('simulator: rate limits', () => {
  it('refuses the 101st test-key call of a minute with 429, Retry-After and zero remaining', async () => {
    const clock = virtualClock();
    const sim = await startTestSimulator({ clock: clock.now });
    try {
      const call = (key: string) => fetch(`${sim.baseUrl}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': key } });
      for (let i = 0; i < 100; i++) assert.equal((await call(sim.testApiKey)).status, 200);
      clock.advance(20_000);
      const refused = await call(sim.testApiKey);
      await apiError(refused, 429, 'rate_limited');
      assert.equal(refused.headers.get('retry-after'), '40');
      assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(refused.headers.get('x-ratelimit-limit'), '100');
      // The live key has its own, larger budget.
      assert.equal((await call(sim.liveApiKey)).status, 200);
      clock.advance(40_000);
      const next = await call(sim.testApiKey);
      assert.equal(next.status, 200);
      assert.equal(next.headers.get('x-ratelimit-remaining'), '99');
    } finally {
      await sim.close();
    }
  });

  it('gives each key kind and each user\'s tokens a budget of its own, with the default limits per minute', async () => {
    const clock = virtualClock();
    const sim = await startTestSimulator({ clock: clock.now });
    try {
      const client = createMarketplaceClient({ siteUrl: sim.siteUrl, clientId: sim.clientId, clientSecret: sim.clientSecret });
      const ada = (await client.exchangeCode({ code: await codeFor(sim, {}, 'usr_ada'), redirectUri: CALLBACK })).accessToken;
      const alan = (await client.exchangeCode({ code: await codeFor(sim, {}, 'usr_alan'), redirectUri: CALLBACK })).accessToken;
      const call = async (headers: Record<string, string>) => {
        const response = await fetch(`${sim.baseUrl}/whoami?user_id=usr_ada`, { headers });
        assert.equal(response.status, 200);
        return [response.headers.get('x-ratelimit-limit'), response.headers.get('x-ratelimit-remaining')];
      };
      assert.deepEqual(await call({ 'x-api-key': sim.testApiKey }), ['100', '99']);
      assert.deepEqual(await call({ 'x-api-key': sim.liveApiKey }), ['1000', '999']);
      assert.deepEqual(await call({ authorization: `Bearer ${ada}` }), ['1000', '999']);
      assert.deepEqual(await call({ authorization: `Bearer ${alan}` }), ['1000', '999']);
      assert.deepEqual(await call({ 'x-api-key': sim.testApiKey }), ['100', '98']);
      // X-RateLimit-Reset: when the window that began with the first call ends, in Unix seconds.
      const reset = (await fetch(`${sim.baseUrl}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': sim.testApiKey } })).headers.get('x-ratelimit-reset');
      assert.equal(reset, String(Math.ceil((clock.now() + 60_000) / 1000)));
    } finally {
      await sim.close();
    }
  });

  it('rounds Retry-After up, so that a client that honours it is not refused again', async () => {
    const clock = virtualClock();
    const sim = await startTestSimulator({ clock: clock.now, rateLimits: { test: 1 } });
    try {
      const call = () => fetch(`${sim.baseUrl}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': sim.testApiKey } });
      assert.equal((await call()).status, 200);
      clock.advance(500);
      const refused = await call();
      await apiError(refused, 429, 'rate_limited');
      // 59.5 s are left in the window.
      assert.equal(refused.headers.get('retry-after'), '60');
    } finally {
      await sim.close();
    }
  });

  it('limits OAuth access tokens per user', async () => {
    const sim = await startTestSimulator({ rateLimits: { bearer: 2 } });
    try {
      const client = createMarketplaceClient({ siteUrl: sim.siteUrl, clientId: sim.clientId, clientSecret: sim.clientSecret });
      const { accessToken } = await client.exchangeCode({ code: await codeFor(sim), redirectUri: CALLBACK });
      const call = () => fetch(`${sim.baseUrl}/whoami`, { headers: { authorization: `Bearer ${accessToken}` } });
      assert.equal((await call()).status, 200);
      assert.equal((await call()).headers.get('x-ratelimit-remaining'), '0');
      await apiError(await call(), 429, 'rate_limited');
    } finally {
      await sim.close();
    }
  });

  it('the server client paces itself under the limit (the simulator answers no 429) and honours Retry-After', async () => {
    const sim = await startTestSimulator({ rateLimits: { test: 5, windowMs: 1000 } });
    try {
      const client = createMarketplaceClient({ siteUrl: sim.siteUrl, apiKey: sim.testApiKey, entitlementTtlMs: 0, rateLimit: { limit: 5, windowMs: 1000 } });
      const started = Date.now();
      // whoami: concurrent entitlement lookups of one user would share one request.
      const answers = await Promise.all(Array.from({ length: 12 }, () => client.whoami({ userId: 'usr_ada' })));
      assert.equal(answers.length, 12);
      assert.ok(answers.every((profile) => profile.id === 'usr_ada'));
      // 12 calls at 5 per second need at least two further windows.
      assert.ok(Date.now() - started >= 1900, `took ${Date.now() - started} ms`);
      // A slot is held until a window after each answer, so however the simulator's fixed windows
      // fall, none of them sees more than 5: no 429 at all.
      const statuses = sim.state().api_calls.map((call) => call.status);
      assert.deepEqual(statuses, Array.from({ length: 12 }, () => 200));

      // A client that believes in a larger limit gets 429s and recovers with Retry-After.
      const eager = createMarketplaceClient({ siteUrl: sim.siteUrl, apiKey: sim.testApiKey, entitlementTtlMs: 0, rateLimit: { limit: 100, windowMs: 1000 }, maxRetries: 3 });
      const more = await Promise.all(Array.from({ length: 7 }, () => eager.whoami({ userId: 'usr_ada' })));
      assert.equal(more.length, 7);
      assert.ok(sim.state().api_calls.some((call) => call.status === 429));
    } finally {
      await sim.close();
    }
  });
});

describe('simulator: authorization code replay', () => {
  it('a used code replayed after it expired, while the simulator still remembers it, still revokes the tokens it gave', async (t) => {
    // Only the simulator's minute sweep runs on setInterval; fetch keeps real timers.
    t.mock.timers.enable({ apis: ['setInterval'] });
    const clock = virtualClock();
    const sim = await startTestSimulator({ clock: clock.now });
    try {
      const client = createMarketplaceClient({ siteUrl: sim.siteUrl, clientId: sim.clientId, clientSecret: sim.clientSecret });
      const code = await codeFor(sim);
      const { accessToken } = await client.exchangeCode({ code, redirectUri: CALLBACK });
      const whoami = () => fetch(`${sim.baseUrl}/whoami`, { headers: { authorization: `Bearer ${accessToken}` } });
      assert.equal((await whoami()).status, 200);
      // The code lived 60 s; a used one is kept an hour past that to catch a late replay.
      clock.advance(5 * 60_000);
      t.mock.timers.tick(60_000);
      await assert.rejects(client.exchangeCode({ code, redirectUri: CALLBACK }), { code: 'ERR_OAUTH' });
      await apiError(await whoami(), 401, 'invalid_token');
    } finally {
      await sim.close();
    }
  });
});
