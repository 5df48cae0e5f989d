import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Server, ServerResponse, createServer } from 'node:http';
import { Server as NetServer, connect, type AddressInfo } from 'node:net';
import { after, before, describe, it, type TestContext } from 'node:test';
import { verifyContextToken } from '../../src/server/index.js';
import { ApiErrorBody, Entitlement } from '../../src/shared/schemas.js';
import { startSimulator, type Simulator, type SimulatorEvent, type SimulatorOptions } from '../../src/simulator/index.js';
import { STREAM_BACKLOG_BYTES } from '../../src/simulator/control.js';
import { rawRequest } from '../support/server-http.js';
import { CALLBACK, authorizeUrl, startTestSimulator } from '../support/simulator-harness.js';
import { eventLoopTurns } from '../support/waiting.js';

function send(sim: Simulator, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${sim.siteUrl}${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

async function apiError(response: Response, status: number, code?: string): Promise<string> {
  assert.equal(response.status, status);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const { error } = ApiErrorBody.parse(await response.json());
  if (code) assert.equal(error.code, code);
  return error.message;
}

/** The events of a Server-Sent Events body, as `[name, parsed data]`; ends when the body ends. */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<[string, any]> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of body) {
    text += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = text.indexOf('\n\n')) !== -1) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (name && data !== undefined) yield [name, JSON.parse(data)];
    }
  }
}

/** The data of the next `name` event, skipping others; throws if the stream ends first. */
async function nextEvent(events: AsyncGenerator<[string, any]>, name: string): Promise<any> {
  for (;;) {
    const { value, done } = await events.next();
    if (done) throw new Error(`the stream ended before an ${name} event`);
    if (value[0] === name) return value[1];
  }
}

/** Writes raw bytes to the simulator and returns the first response line (or '' when closed). */
function raw(sim: Simulator, request: string | Buffer): Promise<string> {
  const { port, hostname } = new URL(sim.siteUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) {
        socket.destroy();
        resolve(answer.split('\r\n')[0]!);
      }
    });
    socket.on('error', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.write(request);
  });
}

