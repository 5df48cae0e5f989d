import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { after, before, beforeEach, describe, it } from 'node:test';
import { inspect } from 'node:util';
import {
  apiKeyKind,
  buildAuthorizationUrl,
  createMarketplaceClient,
  createMemoryRefreshFlight,
  MarketplaceApiError,
  MarketplaceKitError,
  pkceChallenge,
  REFRESH_REUSE_WINDOW_MS,
  toErrorResponse,
  type MarketplaceClientOptions,
} from '../../src/server/index.js';
import { MAX_ANSWER_BYTES } from '../../src/server/lib/http.js';
import { Pacer } from '../../src/server/lib/pacer.js';
import { systemClock } from '../../src/server/lib/clock.js';
import {
  API_KEY,
  CLIENT_ID,
  CLIENT_SECRET,
  ENTITLEMENT,
  NOW,
  USER,
  createVirtualClock,
  sendJson,
  startHttpServer,
  type RawHandler,
  type TestServer,
} from '../support/server-http.js';
import { HANG_MS, eventLoopTurns, until, within } from '../support/waiting.js';

let server: TestServer;
let handler: RawHandler;
before(async () => {
  server = await startHttpServer((req, res, body) => handler(req, res, body));
});
after(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  handler = (_req, res) => sendJson(res, 500, { error: { code: 'unscripted', message: 'no handler' } });
});

function client(extra: Partial<MarketplaceClientOptions> = {}) {
  const clock = createVirtualClock(NOW);
  return {
    clock,
    client: createMarketplaceClient({ siteUrl: server.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, apiKey: API_KEY, clock, ...extra }),
  };
}

async function rejects(pending: Promise<unknown>, expected: { code: string; status?: number; message: RegExp; upstreamCode?: string }) {
  await assert.rejects(pending, (error: unknown) => {
    assert.ok(error instanceof MarketplaceApiError, `expected MarketplaceApiError, got ${String(error)}`);
    assert.equal(error.code, expected.code);
    assert.equal(error.status, expected.status);
    assert.match(error.message, expected.message);
    if (expected.upstreamCode !== undefined) assert.equal(error.upstreamCode, expected.upstreamCode);
    return true;
  });
}

