import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMarketplaceClient, isKitError, type MarketplaceClient } from '../../src/server/index.js';
import { OAuthErrorBody, TokenResponse } from '../../src/shared/schemas.js';
import type { Simulator } from '../../src/simulator/index.js';
import { PENDING_AUTHORIZATIONS, REFRESH_TOKENS_PER_USER, SPENT_REFRESH_KEPT_MS, SimulatorState } from '../../src/simulator/state.js';
import {
  CALLBACK,
  authorize,
  authorizeUrl,
  codeFor,
  formTokenOf,
  postConsent,
  postJson,
  startTestSimulator,
  virtualClock,
} from '../support/simulator-harness.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

async function oauthError(response: Response, status: number, error: string): Promise<void> {
  assert.equal(response.status, status);
  const body = OAuthErrorBody.parse(await response.json());
  assert.equal(body.error, error);
  assert.equal(typeof body.error_description, 'string');
  // RFC 6749 §5.2 answers are not cached, by HTTP/1.0 caches either.
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(response.headers.get('pragma'), 'no-cache');
}

describe('simulator: authorization page', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startTestSimulator({ redirectUris: [CALLBACK, 'http://127.0.0.1:9/other?x=1'] });
  });
  after(() => sim.close());

  it('shows who signs in, the app, the scope, and Approve/Deny, and cannot be framed', async () => {
    const response = await fetch(authorizeUrl(sim, { state: 's1' }));
    assert.equal(response.status, 200);
    const html = await response.text();
    assert.match(html, /Authorize Your app/);
    assert.match(html, /Ada Lovelace/);
    assert.match(html, /identity:read/);
    assert.match(html, /value="approve"/);
    assert.match(html, /value="deny"/);
    assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    assert.match(response.headers.get('content-security-policy') ?? '', /form-action 'self' http:\/\/127\.0\.0\.1:9/);
    // Scripts: only the simulator's own and the page's nonce; nothing inline without it, no eval.
    const directives = (response.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim());
    const scriptSrc = directives.filter((d) => d.startsWith('script-src '));
    assert.equal(scriptSrc.length, 1);
    assert.match(scriptSrc[0]!, /^script-src 'self' 'nonce-[A-Za-z0-9+/]{22}==' *$/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const errorPage = await fetch(authorizeUrl(sim, { clientId: 'client_other' }), { redirect: 'manual' });
    assert.equal(errorPage.headers.get('x-content-type-options'), 'nosniff');
  });

  it('approve redirects with a code and the state; deny with access_denied and the state', async () => {
    const approved = await authorize(sim, { state: 'xyz' });
    assert.equal(`${approved.origin}${approved.pathname}`, CALLBACK);
    assert.match(approved.searchParams.get('code') ?? '', /^code_/);
    assert.equal(approved.searchParams.get('state'), 'xyz');
    // The grant is announced to the app as a user.authorized webhook (skipped here: no webhook URL).
    const [announced] = sim.state().deliveries;
    assert.deepEqual([announced?.event, announced?.data], ['user.authorized', { user_id: 'usr_ada' }]);
    const denied = await authorize(sim, { state: 'abc' }, 'deny');
    assert.equal(denied.searchParams.get('error'), 'access_denied');
    assert.equal(denied.searchParams.get('state'), 'abc');
    assert.equal(denied.searchParams.get('code'), null);
  });

  it('keeps the query of a registered redirect URI', async () => {
    const approved = await authorize(sim, { redirectUri: 'http://127.0.0.1:9/other?x=1' });
    assert.equal(approved.searchParams.get('x'), '1');
    assert.ok(approved.searchParams.get('code'));
  });

  it('shows an error page, never a redirect, for an unknown client or an unregistered redirect URI', async () => {
    const nearMisses = [
      'http://127.0.0.1:9/callback/',
      'http://127.0.0.1:10/callback',
      'http://127.0.0.1:9/Callback',
      'HTTP://127.0.0.1:9/callback',
      'http://localhost:9/callback',
      'http://127.0.0.1:9/callback?extra=1',
      'https://evil.example/callback',
    ];
    for (const redirectUri of nearMisses) {
      const response = await fetch(authorizeUrl(sim, { redirectUri, state: 's' }), { redirect: 'manual' });
      assert.equal(response.status, 400, redirectUri);
      assert.equal(response.headers.get('location'), null, redirectUri);
      assert.match(await response.text(), /Redirect URI not registered/);
    }
    const unknown = await fetch(authorizeUrl(sim, { clientId: 'client_other' }), { redirect: 'manual' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.headers.get('location'), null);
    assert.match(await unknown.text(), /Unknown application/);
    const missing = await fetch(`${sim.siteUrl}/oauth/authorize?redirect_uri=${encodeURIComponent(CALLBACK)}`, { redirect: 'manual' });
    assert.equal(missing.status, 400);
    assert.equal(missing.headers.get('location'), null);
    // A repeated client_id or redirect_uri is ambiguous: no value of it is trusted, not even a right first one.
    const repeats: [string, string, RegExp][] = [
      ['client_id', sim.clientId, /Unknown application/],
      ['client_id', 'client_other', /Unknown application/],
      ['redirect_uri', CALLBACK, /Redirect URI not registered/],
      ['redirect_uri', 'https://evil.example/callback', /Redirect URI not registered/],
    ];
    for (const [name, value, page] of repeats) {
      const url = new URL(authorizeUrl(sim, { state: 's' }));
      url.searchParams.append(name, value);
      const response = await fetch(url, { redirect: 'manual' });
      assert.equal(response.status, 400, `${name}=${value}`);
      assert.equal(response.headers.get('location'), null, `${name}=${value}`);
      assert.match(await response.text(), page);
    }
  });

  it('redirects other errors to the app with error and state', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ response_type: '' }, 'invalid_request'],
      [{ scope: 'admin:write' }, 'invalid_scope'],
      [{ scope: '' }, 'invalid_request'],
      [{ scope: ' ' }, 'invalid_scope'],
      // Names of Object.prototype are no scopes either (they answered 500).
      [{ scope: 'toString' }, 'invalid_scope'],
      [{ scope: '__proto__' }, 'invalid_scope'],
      [{ scope: 'identity:read constructor' }, 'invalid_scope'],
      [{ code_challenge: CHALLENGE, code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
      // A SHA-256 in base64url is exactly 43 characters: a longer challenge cannot be one.
      [{ code_challenge: `${CHALLENGE}A`, code_challenge_method: 'S256' }, 'invalid_request'],
      [{ code_challenge_method: 'S256' }, 'invalid_request'],
    ];
    for (const [overrides, error] of cases) {
      const url = new URL(authorizeUrl(sim, { state: 'st' }));
      for (const [key, value] of Object.entries(overrides)) url.searchParams.set(key, value);
      const response = await fetch(url, { redirect: 'manual' });
      assert.equal(response.status, 302, JSON.stringify(overrides));
      const location = new URL(response.headers.get('location')!);
      assert.equal(`${location.origin}${location.pathname}`, CALLBACK);
      assert.equal(location.searchParams.get('error'), error, JSON.stringify(overrides));
      assert.equal(location.searchParams.get('state'), 'st');
    }
    const repeated = new URL(authorizeUrl(sim, { state: 'st' }));
    repeated.searchParams.append('scope', 'identity:read');
    const response = await fetch(repeated, { redirect: 'manual' });
    assert.equal(new URL(response.headers.get('location')!).searchParams.get('error'), 'invalid_request');
    // Two values of state: the app could not tell which one comes back, so the request is refused.
    const twoStates = new URL(authorizeUrl(sim, { state: 'st' }));
    twoStates.searchParams.append('state', 'other');
    const refused = await fetch(twoStates, { redirect: 'manual' });
    assert.equal(refused.status, 302);
    const refusedLocation = new URL(refused.headers.get('location')!);
    assert.equal(refusedLocation.searchParams.get('error'), 'invalid_request');
    assert.equal(refusedLocation.searchParams.get('state'), null, 'neither of two states is echoed');
    for (const name of ['code_challenge', 'code_challenge_method']) {
      const twice = new URL(authorizeUrl(sim, { state: 'st', codeChallenge: CHALLENGE }));
      twice.searchParams.append(name, twice.searchParams.get(name)!);
      const answer = await fetch(twice, { redirect: 'manual' });
      assert.equal(answer.status, 302, name);
      const location = new URL(answer.headers.get('location')!);
      assert.equal(location.searchParams.get('error'), 'invalid_request', name);
      assert.equal(location.searchParams.get('state'), 'st');
    }
  });

  it('accepts each form token once, and only from its own origin', async () => {
    const html = await (await fetch(authorizeUrl(sim))).text();
    const formToken = formTokenOf(html);
    // Another site, and an opaque origin (sandboxed frame, data: URL, cross-site redirect): neither is the simulator's.
    for (const origin of ['https://evil.example', 'null']) {
      const refused = await fetch(`${sim.siteUrl}/oauth/authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ form_token: formToken, decision: 'approve', user_id: 'usr_ada' }),
        redirect: 'manual',
      });
      assert.deepEqual([refused.status, refused.headers.get('location')], [403, null], origin);
    }
    const notAForm = await fetch(`${sim.siteUrl}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: new URLSearchParams({ form_token: formToken, decision: 'approve', user_id: 'usr_ada' }).toString(),
      redirect: 'manual',
    });
    assert.equal(notAForm.status, 400);
    assert.equal(notAForm.headers.get('location'), null);
    const first = await postConsent(sim, { form_token: formToken, decision: 'approve', user_id: 'usr_ada' });
    assert.equal(first.status, 303);
    const again = await postConsent(sim, { form_token: formToken, decision: 'approve', user_id: 'usr_ada' });
    assert.equal(again.status, 400);
    assert.equal(again.headers.get('location'), null);
    const forged = await postConsent(sim, { form_token: 'ft_forged', decision: 'approve', user_id: 'usr_ada' });
    assert.equal(forged.status, 400);
  });

  it('refuses a consent given after the sign-in request expired (10 minutes)', async () => {
    const clock = virtualClock();
    const timed = await startTestSimulator({ clock: clock.now });
    try {
      const formToken = formTokenOf(await (await fetch(authorizeUrl(timed))).text());
      clock.advance(10 * 60_000);
      const late = await postConsent(timed, { form_token: formToken, decision: 'approve', user_id: 'usr_ada' });
      assert.equal(late.status, 400);
      assert.equal(late.headers.get('location'), null);
      assert.match(await late.text(), /expired/);
    } finally {
      await timed.close();
    }
  });

  it('proposes Ada, the first user, until another is chosen on the dashboard or on this page', async () => {
    const fresh = await startTestSimulator();
    try {
      const checked = async () => (await (await fetch(authorizeUrl(fresh))).text()).match(/value="(usr_\w+)" checked/g);
      assert.deepEqual(await checked(), ['value="usr_ada" checked']);
      // The dashboard opens on the same user: its script starts from current_user_id.
      assert.equal((await (await fetch(`${fresh.siteUrl}/_simulator/state`)).json()).current_user_id, 'usr_ada');
      await authorize(fresh, {}, 'approve', 'usr_grace');
      assert.deepEqual(await checked(), ['value="usr_grace" checked']);
    } finally {
      await fresh.close();
    }
  });

  it('proposes the user last chosen, on the dashboard or on this page', async () => {
    const checked = async () => (await (await fetch(authorizeUrl(sim))).text()).match(/value="(usr_\w+)" checked/)?.[1];
    await postJson(`${sim.siteUrl}/_simulator/context`, { user_id: 'usr_katherine' });
    assert.equal(await checked(), 'usr_katherine');
    await authorize(sim, {}, 'approve', 'usr_alan');
    assert.equal(await checked(), 'usr_alan');
  });

  it('escapes the app name on the page', async () => {
    const hostile = await startTestSimulator({ appName: '<img src=x onerror=alert(1)> & "co"' });
    try {
      const html = await (await fetch(authorizeUrl(hostile))).text();
      assert.doesNotMatch(html, /<img src=x/);
      assert.match(html, /Authorize &#60;img src=x onerror=alert\(1\)&#62; &#38; &#34;co&#34;/);
    } finally {
      await hostile.close();
    }
  });

  it('refuses a consent without a known user or decision', async () => {
    for (const form of [{ decision: 'approve', user_id: 'usr_nobody' }, { decision: 'maybe', user_id: 'usr_ada' }]) {
      const formToken = formTokenOf(await (await fetch(authorizeUrl(sim))).text());
      const response = await postConsent(sim, { form_token: formToken, ...form });
      assert.equal(response.status, 400);
    }
  });
});