describe('simulator: control API', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startTestSimulator();
  });
  after(() => sim.close());

  it('GET /_simulator/state shows users with entitlements, plans and config, but no secrets', async () => {
    const response = await send(sim, 'GET', '/_simulator/state');
    assert.equal(response.status, 200);
    const text = await response.text();
    const state = JSON.parse(text);
    assert.deepEqual(
      state.users.map((u: { id: string }) => u.id),
      ['usr_ada', 'usr_grace', 'usr_alan', 'usr_katherine', 'usr_linus'],
    );
    for (const user of state.users) if (user.entitlement) Entitlement.parse(user.entitlement);
    assert.deepEqual(
      state.plans.map((p: { id: string; kind: string }) => `${p.id}:${p.kind}`),
      ['free:free', 'pro_monthly:monthly', 'pro_annual:annual', 'lifetime:one_time'],
    );
    assert.deepEqual(state.config, { app_url: null, webhook_url: null, redirect_uris: [CALLBACK] });
    for (const secret of [sim.clientSecret, sim.testApiKey, sim.liveApiKey, sim.webhookSecret]) assert.ok(!text.includes(secret));
  });

  it('PUT …/entitlement merges the given fields and validates the result with the Entitlement schema', async () => {
    const answer = await send(sim, 'PUT', '/_simulator/users/usr_ada/entitlement', { status: 'past_due', usage: { api_calls: 99 } });
    assert.equal(answer.status, 200);
    const entitlement = Entitlement.parse(await answer.json());
    assert.equal(entitlement.plan, 'free');
    assert.equal(entitlement.status, 'past_due');
    assert.deepEqual(entitlement.usage, { api_calls: 99, limit: 100 });
    assert.deepEqual(sim.entitlement('usr_ada'), entitlement);
    const api = await fetch(`${sim.baseUrl}/entitlements?user_id=usr_ada`, { headers: { 'x-api-key': sim.testApiKey } });
    assert.equal(((await api.json()) as Entitlement).status, 'past_due');

    const full = { plan: 'custom', status: 'active', features: ['a', 'b'], usage: { api_calls: 0, limit: 5 }, expires_at: '2030-01-01T00:00:00Z' };
    assert.deepEqual(await (await send(sim, 'PUT', '/_simulator/users/usr_ada/entitlement', full)).json(), { user_id: 'usr_ada', app_id: 'app_simulated', ...full });
    const lifetime = await send(sim, 'PUT', '/_simulator/users/usr_ada/entitlement', { expires_at: null });
    assert.equal(((await lifetime.json()) as Entitlement).expires_at, null);
    // A status the marketplace may add later is accepted, as the kit accepts it.
    const paused = await send(sim, 'PUT', '/_simulator/users/usr_ada/entitlement', { status: 'paused' });
    assert.equal(((await paused.json()) as Entitlement).status, 'paused');
  });

  it('refuses invalid entitlement changes with 400 and keeps the old entitlement', async () => {
    const before = sim.entitlement('usr_grace');
    const bad: unknown[] = [
      { status: 5 },
      { features: 'export' },
      { features: [1] },
      { usage: { api_calls: -1 } },
      { usage: { limit: 1.5 } },
      { usage: 'lots' },
      { expires_at: '2030-01-01' },
      { expires_at: 'tomorrow' },
      // The kit reads fractional seconds; the marketplace sends only whole ones (docs/marketplace.md#entitlement).
      { expires_at: '2030-01-01T00:00:00.123Z' },
      { plan: '' },
      { user_id: 'usr_ada' },
      { colour: 'red' },
      [],
    ];
    for (const body of bad) await apiError(await send(sim, 'PUT', '/_simulator/users/usr_grace/entitlement', body), 400);
    // A misspelt figure is named, not dropped with a 200 that changed nothing.
    const misspelt = await send(sim, 'PUT', '/_simulator/users/usr_grace/entitlement', { usage: { apiCalls: 5, limit: 10 } });
    assert.equal(await apiError(misspelt, 400, 'invalid_request'), 'Unknown field(s): usage.apiCalls. Allowed: api_calls, limit.');
    assert.deepEqual(sim.entitlement('usr_grace'), before);
    await apiError(await send(sim, 'PUT', '/_simulator/users/usr_grace/entitlement', '{"status":'), 400, 'invalid_json');
    await apiError(await send(sim, 'PUT', '/_simulator/users/usr_grace/entitlement', undefined, { 'content-type': 'text/plain' }), 415);
    await apiError(await send(sim, 'PUT', '/_simulator/users/usr_nobody/entitlement', { status: 'active' }), 404, 'user_not_found');
    await apiError(await send(sim, 'PUT', '/_simulator/users/%E0%A4%A/entitlement', { status: 'active' }), 400);
    await apiError(await send(sim, 'PUT', '/_simulator/users/usr_linus/entitlement', { status: 'active' }), 400);
  });

  it('creates an entitlement for a user without one from a plan, and DELETE removes it', async () => {
    const created = await send(sim, 'PUT', '/_simulator/users/usr_linus/entitlement', { plan: 'pro_annual', status: 'trialing' });
    const entitlement = Entitlement.parse(await created.json());
    assert.deepEqual([entitlement.plan, entitlement.status, entitlement.features], ['pro_annual', 'trialing', ['export', 'reports']]);
    assert.equal((await send(sim, 'DELETE', '/_simulator/users/usr_linus/entitlement')).status, 204);
    assert.equal(sim.entitlement('usr_linus'), null);
  });

  it('PUT /_simulator/config changes the registered redirect URIs, app and webhook URLs', async () => {
    const other = 'http://127.0.0.1:9/other';
    const changed = await send(sim, 'PUT', '/_simulator/config', { redirect_uris: [other], app_url: 'http://127.0.0.1:9/app/' });
    assert.deepEqual(await changed.json(), { app_url: 'http://127.0.0.1:9/app/', webhook_url: null, redirect_uris: [other] });
    assert.equal((await fetch(authorizeUrl(sim, { redirectUri: other }))).status, 200);
    assert.equal((await fetch(authorizeUrl(sim), { redirect: 'manual' })).status, 400);
    for (const body of [{ redirect_uris: 'x' }, { redirect_uris: ['/relative'] }, { redirect_uris: ['http://a/#frag'] }, { redirect_uris: ['http://a/cb#'] }, { app_url: 'javascript:alert(1)' }, { webhook_url: 'ftp://x/' }, { port: 1 }]) {
      await apiError(await send(sim, 'PUT', '/_simulator/config', body), 400);
    }
    // A change with one bad field changes nothing, not even the good fields.
    const kept = await (await send(sim, 'GET', '/_simulator/config')).json();
    await apiError(await send(sim, 'PUT', '/_simulator/config', { app_url: 'http://127.0.0.1:9/changed/', webhook_url: 'ftp://x/' }), 400);
    await apiError(await send(sim, 'PUT', '/_simulator/config', { redirect_uris: ['http://127.0.0.1:9/ok', 'nope'] }), 400);
    assert.deepEqual(await (await send(sim, 'GET', '/_simulator/config')).json(), kept);
    await send(sim, 'PUT', '/_simulator/config', { redirect_uris: [CALLBACK], app_url: null });
    assert.deepEqual(await (await send(sim, 'GET', '/_simulator/config')).json(), { app_url: null, webhook_url: null, redirect_uris: [CALLBACK] });
  });

  it('POST /_simulator/context mints a context token the server module verifies', async () => {
    const answer = await send(sim, 'POST', '/_simulator/context', { user_id: 'usr_grace' });
    const { context, expires_in } = (await answer.json()) as { context: string; expires_in: number };
    assert.equal(expires_in, 300);
    const claims = await verifyContextToken(context, { clientId: sim.clientId, clientSecret: sim.clientSecret, issuer: sim.siteUrl, host: sim.siteUrl });
    assert.equal(claims.sub, 'usr_grace');
    assert.equal(claims.app_id, sim.appId);
    assert.equal(claims.name, 'Grace Hopper');
    await apiError(await send(sim, 'POST', '/_simulator/context', { user_id: 'usr_nobody' }), 404);
    await apiError(await send(sim, 'POST', '/_simulator/context', {}), 400);
  });

  it('streams entitlement and config changes as Server-Sent Events, and stops writing once the client leaves', async (t) => {
    const write = t.mock.method(ServerResponse.prototype, 'write');
    const controller = new AbortController();
    // A test that times out never reaches its `finally`; the abort also ends a read waiting for an event.
    t.signal.addEventListener('abort', () => controller.abort(), { once: true });
    const response = await fetch(`${sim.siteUrl}/_simulator/stream`, { signal: controller.signal });
    try {
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      const events = sseEvents(response.body!);
      // First the state as of the connection, then each change after it.
      assert.deepEqual((await events.next()).value, ['state', sim.state()]);
      await send(sim, 'PUT', '/_simulator/users/usr_alan/entitlement', { status: 'expired' });
      const change = await nextEvent(events, 'entitlement');
      assert.equal(change.user_id, 'usr_alan');
      assert.equal(change.entitlement.status, 'expired');

      const webhook = 'http://127.0.0.1:9/stream-hooks';
      assert.equal((await send(sim, 'PUT', '/_simulator/config', { webhook_url: webhook })).status, 200);
      assert.deepEqual(await nextEvent(events, 'config'), { app_url: null, webhook_url: webhook, redirect_uris: [CALLBACK] });
      await send(sim, 'PUT', '/_simulator/config', { webhook_url: null });

      // The simulator's end of this stream: the response that wrote the opening `retry:` line.
      const streamResponse = write.mock.calls.find((call) => String(call.arguments[0]).startsWith('retry:'))!.this as ServerResponse;
      const closed = once(streamResponse, 'close');
      controller.abort();
      await closed;
      const writesBefore = write.mock.calls.filter((call) => call.this === streamResponse).length;
      await send(sim, 'PUT', '/_simulator/users/usr_alan/entitlement', { status: 'active' });
      assert.equal(write.mock.calls.filter((call) => call.this === streamResponse).length, writesBefore, 'wrote to a stream whose client had left');
    } finally {
      controller.abort();
    }
  });

  it('cuts an event stream whose client stopped reading, instead of buffering every later event', async (t) => {
    // A simulator of its own: the calls below would use up the shared one's API-key limit.
    const sim = await startTestSimulator({ rateLimits: { test: 1_000_000 } });
    t.after(() => sim.close());
    const write = t.mock.method(ServerResponse.prototype, 'write');
    const socket = connect(Number(new URL(sim.siteUrl).port), '127.0.0.1');
    t.after(() => socket.destroy());
    socket.write(`GET /_simulator/stream HTTP/1.1\r\nHost: ${new URL(sim.siteUrl).host}\r\n\r\n`);
    // The answer's head and first line arrive; after that this client reads nothing.
    await once(socket, 'data');
    socket.pause();
    const streamResponse = write.mock.calls.find((call) => String(call.arguments[0]).startsWith('retry:'))!.this as ServerResponse;
    let closed = false;
    streamResponse.once('close', () => (closed = true));
    let backlog = 0;
    // Each API call is an api_call event of about 8 KB (its path is in it): 4,000 of them are 32 MB,
    // far more than the sockets' kernel buffers hold.
    const pad = 'p'.repeat(8_000);
    for (let i = 0; i < 4_000 && !closed; i++) {
      await (await fetch(`${sim.siteUrl}/api/v1/entitlements?user_id=usr_ada&pad=${pad}`, { headers: { 'x-api-key': sim.testApiKey } })).arrayBuffer();
      backlog = Math.max(backlog, streamResponse.writableLength);
    }
    assert.ok(closed, `the stream was still open with ${streamResponse.writableLength} bytes waiting for its reader`);
    assert.ok(backlog <= STREAM_BACKLOG_BYTES + 16_384, `held ${backlog} unsent bytes`);
  });

  it('closes with an event stream open while a webhook retry waits: the delivery it stops is not written to the ended stream', async (t) => {
    const crashes: unknown[] = [];
    const crash = (error: unknown) => crashes.push(error);
    process.on('uncaughtException', crash);
    const controller = new AbortController();
    t.signal.addEventListener('abort', () => controller.abort(), { once: true });
    try {
      const failing = createServer((_req, res) => res.writeHead(500).end());
      failing.listen(0, '127.0.0.1');
      await once(failing, 'listening');
      t.after(() => failing.close());
      const { port } = failing.address() as AddressInfo;
      const closing = await startSimulator({ port: 0, webhookUrl: `http://127.0.0.1:${port}/hooks`, webhookBackoffMs: 2_000 });
      const response = await fetch(`${closing.siteUrl}/_simulator/stream`, { signal: controller.signal });
      assert.equal(response.status, 200);
      // The first attempt fails; the delivery then waits 2 s for its retry.
      const delivery = closing.sendEvent('subscription.created', { user_id: 'usr_ada', plan: 'pro_annual' });
      await once(failing, 'request');
      await closing.close();
      assert.equal((await delivery).outcome, 'failed');
      await eventLoopTurns(3); // a write after the end fails on a later tick
      assert.deepEqual(crashes, []);
    } finally {
      controller.abort();
      process.off('uncaughtException', crash);
    }
  });

  it('answers HEAD as GET without the body: pages, the API, the control API and the event stream', async () => {
    for (const [path, type, headers] of [
      ['/dashboard', /^text\/html/, {}],
      ['/api/v1/whoami?user_id=usr_ada', /^application\/json/, { 'x-api-key': sim.testApiKey }],
      ['/_simulator/state', /^application\/json/, {}],
      ['/_simulator/stream', /^text\/event-stream/, {}],
    ] as const) {
      const response = await send(sim, 'HEAD', path, undefined, headers);
      assert.deepEqual([response.status, type.test(response.headers.get('content-type') ?? ''), await response.text()], [200, true, ''], path);
    }
    const refused = await send(sim, 'HEAD', '/_simulator/users/usr_ada/entitlement');
    assert.deepEqual([refused.status, refused.headers.get('allow')], [405, 'PUT, DELETE'], 'HEAD only where GET is');
  });

  it('refuses other origins and answers unknown routes and methods with JSON errors', async () => {
    await apiError(await send(sim, 'GET', '/_simulator/state', undefined, { origin: 'https://evil.example' }), 403, 'forbidden');
    await apiError(await send(sim, 'POST', '/_simulator/events', { event: 'user.revoked', data: { user_id: 'usr_ada' } }, { origin: 'http://127.0.0.1:1' }), 403);
    await apiError(await send(sim, 'GET', '/_simulator/nothing'), 404, 'not_found');
    await apiError(await send(sim, 'GET', '/nothing'), 404, 'not_found');
    await apiError(await send(sim, 'DELETE', '/_simulator/state'), 405, 'method_not_allowed');
    await apiError(await send(sim, 'GET', '/_simulator/events'), 405);
    const patch = await send(sim, 'PATCH', '/oauth/authorize');
    assert.equal(patch.headers.get('allow'), 'GET, POST, HEAD', 'HEAD is listed where GET is');
    await apiError(patch, 405);
    // A GET of an entitlement route neither reads nor deletes it: it is PUT or DELETE only.
    const kept = sim.entitlement('usr_katherine');
    const get = await send(sim, 'GET', '/_simulator/users/usr_katherine/entitlement');
    assert.equal(get.headers.get('allow'), 'PUT, DELETE');
    await apiError(get, 405, 'method_not_allowed');
    assert.deepEqual(sim.entitlement('usr_katherine'), kept);
    const avatarPost = await send(sim, 'POST', '/avatars/usr_ada.svg');
    assert.equal(avatarPost.headers.get('allow'), 'GET, HEAD');
    await apiError(avatarPost, 405, 'method_not_allowed');
    await apiError(await send(sim, 'POST', '/_simulator/events', 'null'), 400);
    await apiError(await send(sim, 'POST', '/_simulator/events', { event: 42 }), 400, 'invalid_request');
    await apiError(await send(sim, 'POST', '/_simulator/events', { event: 'user.revoked', data: [] }), 400, 'invalid_request');
    await apiError(await send(sim, 'POST', '/_simulator/events', { event: 'user.revoked', data: { user_id: 'usr_nobody' } }), 404, 'user_not_found');
  });
});