const tokenAnswer = { access_token: 'at_1', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_1' };

describe('OAuth (docs/marketplace.md#authorization-page, docs/marketplace.md#token-endpoint; docs/decisions.md#marketplace-api)', () => {
  it('builds the authorization URL with state and PKCE S256', () => {
    const { client: c } = client();
    const { url, state, codeVerifier } = c.authorizationUrl({ redirectUri: 'https://app.example/cb' });
    const parsed = new URL(url);
    assert.equal(`${parsed.origin}${parsed.pathname}`, `${server.url}/oauth/authorize`);
    assert.deepEqual(Object.fromEntries(parsed.searchParams), {
      client_id: CLIENT_ID,
      redirect_uri: 'https://app.example/cb',
      response_type: 'code',
      scope: 'identity:read',
      state,
      code_challenge: pkceChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    assert.match(codeVerifier, /^[\w-]{43}$/);
    assert.notEqual(c.authorizationUrl({ redirectUri: 'https://app.example/cb' }).state, state, 'state is random');
    // Given ones are used as they are (RFC 7636's own example verifier and challenge).
    const given = c.authorizationUrl({ redirectUri: 'https://app.example/cb', state: 'st-0123456789abcdef', codeVerifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' });
    assert.deepEqual([new URL(given.url).searchParams.get('state'), new URL(given.url).searchParams.get('code_challenge')], ['st-0123456789abcdef', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM']);
  });

  it('builds the authorization page address on a siteUrl given with trailing slashes as on its host root', () => {
    const { url } = buildAuthorizationUrl({ siteUrl: 'https://mp.example//', clientId: CLIENT_ID, redirectUri: 'https://app.example/cb' });
    assert.equal(`${new URL(url).origin}${new URL(url).pathname}`, 'https://mp.example/oauth/authorize');
  });

  it('computes the RFC 7636 appendix B challenge', () => {
    assert.equal(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'), 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('exchanges a code with a JSON body at {site_url}/api/oauth/token and computes the absolute expiry', async () => {
    handler = (_req, res) => sendJson(res, 200, tokenAnswer);
    const { client: c } = client();
    const tokens = await c.exchangeCode({ code: 'code_1', redirectUri: 'https://app.example/cb', codeVerifier: 'v'.repeat(43) });
    assert.deepEqual(tokens, { accessToken: 'at_1', tokenType: 'Bearer', expiresIn: 3600, expiresAt: NOW + 3_600_000, refreshToken: 'rt_1' });
    const [request] = server.requests;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.url, '/api/oauth/token');
    assert.equal(request!.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(request!.body), {
      grant_type: 'authorization_code',
      code: 'code_1',
      redirect_uri: 'https://app.example/cb',
      code_verifier: 'v'.repeat(43),
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
  });

  it("keeps the answer's scope", async () => {
    handler = (_req, res) => sendJson(res, 200, { ...tokenAnswer, scope: 'identity:read' });
    const tokens = await client().client.exchangeCode({ code: 'code_1', redirectUri: 'https://app.example/cb' });
    assert.deepEqual(tokens, { accessToken: 'at_1', tokenType: 'Bearer', expiresIn: 3600, expiresAt: NOW + 3_600_000, refreshToken: 'rt_1', scope: 'identity:read' });
  });

  it('uses a configured token path (the /api/v1 alias)', async () => {
    handler = (_req, res) => sendJson(res, 200, tokenAnswer);
    await client({ tokenPath: '/api/v1/oauth/token' }).client.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb' });
    assert.equal(server.requests[0]!.url, '/api/v1/oauth/token');
  });

  it('refreshes, keeping the old refresh token when the answer has none', async () => {
    handler = (_req, res) => sendJson(res, 200, { access_token: 'at_2', token_type: 'bearer', expires_in: 60 });
    const tokens = await client().client.refresh('rt_old');
    assert.equal(tokens.refreshToken, 'rt_old');
    assert.equal(tokens.accessToken, 'at_2');
    assert.equal(tokens.expiresAt, NOW + 60_000);
    assert.deepEqual(JSON.parse(server.requests[0]!.body), {
      grant_type: 'refresh_token',
      refresh_token: 'rt_old',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    handler = (_req, res) => sendJson(res, 200, { ...tokenAnswer, refresh_token: 'rt_new' });
    assert.equal((await client().client.refresh('rt_old')).refreshToken, 'rt_new');
  });

  it('makes one request for concurrent refreshes of one token', async () => {
    const held: Array<() => void> = [];
    let bothArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (bothArrived = resolve));
    handler = (_req, res) => {
      if (held.length === 2) return sendJson(res, 200, tokenAnswer);
      held.push(() => sendJson(res, 200, tokenAnswer));
      if (held.length === 2) bothArrived();
    };
    const { client: c } = client();
    const pending = [c.refresh('rt_1'), c.refresh('rt_1'), c.refresh('rt_1'), c.refresh('rt_2')];
    await arrived;
    for (const answer of held) answer();
    const results = await Promise.all(pending);
    assert.equal(server.requests.length, 2, 'one request per distinct refresh token');
    assert.equal(results[0], results[1]);
  });

  it('lets one caller of a shared refresh abort without cancelling it for the others', async () => {
    handler = (_req, res) => setTimeout(() => sendJson(res, 200, tokenAnswer), 40);
    const { client: c } = client();
    const controller = new AbortController();
    const aborted = c.refresh('rt_1', { signal: controller.signal });
    const other = c.refresh('rt_1');
    controller.abort();
    await rejects(aborted, { code: 'ERR_ABORTED', message: /aborted/ });
    assert.equal((await other).accessToken, 'at_1');
    assert.equal(server.requests.length, 1);
  });

  it('answers a refresh token it has just spent with the same tokens instead of sending it again (rotation takes reuse for theft)', async () => {
    let issued = 0;
    handler = (_req, res) => sendJson(res, 200, { ...tokenAnswer, access_token: `at_${++issued}`, refresh_token: `rt_next_${issued}` });
    const { client: c, clock } = client();
    const first = await c.refresh('rt_old');
    clock.advance(REFRESH_REUSE_WINDOW_MS - 1);
    assert.equal(await c.refresh('rt_old'), first, 'a late caller with the spent token');
    await assert.rejects(c.refresh('rt_old', { signal: AbortSignal.abort() }), { code: 'ERR_ABORTED' }, 'an aborted caller is told so, answer or not');
    assert.equal(server.requests.length, 1);
    // After the window the token is sent again: the marketplace decides.
    clock.advance(1);
    assert.equal((await c.refresh('rt_old')).accessToken, 'at_2');
    assert.equal(server.requests.length, 2);
  });

  it('keeps a refresh answer no longer than its access token lives, and a failure only briefly (10 s)', async () => {
    let answers = [
      (res: Parameters<RawHandler>[1]) => sendJson(res, 400, { error: 'invalid_grant' }),
      (res: Parameters<RawHandler>[1]) => sendJson(res, 200, { ...tokenAnswer, access_token: 'at_short', expires_in: 5 }),
      (res: Parameters<RawHandler>[1]) => sendJson(res, 200, { ...tokenAnswer, access_token: 'at_new' }),
    ];
    handler = (_req, res) => answers.shift()!(res);
    const { client: c, clock } = client();
    await assert.rejects(c.refresh('rt_1'), { code: 'ERR_OAUTH', upstreamCode: 'invalid_grant' });
    await assert.rejects(c.refresh('rt_1'), { code: 'ERR_OAUTH', upstreamCode: 'invalid_grant' }, 'a call right after gets the failure');
    assert.equal(server.requests.length, 1, 'without sending the refresh token again');
    clock.advance(10_000);
    assert.equal((await c.refresh('rt_1')).accessToken, 'at_short', 'the failure was kept 10 s');
    clock.advance(5_000);
    assert.equal((await c.refresh('rt_1')).accessToken, 'at_new', 'an expired access token is not handed out');
    assert.equal(server.requests.length, 3);
    answers = [];
  });

  it('three clients on one refresh flight whose refresh fails make one token request, and all get its failure', async () => {
    // Which clients took a turn at the flight; the marketplace answers once all three have.
    const flight = createMemoryRefreshFlight();
    const asked = new Set<number>();
    const clients = [0, 1, 2].map(
      (i) => client({ clock: systemClock, stores: { refresh: { begin: (...args) => (asked.add(i), flight.begin(...args)), finish: (...args) => flight.finish(...args) } } }).client,
    );
    handler = (_req, res) => void until(() => asked.size === 3, 'all three clients asked').then(() => sendJson(res, 400, { error: 'invalid_grant', error_description: 'refresh token revoked' }));
    const outcomes = await Promise.allSettled(clients.map((c) => c.refresh('rt_revoked')));
    assert.equal(server.requests.length, 1, 'one token request');
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      const error = outcome.reason as MarketplaceApiError;
      assert.ok(error instanceof MarketplaceApiError);
      assert.deepEqual([error.code, error.status, error.upstreamCode, error.endpoint], ['ERR_OAUTH', 400, 'invalid_grant', 'token']);
      assert.match(error.message, /refresh token revoked/);
    }
  });

  it('keeps a 429 of a refresh (the token unspent) only while the marketplace asks to wait, telling a later reader what is left of the wait', async () => {
    // Three 429s: the first answer and both retries (maxRetries 2), each asking for 2 s.
    const slowDown = (res: Parameters<RawHandler>[1]) => sendJson(res, 429, { error: 'slow_down' }, { 'retry-after': '2' });
    let answers = [slowDown, slowDown, slowDown, (res: Parameters<RawHandler>[1]) => sendJson(res, 200, tokenAnswer)];
    handler = (_req, res) => answers.shift()!(res);
    const flight = createMemoryRefreshFlight();
    const clock = createVirtualClock(NOW);
    const [a, b] = [0, 1].map(() => client({ clock, stores: { refresh: flight } }).client);
    await assert.rejects(a!.refresh('rt_1'), { code: 'ERR_RATE_LIMITED', retryAfterMs: 2_000 });
    clock.advance(400);
    await assert.rejects(b!.refresh('rt_1'), { code: 'ERR_RATE_LIMITED', retryAfterMs: 1_600 }, 'the shared failure, its wait counted from when it came');
    clock.advance(1_000);
    await assert.rejects(b!.refresh('rt_1'), { code: 'ERR_RATE_LIMITED', retryAfterMs: 600 }, 'not sent again within the wait');
    assert.equal(server.requests.length, 3);
    clock.advance(600);
    assert.equal((await b!.refresh('rt_1')).accessToken, 'at_1', 'sent again once the wait is over, not 10 s after the 429');
    assert.equal(server.requests.length, 4);
    answers = [];
  });

  describe('token endpoint failures end in typed errors with the HTTP status', () => {
    const cases: Array<{ name: string; answer: RawHandler; code: string; status?: number; message: RegExp; upstreamCode?: string }> = [
      {
        name: '400 RFC 6749 error',
        answer: (_q, res) => sendJson(res, 400, { error: 'invalid_grant', error_description: 'code expired' }),
        code: 'ERR_OAUTH',
        status: 400,
        message: /HTTP 400: invalid_grant: code expired/,
        upstreamCode: 'invalid_grant',
      },
      {
        // RFC 6749 errors are 4xx: a 5xx is the marketplace's own trouble, never a refused grant.
        name: '503 with an RFC 6749 body',
        answer: (_q, res) => sendJson(res, 503, { error: 'temporarily_unavailable', error_description: 'maintenance until 14:00' }),
        code: 'ERR_HTTP',
        status: 503,
        message: /HTTP 503: temporarily_unavailable: maintenance until 14:00$/,
        upstreamCode: 'temporarily_unavailable',
      },
      {
        // 500 is no 4xx either: an RFC 6749 body does not make it a refused grant.
        name: '500 with an RFC 6749 body',
        answer: (_q, res) => sendJson(res, 500, { error: 'server_error', error_description: 'db down' }),
        code: 'ERR_HTTP',
        status: 500,
        message: /HTTP 500: server_error: db down$/,
        upstreamCode: 'server_error',
      },
      {
        // The upstream code is cut like an API error code is (100 characters).
        name: '400 with a very long RFC 6749 error code',
        answer: (_q, res) => sendJson(res, 400, { error: 'e'.repeat(5000) }),
        code: 'ERR_OAUTH',
        status: 400,
        message: new RegExp(`HTTP 400: ${'e'.repeat(100)}…$`),
        upstreamCode: `${'e'.repeat(100)}…`,
      },
      {
        // Only what is longer than 500 characters is cut.
        name: '400 with a description of exactly 500 characters',
        answer: (_q, res) => sendJson(res, 400, { error: 'invalid_grant', error_description: 'd'.repeat(500) }),
        code: 'ERR_OAUTH',
        status: 400,
        message: new RegExp(`HTTP 400: invalid_grant: ${'d'.repeat(500)}$`),
        upstreamCode: 'invalid_grant',
      },
      {
        // With redirect: 'manual' a 3xx arrives as it is: no 2xx, so never read as tokens.
        name: '300 with a token body',
        answer: (_q, res) => sendJson(res, 300, tokenAnswer),
        code: 'ERR_HTTP',
        status: 300,
        message: /HTTP 300 \(JSON without an error object, application\/json\)$/,
      },
      {
        // A page is one that starts with `<`: a `<` further on does not make text an HTML page.
        name: '502 text with a < further on',
        answer: (_q, res) => res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad gateway: upstream <api> is down'),
        code: 'ERR_HTTP',
        status: 502,
        message: /HTTP 502 \(a non-JSON body, text\/plain\)$/,
      },
      {
        // The content type without its parameters.
        name: '503 HTML page with a charset',
        answer: (_q, res) => res.writeHead(503, { 'content-type': 'text/html; charset=utf-8' }).end('<html>maintenance</html>'),
        code: 'ERR_HTTP',
        status: 503,
        message: /HTTP 503 \(an HTML or XML page, text\/html\)$/,
      },
      {
        name: '500 HTML page',
        answer: (_q, res) => res.writeHead(500, { 'content-type': 'text/html' }).end('<!doctype html><h1>Internal Server Error</h1>'),
        code: 'ERR_HTTP',
        status: 500,
        message: /HTTP 500 \(an HTML or XML page, text\/html\)/,
      },
      {
        // The content type is the server's word too: cut like an upstream code.
        name: '502 page with a very long content type',
        answer: (_q, res) => res.writeHead(502, { 'content-type': `text/${'x'.repeat(5000)}` }).end('<html>bad gateway</html>'),
        code: 'ERR_HTTP',
        status: 502,
        message: new RegExp(`HTTP 502 \\(an HTML or XML page, text/${'x'.repeat(95)}…\\)$`),
      },
      {
        name: '500 JSON that is no error object',
        answer: (_q, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"db down"}'),
        code: 'ERR_HTTP',
        status: 500,
        message: /HTTP 500 \(JSON without an error object, application\/json\)$/,
      },
      {
        name: '503 truncated JSON',
        answer: (_q, res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"co'),
        code: 'ERR_HTTP',
        status: 503,
        message: /HTTP 503 \(unreadable or truncated JSON, application\/json\)$/,
      },
      {
        name: '502 empty body',
        answer: (_q, res) => res.writeHead(502).end(),
        code: 'ERR_HTTP',
        status: 502,
        message: /HTTP 502 \(empty body\)/,
      },
      {
        name: '200 truncated JSON',
        answer: (_q, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"at_1","token_'),
        code: 'ERR_RESPONSE_INVALID',
        status: 200,
        message: /not JSON \(unreadable or truncated JSON/,
      },
      {
        name: '200 empty body',
        answer: (_q, res) => res.writeHead(200).end(),
        code: 'ERR_RESPONSE_INVALID',
        status: 200,
        message: /empty body/,
      },
      {
        name: '200 without access_token',
        answer: (_q, res) => sendJson(res, 200, { token_type: 'Bearer', expires_in: 10 }),
        code: 'ERR_RESPONSE_INVALID',
        status: 200,
        message: /answer \(HTTP 200, POST \/api\/oauth\/token\) at access_token/,
      },
      {
        name: '200 with a non-Bearer token type',
        answer: (_q, res) => sendJson(res, 200, { ...tokenAnswer, token_type: 'mac' }),
        code: 'ERR_RESPONSE_INVALID',
        status: 200,
        message: /token_type/,
      },
      {
        name: '200 with expires_in as a string',
        answer: (_q, res) => sendJson(res, 200, { ...tokenAnswer, expires_in: '3600' }),
        code: 'ERR_RESPONSE_INVALID',
        status: 200,
        message: /expires_in/,
      },
      {
        name: '200 with a body over 1 MB, declared',
        answer: (_q, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_ANSWER_BYTES + 1) }).end(),
        code: 'ERR_RESPONSE_INVALID',
        status: 200,
        message: /answer \(HTTP 200, POST \/api\/oauth\/token\) is larger than 1000000 bytes/,
      },
      {
        name: '200 with a body over 1 MB, streamed',
        answer: (_q, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          const chunk = ' '.repeat(64_000);
          for (let i = 0; i < 20; i++) res.write(chunk);
          res.end('{}');
        },
        code: 'ERR_RESPONSE_INVALID',
        status: 200,
        message: /larger than 1000000 bytes/,
      },
      {
        name: 'connection cut mid-body',
        answer: (_q, res) => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
          res.write('{"access_token":');
          setTimeout(() => res.destroy(), 10);
        },
        code: 'ERR_NETWORK',
        status: 200,
        message: /after HTTP 200, while reading the body/,
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        handler = c.answer;
        await rejects(client().client.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb' }), c);
      });
    }

    it('nothing within the timeout', async (t) => {
      handler = () => undefined; // never answers
      const timeout = t.mock.method(AbortSignal, 'timeout');
      await rejects(client({ timeoutMs: 150 }).client.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb' }), {
        code: 'ERR_TIMEOUT',
        message: /timed out after 150 ms/,
      });
      assert.deepEqual(timeout.mock.calls.map((call) => call.arguments[0]), [150], 'the real timer that ended the call was the 150 ms one');
    });

    it('headers in time, then a body that stalls past the timeout', async () => {
      // The headers are there before the call's timer starts, whatever the machine's speed; the body never ends.
      const stalling: typeof fetch = async () =>
        new Response(new ReadableStream({ start: (body) => body.enqueue(new TextEncoder().encode('{"access_token":')) }), {
          headers: { 'content-type': 'application/json' },
        });
      await rejects(client({ fetch: stalling, timeoutMs: 100 }).client.refresh('rt'), { code: 'ERR_TIMEOUT', status: 200, message: /while reading the body/ });
    });

    it("puts the marketplace's words into the message on one line and cut short, whatever it sends", async () => {
      handler = (_q, res) => sendJson(res, 400, { error: 'invalid_grant', error_description: `expired\r\n2026-05-01 INFO admin signed in\u2028${'A'.repeat(500_000)}` });
      await assert.rejects(client().client.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb' }), (error: MarketplaceApiError) => {
        assert.equal(error.code, 'ERR_OAUTH');
        assert.match(error.message, /^The marketplace token request \(POST \/api\/oauth\/token\) failed with HTTP 400: invalid_grant: expired 2026-05-01 INFO admin signed in A+…$/);
        assert.equal(error.message.length, 'The marketplace token request (POST /api/oauth/token) failed with HTTP 400: invalid_grant: '.length + 500 + 1);
        return true;
      });
      handler = (_q, res) => sendJson(res, 403, { error: { code: `forbidden\n${'x'.repeat(300_000)}`, message: 'y'.repeat(300_000) } });
      await assert.rejects(client().client.whoami({ userId: 'usr_1' }), (error: MarketplaceApiError) => {
        assert.equal(error.upstreamCode, `forbidden ${'x'.repeat(90)}…`);
        assert.ok(error.message.length < 700, `${error.message.length} characters`);
        assert.doesNotMatch(error.message, /[\n\r]/);
        return true;
      });
    });

    it('never repeats a credential the request carried when the answer echoes the request (a proxy page, a marketplace quoting it)', async () => {
      const code = 'code_SECRET_0123456789';
      const codeVerifier = `verifier_SECRET_${'v'.repeat(30)}`;
      const refreshToken = 'rt_SECRET_0123456789';
      // Quotes and backslashes arrive escaped in an echo of the JSON body.
      const clientSecret = 'cs_SECRET_"quoted"\\back';
      const echoBody: RawHandler = (_q, res, body) => sendJson(res, 400, { error: 'invalid_request', error_description: `got ${body}` });
      const hidden = (error: MarketplaceApiError) => {
        for (const secret of [clientSecret, JSON.stringify(clientSecret), codeVerifier, refreshToken, API_KEY, 'at_SECRET']) {
          assert.ok(!error.message.includes(secret) && !error.upstreamCode?.includes(secret), `${JSON.stringify(secret)} in ${error.message}`);
        }
        return true;
      };
      handler = echoBody;
      const c = client({ clientSecret }).client;
      await assert.rejects(c.exchangeCode({ code, redirectUri: 'https://app.example/cb', codeVerifier }), (error: MarketplaceApiError) => {
        assert.equal(error.code, 'ERR_OAUTH');
        // What is no credential stays, so the message still says what was sent.
        // The code is no secret here: the visitor chose it, and it is useless without the two others.
        assert.match(error.message, /"code":"code_SECRET_0123456789","redirect_uri":"https:\/\/app\.example\/cb","code_verifier":"\[redacted\]","client_id":"[^"]+","client_secret":"\[redacted\]"/);
        return hidden(error);
      });
      // So a code of `invalid_grant`, as a callback's URL may carry, does not hide the answer's error.
      handler = (_q, res) => sendJson(res, 400, { error: 'invalid_grant', error_description: 'unknown code' });
      await assert.rejects(c.exchangeCode({ code: 'invalid_grant', redirectUri: 'https://app.example/cb', codeVerifier }), { upstreamCode: 'invalid_grant' });
      handler = echoBody;
      await assert.rejects(c.refresh(refreshToken), hidden);
      // Headers echoed in an API error, its code included: the API key and the Bearer token.
      handler = (req, res) => sendJson(res, 502, { error: { code: String(req.headers['x-api-key'] ?? req.headers.authorization), message: `headers: ${JSON.stringify(req.headers)}` } });
      await assert.rejects(c.whoami({ userId: 'usr_1' }), (error: MarketplaceApiError) => {
        assert.equal(error.upstreamCode, '[redacted]');
        return hidden(error);
      });
      await assert.rejects(c.entitlements({ accessToken: 'at_SECRET_0123456789' }), hidden);
      // A fetch of the app's own that quotes the request in its error.
      const quoting: typeof fetch = async (_url, init) => {
        throw new TypeError(`refused ${String(init?.body)} ${JSON.stringify(init?.headers)}`);
      };
      await assert.rejects(client({ fetch: quoting, clientSecret }).client.refresh(refreshToken), (error: MarketplaceApiError) => {
        assert.equal(error.code, 'ERR_NETWORK');
        return hidden(error);
      });
      await assert.rejects(client({ fetch: quoting }).client.whoami({ userId: 'usr_1' }), hidden);
    });

    it('keeps a credential out of the cause of a network error too, which logs print with the message', async () => {
      const refreshToken = 'rt_SECRET_0123456789';
      const quoting: typeof fetch = async (_url, init) => {
        throw new TypeError('fetch failed', { cause: new Error(`proxy refused ${String(init?.body)}`) });
      };
      await assert.rejects(client({ fetch: quoting }).client.refresh(refreshToken), (error: MarketplaceApiError) => {
        assert.equal(error.code, 'ERR_NETWORK');
        assert.match(error.message, /failed: fetch failed \(proxy refused .*"refresh_token":"\[redacted\]"/);
        assert.doesNotMatch(inspect(error, { depth: 10 }), /rt_SECRET/);
        return true;
      });
      // A cause that quotes nothing is kept as it was.
      const plain = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
      await assert.rejects(client({ fetch: async () => Promise.reject(plain) }).client.refresh(refreshToken), (error: MarketplaceApiError) => {
        assert.equal(error.cause, plain);
        return true;
      });
    });

    it('never repeats a credential an echo holds percent-encoded or with its slashes escaped (a form-encoded or PHP echo)', async () => {
      // A base64 secret (`openssl rand -base64 32`) has `+`, `/` and `=`, which these echoes change.
      const clientSecret = 'cs+SECRET/0123456789==';
      const escaped = clientSecret.replaceAll('/', '\\/');
      const echoes = [encodeURIComponent(clientSecret), new URLSearchParams({ s: clientSecret }).toString().slice(2), escaped];
      for (const echo of echoes) {
        handler = (_q, res) => sendJson(res, 400, { error: 'invalid_client', error_description: `got client_secret=${echo}` });
        await assert.rejects(client({ clientSecret }).client.refresh('rt_0123456789'), (error: MarketplaceApiError) => {
          assert.equal(error.code, 'ERR_OAUTH');
          assert.equal(error.message.includes(echo), false, error.message);
          assert.match(error.message, /got client_secret=\[redacted\]$/);
          return true;
        });
      }
    });

    it('redacts every form of a credential an echo may hold: JSON-escaped with a slash, percent- and form-encoded, repeated, or inside a longer one', async () => {
      const echoBody: RawHandler = (_q, res, body) => sendJson(res, 400, { error: 'invalid_request', error_description: `got ${body} and again ${body}` });
      // `"` and `/` at once: the JSON echo has `\"` but keeps `/` (the PHP form would have `\/`).
      const quoted = 'cs/SECRET"0123456789';
      handler = echoBody;
      await assert.rejects(client({ clientSecret: quoted }).client.refresh('rt_0123456789'), (error: MarketplaceApiError) => {
        assert.doesNotMatch(error.message, /SECRET/);
        assert.match(error.message, /"client_secret":"\[redacted\]"/);
        return true;
      });
      // `!` and `(`: encodeURIComponent keeps them, a form encoding does not.
      const marked = 'cs!SECRET/(0123456789)';
      for (const echo of [encodeURIComponent(marked), new URLSearchParams({ s: marked }).toString().slice(2)]) {
        handler = (_q, res) => sendJson(res, 400, { error: 'invalid_client', error_description: `got client_secret=${echo}` });
        await assert.rejects(client({ clientSecret: marked }).client.refresh('rt_0123456789'), (error: MarketplaceApiError) => {
          assert.match(error.message, /got client_secret=\[redacted\]$/, echo);
          return true;
        });
      }
      // A refresh token that holds the client secret is replaced whole, not leaving its tail; and
      // a credential of 8 characters (the shortest redacted) is redacted too.
      handler = echoBody;
      const clientSecret = 'cs_SECRET_0123456789';
      for (const refreshToken of [`${clientSecret}_ROTATED`, 'rt_SECRT']) {
        await assert.rejects(client({ clientSecret }).client.refresh(refreshToken), (error: MarketplaceApiError) => {
          assert.doesNotMatch(error.message, /SECRET|ROTATED|SECRT/);
          assert.equal(error.message.match(/"refresh_token":"\[redacted\]"/g)?.length, 2, error.message);
          return true;
        });
      }
    });

    it('names the method and path of the failed call, never its query', async () => {
      handler = (_q, res) => res.writeHead(503).end();
      await rejects(client().client.whoami({ userId: 'usr_secretive' }), {
        code: 'ERR_HTTP',
        status: 503,
        message: /^The marketplace whoami request \(GET \/api\/v1\/whoami\) failed with HTTP 503 \(empty body\)$/,
      });
      await rejects(client({ tokenPath: '/api/v1/oauth/token?tenant=1' }).client.refresh('rt_1'), {
        code: 'ERR_HTTP',
        status: 503,
        message: /^The marketplace token request \(POST \/api\/v1\/oauth\/token\) failed with HTTP 503/,
      });
      await rejects(client({ timeoutMs: 100, fetch: () => new Promise(() => undefined) }).client.entitlements({ userId: 'usr_1' }), {
        code: 'ERR_TIMEOUT',
        message: /^The marketplace entitlements request \(GET \/api\/v1\/entitlements\) timed out after 100 ms$/,
      });
    });

    it('closes the connection of an answer that declares a body over 1 MB, also for a caller with a signal of its own', async () => {
      const closed: Promise<unknown>[] = [];
      handler = (req, res) => {
        closed.push(new Promise((resolve) => req.socket.once('close', resolve))); // reset by the client: 'error' first
        // Headers and a first chunk, then nothing: a slow 50 MB body.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50_000_000) });
        res.write(Buffer.alloc(64 * 1024, 0x20));
      };
      const app = new AbortController(); // an app-wide signal, never aborted: the call's timeout goes with it
      const { client: c } = client({ timeoutMs: 30_000 });
      const results = await Promise.allSettled([1, 2, 3].map((n) => c.whoami({ userId: `usr_${n}`, signal: app.signal })));
      assert.deepEqual(results.map((result) => result.status === 'rejected' && (result.reason as MarketplaceApiError).code), Array(3).fill('ERR_RESPONSE_INVALID'));
      assert.equal(closed.length, 3);
      await within(Promise.all(closed), HANG_MS, 'connections still open after their calls failed');
    });

    it('waits 10 s by default', async (t) => {
      // The timer itself is faked: a test cannot wait 10 s, and node:test's mock timers do not
      // reach AbortSignal.timeout.
      const expire = new AbortController();
      let asked!: (ms: number) => void;
      const timerAsked = new Promise<number>((resolve) => (asked = resolve));
      t.mock.method(AbortSignal, 'timeout', (ms: number) => {
        asked(ms);
        return expire.signal;
      });
      const never: typeof fetch = () => new Promise(() => undefined);
      const pending = client({ fetch: never }).client.whoami({ userId: 'usr_1' });
      assert.equal(await timerAsked, 10_000);
      expire.abort(new DOMException('timed out', 'TimeoutError'));
      await rejects(pending, { code: 'ERR_TIMEOUT', message: /timed out after 10000 ms/ });
    });

    it('a custom fetch that ignores the abort signal still times out', async () => {
      const never: typeof fetch = () => new Promise(() => undefined);
      await rejects(client({ fetch: never, timeoutMs: 100 }).client.whoami({ userId: 'usr_1' }), { code: 'ERR_TIMEOUT', message: /timed out after 100 ms/ });
    });

    it('a caller abort', async () => {
      const controller = new AbortController();
      handler = () => controller.abort(); // once the request is under way; never answered

      await rejects(client().client.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb', signal: controller.signal }), {
        code: 'ERR_ABORTED',
        message: /aborted/,
      });
    });

    it('nobody listening', async () => {
      const closed = await startHttpServer(() => undefined);
      await closed.close();
      const c = createMarketplaceClient({ siteUrl: closed.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
      // Where and why, not only undici's "fetch failed".
      const where = new URL(closed.url).origin.replace(/[.]/g, '\\.');
      await rejects(c.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb' }), {
        code: 'ERR_NETWORK',
        message: new RegExp(`^The marketplace token request \\(POST /api/oauth/token\\) to ${where} failed: fetch failed \\(ECONNREFUSED\\)$`),
      });
    });
  });

  it('needs both client credentials for OAuth calls', async () => {
    const c = createMarketplaceClient({ siteUrl: server.url });
    await assert.rejects(c.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb' }), { code: 'ERR_CONFIG' });
    assert.throws(() => c.authorizationUrl({ redirectUri: 'https://app.example/cb' }), { code: 'ERR_CONFIG' });
    // One without the other is no credential either.
    for (const half of [{ clientId: CLIENT_ID }, { clientSecret: CLIENT_SECRET }]) {
      const partial = createMarketplaceClient({ siteUrl: server.url, ...half });
      await assert.rejects(partial.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb' }), { code: 'ERR_CONFIG', message: /clientId and clientSecret/ }, Object.keys(half)[0]);
      await assert.rejects(partial.refresh('rt'), { code: 'ERR_CONFIG', message: /clientId and clientSecret/ }, Object.keys(half)[0]);
      assert.equal(partial.clientId, null, Object.keys(half)[0]);
    }
    assert.equal(server.requests.length, 0);
  });
});

describe('marketplace API (docs/marketplace.md#whoami-and-entitlements, docs/marketplace.md#authentication)', () => {
  it('calls /whoami with a Bearer token, and with X-API-Key + user_id', async () => {
    handler = (_req, res) => sendJson(res, 200, USER);
    const { client: c } = client();
    assert.deepEqual(await c.whoami({ accessToken: 'at_1' }), USER);
    assert.deepEqual(await c.whoami({ userId: 'usr_1' }), USER);
    const [byToken, byKey] = server.requests;
    assert.equal(byToken!.url, '/api/v1/whoami');
    assert.equal(byToken!.headers.authorization, 'Bearer at_1');
    assert.equal(byToken!.headers['x-api-key'], undefined);
    assert.equal(byKey!.url, '/api/v1/whoami?user_id=usr_1');
    assert.equal(byKey!.headers['x-api-key'], API_KEY);
    assert.equal(byKey!.headers.authorization, undefined);
  });

  it('uses apiBaseUrl and the injected fetch', async () => {
    const seen: string[] = [];
    const spy: typeof fetch = (input, init) => {
      seen.push(String(input));
      return fetch(input, init);
    };
    handler = (_req, res) => sendJson(res, 200, USER);
    await client({ apiBaseUrl: `${server.url}/v9/`, fetch: spy }).client.whoami({ userId: 'usr_1' });
    assert.deepEqual(seen, [`${server.url}/v9/whoami?user_id=usr_1`]);
  });

  it('strips every trailing slash from siteUrl and apiBaseUrl', () => {
    const c = createMarketplaceClient({ siteUrl: 'https://mp.example//', clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    assert.equal(c.siteUrl, 'https://mp.example');
    assert.equal(c.apiBaseUrl, 'https://mp.example/api/v1');
    assert.equal(c.tokenUrl, 'https://mp.example/api/oauth/token');
    assert.match(c.authorizationUrl({ redirectUri: 'https://app.example/cb' }).url, /^https:\/\/mp\.example\/oauth\/authorize\?/);
    assert.equal(createMarketplaceClient({ siteUrl: 'https://mp.example', apiBaseUrl: 'https://api.mp.example/v1//' }).apiBaseUrl, 'https://api.mp.example/v1');
  });

  it('knows the key kind from its prefix and refuses other keys', () => {
    assert.equal(client().client.keyKind, 'test');
    assert.equal(client({ apiKey: 'live_abc' }).client.keyKind, 'live');
    assert.equal(createMarketplaceClient({ siteUrl: server.url }).keyKind, null);
    assert.throws(() => client({ apiKey: 'sk_abc' }), { code: 'ERR_CONFIG', message: /test_ \(development\) or live_/ });
    // A prefix alone is no key (an unset variable pasted after it).
    for (const apiKey of ['test_', 'live_']) assert.throws(() => client({ apiKey }), { code: 'ERR_CONFIG' }, apiKey);
    assert.throws(() => client({ siteUrl: 'ftp://x' }), { code: 'ERR_CONFIG' });
  });

  it('refuses, when created, a siteUrl that is no host root, a tokenPath of another scheme, http off loopback and unusable credentials', () => {
    const refused = (options: Partial<MarketplaceClientOptions>, message: RegExp) =>
      assert.throws(() => createMarketplaceClient({ siteUrl: 'https://mp.example', ...options }), { code: 'ERR_CONFIG', message }, JSON.stringify(options));
    refused({ siteUrl: 'https://mp.example/dashboard' }, /^createMarketplaceClient: siteUrl must be the marketplace's host root, .*got "https:\/\/mp\.example\/dashboard"$/);
    refused({ tokenPath: 'ftp://x/token' }, /^createMarketplaceClient: tokenPath must be an https URL, got "ftp:\/\/x\/token"$/);
    // A scheme that only ends in https is another scheme.
    refused({ tokenPath: 'xhttps://mp.example/token' }, /^createMarketplaceClient: tokenPath must be an https URL, got "xhttps:/);
    refused({ siteUrl: 'web+https://mp.example' }, /^createMarketplaceClient: siteUrl must be an https URL/);
    refused({ siteUrl: 'http://mp.example' }, /^createMarketplaceClient: siteUrl must use https, got "http:\/\/mp\.example": over http the client secret/);
    refused({ apiBaseUrl: 'http://api.mp.example/v1' }, /^createMarketplaceClient: apiBaseUrl must use https/);
    // A space URL parsing would trim here ends up inside every request's path ('/v1 /whoami').
    refused({ apiBaseUrl: 'https://api.mp.example/v1 ' }, /^createMarketplaceClient: apiBaseUrl must be an https URL, got "https:\/\/api\.mp\.example\/v1 "$/);
    refused({ tokenPath: 'http://mp.example/token' }, /^createMarketplaceClient: tokenPath must use https/);
    refused({ clientId: CLIENT_ID, clientSecret: 'SECRET\r' }, /^createMarketplaceClient: clientSecret holds a space, a line break or another character it cannot have \(/);
    refused({ clientId: '', clientSecret: CLIENT_SECRET }, /^createMarketplaceClient: clientId is required$/);
    refused({ fetch: {} as never }, /^createMarketplaceClient: fetch must be a function, got an object$/);
    refused({ clock: { now: () => 0 } as never }, /^createMarketplaceClient: clock must be an object with the methods now and sleep: sleep is missing$/);
    // Loopback may use http (the simulator); the siteUrl is kept as its origin.
    const local = createMarketplaceClient({ siteUrl: 'HTTP://127.0.0.1:4010/', tokenPath: 'http://[::1]:9/token' });
    assert.equal(local.siteUrl, 'http://127.0.0.1:4010');
    assert.equal(local.tokenUrl, 'http://[::1]:9/token');
  });

  it('never quotes a credential that cannot be sent in a header (a line break in a token or key)', async () => {
    const key = 'live_SECRET_KEY\nlive_other';
    assert.throws(() => client({ apiKey: key }), (error: MarketplaceKitError) => {
      assert.equal(error.code, 'ERR_CONFIG');
      assert.doesNotMatch(`${error.message} ${String(error.cause)}`, /SECRET_KEY/);
      return true;
    });
    assert.throws(() => apiKeyKind('test_a b'), { code: 'ERR_CONFIG', message: /holds a space, a line break/ });
    assert.throws(() => apiKeyKind('sk_a b'), { code: 'ERR_CONFIG', message: /must start with test_/ }, 'the prefix is said first');
    // An access token the token endpoint issued, or the app stored, with a line break in it.
    for (const accessToken of ['at_SECRET\nX-Injected: 1', 'at SECRET', 'at_SECRET\u0000']) {
      await assert.rejects(client().client.whoami({ accessToken }), (error: MarketplaceKitError) => {
        assert.equal(error.code, 'ERR_INVALID_INPUT');
        assert.match(error.message, /^The accessToken passed to whoami\(\) holds a space, a line break/);
        assert.doesNotMatch(`${error.message} ${String(error.cause)}`, /SECRET/);
        return true;
      }, JSON.stringify(accessToken));
    }
    assert.equal(server.requests.length, 0);
  });

  it('refuses an apiKey that is not a string with ERR_CONFIG, not a TypeError', () => {
    // From plain JavaScript or an untyped config: null, a number, an unset variable.
    for (const apiKey of [null, 42, {}]) {
      assert.throws(
        () => createMarketplaceClient({ siteUrl: 'https://mp.example', apiKey: apiKey as unknown as string }),
        (error: unknown) => error instanceof MarketplaceKitError && error.code === 'ERR_CONFIG' && /apiKey must be a string/.test(error.message),
        String(apiKey),
      );
    }
    assert.throws(() => apiKeyKind(undefined as unknown as string), { code: 'ERR_CONFIG', message: /apiKey must be a string.*got undefined/ });
  });

  it('refuses a fetch that is not a function at creation, not at the first call', () => {
    for (const bad of ['nope', null, {}]) {
      assert.throws(() => client({ fetch: bad as unknown as typeof fetch }), { code: 'ERR_CONFIG', message: /createMarketplaceClient: fetch must be a function/ }, String(bad));
    }
  });

  it('refuses numeric options that are not finite numbers (a NaN retry limit would retry 429s forever)', () => {
    const numbers = ['timeoutMs', 'maxQueueWaitMs', 'entitlementTtlMs', 'maxRetries', 'maxRetryWaitMs'] as const;
    for (const name of numbers) {
      for (const bad of [Number.NaN, -1, -Infinity, '5' as unknown as number]) {
        assert.throws(() => client({ [name]: bad }), { code: 'ERR_CONFIG', message: new RegExp(`${name} must be a (finite )?number`) }, `${name}: ${String(bad)}`);
      }
    }
    // Infinity is "no limit" where that makes sense: queue or wait as long as it takes, cache forever.
    for (const name of ['maxQueueWaitMs', 'entitlementTtlMs', 'maxRetryWaitMs'] as const) assert.doesNotThrow(() => client({ [name]: Infinity }), name);
    for (const name of ['timeoutMs', 'maxRetries'] as const) assert.throws(() => client({ [name]: Infinity }), { code: 'ERR_CONFIG' }, name);
    assert.throws(() => client({ rateLimit: { limit: Number.NaN } }), { code: 'ERR_CONFIG', message: /rateLimit\.limit/ });
    assert.throws(() => client({ rateLimit: { limit: 10, windowMs: 0 } }), { code: 'ERR_CONFIG', message: /rateLimit\.windowMs/ });
    assert.equal(client({ maxRetries: 0, entitlementTtlMs: 0 }).client.keyKind, 'test', 'zero is a valid choice');
  });

  it('needs an API key to call by userId', async () => {
    await assert.rejects(createMarketplaceClient({ siteUrl: server.url }).whoami({ userId: 'usr_1' }), { code: 'ERR_CONFIG', message: /apiKey/ });
  });

  it('refuses a missing token, code or selector from plain JavaScript with ERR_INVALID_INPUT, and sends nothing', async () => {
    const { client: c } = client();
    const loose = c as unknown as Record<'refresh' | 'whoami' | 'entitlements' | 'exchangeCode', (...args: unknown[]) => Promise<unknown>>;
    const refused: Array<[Promise<unknown>, RegExp]> = [
      [loose.refresh(undefined), /^refresh\(\) needs the refresh token \(a non-empty string\), got undefined$/],
      [loose.refresh(''), /^refresh\(\) needs the refresh token \(a non-empty string\), got an empty string$/],
      [loose.refresh({ refreshToken: 'rt_1' }), /^refresh\(\) needs the refresh token \(a non-empty string\), got an object$/],
      [loose.whoami(), /^whoami\(\) needs \{ accessToken \} or \{ userId \}, got undefined$/],
      [loose.whoami('at_1'), /^whoami\(\) needs \{ accessToken \} or \{ userId \}, got a string$/],
      [loose.entitlements(null), /^entitlements\(\) needs \{ accessToken \} or \{ userId \}, got null$/],
      [loose.whoami({ accessToken: undefined }), /^Pass \{ accessToken \} or \{ userId \} to whoami\(\)$/],
      [loose.exchangeCode(), /^exchangeCode\(\) needs \{ code, redirectUri \}, got undefined$/],
      [loose.exchangeCode({ redirectUri: 'https://app.example/cb' }), /^exchangeCode\(\) needs code \(a non-empty string\), got undefined$/],
      [loose.exchangeCode({ code: 'c' }), /^exchangeCode\(\) needs redirectUri \(a non-empty string\), got undefined$/],
      [loose.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb', codeVerifier: 42 }), /^exchangeCode\(\) needs codeVerifier \(a non-empty string\), got a number$/],
    ];
    for (const [pending, message] of refused) {
      await assert.rejects(pending, (error: unknown) => {
        assert.ok(error instanceof MarketplaceKitError && !(error instanceof MarketplaceApiError), String(error));
        assert.equal(error.code, 'ERR_INVALID_INPUT');
        assert.match(error.message, message);
        return true;
      });
    }
    assert.equal(server.requests.length, 0);
  });

  it('refuses an empty userId with ERR_INVALID_INPUT and sends nothing', async () => {
    // An unset variable would otherwise ask for `?user_id=`, about nobody.
    const { client: c } = client();
    await assert.rejects(c.whoami({ userId: '' }), { code: 'ERR_INVALID_INPUT', message: /Pass \{ accessToken \} or \{ userId \} to whoami\(\)/ });
    await assert.rejects(c.entitlements({ userId: '' }), { code: 'ERR_INVALID_INPUT', message: /to entitlements\(\)/ });
    assert.equal(server.requests.length, 0);
  });

  it('validates answers with the shared schemas and keeps the API error code', async () => {
    handler = (_req, res) => sendJson(res, 200, { ...USER, id: 'bob' });
    await rejects(client().client.whoami({ accessToken: 'at' }), { code: 'ERR_RESPONSE_INVALID', status: 200, message: /whoami answer.*at id/ });
    handler = (_req, res) => sendJson(res, 401, { error: { code: 'invalid_token', message: 'token revoked' } });
    await rejects(client().client.whoami({ accessToken: 'at' }), {
      code: 'ERR_HTTP',
      status: 401,
      message: /HTTP 401: invalid_token: token revoked/,
      upstreamCode: 'invalid_token',
    });
  });

  it('refuses an answer by user_id about another user, and caches nothing for either', async () => {
    // A marketplace or proxy that ignores user_id would otherwise give every user the key owner's plan.
    handler = (_req, res) => sendJson(res, 200, { ...ENTITLEMENT, user_id: 'usr_owner' });
    const { client: c } = client();
    await rejects(c.entitlements({ userId: 'usr_1' }), { code: 'ERR_RESPONSE_INVALID', status: 200, message: /entitlements answer .*another user/ });
    assert.equal(c.isCached('usr_1'), false);
    assert.equal(c.isCached('usr_owner'), false);
    handler = (_req, res) => sendJson(res, 200, { ...USER, id: 'usr_owner' });
    await rejects(c.whoami({ userId: 'usr_1' }), { code: 'ERR_RESPONSE_INVALID', status: 200, message: /whoami answer .*another user/ });
    // The ids must be equal, not merely alike.
    handler = (_req, res) => sendJson(res, 200, { ...ENTITLEMENT, user_id: 'usr_10' });
    await rejects(c.entitlements({ userId: 'usr_1' }), { code: 'ERR_RESPONSE_INVALID', status: 200, message: /entitlements answer .*another user/ });
    handler = (_req, res) => sendJson(res, 200, { ...USER, id: 'usr_owner' });
    // A Bearer call names no user: the token's own user is the answer.
    assert.equal((await c.whoami({ accessToken: 'at_1' })).id, 'usr_owner');
  });

  it('answers null for no entitlement (404 API error), but an HTML 404 is an error', async () => {
    handler = (_req, res) => sendJson(res, 404, { error: { code: 'entitlement_not_found', message: 'none' } });
    assert.equal(await client().client.entitlements({ userId: 'usr_1' }), null);
    handler = (_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html>Not Found</html>');
    await rejects(client().client.entitlements({ userId: 'usr_1' }), { code: 'ERR_HTTP', status: 404, message: /HTML/ });
  });

  it('gives a short-form entitlement the status active', async () => {
    const { status: _s, expires_at: _e, ...short } = ENTITLEMENT;
    handler = (_req, res) => sendJson(res, 200, short);
    assert.deepEqual(await client().client.entitlements({ accessToken: 'at' }), { ...short, status: 'active' });
    // A null expiry is no expiry, as in the full form.
    handler = (_req, res) => sendJson(res, 200, { ...short, expires_at: null });
    assert.deepEqual(await client().client.entitlements({ accessToken: 'at' }), { ...short, expires_at: null, status: 'active' });
  });

  it('never reads a full entitlement with a bad status or expiry as the short form (which would be active)', async () => {
    const bad = [
      { ...ENTITLEMENT, status: 'cancelled', expires_at: '2099-01-01T00:00:00+00:00' },
      { ...ENTITLEMENT, status: 'cancelled', expires_at: '2099-01-01' },
      { ...ENTITLEMENT, status: '' },
      { ...ENTITLEMENT, status: 'x'.repeat(51) },
      { ...ENTITLEMENT, status: 7 },
    ];
    for (const body of bad) {
      handler = (_req, res) => sendJson(res, 200, body);
      await rejects(client().client.entitlements({ accessToken: 'at' }), { code: 'ERR_RESPONSE_INVALID', status: 200, message: /entitlements answer/ });
    }
    // An expiry without a status is neither form; the error names what the full form misses.
    const { status: _s, ...noStatus } = ENTITLEMENT;
    handler = (_req, res) => sendJson(res, 200, { ...noStatus, expires_at: '2000-01-01T00:00:00Z' });
    await rejects(client().client.entitlements({ accessToken: 'at' }), { code: 'ERR_RESPONSE_INVALID', status: 200, message: /entitlements answer \(HTTP 200, GET \/api\/v1\/entitlements\) at status: / });
  });

  describe('entitlement cache', () => {
    it('serves a user from the cache until the TTL passes or invalidate(userId)', async () => {
      handler = (_req, res) => sendJson(res, 200, ENTITLEMENT);
      const { client: c, clock } = client({ entitlementTtlMs: 5_000 });
      assert.equal(c.isCached('usr_1'), false);
      await c.entitlements({ userId: 'usr_1' });
      assert.equal(c.isCached('usr_1'), true);
      await c.entitlements({ userId: 'usr_1' });
      assert.equal(server.requests.length, 1);
      clock.advance(5_001);
      assert.equal(c.isCached('usr_1'), false, 'expired');
      await c.entitlements({ userId: 'usr_1' });
      assert.equal(server.requests.length, 2);
      c.invalidate('usr_1');
      assert.equal(c.isCached('usr_1'), false, 'invalidated');
      await c.entitlements({ userId: 'usr_1' });
      assert.equal(server.requests.length, 3);
      await c.entitlements({ userId: 'usr_1', fresh: true });
      assert.equal(server.requests.length, 4);
      handler = (_req, res) => sendJson(res, 200, { ...ENTITLEMENT, user_id: 'usr_2' });
      await c.entitlements({ userId: 'usr_2' });
      assert.equal(server.requests.length, 5, 'cached per user');
    });

    it('holds at most 10 000 users, dropping the one cached first', async () => {
      // Answered at once by a fake, and by access token (unpaced): ten thousand real round trips,
      // or paced calls, would make a slow test. A Bearer answer is cached under its user_id.
      const byToken: typeof fetch = async (_input, init) => {
        const userId = new Headers(init?.headers).get('authorization')!.replace('Bearer at_', 'usr_');
        return new Response(JSON.stringify({ ...ENTITLEMENT, user_id: userId }), { headers: { 'content-type': 'application/json' } });
      };
      const { client: c } = client({ fetch: byToken });
      for (let i = 0; i <= 10_000; i++) await c.entitlements({ accessToken: `at_${i}` });
      assert.equal(c.isCached('usr_0'), false, 'the first user made room');
      assert.equal(c.isCached('usr_1'), true);
      assert.equal(c.isCached('usr_10000'), true);
    });

    it('makes one upstream call for concurrent requests of one user', async () => {
      handler = (_req, res) => setTimeout(() => sendJson(res, 200, ENTITLEMENT), 30);
      const { client: c } = client();
      const results = await Promise.all(Array.from({ length: 10 }, () => c.entitlements({ userId: 'usr_1' })));
      assert.equal(server.requests.length, 1);
      assert.ok(results.every((r) => r === results[0]));
    });

    it('shares a Bearer load only between callers with the same access token', async () => {
      // Two users' tokens at once: each must get their own entitlement, never the other's.
      handler = (req, res) => sendJson(res, 200, { ...ENTITLEMENT, user_id: req.headers.authorization === 'Bearer at_a' ? 'usr_a' : 'usr_b' });
      const { client: c } = client();
      const [a, b, againA] = await Promise.all([
        c.entitlements({ accessToken: 'at_a' }),
        c.entitlements({ accessToken: 'at_b' }),
        c.entitlements({ accessToken: 'at_a' }),
      ]);
      assert.equal(a?.user_id, 'usr_a');
      assert.equal(b?.user_id, 'usr_b');
      assert.equal(againA, a);
      assert.equal(server.requests.length, 2, 'one request per distinct token');
    });

    /** Holds every upstream request until the test answers it, in whatever order the test picks. */
    function heldAnswers() {
      const held: Array<(plan: string) => void> = [];
      const waiting: Array<() => void> = [];
      handler = (_req, res) => {
        held.push((plan) => sendJson(res, 200, { ...ENTITLEMENT, plan }));
        waiting.shift()?.();
      };
      return {
        /** Resolves once the `n`-th request (1-based) has reached the marketplace. */
        arrived: (n: number) => (held.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
        answer: (n: number, plan: string) => held[n - 1]!(plan),
      };
    }

    /** A load the marketplace holds, made stale by invalidate (a webhook: the plan changed after it was sent), and the fresh load after it. */
    async function staleAndFreshLoads() {
      const upstream = heldAnswers();
      const { client: c } = client();
      const stale = c.entitlements({ userId: 'usr_1' });
      await upstream.arrived(1);
      c.invalidate('usr_1');
      const fresh = c.entitlements({ userId: 'usr_1' });
      await upstream.arrived(2);
      return { upstream, c, stale, fresh };
    }

    for (const order of ['the stale load answers last', 'the stale load answers first'] as const) {
      it(`never caches a load that started before invalidate(userId): ${order}`, async () => {
        const { upstream, c, stale, fresh } = await staleAndFreshLoads();
        if (order === 'the stale load answers last') {
          upstream.answer(2, 'business');
          assert.equal((await fresh)?.plan, 'business', 'a caller after invalidate does not join the stale load');
          upstream.answer(1, 'pro');
          assert.equal((await stale)?.plan, 'pro');
        } else {
          upstream.answer(1, 'pro');
          assert.equal((await stale)?.plan, 'pro');
          upstream.answer(2, 'business');
          assert.equal((await fresh)?.plan, 'business');
        }
        assert.equal((await c.entitlements({ userId: 'usr_1' }))?.plan, 'business', 'the stale answer was not cached');
        assert.equal(server.requests.length, 2, 'the fresh answer was cached');
      });
    }

    it('a caller by access token joins no load that started before an invalidation, nor asking for a fresh answer', async () => {
      const upstream = heldAnswers();
      const { client: c } = client();
      const stale = c.entitlements({ accessToken: 'at_1' });
      await upstream.arrived(1);
      const joined = c.entitlements({ accessToken: 'at_1' }); // before any invalidation: joins
      c.invalidate('usr_1'); // a webhook: the plan changed after the first load was sent
      const afterWebhook = c.entitlements({ accessToken: 'at_1' });
      await within(upstream.arrived(2), 5_000, 'the call after invalidate sent no request: it joined the stale load');
      const fresh = c.entitlements({ accessToken: 'at_1', fresh: true });
      await within(upstream.arrived(3), 5_000, 'the call asking for a fresh answer sent no request: it joined a running load');
      upstream.answer(1, 'pro');
      upstream.answer(2, 'business');
      upstream.answer(3, 'business');
      assert.deepEqual([(await stale)?.plan, (await joined)?.plan, (await afterWebhook)?.plan, (await fresh)?.plan], ['pro', 'pro', 'business', 'business']);
      assert.equal(server.requests.length, 3);
    });

    it('keeps ignoring a stale load across a second invalidation', async () => {
      const { upstream, c, stale, fresh } = await staleAndFreshLoads();
      upstream.answer(2, 'business');
      await fresh;
      c.invalidate('usr_1'); // a second webhook while the stale load still runs
      const third = c.entitlements({ userId: 'usr_1' });
      await upstream.arrived(3);
      upstream.answer(3, 'enterprise');
      assert.equal((await third)?.plan, 'enterprise');
      upstream.answer(1, 'pro');
      await stale;
      assert.equal((await c.entitlements({ userId: 'usr_1' }))?.plan, 'enterprise');
      assert.equal(server.requests.length, 3);
    });

    it('a stale load that ends first leaves the fresh load for later callers to join', async () => {
      const { upstream, c, stale, fresh } = await staleAndFreshLoads();
      upstream.answer(1, 'pro');
      await stale;
      const joiner = c.entitlements({ userId: 'usr_1' });
      // Answers any request a joiner might send of its own, so that the test fails instead of hanging.
      void upstream.arrived(3).then(() => upstream.answer(3, 'enterprise'));
      upstream.answer(2, 'business');
      assert.equal((await joiner)?.plan, 'business');
      assert.equal(await joiner, await fresh);
      assert.equal(server.requests.length, 2, 'the joiner sent nothing');
    });

    it('does not cache failures', async () => {
      handler = (_req, res) => res.writeHead(503).end();
      const { client: c } = client();
      await rejects(c.entitlements({ userId: 'usr_1' }), { code: 'ERR_HTTP', status: 503, message: /503/ });
      handler = (_req, res) => sendJson(res, 200, ENTITLEMENT);
      assert.equal((await c.entitlements({ userId: 'usr_1' }))?.plan, 'pro');
    });

    it('lets one caller abort without cancelling the shared load', async () => {
      handler = (_req, res) => setTimeout(() => sendJson(res, 200, ENTITLEMENT), 40);
      const { client: c } = client();
      const controller = new AbortController();
      const aborted = c.entitlements({ userId: 'usr_1', signal: controller.signal });
      const other = c.entitlements({ userId: 'usr_1' });
      controller.abort();
      await rejects(aborted, { code: 'ERR_ABORTED', message: /aborted/ });
      assert.equal((await other)?.plan, 'pro');
    });
  });
});

describe('rate limits (docs/marketplace.md#rate-limits; docs/decisions.md#marketplace-api)', () => {
  it('honours 429 + Retry-After, then succeeds', async () => {
    let calls = 0;
    handler = (_req, res) => (++calls === 1 ? sendJson(res, 429, { error: { code: 'rate_limited', message: 'slow down' } }, { 'retry-after': '3' }) : sendJson(res, 200, USER));
    const { client: c, clock } = client();
    assert.deepEqual(await c.whoami({ userId: 'usr_1' }), USER);
    assert.deepEqual(clock.sleeps, [3_000]);
    assert.equal(clock.now(), NOW + 3_000);
  });

  it('honours Retry-After as an HTTP date, with a Bearer token too', async () => {
    let calls = 0;
    handler = (_req, res) => (++calls === 1 ? res.writeHead(429, { 'retry-after': new Date(NOW + 2_000).toUTCString() }).end() : sendJson(res, 200, USER));
    const { client: c, clock } = client();
    await c.whoami({ accessToken: 'at' });
    assert.deepEqual(clock.sleeps, [2_000]);
  });

  it('reads the obsolete HTTP-date forms too (RFC 850, asctime), as RFC 9110 asks of recipients', async () => {
    // NOW + 2 s is 2026-05-01 12:00:02 GMT, a Friday.
    for (const value of ['Friday, 01-May-26 12:00:02 GMT', 'Fri May  1 12:00:02 2026']) {
      let calls = 0;
      handler = (_req, res) => (++calls === 1 ? res.writeHead(429, { 'retry-after': value }).end() : sendJson(res, 200, USER));
      const { client: c, clock } = client();
      await c.whoami({ accessToken: 'at' });
      assert.deepEqual(clock.sleeps, [2_000], value);
    }
  });

  it('without Retry-After, waits until X-RateLimit-Reset (Unix seconds); one already past backs off as without it', async () => {
    for (const [reset, sleeps] of [[String((NOW + 40_000) / 1000), [40_000]], [String((NOW - 5_000) / 1000), [1_000]], ['soon', [1_000]]] as const) {
      let calls = 0;
      handler = (_req, res) => (++calls === 1 ? res.writeHead(429, { 'x-ratelimit-reset': reset, 'x-ratelimit-remaining': '0' }).end() : sendJson(res, 200, USER));
      const { client: c, clock } = client({ maxRetryWaitMs: 60_000 });
      assert.deepEqual(await c.whoami({ accessToken: 'at' }), USER);
      assert.deepEqual(clock.sleeps, sleeps, `X-RateLimit-Reset: ${reset}`);
    }
    // Retry-After, when given, decides.
    let calls = 0;
    handler = (_req, res) => (++calls === 1 ? res.writeHead(429, { 'retry-after': '3', 'x-ratelimit-reset': String((NOW + 40_000) / 1000) }).end() : sendJson(res, 200, USER));
    const { client: c, clock } = client({ maxRetryWaitMs: 60_000 });
    await c.whoami({ accessToken: 'at' });
    assert.deepEqual(clock.sleeps, [3_000]);
  });

  it('backs off as without Retry-After when Retry-After is neither delta-seconds nor an HTTP date', async () => {
    for (const value of ['1.5', '-5', 'soon']) {
      let calls = 0;
      handler = (_req, res) => (++calls === 1 ? res.writeHead(429, { 'retry-after': value }).end() : sendJson(res, 200, USER));
      const { client: c, clock } = client();
      assert.deepEqual(await c.whoami({ accessToken: 'at' }), USER);
      assert.deepEqual(clock.sleeps, [1_000], `Retry-After: ${value}`);
    }
  });

  it('backs off exponentially without Retry-After, then fails with ERR_RATE_LIMITED', async () => {
    handler = (_req, res) => res.writeHead(429).end();
    const { client: c, clock } = client();
    await rejects(c.whoami({ accessToken: 'at' }), { code: 'ERR_RATE_LIMITED', status: 429, message: /rate limited/ });
    assert.deepEqual(clock.sleeps, [1_000, 2_000]);
    assert.equal(server.requests.length, 3);
    const { client: patient, clock: patientClock } = client({ maxRetries: 3 });
    await rejects(patient.whoami({ accessToken: 'at' }), { code: 'ERR_RATE_LIMITED', status: 429, message: /rate limited/ });
    assert.deepEqual(patientClock.sleeps, [1_000, 2_000, 4_000], 'each wait doubles');
  });

  it('a caller that aborts during a backoff gets ERR_ABORTED, and nothing more is sent', async () => {
    handler = (_req, res) => res.writeHead(429).end();
    const virtual = createVirtualClock(NOW);
    const controller = new AbortController();
    // The caller gives up while the client waits to retry.
    const clock = {
      ...virtual,
      sleep: (ms: number, signal?: AbortSignal) => {
        controller.abort();
        return virtual.sleep(ms, signal);
      },
    };
    await rejects(client({ clock }).client.whoami({ accessToken: 'at', signal: controller.signal }), { code: 'ERR_ABORTED', message: /aborted/ });
    assert.equal(server.requests.length, 1);
  });

  it('fails at once when Retry-After is longer than maxRetryWaitMs, and keeps the API key paused', async () => {
    handler = (_req, res) => res.writeHead(429, { 'retry-after': '60' }).end();
    const { client: c, clock } = client({ maxQueueWaitMs: 120_000 });
    await assert.rejects(c.whoami({ userId: 'usr_1' }), (error: MarketplaceApiError) => {
      assert.equal(error.code, 'ERR_RATE_LIMITED');
      assert.equal(error.retryAfterMs, 60_000);
      assert.match(error.message, /retry after 60 s/);
      return true;
    });
    assert.equal(server.requests.length, 1);
    handler = (_req, res) => sendJson(res, 200, USER);
    await c.whoami({ userId: 'usr_1' });
    assert.equal(clock.now(), NOW + 60_000, 'the next request waited for the pause');
  });

  it('waits a Retry-After of up to 10 s by default, and fails at once on a longer one', async () => {
    let calls = 0;
    handler = (_req, res) => (++calls === 1 ? res.writeHead(429, { 'retry-after': '10' }).end() : sendJson(res, 200, USER));
    const { client: c, clock } = client();
    assert.deepEqual(await c.whoami({ accessToken: 'at' }), USER, 'exactly 10 s is waited');
    assert.deepEqual(clock.sleeps, [10_000]);

    handler = (_req, res) => res.writeHead(429, { 'retry-after': '20' }).end();
    const { client: d, clock: dClock } = client();
    await assert.rejects(d.whoami({ accessToken: 'at' }), { code: 'ERR_RATE_LIMITED', retryAfterMs: 20_000 });
    assert.deepEqual(dClock.sleeps, [], 'nobody waited');
    assert.equal(server.requests.length, 3, 'the 20 s answer was not retried');
  });

  it('reads a Retry-After longer than a minute as a minute (the limits are per minute), so one wrong answer cannot stop the key for hours', async () => {
    for (const value of ['86400', new Date(NOW + 7 * 86_400_000).toUTCString()]) {
      handler = (_req, res) => res.writeHead(429, { 'retry-after': value }).end();
      const { client: c, clock } = client({ maxQueueWaitMs: 120_000 });
      await assert.rejects(c.whoami({ userId: 'usr_1' }), (error: MarketplaceApiError) => {
        assert.equal(error.retryAfterMs, 60_000, value);
        assert.equal(toErrorResponse(error).headers.get('retry-after'), '60', value);
        return true;
      });
      handler = (_req, res) => sendJson(res, 200, USER);
      await c.whoami({ userId: 'usr_1' });
      assert.equal(clock.now(), NOW + 60_000, `${value}: the next request waited one minute`);
    }
  });

  it('says when it reads a Retry-After as shorter than asked (at most a minute)', async () => {
    handler = (_req, res) => res.writeHead(429, { 'retry-after': '120' }).end();
    await assert.rejects(client().client.whoami({ userId: 'usr_1' }), (error: MarketplaceApiError) => {
      assert.equal(error.retryAfterMs, 60_000);
      assert.match(error.message, /rate limited; retry after 120 s \(read as 60 s, the longest pause the kit takes\)$/);
      return true;
    });
  });

  it('fails a paced retry only when its wait is longer than maxQueueWaitMs, not when it is exactly that long', async () => {
    handler = (_req, res) => res.writeHead(429).end();
    // Backoff without Retry-After: 1 s (exactly maxQueueWaitMs: the queue takes it, a second attempt), then 2 s (over it).
    const { client: c } = client({ maxQueueWaitMs: 1_000 });
    await assert.rejects(c.whoami({ userId: 'usr_1' }), { code: 'ERR_RATE_LIMITED', message: /^The marketplace whoami request \(GET \/api\/v1\/whoami\) failed with HTTP 429: rate limited$/ });
    assert.equal(server.requests.length, 2);
  });

  it('retries a Bearer call after its 429 within maxRetryWaitMs, even past maxQueueWaitMs (which bounds the API-key queue only)', async () => {
    let calls = 0;
    handler = (_req, res) => (++calls === 1 ? res.writeHead(429, { 'retry-after': '2' }).end() : sendJson(res, 200, USER));
    const { client: c, clock } = client({ maxQueueWaitMs: 500, maxRetryWaitMs: 10_000 });
    assert.deepEqual(await c.whoami({ accessToken: 'at_1' }), USER);
    assert.equal(server.requests.length, 2);
    assert.deepEqual(clock.sleeps, [2_000]);
  });

  it('adds no note to a Retry-After of exactly the longest pause the kit takes (60 s)', async () => {
    handler = (_req, res) => res.writeHead(429, { 'retry-after': '60' }).end();
    await assert.rejects(client().client.whoami({ userId: 'usr_1' }), (error: MarketplaceApiError) => {
      assert.equal(error.retryAfterMs, 60_000);
      assert.match(error.message, /rate limited; retry after 60 s$/);
      return true;
    });
  });

  it('a paced retry that would wait longer than maxQueueWaitMs fails with the 429 it got, which names no Retry-After the marketplace did not send', async () => {
    handler = (_req, res) => res.writeHead(429).end();
    // Backoff without Retry-After: 1 s (within 1.5 s: a second attempt), then 2 s (over it).
    const { client: c } = client({ maxQueueWaitMs: 1_500 });
    await assert.rejects(c.whoami({ userId: 'usr_1' }), (error: MarketplaceApiError) => {
      assert.equal(error.code, 'ERR_RATE_LIMITED');
      assert.equal(error.retryAfterMs, undefined);
      assert.match(error.message, /^The marketplace whoami request \(GET \/api\/v1\/whoami\) failed with HTTP 429: rate limited$/);
      return true;
    });
    assert.equal(server.requests.length, 2);
  });

  it('a call refused during a 429 pause longer than maxQueueWaitMs says the marketplace asked for it', async () => {
    handler = (_req, res) => res.writeHead(429, { 'retry-after': '60' }).end();
    const { client: c } = client({ maxQueueWaitMs: 5_000 });
    await assert.rejects(c.whoami({ userId: 'usr_1' }), { code: 'ERR_RATE_LIMITED', message: /failed with HTTP 429: rate limited; retry after 60 s/ });
    await assert.rejects(c.whoami({ userId: 'usr_2' }), (error: MarketplaceApiError) => {
      assert.equal(error.retryAfterMs, 60_000);
      assert.match(error.message, /not sent: the marketplace answered an earlier request with 429.*more than 5000 ms \(maxQueueWaitMs\); retry after 60 s/);
      assert.doesNotMatch(error.message, /requests per/);
      return true;
    });
    assert.equal(server.requests.length, 1, 'the second call was not sent');
  });

  it('a test_ key never has more than 100 requests within a minute of each other, counting from each answer', async () => {
    const sent: number[] = [];
    const answered: number[] = [];
    const clock = createVirtualClock(NOW);
    const spy: typeof fetch = async (input, init) => {
      const i = sent.push(clock.now()) - 1;
      const response = await fetch(input, init);
      answered[i] = clock.now();
      return response;
    };
    const c = createMarketplaceClient({ siteUrl: server.url, apiKey: API_KEY, clock, fetch: spy, entitlementTtlMs: 0, maxQueueWaitMs: Infinity });
    handler = (req, res) => sendJson(res, 200, { ...ENTITLEMENT, user_id: new URL(req.url!, server.url).searchParams.get('user_id') });
    await Promise.all(Array.from({ length: 250 }, (_, i) => c.entitlements({ userId: `usr_${i}` })));
    assert.equal(server.requests.length, 250);
    // When request j was sent, every earlier request still held its slot if it was in flight or
    // answered less than a minute before: at most 99 of them may.
    for (let j = 0; j < sent.length; j++) {
      const holding = sent.slice(0, j).filter((_, i) => answered[i]! > sent[j]! - 60_000).length;
      assert.ok(holding < 100, `request ${j} was sent while ${holding} others held a slot`);
    }
    assert.ok(clock.now() >= NOW + 120_000, 'the 201st request waited at least two windows');
  });

  it('a live_ key sends 1,000 per minute before it waits', async () => {
    // Answered at once: a thousand real round trips would test the machine, not the pacing.
    const immediate: typeof fetch = async () => new Response(JSON.stringify(USER), { headers: { 'content-type': 'application/json' } });
    const { client: c, clock } = client({ apiKey: 'live_key', entitlementTtlMs: 0, maxQueueWaitMs: 60_000, fetch: immediate });
    await Promise.all(Array.from({ length: 1000 }, () => c.whoami({ userId: 'usr_1' })));
    assert.equal(clock.now(), NOW);
    await c.whoami({ userId: 'usr_1' });
    assert.equal(clock.now(), NOW + 60_000);
  });

  it('refuses with ERR_RATE_LIMITED (429) instead of queueing longer than maxQueueWaitMs (default: timeoutMs)', async () => {
    handler = (_req, res) => sendJson(res, 200, USER);
    // timeoutMs also bounds the real round trips: a minute, as no answer on loopback takes.
    const { client: c, clock } = client({ rateLimit: { limit: 2, windowMs: 600_000 }, timeoutMs: 60_000 });
    await Promise.all([c.whoami({ userId: 'usr_1' }), c.whoami({ userId: 'usr_1' })]);
    clock.advance(500_000);
    await assert.rejects(c.whoami({ userId: 'usr_1' }), (error: MarketplaceApiError) => {
      assert.ok(error instanceof MarketplaceApiError);
      assert.equal(error.code, 'ERR_RATE_LIMITED');
      assert.equal(error.status, 429);
      assert.equal(error.retryAfterMs, 100_000);
      assert.match(error.message, /not sent.*2 requests per 600 s.*60000 ms/);
      return true;
    });
    assert.equal(server.requests.length, 2, 'nothing was sent');
    assert.deepEqual(clock.sleeps, [], 'and nobody waited');
    clock.advance(40_000);
    assert.deepEqual(await c.whoami({ userId: 'usr_1' }), USER, 'a wait within the cap is taken');
    assert.deepEqual(clock.sleeps, [60_000]);
  });

  it('counts the time spent queued behind earlier callers against maxQueueWaitMs', async () => {
    // Answered at once: with the virtual clock, a real round trip would outlast the queue's waits.
    const immediate: typeof fetch = async () => new Response(JSON.stringify(USER), { headers: { 'content-type': 'application/json' } });
    const { client: c, clock } = client({ rateLimit: { limit: 1, windowMs: 4_000 }, maxQueueWaitMs: 6_000, fetch: immediate });
    const results = await Promise.allSettled([1, 2, 3].map(() => c.whoami({ userId: 'usr_1' })));
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? 'sent' : (r.reason as MarketplaceApiError).code)),
      ['sent', 'sent', 'ERR_RATE_LIMITED'],
      'the third would have waited 8 s in all',
    );
    assert.equal(clock.now(), NOW + 4_000);
  });

  it("a Bearer call's 429 does not pause the API key's calls", async () => {
    handler = (req, res) =>
      req.headers.authorization ? sendJson(res, 429, { error: { code: 'rate_limited', message: 'slow down' } }, { 'retry-after': '60' }) : sendJson(res, 200, USER);
    const { client: c, clock } = client({ maxRetries: 0 });
    await rejects(c.whoami({ accessToken: 'user_a' }), { code: 'ERR_RATE_LIMITED', status: 429, message: /rate limited/ });
    assert.deepEqual(await c.whoami({ userId: USER.id }), USER);
    assert.deepEqual(clock.sleeps, [], 'the API-key call did not wait');
  });

  it('holds a slot until one window after its answer: a slow first answer delays the next window', async () => {
    const clock = createVirtualClock(NOW);
    const pacer = new Pacer(2, 1_000, clock);
    const slow = await pacer.acquire(); // sent at NOW, the marketplace counts it when it arrives
    const fast = await pacer.acquire();
    clock.advance(10);
    fast(); // answered at NOW + 10
    clock.advance(290);
    slow(); // answered at NOW + 300: it may have been counted as late as that
    await pacer.acquire();
    assert.equal(clock.now(), NOW + 1_010, 'the third waits one window after the earliest answer, not after the first send');
  });

  it('waits for an answer when every slot is in flight, within maxQueueWaitMs; a caller aborted while queued sends nothing', async () => {
    const clock = createVirtualClock(NOW);
    const pacer = new Pacer(1, 1_000, clock);
    const first = await pacer.acquire();
    let granted = false;
    const second = pacer.acquire().then((release) => {
      granted = true;
      return release;
    });
    await eventLoopTurns(10); // the virtual clock's sleeps each take one turn: room for a wrong grant to show
    assert.equal(granted, false, 'no slot while the first request is in flight');
    clock.advance(500);
    first();
    (await second)();
    assert.equal(clock.now(), NOW + 1_500);

    // An answer that does not come within maxWaitMs - windowMs: refused then, not later.
    const bounded = new Pacer(1, 1_000, clock, 3_000);
    const held = await bounded.acquire();
    const since = clock.now();
    await assert.rejects(bounded.acquire(), (error: Error) => error.name === 'PacerWaitTooLong');
    assert.equal(clock.now() - since, 2_000, 'refused once an answer could no longer come in time');
    held();

    // Through the client: a caller aborted while queued sends nothing; the queue moves on.
    handler = (_req, res) => sendJson(res, 200, USER);
    const { client: c } = client({ rateLimit: { limit: 1, windowMs: 1_000 } });
    const controller = new AbortController();
    const queued = Promise.allSettled([c.whoami({ userId: 'usr_1' }), c.whoami({ userId: 'usr_1', signal: controller.signal })]);
    controller.abort();
    const [sent, aborted] = await queued;
    assert.equal(sent.status, 'fulfilled');
    assert.equal(aborted.status === 'rejected' && (aborted.reason as MarketplaceApiError).code, 'ERR_ABORTED');
    assert.equal(server.requests.filter((r) => r.url.includes('whoami')).length, 1, 'the aborted call sent nothing');
  });

  it('gives back a slot granted in the same tick its caller aborted: the next call is still served', async () => {
    handler = (_req, res) => sendJson(res, 200, USER);
    const virtual = createVirtualClock(NOW);
    const controller = new AbortController();
    // The pacer reads the clock when a call queues and again right before it grants the slot: an
    // abort on that second read lands after the pacer's last look at the signal.
    let reads = 0;
    const clock = {
      ...virtual,
      now: () => {
        if (++reads === 2) controller.abort();
        return virtual.now();
      },
    };
    const { client: c } = client({ clock, rateLimit: { limit: 1, windowMs: 1_000 } });
    await rejects(c.whoami({ userId: 'usr_1', signal: controller.signal }), { code: 'ERR_ABORTED', message: /aborted/ });
    assert.equal(server.requests.length, 0, 'the aborted call sent nothing');
    assert.deepEqual(await c.whoami({ userId: 'usr_1' }), USER, 'its slot was given back');
    assert.deepEqual(virtual.sleeps, [1_000], 'one window after it was given back');
  });

  it('does not pace Bearer-token calls', async () => {
    const { client: c, clock } = client({ rateLimit: { limit: 1 } });
    handler = (_req, res) => sendJson(res, 200, USER);
    await Promise.all([c.whoami({ accessToken: 'a' }), c.whoami({ accessToken: 'b' }), c.whoami({ accessToken: 'c' })]);
    assert.deepEqual(clock.sleeps, []);
  });
});

describe('abort before the call', () => {
  it('rejects with ERR_ABORTED and sends nothing', async () => {
    handler = (_req, res) => sendJson(res, 200, USER);
    let fetched = 0;
    const { client: c } = client({ fetch: (input, init) => (fetched++, fetch(input, init)) });
    const signal = AbortSignal.abort();
    await rejects(c.whoami({ userId: 'usr_1', signal }), { code: 'ERR_ABORTED', message: /aborted/ });
    await rejects(c.entitlements({ userId: 'usr_1', signal }), { code: 'ERR_ABORTED', message: /aborted/ });
    await rejects(c.refresh('rt', { signal }), { code: 'ERR_ABORTED', message: /aborted/ });
    await rejects(c.whoami({ accessToken: 'at', signal }), { code: 'ERR_ABORTED', message: /aborted/ });
    await rejects(c.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb', signal }), { code: 'ERR_ABORTED', message: /aborted/ });
    assert.equal(fetched, 0, 'nothing was sent');
  });

  it('never calls a custom fetch, even one that ignores the signal', async () => {
    let calls = 0;
    const counting: typeof fetch = async () => {
      calls++;
      return new Response(JSON.stringify(tokenAnswer), { headers: { 'content-type': 'application/json' } });
    };
    const { client: c } = client({ fetch: counting });
    await rejects(c.exchangeCode({ code: 'c', redirectUri: 'https://app.example/cb', signal: AbortSignal.abort() }), { code: 'ERR_ABORTED', message: /aborted/ });
    await rejects(c.whoami({ accessToken: 'at', signal: AbortSignal.abort() }), { code: 'ERR_ABORTED', message: /aborted/ });
    assert.equal(calls, 0);
  });

  it('rejects with ERR_ABORTED when the answer is cached too, as refresh does', async () => {
    handler = (_req, res) => sendJson(res, 200, ENTITLEMENT);
    const { client: c } = client();
    await c.entitlements({ userId: 'usr_1' });
    assert.equal(c.isCached('usr_1'), true);
    await rejects(c.entitlements({ userId: 'usr_1', signal: AbortSignal.abort() }), { code: 'ERR_ABORTED', message: /aborted/ });
  });
});

describe('a long-lived signal', () => {
  it('is left as it was after each call: no listener stays, and no AbortSignal.any (on Node 20 it keeps an entry per call)', async (t) => {
    const any = t.mock.method(AbortSignal, 'any');
    handler = (_req, res) => sendJson(res, 200, USER);
    const app = new AbortController();
    // One slot: the second call by userId waits in the pacer for the first one's answer.
    const { client: c } = client({ rateLimit: { limit: 1, windowMs: 1_000 }, maxQueueWaitMs: Infinity });
    await Promise.all([c.whoami({ userId: USER.id, signal: app.signal }), c.whoami({ userId: USER.id, signal: app.signal })]);
    await c.whoami({ accessToken: 'at_1', signal: app.signal });
    assert.equal(server.requests.length, 3);
    assert.equal(getEventListeners(app.signal, 'abort').length, 0);
    assert.equal(any.mock.callCount(), 0);
  });
});