describe('simulator: token endpoint', () => {
  let sim: Simulator;
  let client: MarketplaceClient;
  const clock = virtualClock();
  before(async () => {
    sim = await startTestSimulator({ clock: clock.now });
    client = createMarketplaceClient({ siteUrl: sim.siteUrl, clientId: sim.clientId, clientSecret: sim.clientSecret });
  });
  after(() => sim.close());
  /** A refresh_token grant sent as is (the kit's client would not send a spent token again). */
  const postRefresh = (refreshToken: string | undefined, extra: Record<string, string> = {}) =>
    postJson(`${sim.siteUrl}/api/oauth/token`, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: sim.clientId, client_secret: sim.clientSecret, ...extra });

  it('exchanges a code with the server client, then whoami and entitlements with the token', async () => {
    const code = await codeFor(sim, { state: 's', codeChallenge: CHALLENGE }, 'usr_grace');
    const tokens = await client.exchangeCode({ code, redirectUri: CALLBACK, codeVerifier: VERIFIER });
    assert.equal(tokens.tokenType, 'Bearer');
    assert.equal(tokens.expiresIn, 3600);
    assert.ok(tokens.refreshToken);
    const api = createMarketplaceClient({ siteUrl: sim.siteUrl, entitlementTtlMs: 0 });
    assert.equal((await api.whoami({ accessToken: tokens.accessToken })).id, 'usr_grace');
    const entitlement = await api.entitlements({ accessToken: tokens.accessToken });
    assert.equal(entitlement?.plan, 'pro_monthly');
    assert.equal(entitlement?.status, 'trialing');
  });

  it('answers on both paths with a token response (JSON and form encoding)', async () => {
    const viaJson = await postJson(`${sim.baseUrl}/oauth/token`, {
      grant_type: 'authorization_code',
      code: await codeFor(sim),
      redirect_uri: CALLBACK,
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
    });
    assert.equal(viaJson.status, 200);
    assert.equal(viaJson.headers.get('cache-control'), 'no-store');
    assert.equal(viaJson.headers.get('pragma'), 'no-cache');
    const body = TokenResponse.parse(await viaJson.json());
    assert.equal(body.expires_in, 3600);
    assert.equal(body.token_type, 'Bearer');
    const viaForm = await fetch(`${sim.siteUrl}/api/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${sim.clientId}:${sim.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: await codeFor(sim), redirect_uri: CALLBACK }),
    });
    assert.equal(viaForm.status, 200);
    TokenResponse.parse(await viaForm.json());
    // Media types are case-insensitive (RFC 9110 §8.3.1).
    const mixedCase = await fetch(`${sim.siteUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'Application/X-WWW-Form-Urlencoded; Charset=UTF-8' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: await codeFor(sim), redirect_uri: CALLBACK, client_id: sim.clientId, client_secret: sim.clientSecret }).toString(),
    });
    assert.equal(mixedCase.status, 200);
  });

  it('keeps issued token values out of the recorded calls (state snapshot and control API)', async () => {
    const exchanged = await client.exchangeCode({ code: await codeFor(sim), redirectUri: CALLBACK });
    const refreshed = await client.refresh(exchanged.refreshToken!);
    const secrets = [exchanged.accessToken, exchanged.refreshToken!, refreshed.accessToken, refreshed.refreshToken!];
    const recorded = sim.state().api_calls.filter((call) => call.path.endsWith('/oauth/token') && call.status === 200);
    assert.ok(recorded.length >= 2);
    const control = await (await fetch(`${sim.siteUrl}/_simulator/state`)).text();
    for (const text of [JSON.stringify(sim.state()), control]) {
      for (const token of secrets) assert.equal(text.includes(token), false, 'a token value was recorded');
    }
  });

  it('rotates refresh tokens: the new one works, the used one is refused and ends the family', async () => {
    const first = await client.exchangeCode({ code: await codeFor(sim), redirectUri: CALLBACK });
    const second = await client.refresh(first.refreshToken!);
    assert.notEqual(second.refreshToken, first.refreshToken);
    assert.notEqual(second.accessToken, first.accessToken);
    // The kit's client does not send a token it has just spent: the late caller gets the same answer.
    assert.equal(await client.refresh(first.refreshToken!), second);
    const reuse = await postRefresh(first.refreshToken);
    await oauthError(reuse, 400, 'invalid_grant');
    // The reuse revoked everything issued from that authorization, the rotated token included.
    const rotated = await postRefresh(second.refreshToken);
    await oauthError(rotated, 400, 'invalid_grant');
    const whoami = await fetch(`${sim.baseUrl}/whoami`, { headers: { authorization: `Bearer ${second.accessToken}` } });
    assert.equal(whoami.status, 401);
  });

  it('refuses a refresh that widens the granted scope, and allows one that keeps it', async () => {
    const first = await client.exchangeCode({ code: await codeFor(sim), redirectUri: CALLBACK });
    const refresh = (scope: string) =>
      postRefresh(first.refreshToken, { scope });
    await oauthError(await refresh('identity:read admin:write'), 400, 'invalid_scope');
    const kept = await refresh('identity:read');
    assert.equal(kept.status, 200);
    assert.equal(TokenResponse.parse(await kept.json()).scope, 'identity:read');
  });

  it('refuses a reused code and revokes the tokens of its first exchange', async () => {
    const code = await codeFor(sim);
    const tokens = await client.exchangeCode({ code, redirectUri: CALLBACK });
    const body = { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: sim.clientId, client_secret: sim.clientSecret };
    await oauthError(await postJson(`${sim.siteUrl}/api/oauth/token`, body), 400, 'invalid_grant');
    const whoami = await fetch(`${sim.baseUrl}/whoami`, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
    assert.equal(whoami.status, 401);
  });

  it('expires codes after 60 s and access tokens after expires_in (virtual clock)', async () => {
    const body = (code: string) => ({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: sim.clientId, client_secret: sim.clientSecret });
    const late = await codeFor(sim);
    clock.advance(60_000); // exactly its lifetime: expired
    await oauthError(await postJson(`${sim.siteUrl}/api/oauth/token`, body(late)), 400, 'invalid_grant');
    const inTime = await codeFor(sim);
    clock.advance(59_000);
    const answer = await postJson(`${sim.siteUrl}/api/oauth/token`, body(inTime));
    assert.equal(answer.status, 200);
    const { access_token } = TokenResponse.parse(await answer.json());
    const call = () => fetch(`${sim.baseUrl}/whoami`, { headers: { authorization: `Bearer ${access_token}` } });
    assert.equal((await call()).status, 200);
    clock.advance(3600_000);
    const expired = await call();
    assert.equal(expired.status, 401);
    assert.equal(((await expired.json()) as { error: { code: string } }).error.code, 'invalid_token');
    assert.match(expired.headers.get('www-authenticate') ?? '', /invalid_token/);
  });

  it('checks PKCE: a wrong or missing verifier, or a verifier without a challenge, is invalid_grant', async () => {
    const send = (code: string, extra: Record<string, string>) =>
      postJson(`${sim.siteUrl}/api/oauth/token`, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: sim.clientId, client_secret: sim.clientSecret, ...extra });
    await oauthError(await send(await codeFor(sim, { codeChallenge: CHALLENGE }), { code_verifier: `${VERIFIER.slice(0, -1)}x` }), 400, 'invalid_grant');
    await oauthError(await send(await codeFor(sim, { codeChallenge: CHALLENGE }), {}), 400, 'invalid_grant');
    await oauthError(await send(await codeFor(sim), { code_verifier: VERIFIER }), 400, 'invalid_grant');
    // RFC 7636 §4.1: a verifier is 43 to 128 unreserved characters, even when its challenge matches.
    const short = 'short-verifier';
    const shortChallenge = createHash('sha256').update(short).digest('base64url');
    await oauthError(await send(await codeFor(sim, { codeChallenge: shortChallenge }), { code_verifier: short }), 400, 'invalid_grant');
    assert.equal((await send(await codeFor(sim, { codeChallenge: CHALLENGE }), { code_verifier: VERIFIER })).status, 200);
  });

  it('answers bad requests with RFC 6749 errors and their statuses', async () => {
    const token = `${sim.siteUrl}/api/oauth/token`;
    const good = { client_id: sim.clientId, client_secret: sim.clientSecret };
    const code = await codeFor(sim);
    await oauthError(await postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: sim.clientId, client_secret: 'wrong' }), 401, 'invalid_client');
    await oauthError(await postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: 'client_nope', client_secret: sim.clientSecret }), 401, 'invalid_client');
    // The simulated app is a confidential client: no secret, no token.
    await oauthError(await postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: sim.clientId }), 401, 'invalid_client');
    const basic = `Basic ${Buffer.from(`${sim.clientId}:${sim.clientSecret}`).toString('base64')}`;
    // RFC 6749 §2.3: one authentication method per request; and the body may not name another client.
    await oauthError(await postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_secret: sim.clientSecret }, { authorization: basic }), 400, 'invalid_request');
    await oauthError(await postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: 'client_other' }, { authorization: basic }), 400, 'invalid_request');
    // Failed client authentication does not burn the code; a grant error does.
    assert.equal((await postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...good })).status, 200);
    const other = await codeFor(sim);
    await oauthError(await postJson(token, { grant_type: 'authorization_code', code: other, redirect_uri: `${CALLBACK}/`, ...good }), 400, 'invalid_grant');
    await oauthError(await postJson(token, { grant_type: 'authorization_code', code: other, redirect_uri: CALLBACK, ...good }), 400, 'invalid_grant');
    await oauthError(await postJson(token, { grant_type: 'password', ...good }), 400, 'unsupported_grant_type');
    await oauthError(await postJson(token, { ...good }), 400, 'invalid_request');
    await oauthError(await postJson(token, { grant_type: 'authorization_code', redirect_uri: CALLBACK, ...good }), 400, 'invalid_request');
    await oauthError(await postJson(token, { grant_type: 'refresh_token', ...good }), 400, 'invalid_request');
    await oauthError(await postJson(token, { grant_type: 'refresh_token', refresh_token: 'mprt_unknown', ...good }), 400, 'invalid_grant');
    // JSON parameters must be strings (a complete request otherwise, so only the type can be the reason).
    await oauthError(await postJson(token, { grant_type: 'authorization_code', code: 5, redirect_uri: CALLBACK, ...good }), 400, 'invalid_request');
    await oauthError(await postJson(token, { grant_type: 'authorization_code', code: await codeFor(sim), redirect_uri: CALLBACK, client_id: sim.clientId, client_secret: 123 }), 400, 'invalid_request');
    await oauthError(await postJson(token, ['grant_type']), 400, 'invalid_request');
    await oauthError(await fetch(token, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":' }), 400, 'invalid_request');
    await oauthError(await fetch(token, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ grant_type: 'authorization_code', ...good }) }), 400, 'invalid_request');
    await oauthError(await fetch(token, { method: 'POST', body: new URLSearchParams('grant_type=a&grant_type=b') }), 400, 'invalid_request');
    await oauthError(await fetch(token), 405, 'invalid_request');
    const basicWrong = await fetch(token, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${sim.clientId}:nope`).toString('base64')}` },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'x' }),
    });
    await oauthError(basicWrong, 401, 'invalid_client');
    assert.match(basicWrong.headers.get('www-authenticate') ?? '', /^Basic/);
  });

  it('refuses a valid form-encoded token request sent as text/plain (a CORS-simple cross-site POST)', async () => {
    const token = `${sim.siteUrl}/api/oauth/token`;
    const code = await codeFor(sim);
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: sim.clientId, client_secret: sim.clientSecret });
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'multipart/form-data; boundary=x']) {
      await oauthError(await fetch(token, { method: 'POST', headers: { 'content-type': type }, body: form.toString() }), 400, 'invalid_request');
    }
    // Nothing was read from those bodies: the code is still good.
    assert.equal((await fetch(token, { method: 'POST', body: form })).status, 200);
  });

  it('authenticates the client by the exact secret, and by one method only', async () => {
    const token = `${sim.siteUrl}/api/oauth/token`;
    const code = await codeFor(sim);
    const exchange = (extra: Record<string, string>, headers: Record<string, string> = {}) =>
      postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: sim.clientId, ...extra }, headers);
    for (const secret of [sim.clientSecret.slice(0, -1), sim.clientSecret.slice(0, 8), `${sim.clientSecret}x`]) {
      await oauthError(await exchange({ client_secret: secret }), 401, 'invalid_client');
    }
    // An Authorization header of another scheme is not ignored in favour of the body credentials.
    const bearer = await exchange({ client_secret: sim.clientSecret }, { authorization: 'Bearer x' });
    await oauthError(bearer, 401, 'invalid_client');
    // None of those spent the code.
    assert.equal((await exchange({ client_secret: sim.clientSecret })).status, 200);
  });

  it('refuses malformed HTTP Basic credentials as invalid_client with a Basic challenge, and a request naming no client or no redirect_uri as invalid_request; none spends the code', async () => {
    const token = `${sim.siteUrl}/api/oauth/token`;
    const code = await codeFor(sim);
    const basic = (credentials: string) => ({ authorization: `Basic ${Buffer.from(credentials).toString('base64')}` });
    const described = async (response: Response, status: number, error: string, description: string) => {
      const body = (await response.clone().json()) as { error_description: string };
      await oauthError(response, status, error);
      assert.equal(body.error_description, description);
      return response;
    };
    // No colon between id and secret; percent-encoding that decodes to no text (RFC 6749 §2.3.1).
    for (const credentials of [`${sim.clientId}${sim.clientSecret}`, `${sim.clientId}:%E0%A4%A`, `%ZZ:${sim.clientSecret}`]) {
      const answer = await described(
        await postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, basic(credentials)),
        401,
        'invalid_client',
        'Malformed HTTP Basic credentials.',
      );
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Basic/, credentials);
    }
    await described(await postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_secret: sim.clientSecret }), 400, 'invalid_request', 'The client_id parameter is missing.');
    await described(
      await postJson(token, { grant_type: 'authorization_code', code, client_id: sim.clientId, client_secret: sim.clientSecret }),
      400,
      'invalid_request',
      'The redirect_uri parameter is missing.',
    );
    assert.equal((await postJson(token, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: sim.clientId, client_secret: sim.clientSecret })).status, 200);
  });

  it('form-urldecodes HTTP Basic credentials (RFC 6749 §2.3.1)', async () => {
    const special = await startTestSimulator({ clientSecret: 'sec+ret %/x' });
    try {
      const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
      const basic = `Basic ${Buffer.from(`${encode(special.clientId)}:${encode(special.clientSecret)}`).toString('base64')}`;
      const answer = await postJson(`${special.siteUrl}/api/oauth/token`, { grant_type: 'authorization_code', code: await codeFor(special), redirect_uri: CALLBACK }, { authorization: basic });
      assert.equal(answer.status, 200);
      TokenResponse.parse(await answer.json());
    } finally {
      await special.close();
    }
  });

  it('gives expires_in from accessTokenTtlSeconds', async () => {
    const short = await startTestSimulator({ accessTokenTtlSeconds: 120 });
    try {
      const answer = await postJson(`${short.siteUrl}/api/oauth/token`, {
        grant_type: 'authorization_code',
        code: await codeFor(short),
        redirect_uri: CALLBACK,
        client_id: short.clientId,
        client_secret: short.clientSecret,
      });
      assert.equal(answer.status, 200);
      assert.equal(TokenResponse.parse(await answer.json()).expires_in, 120);
    } finally {
      await short.close();
    }
  });

  it('answers a token request over 64 KB in the OAuth error shape', async () => {
    const response = await fetch(`${sim.siteUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code: 'x'.repeat(70_000) }),
    });
    await oauthError(response, 413, 'invalid_request');
  });

  it('ends every token of a user who revokes the app (user.revoked), and only theirs', async () => {
    const katherine = await client.exchangeCode({ code: await codeFor(sim, {}, 'usr_katherine'), redirectUri: CALLBACK });
    const ada = await client.exchangeCode({ code: await codeFor(sim, {}, 'usr_ada'), redirectUri: CALLBACK });
    const whoami = (accessToken: string) => fetch(`${sim.baseUrl}/whoami`, { headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal((await whoami(katherine.accessToken)).status, 200);
    await sim.sendEvent('user.revoked', { user_id: 'usr_katherine' });
    assert.equal((await whoami(katherine.accessToken)).status, 401);
    const refresh = await postRefresh(katherine.refreshToken);
    await oauthError(refresh, 400, 'invalid_grant');
    assert.equal((await whoami(ada.accessToken)).status, 200);
  });

  it('a code issued before the user revoked the app buys no token', async () => {
    const code = await codeFor(sim, {}, 'usr_katherine');
    await sim.sendEvent('user.revoked', { user_id: 'usr_katherine' });
    const exchange = await postJson(`${sim.siteUrl}/api/oauth/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
    });
    await oauthError(exchange, 400, 'invalid_grant');
  });

  it('surfaces token endpoint errors as typed errors of the server client', async () => {
    const wrong = createMarketplaceClient({ siteUrl: sim.siteUrl, clientId: sim.clientId, clientSecret: 'wrong' });
    await assert.rejects(wrong.exchangeCode({ code: await codeFor(sim), redirectUri: CALLBACK }), (error) => isKitError(error) && error.status === 401);
  });
});