describe('simulator: robustness', () => {
  it('survives a batch of malformed requests and still serves', async () => {
    const sim = await startTestSimulator();
    try {
      const host = new URL(sim.siteUrl).host;
      const statuses = await Promise.all([
        raw(sim, `BREW /coffee HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
        raw(sim, `GET /api/v1/whoami HTTP/1.1\r\nHost: evil.example\r\n\r\n`),
        raw(sim, `GET /api/v1/whoami HTTP/1.1\r\n\r\n`),
        raw(sim, `GET http://evil.example/_simulator/state HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
        raw(sim, `GET * HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
        raw(sim, `GET /%%%/..%2f..%2f HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
        raw(sim, `GET /avatars/%ZZ.svg HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
        raw(sim, `PUT /_simulator/users/%E0%A4%A/entitlement HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`),
        raw(sim, `POST /api/oauth/token HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{`),
        raw(sim, `POST /_simulator/events HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n\xff\xfe\x00{]`),
        raw(sim, `GARBAGE\r\n\r\n`),
        raw(sim, Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00])),
        raw(sim, `GET /oauth/authorize?client_id=%ZZ&redirect_uri=%E0 HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
        raw(sim, `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
        // A target that names a host no URL parser takes: a 400 of the simulator's own, not its 500.
        raw(sim, `GET //[/_simulator/state HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
      ]);
      const codes = statuses.map((line) => Number(line.split(' ')[1]));
      // Node itself refuses an HTTP/1.1 request without Host (400); the adapter a target that is no path (`*`).
      assert.deepEqual(codes, [400, 421, 400, 400, 400, 404, 404, 400, 413, 400, 400, 400, 400, 431, 400]);
      // What is not even HTTP is answered with the same JSON error body as the rest, then closed.
      for (const [request, status, message] of [
        ['GARBAGE\r\n\r\n', 400, 'The request is not valid HTTP.'],
        [`GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 431, 'The request headers are too large.'],
      ] as const) {
        const whole = await new Promise<string>((resolve) => {
          let answer = '';
          const socket = connect(Number(new URL(sim.siteUrl).port), '127.0.0.1');
          socket.on('data', (chunk) => (answer += chunk.toString('latin1'))).on('close', () => resolve(answer)).on('error', () => resolve(answer));
          socket.write(request);
        });
        const [head = '', body = ''] = whole.split('\r\n\r\n');
        assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} [^]*\\r\\ncontent-type: application/json\\r\\n`), head);
        assert.deepEqual(JSON.parse(body), { error: { code: 'invalid_request', message } });
        assert.match(head, new RegExp(`\\r\\ncontent-length: ${Buffer.byteLength(body)}(\\r\\n|$)`), 'the length of the body sent');
      }

      // A body that is too big without a Content-Length (chunked) is cut off too.
      const huge = await fetch(`${sim.siteUrl}/_simulator/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(`{"event":"${'x'.repeat(200_000)}"}`));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      await apiError(huge, 413, 'payload_too_large');

      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD']) {
        for (const path of ['/', '/api/v1/', '/api/oauth/token', '/_simulator/', '/_simulator/users//entitlement', '/avatars/usr_nobody.svg', '/dashboard/x']) {
          const response = await fetch(`${sim.siteUrl}${path}`, { method, redirect: 'manual' });
          assert.ok(response.status < 500, `${method} ${path} → ${response.status}`);
        }
      }
      const alive = await fetch(`${sim.baseUrl}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': sim.testApiKey } });
      assert.equal(alive.status, 200);
    } finally {
      await sim.close();
    }
  });
});

describe('simulator: on port 80', () => {
  it('takes the origin and Host headers without :80, as browsers send them', async (t) => {
    // Listening on port 80 needs privileges: the server listens on a free port and says it is 80.
    let realPort = 0;
    const address = t.mock.method(Server.prototype, 'address', function (this: Server) {
      const real = NetServer.prototype.address.call(this) as AddressInfo;
      realPort = real.port;
      return { ...real, port: 80 };
    });
    const sim = await startTestSimulator();
    address.mock.restore();
    try {
      assert.equal(sim.siteUrl, 'http://127.0.0.1');
      for (const host of ['127.0.0.1', '127.0.0.1:80', 'localhost']) {
        const status = await new Promise<string>((resolve, reject) => {
          const socket = connect(realPort, '127.0.0.1');
          let answer = '';
          socket.on('data', (chunk) => (answer += chunk.toString('latin1'))).on('close', () => resolve(answer.split('\r\n')[0]!)).on('error', reject);
          socket.end(`GET /api/v1/whoami?user_id=usr_ada HTTP/1.1\r\nHost: ${host}\r\nX-API-Key: ${sim.testApiKey}\r\nConnection: close\r\n\r\n`);
        });
        assert.equal(status, 'HTTP/1.1 200 OK', host);
      }
    } finally {
      await sim.close();
    }
  });
});

describe('simulator: a client that leaves mid-body', () => {
  it('is no internal error: nothing logged, and the next request is served', async (t) => {
    const sim = await startTestSimulator();
    const logged = t.mock.method(console, 'error', () => undefined);
    try {
      const { host, port } = new URL(sim.siteUrl);
      for (const path of ['/_simulator/events', '/api/oauth/token']) {
        const socket = connect(Number(port), '127.0.0.1');
        socket.on('error', () => undefined);
        // "100 Continue" comes as the simulator starts on the request: then part of the body, and the client is gone.
        socket.write(`POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n`);
        const [interim] = await once(socket, 'data');
        assert.match(String(interim), /^HTTP\/1\.1 100 Continue/);
        socket.write('{"event":');
        socket.destroy();
        await once(socket, 'close');
      }
      const alive = await fetch(`${sim.siteUrl}/_simulator/state`);
      assert.equal(alive.status, 200);
      assert.deepEqual(logged.mock.calls.map((call) => String(call.arguments[0])), []);
    } finally {
      await sim.close();
    }
  });
});

describe('simulator: startSimulator options', () => {
  it('makes up credentials with the right prefixes when none are given, and defaults from the app URL', async () => {
    const sim = await startSimulator({ appUrl: 'http://127.0.0.1:5999/embed' });
    try {
      assert.match(sim.testApiKey, /^test_/);
      assert.match(sim.liveApiKey, /^live_/);
      assert.ok(sim.clientSecret.length >= 32);
      assert.match(sim.siteUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(sim.baseUrl, `${sim.siteUrl}/api/v1`);
      assert.deepEqual(sim.state().config, {
        app_url: 'http://127.0.0.1:5999/embed',
        webhook_url: 'http://127.0.0.1:5999/api/marketplace/webhooks',
        redirect_uris: ['http://127.0.0.1:5999/api/marketplace/oauth/callback'],
      });
      const other = await startSimulator();
      assert.notEqual(other.clientSecret, sim.clientSecret);
      await other.close();
    } finally {
      await sim.close();
    }
  });

  /** Rejects with ERR_CONFIG; a simulator that starts all the same is closed, so a failure cannot hang the run. */
  async function refused(options: SimulatorOptions, message: RegExp): Promise<void> {
    let started: Simulator | undefined;
    try {
      await assert.rejects(
        (async () => {
          started = await startSimulator(options);
        })(),
        { name: 'MarketplaceKitError', code: 'ERR_CONFIG', message },
        JSON.stringify(options),
      );
    } finally {
      await started?.close();
    }
  }

  it('refuses API keys with the wrong prefix and bad URLs with ERR_CONFIG, naming the option as written', async () => {
    // The key itself is never shown: a developer may have pasted a real one.
    await refused({ testApiKey: 'live_realLookingSecret123' }, /^startSimulator: testApiKey must start with test_$/);
    await refused({ liveApiKey: 'test_realLookingSecret123' }, /^startSimulator: liveApiKey must start with live_$/);
    await refused({ testApiKey: 42 as unknown as string }, /^startSimulator: testApiKey must start with test_$/);
    // Not a string, even one that reads as a key: the simulator would compare keys with it.
    await refused({ testApiKey: ['test_abc'] as unknown as string }, /^startSimulator: testApiKey must start with test_$/);
    // A prefix alone is not a key.
    await refused({ testApiKey: 'test_' }, /^startSimulator: testApiKey must go on after test_/);
    await refused({ liveApiKey: 'live_' }, /^startSimulator: liveApiKey must go on after live_/);
    await refused({ redirectUris: ['http://127.0.0.1:3000/cb', 'not a url'] }, /^startSimulator: redirectUris\[1\] must be an absolute http\(s\) URL without a fragment, got "not a url"$/);
    await refused({ redirectUris: 'http://127.0.0.1:3000/cb' as unknown as string[] }, /^startSimulator: redirectUris must be an array of URLs, got "http:/);
    await refused({ appUrl: 'not a url' }, /^startSimulator: appUrl must be an absolute http\(s\) URL/);
    await refused({ appUrl: 'ftp://x/' }, /^startSimulator: appUrl must/);
    await refused({ webhookUrl: 'http://127.0.0.1:3000/hooks#x' }, /^startSimulator: webhookUrl must be an absolute http\(s\) URL without a fragment/);
    await refused({ appId: 'my-app' }, /^startSimulator: appId must look like app_<id>, got "my-app"$/);
    // A blank credential (an unset variable) is refused, not used or replaced by a made-up one.
    await refused({ clientId: '' }, /^startSimulator: clientId must be a non-empty string/);
    await refused({ clientSecret: ' ' }, /clientSecret must be a non-empty string/);
    await refused({ webhookSecret: '' }, /webhookSecret must be a non-empty string/);
  });

  it('refuses numeric options that would never deliver, never expire or never allow a call', async () => {
    const cases: Array<[SimulatorOptions, RegExp]> = [
      [{ webhookMaxAttempts: 0 }, /webhookMaxAttempts must be a whole number of at least 1, got 0/],
      [{ webhookMaxAttempts: 1.5 }, /webhookMaxAttempts/],
      [{ webhookBackoffMs: -1 }, /webhookBackoffMs must be a whole number of at least 0/],
      [{ webhookTimeoutMs: Number.NaN }, /webhookTimeoutMs .*got NaN/],
      [{ codeTtlSeconds: 0 }, /codeTtlSeconds/],
      [{ accessTokenTtlSeconds: -60 }, /accessTokenTtlSeconds/],
      [{ rateLimits: { test: 0 } }, /rateLimits\.test/],
      [{ rateLimits: { windowMs: Infinity } }, /rateLimits\.windowMs/],
      // A string is quoted: `got 5` would hide that it is one (an unparsed process.env value).
      [{ rateLimits: { bearer: '5' as unknown as number } }, /rateLimits\.bearer .*got "5"$/],
    ];
    for (const [options, message] of cases) await refused(options, message);
  });

  it('refuses a port that is not a whole number from 0 to 65535 before it listens', async () => {
    for (const port of ['abc', -1, 70000, 65536, 1.5, Number.NaN, '4010']) {
      await refused({ port: port as number }, /^startSimulator: port must be a whole number from 0 to 65535, got /);
    }
    await refused({ port: 'abc' as unknown as number }, /got "abc"$/);
  });

  /**
   * Counts the servers started from here on that still listen: a failed start must leave none
   * behind, or the process would never exit.
   */
  function serversOf(t: TestContext): () => number {
    const listen = t.mock.method(NetServer.prototype, 'listen');
    return () => listen.mock.calls.filter((call) => (call.this as NetServer).listening).length;
  }

  it('refuses options it would call or read only after listening, before it listens', async (t) => {
    const listening = serversOf(t);
    const cases: Array<[unknown, RegExp]> = [
      [{ clock: 5 }, /^startSimulator: clock must be \{ now, sleep \} or a function returning milliseconds since the epoch, got 5$/],
      [{ clock: { now: () => 0 } }, /^startSimulator: clock must be \{ now, sleep \} or a function returning milliseconds since the epoch, got an object without both$/],
      [{ clock: () => '2026-11-21' }, /^startSimulator: clock\(\) must return milliseconds since the epoch, got "2026-11-21"$/],
      [{ clock: () => Number.NaN }, /^startSimulator: clock\(\) must return .*got NaN$/],
      [{ hostBundle: 5 }, /^startSimulator: hostBundle must be a file path or a file: URL, got 5$/],
      [{ hostBundle: new URL('https://cdn.example/host.js') }, /^startSimulator: hostBundle must be a file path or a file: URL/],
      // A file the developer named must be there at start (the package's own bundle need not: see the dashboard tests).
      [{ hostBundle: '/nonexistent/marketplace-host.js' }, /^startSimulator: hostBundle must be an existing file, got "\/nonexistent\/marketplace-host\.js": there is none \(or it is a directory\)$/],
      [{ hostBundle: 'no-such-dir/host.js' }, new RegExp(`^startSimulator: hostBundle must be an existing file, got "no-such-dir/host\\.js" \\(${process.cwd().replace(/[.]/g, '\\.')}/no-such-dir/host\\.js\\)`)],
      [{ hostBundle: new URL('.', import.meta.url) }, /^startSimulator: hostBundle must be an existing file, got "file:\/\/.*\/test\/node\/": there is none \(or it is a directory\)$/],
      [{ appName: 42 }, /^startSimulator: appName must be a non-empty string$/],
      [{ appName: '' }, /^startSimulator: appName must be a non-empty string$/],
      [{ rateLimits: 5 }, /^startSimulator: rateLimits must be an object such as \{ test: 100 \}, got 5$/],
      [null, /^startSimulator: the options must be an object, got null$/],
      [42, /^startSimulator: the options must be an object, got 42$/],
      // An array has none of the options' names: taken as {}, every one would silently be its default.
      [[{ port: 4010 }], /^startSimulator: the options must be an object, got an array$/],
      [{ rateLimits: [5] }, /^startSimulator: rateLimits must be an object such as \{ test: 100 \}, got an array$/],
      // A blank path (an unset variable) would name the working directory, not a bundle.
      [{ hostBundle: '' }, /^startSimulator: hostBundle must be a file path or a file: URL, got ""$/],
      [{ hostBundle: ' ' }, /^startSimulator: hostBundle must be a file path or a file: URL, got " "$/],
    ];
    for (const [options, message] of cases) await refused(options as SimulatorOptions, message);
    assert.equal(listening(), 0, 'a refused start left a server listening');
  });

  it('closes its server when it fails after listening', async (t) => {
    const listening = serversOf(t);
    let calls = 0;
    // Fine when the options are checked, failing once the simulator is listening.
    const clock = () => {
      calls += 1;
      if (calls > 1) throw new Error('clock broke');
      return Date.now();
    };
    await assert.rejects(startSimulator({ clock }), { message: 'clock broke' });
    assert.equal(listening(), 0, 'the failed start left its server listening');
  });

  it('answers a port in use with ERR_CONFIG that keeps the cause and says what to do', async (t) => {
    const holder = createServer();
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const { port } = holder.address() as AddressInfo;
    try {
      const listening = serversOf(t);
      await assert.rejects(startSimulator({ port }), (error: Error & { code?: string }) => {
        assert.equal(error.name, 'MarketplaceKitError');
        assert.equal(error.code, 'ERR_CONFIG');
        assert.equal(error.message, `startSimulator: port ${port} is in use (is another simulator running?): pick another, or port 0 for a free one`);
        assert.equal((error.cause as NodeJS.ErrnoException).code, 'EADDRINUSE');
        return true;
      });
      assert.equal(listening(), 0);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  /** Makes the next listen() fail as the system would, with `code` (no privileges are needed to test EACCES). */
  function listenFailsWith(t: TestContext, code: string): void {
    t.mock.method(NetServer.prototype, 'listen', function (this: NetServer) {
      const error = Object.assign(new Error(`listen ${code}: refused by the test 127.0.0.1:80`), { code, syscall: 'listen' });
      process.nextTick(() => this.emit('error', error));
      return this;
    });
  }

  it('answers a port that needs privileges with ERR_CONFIG that keeps the cause and says what to do', async (t) => {
    listenFailsWith(t, 'EACCES');
    await assert.rejects(startSimulator({ port: 80 }), (error: Error & { code?: string }) => {
      assert.equal(error.name, 'MarketplaceKitError');
      assert.equal(error.code, 'ERR_CONFIG');
      assert.equal(error.message, 'startSimulator: port 80 needs privileges this process lacks (below 1024, it usually does): pick a port from 1024 up, or port 0 for a free one');
      assert.equal((error.cause as NodeJS.ErrnoException).code, 'EACCES');
      return true;
    });
  });

  it('answers any other failure to listen with ERR_CONFIG naming the address and the cause', async (t) => {
    listenFailsWith(t, 'EADDRNOTAVAIL');
    await assert.rejects(startSimulator({ port: 4999 }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'ERR_CONFIG');
      assert.equal(error.message, 'startSimulator: cannot listen on 127.0.0.1:4999: listen EADDRNOTAVAIL: refused by the test 127.0.0.1:80');
      assert.equal((error.cause as NodeJS.ErrnoException).code, 'EADDRNOTAVAIL');
      return true;
    });
  });

  it('validates what is set from code', async () => {
    const sim = await startTestSimulator();
    try {
      assert.throws(() => sim.configure({ webhook_url: 'ftp://x/' }), { code: 'ERR_CONFIG', message: /^sim\.configure: webhook_url must be/ });
      // Undefined is not given: the URL set before stays.
      const { webhook_url } = sim.state().config;
      sim.configure({ app_url: undefined, webhook_url: undefined, redirect_uris: undefined });
      assert.equal(sim.state().config.webhook_url, webhook_url);
      // What the simulator hands out are copies: changing them changes nothing behind its checks.
      sim.entitlement('usr_ada')!.features.push('smuggled');
      sim.state().config.redirect_uris.push('https://evil.example/callback');
      sim.users[0]!.name = 'Someone else';
      assert.ok(!sim.entitlement('usr_ada')!.features.includes('smuggled'));
      assert.ok(!sim.state().config.redirect_uris.includes('https://evil.example/callback'));
      assert.notEqual(sim.state().users[0]!.name, 'Someone else');
      assert.throws(() => sim.setEntitlement('usr_ada', { ...sim.entitlement('usr_ada')!, expires_at: 'soon' }), {
        code: 'ERR_INVALID_INPUT',
        message: /Invalid entitlement at expires_at/,
      });
      assert.throws(() => sim.setEntitlement('usr_ada', { ...sim.entitlement('usr_ada')!, expires_at: '2030-01-01T00:00:00.5Z' }), {
        code: 'ERR_INVALID_INPUT',
        message: 'Invalid entitlement at expires_at: the marketplace sends YYYY-MM-DDThh:mm:ssZ, whole seconds in UTC',
      });
      sim.setEntitlement('usr_ada', { ...sim.entitlement('usr_ada')!, expires_at: '2030-01-01T00:00:00Z' });
      assert.equal(sim.entitlement('usr_ada')?.expires_at, '2030-01-01T00:00:00Z');
      assert.throws(() => sim.setEntitlement('usr_nobody', null), { code: 'ERR_INVALID_INPUT', message: /no user usr_nobody/ });
      assert.throws(() => sim.entitlement('usr_nobody'), { code: 'ERR_INVALID_INPUT', message: /no user usr_nobody/ }, 'not taken for a user without a plan');
      // Another user's or another app's entitlement is no entitlement of this user.
      const grace = sim.entitlement('usr_grace')!;
      assert.throws(() => sim.setEntitlement('usr_ada', grace), { code: 'ERR_INVALID_INPUT', message: /must have user_id usr_ada and app_id/ });
      assert.throws(() => sim.setEntitlement('usr_ada', { ...grace, user_id: 'usr_ada', app_id: 'app_someone_else' }), { code: 'ERR_INVALID_INPUT' });
      await assert.rejects(sim.contextToken('usr_nobody'), { code: 'ERR_INVALID_INPUT', message: /no user usr_nobody/ });
      // sim.sendEvent refuses what POST /_simulator/events answers 4xx for, as a kit error: never delivered.
      const refused = { name: 'MarketplaceKitError', code: 'ERR_INVALID_INPUT' };
      await assert.rejects(sim.sendEvent('user.revoked', { user_id: 'usr_nobody' }), { ...refused, message: 'No user usr_nobody.' });
      await assert.rejects(sim.sendEvent('subscription.created', { user_id: 'usr_ada', plan: 7 }), refused);
      await assert.rejects(sim.sendEvent(42 as unknown as string, {}), { ...refused, message: /^event must be a non-empty string/ });
      await assert.rejects(sim.sendEvent('user.authorized', null as unknown as Record<string, unknown>), { ...refused, message: 'data must be an object.' });
      assert.equal(sim.state().deliveries.length, 0);
      assert.throws(() => sim.subscribe(undefined as unknown as () => void), { name: 'MarketplaceKitError', code: 'ERR_CONFIG' });
      const whoami = await fetch(`${sim.baseUrl}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': sim.testApiKey } });
      assert.equal(whoami.status, 200, 'the refused listener was not kept');
      sim.setEntitlement('usr_ada', null);
      assert.equal(sim.entitlement('usr_ada'), null);
    } finally {
      await sim.close();
    }
  });

  it('hands out copies in events and outcomes too: changing them changes nothing it serves', async () => {
    const sim = await startTestSimulator();
    try {
      const heard: SimulatorEvent[] = [];
      const stop = sim.subscribe((event) => void heard.push(event));
      const outcome = await sim.sendEvent('subscription.created', { user_id: 'usr_ada', plan: 'pro_monthly' });
      stop();
      outcome.entitlement!.features.push('smuggled');
      for (const event of heard) if (event.type === 'entitlement') event.data.entitlement?.features.push('smuggled');
      assert.ok(heard.some((event) => event.type === 'entitlement'));
      const served = (await (await fetch(`${sim.baseUrl}/entitlements?user_id=usr_ada`, { headers: { 'x-api-key': sim.testApiKey } })).json()) as Entitlement;
      assert.ok(!served.features.includes('smuggled'));
    } finally {
      await sim.close();
    }
  });
});

describe('simulator: sim.sendEvent with data JSON cannot hold', () => {
  it('refuses it with ERR_INVALID_INPUT before the dashboard stream hears of it (which would throw, uncaught)', async () => {
    const sim = await startTestSimulator();
    const stream = new AbortController();
    try {
      const open = await fetch(`${sim.siteUrl}/_simulator/stream`, { signal: stream.signal });
      assert.equal(open.status, 200);
      const cyclic: Record<string, unknown> = { user_id: 'usr_ada' };
      cyclic.self = cyclic;
      for (const data of [{ amount: 1n }, cyclic]) {
        await assert.rejects(sim.sendEvent('custom.event', data), { name: 'MarketplaceKitError', code: 'ERR_INVALID_INPUT', message: /^data must be JSON: / });
      }
      assert.equal(sim.state().deliveries.length, 0);
    } finally {
      stream.abort();
      await sim.close();
    }
  });
});

describe('simulator: HEAD of a page on another of its hosts', () => {
  it('is sent to the 127.0.0.1 origin as GET is (302), not answered there', async () => {
    const sim = await startTestSimulator();
    try {
      const port = new URL(sim.siteUrl).port;
      for (const method of ['GET', 'HEAD']) {
        const answer = await rawRequest(sim.siteUrl, { method, path: '/dashboard?user=usr_ada', headers: { host: `localhost:${port}` } });
        assert.deepEqual([answer.status, answer.headers.location], [302, `${sim.dashboardUrl}?user=usr_ada`], method);
      }
    } finally {
      await sim.close();
    }
  });
});