describe('simulator: limits on what sign-ins leave behind', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startTestSimulator();
  });
  after(() => sim.close());

  const token = (body: Record<string, string>) =>
    postJson(`${sim.siteUrl}/api/oauth/token`, { ...body, client_id: sim.clientId, client_secret: sim.clientSecret });
  async function signIn(userId = 'usr_ada') {
    const answer = await token({ grant_type: 'authorization_code', code: await codeFor(sim, {}, userId), redirect_uri: CALLBACK });
    assert.equal(answer.status, 200);
    return TokenResponse.parse(await answer.json()).refresh_token!;
  }
  const refresh = (refreshToken: string) => token({ grant_type: 'refresh_token', refresh_token: refreshToken });

  it(`keeps ${REFRESH_TOKENS_PER_USER} refresh tokens per user: one more sign-in drops the one used longest ago`, async () => {
    const first = await signIn();
    const second = await signIn();
    const grace = await signIn('usr_grace');
    // Refreshed after `second` was issued: its new token counts as the newer one.
    const rotated = await refresh(first);
    assert.equal(rotated.status, 200);
    const firstNow = TokenResponse.parse(await rotated.json()).refresh_token!;
    for (let held = 2; held < REFRESH_TOKENS_PER_USER; held++) await signIn();
    const secondRefreshed = await refresh(second);
    assert.equal(secondRefreshed.status, 200, `${REFRESH_TOKENS_PER_USER} held: none dropped yet`);
    const secondNow = TokenResponse.parse(await secondRefreshed.json()).refresh_token!;
    // Ada holds 100 again, `secondNow` the newest: one more sign-in drops `firstNow`.
    await signIn();
    await oauthError(await refresh(firstNow), 400, 'invalid_grant');
    // Spent tokens are not counted, nor dropped: reusing `second` still ends its family.
    await oauthError(await refresh(second), 400, 'invalid_grant');
    await oauthError(await refresh(secondNow), 400, 'invalid_grant');
    assert.equal((await refresh(grace)).status, 200, 'another user\'s tokens are not counted');
  });

  it(`keeps ${PENDING_AUTHORIZATIONS} authorization pages open: one more drops the oldest`, async () => {
    const page = async () => formTokenOf(await (await fetch(authorizeUrl(sim))).text());
    const oldest = await page();
    const second = await page();
    for (let open = 2; open < PENDING_AUTHORIZATIONS; open++) await page();
    assert.equal((await postConsent(sim, { form_token: oldest, decision: 'approve', user_id: 'usr_ada' })).status, 303, 'none dropped yet');
    await page(); // takes the place the consent freed
    await page();
    const dropped = await postConsent(sim, { form_token: second, decision: 'approve', user_id: 'usr_ada' });
    assert.equal(dropped.status, 400);
    assert.equal(dropped.headers.get('location'), null);
  });
});

describe('simulator: state sweep', () => {
  it('forgets spent refresh tokens a day after their use, keeps unused ones, and expired codes and tokens', () => {
    const state = new SimulatorState({ appUrl: null, webhookUrl: null, redirectUris: [] }, 'http://127.0.0.1:1', 'app_x', 0);
    const record = (usedAt: number | null) => ({ userId: 'usr_ada', clientId: 'client_x', scope: 'identity:read', familyId: 'fam_1', usedAt });
    state.refreshTokens.set('spent', record(1_000));
    state.refreshTokens.set('unused', record(null));
    state.accessTokens.set('at', { userId: 'usr_ada', scope: 'identity:read', familyId: 'fam_1', expiresAt: 5_000 });
    state.sweep(1_000 + SPENT_REFRESH_KEPT_MS - 1);
    assert.deepEqual([...state.refreshTokens.keys()], ['spent', 'unused'], 'reuse of a spent token is still caught within the day');
    assert.deepEqual([...state.accessTokens.keys()], []);
    state.sweep(1_000 + SPENT_REFRESH_KEPT_MS);
    assert.deepEqual([...state.refreshTokens.keys()], ['unused']);
  });
});
