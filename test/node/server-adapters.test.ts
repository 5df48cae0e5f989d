import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect as connectHttp2, createServer as createHttp2Server, type OutgoingHttpHeaders } from 'node:http2';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import express from 'express';
import {
  AccessDeniedError,
  MarketplaceApiError,
  MarketplaceKitError,
  applyEmbedPageHeaders,
  createAppBackend,
  earlyLaunchScript,
  embedPageHeaders,
  frameAncestors,
  signContextToken,
  signWebhookBody,
  toErrorResponse,
  toExpressMiddleware,
  toNodeHandler,
  type AppBackend,
  type FetchHandler,
  type WebhookDelivery,
} from '../../src/server/index.js';
import { safeReturnTo } from '../../src/server/lib/return-to.js';
import { requestUrl } from '../../src/server/adapters/node-request.js';
import { createBackendClient } from '../../src/runtime/backend.js';
import { EARLY_LAUNCH_KEY } from '../../src/shared/early-launch.js';
import { SessionResponse } from '../../src/shared/schemas.js';
import {
  backendOptions,
  CLIENT_ID,
  CLIENT_SECRET,
  DASHBOARD,
  USER,
  WEBHOOK_SECRET,
  startFakeMarketplace,
  type FakeMarketplace,
} from '../support/server-http.js';
import { HANG_MS, eventLoopTurns, steadyValue, within } from '../support/waiting.js';

let market: FakeMarketplace;
before(async () => {
  market = await startFakeMarketplace();
});
after(() => market.close());

function makeBackend(events: WebhookDelivery[]): AppBackend {
  return createAppBackend({
    ...backendOptions(market.siteUrl),
    onEvent: (delivery) => {
      events.push(delivery);
    },
  });
}

async function listen(app: express.Express): Promise<{ origin: string; server: Server }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function close(server: Server) {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

const webhook = (origin: string, path = '/webhooks') => {
  const body = JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data: { user_id: 'usr_1', note: 'ünïcödé' } });
  return fetch(`${origin}/api/marketplace${path}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) },
  });
};

/** A request with `path` sent exactly as written (fetch would resolve dot segments first), and a body whatever the method. */
const rawRequest = (origin: string, method: string, path: string, body: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; body: string; allow?: string }>((resolve, reject) => {
    // Node frames the body of a GET or DELETE only when told its length.
    const length = 'transfer-encoding' in headers ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const request = httpRequest(`${origin}${path}`, { method, path, headers: { 'content-type': 'application/json', ...length, ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: response.statusCode ?? 0, body: text, ...(response.headers.allow ? { allow: response.headers.allow } : {}) }));
    });
    request.on('error', reject).end(body);
  });
const rawPost = (origin: string, path: string, body: string) => rawRequest(origin, 'POST', path, body);

const newSession = async (origin: string) => {
  const context = await signContextToken({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: market.siteUrl, host: DASHBOARD, appId: 'app_1', user: USER });
  return fetch(`${origin}/api/marketplace/session`, {
    method: 'POST',
    body: JSON.stringify({ context, host: DASHBOARD }),
    headers: { 'content-type': 'application/json' },
  });
};

describe('toExpressMiddleware with a real Express app', () => {
  it('serves the kit routes, passes other paths on, and protects app routes with requireEntitlement', async () => {
    const events: WebhookDelivery[] = [];
    const backend = makeBackend(events);
    const app = express();
    app.use(toExpressMiddleware(backend));
    app.get('/api/export', async (req, res) => {
      const request = new Request(`http://x${req.url}`, { headers: { authorization: req.get('authorization') ?? '' } });
      try {
        const { session } = await backend.requireEntitlement(request, { feature: 'export' });
        res.json({ exported_for: session.userId });
      } catch (error) {
        const answer = toErrorResponse(error);
        res.status(answer.status).json(await answer.json());
      }
    });
    const { origin, server } = await listen(app);
    try {
      assert.equal((await webhook(origin)).status, 200);
      assert.equal(events[0]!.data.note, 'ünïcödé');

      const session = SessionResponse.parse(await (await newSession(origin)).json());
      const exported = await fetch(`${origin}/api/export`, { headers: { authorization: `Bearer ${session.session.token}` } });
      assert.deepEqual(await exported.json(), { exported_for: 'usr_1' });
      const refused = await fetch(`${origin}/api/export`);
      assert.equal(refused.status, 401);
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'ERR_SESSION_MISSING');

      const elsewhere = await fetch(`${origin}/api/marketplace-other`);
      assert.equal(elsewhere.status, 404);
      assert.match(await elsewhere.text(), /Cannot GET/, 'Express answered: the middleware called next()');
    } finally {
      await close(server);
    }
  });

  it('after express.json(): the session route still works, the webhook route fails with ERR_WEBHOOK_BODY_PARSED, told to onError', async () => {
    const events: WebhookDelivery[] = [];
    const reported: string[] = [];
    const app = express();
    app.use(express.json());
    app.use(
      toExpressMiddleware(makeBackend(events), {
        onError: (error, request) => void reported.push(`${request.method} ${new URL(request.url).pathname}: ${(error as { code?: string }).code}`),
      }),
    );
    const { origin, server } = await listen(app);
    try {
      assert.equal((await newSession(origin)).status, 200);
      const hook = await webhook(origin);
      assert.equal(hook.status, 500);
      const { error } = (await hook.json()) as { error: { code: string; message: string } };
      assert.equal(error.code, 'ERR_WEBHOOK_BODY_PARSED');
      assert.match(error.message, /express\.json\(\).*raw bytes.*express\.raw\(.*in NestJS: create the app with \{ rawBody: true \}\)$/s);
      // Spellings of the same route that the router accepts: the check must see them too.
      for (const path of ['/webhooks/', '/webhooks//']) {
        const other = await webhook(origin, path);
        assert.deepEqual([path, other.status, ((await other.json()) as { error: { code: string } }).error.code], [path, 500, 'ERR_WEBHOOK_BODY_PARSED']);
      }
      const dotted = await rawPost(origin, '/api/marketplace/x/../webhooks', '{"event":"user.authorized"}');
      assert.deepEqual([dotted.status, dotted.body.includes('ERR_WEBHOOK_BODY_PARSED')], [500, true]);
      assert.equal(events.length, 0);
      // The app's set-up mistake reaches the logs, once per answer; the session route reported nothing.
      assert.deepEqual(reported, [
        'POST /api/marketplace/webhooks: ERR_WEBHOOK_BODY_PARSED',
        'POST /api/marketplace/webhooks/: ERR_WEBHOOK_BODY_PARSED',
        'POST /api/marketplace/webhooks//: ERR_WEBHOOK_BODY_PARSED',
        'POST /api/marketplace/webhooks: ERR_WEBHOOK_BODY_PARSED',
      ]);
    } finally {
      await close(server);
    }
  });

  // Express 4's parsers (body-parser 1.x: express.json, urlencoded, raw, text) set req.body = {}
  // first, then leave a request of another content type unread; Express 5's leave req.body alone.
  const express4Parser: express.RequestHandler = (req, _res, next) => {
    req.body = req.body || {};
    next();
  };
  for (const [name, parser] of [
    ['after express.raw(): the raw Buffer is verified', express.raw({ type: 'application/json' })],
    ["behind Express 4's parsers, which set req.body = {} on a request they leave unread: the body is read as sent", express4Parser],
  ] as const) {
    it(name, async () => {
      const events: WebhookDelivery[] = [];
      const app = express();
      app.use(parser);
      app.use(toExpressMiddleware(makeBackend(events)));
      const { origin, server } = await listen(app);
      try {
        assert.equal((await webhook(origin)).status, 200);
        assert.equal(events.length, 1);
        assert.equal((await newSession(origin)).status, 200);
      } finally {
        await close(server);
      }
    });
  }

  it('works mounted on a path prefix (req.url is rewritten, originalUrl is not)', async () => {
    const events: WebhookDelivery[] = [];
    const app = express();
    const reported: unknown[] = [];
    app.use('/api', toExpressMiddleware(makeBackend(events), { onError: (error) => void reported.push(error) }));
    const { origin, server } = await listen(app);
    try {
      assert.equal((await webhook(origin)).status, 200);
      // Mounted at a prefix of basePath is right: a stray path under the mount is not a set-up mistake.
      const stray = await fetch(`${origin}/api/api/marketplace/session`);
      assert.deepEqual([stray.status, reported], [404, []]);
    } finally {
      await close(server);
    }
  });

  it("mounted under a path its basePath lacks, says so (ERR_CONFIG, told to onError) instead of Express's 404", async () => {
    const reported: string[] = [];
    const onError = (error: unknown) => void reported.push((error as { code?: string }).code ?? String(error));
    const app = express();
    app.use('/mp', toExpressMiddleware(makeBackend([]), { onError }));
    const router = express.Router();
    router.use(toExpressMiddleware(makeBackend([]), { onError }));
    app.use('/nested', router);
    const fixed = express.Router();
    fixed.use(toExpressMiddleware(createAppBackend({ ...backendOptions(market.siteUrl), basePath: '/fixed/api/marketplace' })));
    app.use('/fixed', fixed);
    const { origin, server } = await listen(app);
    try {
      for (const mount of ['/mp', '/nested']) {
        const answer = await fetch(`${origin}${mount}/api/marketplace/session`, { method: 'POST', body: '{}' });
        const { error } = (await answer.json()) as { error: { code: string; message: string } };
        assert.deepEqual([answer.status, error.code], [500, 'ERR_CONFIG'], mount);
        assert.match(error.message, new RegExp(`mounted under ${mount}.*basePath .*must be "${mount}/api/marketplace"`));
      }
      assert.deepEqual(reported, ['ERR_CONFIG', 'ERR_CONFIG']);
      assert.equal((await fetch(`${origin}/mp/elsewhere`)).status, 404, "other paths under the mount still go to next()");
      assert.equal((await newSession(`${origin}/fixed`)).status, 200, 'a basePath with the mount in it works');
    } finally {
      await close(server);
    }
  });

  it('a body a middleware read and did not keep: 500 ERR_CONFIG on the session route, not an empty body', async () => {
    const reported: string[] = [];
    const app = express();
    app.use(async (req, _res, next) => {
      for await (const chunk of req) void chunk; // a logger that reads the stream
      next();
    });
    app.use(toExpressMiddleware(makeBackend([]), { onError: (error) => void reported.push((error as { code?: string }).code ?? '') }));
    const { origin, server } = await listen(app);
    try {
      const answer = await newSession(origin);
      const { error } = (await answer.json()) as { error: { code: string; message: string } };
      assert.deepEqual([answer.status, error.code], [500, 'ERR_CONFIG']);
      assert.match(error.message, /^A middleware before toExpressMiddleware read the request body before the kit could/);
      const hook = await webhook(origin);
      assert.deepEqual([hook.status, ((await hook.json()) as { error: { code: string } }).error.code], [500, 'ERR_WEBHOOK_BODY_PARSED']);
      // A route that reads no body loses nothing: a GET or DELETE with one is answered as usual.
      const read = await rawRequest(origin, 'GET', '/api/marketplace/session', '{}');
      const ended = await rawRequest(origin, 'DELETE', '/api/marketplace/session', '{}');
      assert.deepEqual([read.status, ended.status], [401, 204]);
      assert.deepEqual(reported, ['ERR_CONFIG', 'ERR_WEBHOOK_BODY_PARSED']);
    } finally {
      await close(server);
    }
  });

  it('after a parser that kept the raw bytes as req.rawBody (NestJS with rawBody: true), webhooks verify', async () => {
    const events: WebhookDelivery[] = [];
    const app = express();
    // What NestJS's rawBody option does: express.json() with a verify hook that keeps the buffer.
    app.use(express.json({ verify: (req, _res, buf) => void ((req as { rawBody?: Buffer }).rawBody = buf) }));
    app.use(toExpressMiddleware(makeBackend(events)));
    const { origin, server } = await listen(app);
    try {
      const hook = await webhook(origin);
      assert.equal(hook.status, 200, await hook.clone().text());
      assert.deepEqual(events.map((event) => event.data), [{ user_id: 'usr_1', note: 'ünïcödé' }]);
      assert.equal((await newSession(origin)).status, 200);
      const body = JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data: { user_id: 'usr_2' } });
      const tampered = await fetch(`${origin}/api/marketplace/webhooks`, {
        method: 'POST',
        body: body.replace('usr_2', 'usr_3'),
        headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) },
      });
      assert.equal(tampered.status, 401, 'the kept bytes are checked like any body');
    } finally {
      await close(server);
    }
  });

  it('refuses a basePath other than the backend\'s at once, instead of answering every request 404', () => {
    const backend = makeBackend([]);
    assert.throws(() => toExpressMiddleware(backend, { basePath: '/mp' }), { code: 'ERR_CONFIG', message: /"\/mp" differs from the backend's "\/api\/marketplace"/ });
    assert.doesNotThrow(() => toExpressMiddleware(backend, { basePath: '/api/marketplace/' }));
    // A handler of your own has no basePath: the option names it.
    assert.doesNotThrow(() => toExpressMiddleware(async () => new Response('ok'), { basePath: '/mp' }));
  });

  it("refuses a backend at the root, whose router would answer every one of the app's requests", () => {
    const atRoot = createAppBackend({ ...backendOptions(market.siteUrl), basePath: '/' });
    assert.equal(atRoot.basePath, '');
    assert.throws(() => toExpressMiddleware(atRoot), { code: 'ERR_CONFIG', message: /at the root .*basePath such as \/api\/marketplace/ });
    assert.doesNotThrow(() => toNodeHandler(atRoot), 'served on its own, the root is fine');
  });
});

/** A request with a chunked body of `size` bytes (no Content-Length), as a proxy or a streaming client sends it. */
const chunkedPost = (path: string, size: number) => {
  const chunk = Buffer.concat([Buffer.from('4000\r\n'), Buffer.alloc(0x4000, 'a'), Buffer.from('\r\n')]);
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), ...Array.from({ length: Math.ceil(size / 0x4000) }, () => chunk), Buffer.from('0\r\n\r\n')]);
};

/**
 * Sends `requests` one after another on one connection, the last closing it, and gives the status
 * of each answer that came back, then how the connection ended. A server that stops reading a body
 * stalls the connection (the statuses after it never come) or resets it.
 */
const onOneConnection = (port: number, requests: Buffer[]) =>
  new Promise<{ statuses: number[]; end: string }>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const done = (end: string) => {
      socket.destroy();
      resolve({ statuses: [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1])), end });
    };
    socket.setEncoding('latin1').on('data', (data: string) => (text += data));
    socket.on('end', () => done('closed')).on('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    socket.setTimeout(HANG_MS, () => done('stalled'));
    const last = Buffer.from('GET /api/marketplace/nope HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    socket.write(Buffer.concat([...requests, last]));
  });

const FOUR_MB = 4 * 1024 * 1024;

describe('toNodeHandler: a body read before it (Fastify, Koa, a logger)', () => {
  it('answers 500 ERR_WEBHOOK_BODY_PARSED on the webhook route and ERR_CONFIG elsewhere, told to onError; a signed webhook is never called forged', async () => {
    const reported: string[] = [];
    const backendErrors: string[] = [];
    const backend = createAppBackend({ ...backendOptions(market.siteUrl), onError: (error) => void backendErrors.push((error as { code?: string }).code ?? '') });
    const node = toNodeHandler(backend, { onError: (error) => void reported.push((error as { code?: string }).code ?? '') });
    const server = createServer(async (req, res) => {
      if (req.headers['x-read-first'] === '1') for await (const chunk of req) void chunk;
      node(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const readFirst = (path: string, body: string, headers: Record<string, string>) =>
      fetch(`${origin}/api/marketplace${path}`, { method: 'POST', body, headers: { 'x-read-first': '1', 'content-type': 'application/json', ...headers } });
    try {
      const body = JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data: { user_id: 'usr_1' } });
      const hook = await readFirst('/webhooks/', body, { 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) });
      const hookError = ((await hook.json()) as { error: { code: string; message: string } }).error;
      assert.deepEqual([hook.status, hookError.code], [500, 'ERR_WEBHOOK_BODY_PARSED']);
      assert.match(hookError.message, /^Something before toNodeHandler .* read the webhook body before the kit could, and its signature covers the exact raw bytes: give toNodeHandler the request unread$/);
      const session = await readFirst('/session', '{"context":"x","host":"y"}', {});
      assert.deepEqual([session.status, ((await session.json()) as { error: { code: string } }).error.code], [500, 'ERR_CONFIG']);
      assert.deepEqual(reported, ['ERR_WEBHOOK_BODY_PARSED', 'ERR_CONFIG']);
      assert.deepEqual(backendErrors, [], 'the backend never saw them: no signature mismatch reported');
      // Not read first, the same requests reach the backend as usual; a read bodiless request too.
      assert.equal((await fetch(`${origin}/api/marketplace/webhooks`, { method: 'POST', body, headers: { 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) } })).status, 200);
      assert.equal((await fetch(`${origin}/api/marketplace/session`, { method: 'DELETE', headers: { 'x-read-first': '1' } })).status, 204);
      // A DELETE's body is not read by any route: nothing was lost. A chunked POST has no length, so its reading counts.
      const deleted = await rawRequest(origin, 'DELETE', '/api/marketplace/session', '{"x":1}', { 'x-read-first': '1' });
      const chunked = await rawRequest(origin, 'POST', '/api/marketplace/session', '{"context":"x","host":"y"}', { 'x-read-first': '1', 'transfer-encoding': 'chunked' });
      assert.deepEqual([deleted.status, chunked.status, JSON.parse(chunked.body).error.code], [204, 500, 'ERR_CONFIG']);
      assert.deepEqual(reported, ['ERR_WEBHOOK_BODY_PARSED', 'ERR_CONFIG', 'ERR_CONFIG']);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('uses the bytes a framework kept as req.rawBody (Google Cloud Functions, Firebase): webhooks verify, sessions start', async () => {
    const events: WebhookDelivery[] = [];
    const node = toNodeHandler(makeBackend(events));
    const server = createServer(async (req, res) => {
      if (req.headers['x-unread'] === '1') {
        // A rawBody on a stream nobody read is not the body: the kit reads the stream.
        Object.assign(req, { rawBody: Buffer.from('forged') });
        return node(req, res);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      Object.assign(req, { rawBody: Buffer.concat(chunks), body: {} });
      node(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const hook = await webhook(origin);
      assert.equal(hook.status, 200, await hook.clone().text());
      assert.deepEqual(events.map((event) => event.data), [{ user_id: 'usr_1', note: 'ünïcödé' }]);
      const session = await newSession(origin);
      assert.equal(session.status, 200);
      assert.equal(SessionResponse.parse(await session.json()).user.id, USER.id);
      const body = JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data: { user_id: 'usr_2' } });
      const unread = await fetch(`${origin}/api/marketplace/webhooks`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-unread': '1', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) },
      });
      assert.equal(unread.status, 200);
      assert.deepEqual(events.map((event) => event.data.user_id), ['usr_1', 'usr_2']);
    } finally {
      await close(server);
    }
  });
});

describe('adapters: request bodies the handler does not read to the end', () => {
  it('toNodeHandler: a streamed body over the limit gets its 413, and the connection goes on; so it does after a route that reads none', async () => {
    const server = createServer(toNodeHandler(makeBackend([])));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const exchange = await onOneConnection(port, [chunkedPost('/api/marketplace/session', FOUR_MB), chunkedPost('/api/marketplace/nope', FOUR_MB)]);
      assert.deepEqual(exchange, { statuses: [413, 404, 404], end: 'closed' }, 'the rest of each body was read and dropped');
    } finally {
      await close(server);
    }
  });

  it('toExpressMiddleware without a body parser: the same', async () => {
    const app = express();
    app.use(toExpressMiddleware(makeBackend([])));
    const { origin, server } = await listen(app);
    try {
      const exchange = await onOneConnection(Number(new URL(origin).port), [chunkedPost('/api/marketplace/webhooks', FOUR_MB)]);
      assert.deepEqual(exchange, { statuses: [413, 404], end: 'closed' });
    } finally {
      await close(server);
    }
  });

  it('a handler that answers before it has read the body may still read all of it', async () => {
    let reading: Promise<unknown> | undefined;
    let answerSent!: () => void;
    const answered = new Promise<void>((resolve) => (answerSent = resolve));
    const server = createServer(
      toNodeHandler(async (request) => {
        if (request.body === null) return new Response(null, { status: 404 }); // the closing GET
        const reader = request.body.getReader();
        reading = (async () => {
          await answered;
          let size = 0;
          for (let read = await reader.read(); !read.done; read = await reader.read()) size += read.value.byteLength;
          return size;
        })().catch((error: unknown) => error);
        return new Response('answered first');
      }),
    );
    server.on('request', (_req, res) => res.once('finish', answerSent));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const exchange = await onOneConnection((server.address() as AddressInfo).port, [chunkedPost('/upload', FOUR_MB)]);
      assert.deepEqual(exchange, { statuses: [200, 404], end: 'closed' });
      assert.equal(await reading, FOUR_MB);
    } finally {
      await close(server);
    }
  });
});

describe('adapters: methods a Request cannot carry', () => {
  it('answer TRACE 405 as JSON (no silent 500), in both adapters', async () => {
    const reported: unknown[] = [];
    const onError = (error: unknown) => void reported.push(error);
    const node = createServer(toNodeHandler(makeBackend([]), { onError }));
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const app = express();
    app.use(toExpressMiddleware(makeBackend([]), { onError }));
    const viaExpress = await listen(app);
    try {
      for (const origin of [`http://127.0.0.1:${(node.address() as AddressInfo).port}`, viaExpress.origin]) {
        // node:http takes TRACE (TRACK and CONNECT never reach a request handler).
        const answer = await rawRequest(origin, 'TRACE', '/api/marketplace/session', '');
        const { error } = JSON.parse(answer.body) as { error: { code: string } };
        assert.deepEqual([answer.status, error.code, answer.allow], [405, 'ERR_METHOD_NOT_ALLOWED', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'], origin);
        assert.equal((await rawRequest(origin, 'GET', '/api/marketplace/session', '')).status, 401, 'other methods are served as before');
      }
      assert.deepEqual(reported, []);
    } finally {
      await close(node);
      await close(viaExpress.server);
    }
  });
});

describe('adapters: mistakes of the handler', () => {
  it('refuse a missing handler or a bad onError at creation', () => {
    for (const make of [() => toNodeHandler(undefined as unknown as FetchHandler), () => toExpressMiddleware(undefined as unknown as FetchHandler)]) {
      assert.throws(make, { code: 'ERR_CONFIG', message: /needs a handler/ });
    }
    assert.throws(() => toNodeHandler(async () => new Response(), { onError: 'log' as unknown as () => void }), { code: 'ERR_CONFIG', message: /onError/ });
  });

  /** A Response of another fetch library, in the shape node-fetch 2 gives it. */
  class ForeignResponse {
    readonly headers: { forEach(fn: (value: string, name: string) => void): void; get(name: string): string | null; raw(): Record<string, string[]> };
    constructor(
      readonly status: number,
      fields: Record<string, string | string[]>,
      readonly body: string | null,
    ) {
      const lists = Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, ([] as string[]).concat(value)]));
      this.headers = {
        forEach: (fn) => Object.entries(lists).forEach(([name, values]) => fn(values.join(', '), name)),
        get: (name) => lists[name]?.join(', ') ?? null,
        raw: () => lists,
      };
    }
    async arrayBuffer(): Promise<ArrayBuffer> {
      return new TextEncoder().encode(this.body ?? '').buffer as ArrayBuffer;
    }
  }

  it('answer 500 and tell onError when the handler throws or answers no Response; 4xx kit errors are answers, not reported', async () => {
    const reported: string[] = [];
    const handler = async (request: Request): Promise<Response> => {
      const { pathname } = new URL(request.url);
      if (pathname === '/throws') throw new Error('database down');
      if (pathname === '/denied') throw new AccessDeniedError('feature', 'no');
      if (pathname === '/upstream') throw new MarketplaceApiError('ERR_TIMEOUT', 'entitlements', 'slow');
      // A Response of another fetch library or realm: used by its shape.
      if (pathname === '/foreign') return new ForeignResponse(202, { 'content-type': 'application/json' }, null) as unknown as Response;
      // node-fetch 2: Headers without getSetCookie, whose raw() lists each cookie.
      if (pathname === '/node-fetch') return new ForeignResponse(201, { 'set-cookie': ['a=1; Path=/', 'b=2; Path=/'] }, 'made') as unknown as Response;
      // A library whose Headers have neither getSetCookie() nor raw(): the one line get() gives.
      if (pathname === '/get-only') {
        const response = new ForeignResponse(200, { 'set-cookie': 'c=3; Path=/' }, null);
        delete (response.headers as { raw?: unknown }).raw;
        return response as unknown as Response;
      }
      // A native Response with two cookies (the OAuth callback's state clear and session).
      if (pathname === '/two-cookies') return new Response('ok', { headers: [['set-cookie', 'a=1; Path=/'], ['set-cookie', 'b=2; Path=/']] });
      // Something that only looks like a Response at first sight: a 500 like any other non-Response.
      if (pathname === '/half') return { status: 200, headers: new Headers() } as unknown as Response;
      if (pathname === '/no-get') return { status: 200, headers: { forEach() {} }, arrayBuffer: async () => new ArrayBuffer(0) } as unknown as Response;
      // A body that fails after the handler answered (a stream of its own that errors).
      if (pathname === '/broken-body') return new Response(new ReadableStream({ pull: (controller) => controller.error(new Error('disk read failed')) }), { headers: { 'x-made': '1' } });
      return undefined as unknown as Response; // a missing return
    };
    const node = createServer(toNodeHandler(handler, { onError: (error, request) => void reported.push(`${new URL(request.url).pathname}: ${(error as Error).message}`) }));
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
    try {
      const answers = [];
      for (const path of ['/throws', '/missing-return', '/denied', '/upstream', '/broken-body']) {
        const response = await fetch(`${origin}${path}`);
        answers.push([path, response.status, ((await response.json()) as { error: { code: string } }).error.code]);
      }
      assert.equal((await fetch(`${origin}/foreign`)).status, 202);
      const nodeFetch = await fetch(`${origin}/node-fetch`);
      assert.equal(nodeFetch.status, 201);
      assert.deepEqual(nodeFetch.headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/']);
      assert.equal(await nodeFetch.text(), 'made');
      assert.deepEqual((await fetch(`${origin}/get-only`)).headers.getSetCookie(), ['c=3; Path=/']);
      assert.deepEqual((await fetch(`${origin}/two-cookies`)).headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/'], 'each cookie on its own line');
      assert.equal((await fetch(`${origin}/half`)).status, 500);
      assert.equal((await fetch(`${origin}/no-get`)).status, 500);
      assert.deepEqual(answers, [
        ['/throws', 500, 'ERR_INTERNAL'],
        ['/missing-return', 500, 'ERR_INTERNAL'],
        ['/denied', 403, 'ERR_ACCESS_DENIED'],
        ['/upstream', 504, 'ERR_TIMEOUT'],
        ['/broken-body', 500, 'ERR_INTERNAL'],
      ]);
      assert.deepEqual(reported, [
        '/throws: database down',
        '/missing-return: The handler answered undefined (a missing return?), not a Response',
        '/upstream: slow',
        '/broken-body: disk read failed',
        '/half: The handler answered object, not a Response',
        '/no-get: The handler answered object, not a Response',
      ]);
    } finally {
      node.closeAllConnections();
      await new Promise((resolve) => node.close(resolve));
    }
  });
});

describe('toNodeHandler: a client that leaves mid-upload', () => {
  it('fails a body made of its request without telling onError: no fault of the handler', async () => {
    const reported: unknown[] = [];
    const node = toNodeHandler(async (request) => new Response(request.body), { onError: (error) => void reported.push(error) });
    let arrived!: () => void;
    let handled!: () => void;
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    const closed = new Promise<void>((resolve) => (handled = resolve));
    const server = createServer((req, res) => {
      res.on('close', handled);
      node(req, res);
      arrived();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const upload = httpRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } });
      upload.on('error', () => undefined);
      upload.write('the first part');
      await requested;
      await new Promise((resolve) => setImmediate(resolve));
      upload.destroy();
      await closed;
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(reported, []);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('toExpressMiddleware: an answer whose body fails', () => {
  it('is answered 500 and told to onError, not cut midway', async () => {
    const reported: string[] = [];
    const app = express();
    const broken = async () => new Response(new ReadableStream({ pull: (controller) => controller.error(new Error('disk read failed')) }), { headers: { 'x-made': '1' } });
    app.use(toExpressMiddleware(broken, { basePath: '/mp', onError: (error, request) => void reported.push(`${new URL(request.url).pathname}: ${(error as Error).message}`) }));
    const { origin, server } = await listen(app);
    try {
      const answer = await fetch(`${origin}/mp/report`);
      assert.deepEqual([answer.status, answer.headers.get('x-made'), ((await answer.json()) as { error: { code: string } }).error.code], [500, null, 'ERR_INTERNAL']);
      assert.deepEqual(reported, ['/mp/report: disk read failed']);
    } finally {
      await close(server);
    }
  });
});

describe('adapters: an onError that throws', () => {
  it("changes no answer: the handler's error keeps its status and code", async () => {
    const handler = async (): Promise<Response> => {
      throw new MarketplaceApiError('ERR_TIMEOUT', 'entitlements', 'slow');
    };
    const onError = () => {
      throw new Error('the log sink is down');
    };
    const app = express();
    app.use(toExpressMiddleware(handler, { onError, basePath: '/api/marketplace' }));
    const servers = [createServer(toNodeHandler(handler, { onError })), createServer(app)];
    try {
      for (const server of servers) {
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/marketplace/session`);
        assert.equal(answer.status, 504);
        assert.equal(((await answer.json()) as { error: { code: string } }).error.code, 'ERR_TIMEOUT');
      }
    } finally {
      for (const server of servers) if (server.listening) await close(server);
    }
  });
});

describe('adapters: the origin option', () => {
  it('builds every request URL on the given origin, whatever the Host header says; both adapters', async () => {
    const echo = async (request: Request) => new Response(request.url);
    const app = express();
    app.use(toExpressMiddleware(echo, { origin: 'https://app.example', basePath: '/api/marketplace' }));
    const servers = [createServer(toNodeHandler(echo, { origin: 'https://app.example' })), createServer(app)];
    try {
      for (const server of servers) {
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        for (const host of ['evil.example', 'evil.example/x', undefined]) {
          const headers: Record<string, string> = host === undefined ? {} : { host };
          const answer = await rawRequest(origin, 'GET', '/api/marketplace/session?x=1', '', headers);
          assert.deepEqual(answer, { status: 200, body: 'https://app.example/api/marketplace/session?x=1' }, `Host ${String(host)}`);
        }
      }
    } finally {
      for (const server of servers) if (server.listening) await close(server);
    }
  });

  it('without it, a Host header that is no host is a JSON 400, never an origin; both adapters', async () => {
    const echo = async (request: Request) => new Response(request.url);
    const app = express();
    app.use(toExpressMiddleware(echo, { basePath: '/api/marketplace' }));
    const servers = [createServer(toNodeHandler(echo)), createServer(app)];
    try {
      for (const server of servers) {
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        for (const host of ['evil.example/x', 'me@evil.example', 'app.example:99999']) {
          const answer = await rawRequest(origin, 'GET', '/api/marketplace/session', '', { host });
          assert.equal(answer.status, 400, `Host ${host}`);
          assert.deepEqual(JSON.parse(answer.body), { error: { code: 'ERR_INVALID_INPUT', message: 'The Host header is missing or malformed' } }, `Host ${host}`);
        }
      }
    } finally {
      for (const server of servers) if (server.listening) await close(server);
    }
  });

  it('is refused at creation unless it is an exact http(s) origin', () => {
    const handler = async () => new Response();
    for (const origin of ['https://app.example/', 'https://app.example/api', 'HTTPS://app.example', 'app.example', 'ftp://app.example']) {
      for (const make of [() => toNodeHandler(handler, { origin }), () => toExpressMiddleware(handler, { origin, basePath: '/mp' })]) {
        assert.throws(make, { code: 'ERR_CONFIG', message: new RegExp(`^The adapter's origin must be an exact http\\(s\\) origin such as https://app\\.example, got ${JSON.stringify(origin).replace(/[.()/\\]/g, '\\$&')}$`) }, origin);
      }
    }
    assert.doesNotThrow(() => toNodeHandler(handler, { origin: 'http://127.0.0.1:3000' }));
  });
});

const APP = 'https://app.example';
const launchUrl = (host: string, app = APP) => `${app}/embed?view=1&mp_context=ctx&mp_host=${encodeURIComponent(host)}&mp_theme=dark`;

interface EarlyRunOptions {
  framed?: boolean;
  ancestor?: string;
  fetch?: typeof fetch;
  AbortSignal?: unknown;
}

/** Runs the early exchange's text as a page would, in a context with just what it touches. */
function runEarlyLaunch(text: string, href: string, options: EarlyRunOptions) {
  const sent: { url: string; init: RequestInit }[] = [];
  const replaced: string[] = [];
  const page: Record<PropertyKey, unknown> = {};
  page['parent'] = options.framed === false ? page : {};
  runInNewContext(text, {
    URL,
    URLSearchParams,
    Response,
    AbortSignal: options.AbortSignal ?? AbortSignal,
    window: page,
    location: { href, ancestorOrigins: options.ancestor === undefined ? undefined : [options.ancestor] },
    history: { state: null, replaceState: (_state: unknown, _title: string, url: string) => void replaced.push(url) },
    fetch: (url: string, init: RequestInit) => {
      sent.push({ url, init });
      return options.fetch ? options.fetch(url, init) : Promise.resolve(new Response('{}'));
    },
  });
  const launch = page[Symbol.for(EARLY_LAUNCH_KEY)] as { href: string; backend: string; response: Promise<Response>; receivedAt?: number; body?: string } | undefined;
  return { sent, replaced, launch, page };
}

describe('toNodeHandler over HTTP/2 (node:http2, whose requests name their host in :authority)', () => {
  /** One HTTP/2 request on a connection of its own; `endStream`: its headers end it (no body at all). */
  const h2Request = (origin: string, headers: OutgoingHttpHeaders, body?: string, { endStream = false } = {}) =>
    new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((resolve, reject) => {
      const session = connectHttp2(origin);
      const fail = (error: Error) => {
        session.destroy();
        reject(error);
      };
      session.on('error', fail);
      const stream = session.request(headers, { endStream });
      let head: Record<string, unknown> = {};
      let text = '';
      stream.on('response', (answer) => (head = answer));
      stream.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => {
        session.close();
        resolve({ status: Number(head[':status']), body: text, headers: head });
      });
      stream.on('error', fail);
      if (!endStream) stream.end(body);
    });

  it('serves sessions and signed webhooks, with the request URL built from :authority', async () => {
    const events: WebhookDelivery[] = [];
    const backend = makeBackend(events);
    const server = createHttp2Server(toNodeHandler((request) => (new URL(request.url).pathname === '/echo' ? Promise.resolve(new Response(request.url)) : backend(request))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const refusal = (message: string) => ({ error: { code: 'ERR_INVALID_INPUT', message } });
    try {
      const echo = await h2Request(origin, { ':path': '/echo?x=1' });
      assert.deepEqual([echo.status, echo.body], [200, `${origin}/echo?x=1`]);
      // A Host header beside :authority must name the same host (RFC 9113 §8.3.1): else it is no origin to build on.
      const authority = origin.slice('http://'.length);
      assert.equal((await h2Request(origin, { ':path': '/echo', ':authority': 'app.example', host: 'App.Example' })).body, 'http://app.example/echo', 'host names ignore case');
      const differs = await h2Request(origin, { ':path': '/echo', ':authority': authority, host: 'evil.example' });
      assert.deepEqual([differs.status, JSON.parse(differs.body)], [400, refusal('The Host header differs from :authority')]);
      // An :authority that is no host is refused as a Host header is (HTTP/2 itself refuses some, such as one with a path).
      const userinfo = await h2Request(origin, { ':path': '/echo', ':authority': 'user@evil.example' });
      assert.deepEqual([userinfo.status, JSON.parse(userinfo.body)], [400, refusal('The Host header is missing or malformed')]);
      const context = await signContextToken({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: market.siteUrl, host: DASHBOARD, appId: 'app_1', user: USER });
      const session = await h2Request(origin, { ':method': 'POST', ':path': '/api/marketplace/session', 'content-type': 'application/json' }, JSON.stringify({ context, host: DASHBOARD }));
      assert.equal(session.status, 200, session.body);
      assert.equal(SessionResponse.parse(JSON.parse(session.body)).user.id, USER.id);
      const body = JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data: { user_id: 'usr_1' } });
      const signed = { ':method': 'POST', ':path': '/api/marketplace/webhooks', 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) };
      assert.equal((await h2Request(origin, signed, body)).status, 200);
      assert.deepEqual(events.map((event) => event.event), ['user.authorized']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a body read before it, sent with no length (HTTP/2 needs none): 500 ERR_WEBHOOK_BODY_PARSED, never a forged signature', async () => {
    const node = toNodeHandler(makeBackend([]), { onError: () => undefined });
    const server = createHttp2Server(async (req, res) => {
      for await (const chunk of req) void chunk; // a framework's body parser
      node(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const body = JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data: { user_id: 'usr_1' } });
      const signed = { ':method': 'POST', ':path': '/api/marketplace/webhooks', 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) };
      const hook = await h2Request(origin, signed, body);
      assert.deepEqual([hook.status, JSON.parse(hook.body).error.code], [500, 'ERR_WEBHOOK_BODY_PARSED']);
      // A POST whose headers ended the stream had no body to lose: the route answers it as it is.
      const bodiless = await h2Request(origin, { ':method': 'POST', ':path': '/api/marketplace/session' }, undefined, { endStream: true });
      assert.deepEqual([bodiless.status, JSON.parse(bodiless.body).error.code], [400, 'ERR_INVALID_INPUT']);
      // No route reads a DELETE's body: nothing was lost.
      const empty = await h2Request(origin, { ':method': 'DELETE', ':path': '/api/marketplace/session' });
      assert.equal(empty.status, 204);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('adapters: headers about the connection in a handler\'s Response', () => {
  it('are not passed on (node:http2 would reset the stream for them), nor those Connection names', async () => {
    const handler = async () =>
      new Response('ok', { headers: { connection: 'close, x-hop', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked', upgrade: 'h2c', 'x-hop': '1', 'x-kept': '1' } });
    const http1 = createServer(toNodeHandler(handler));
    const http2 = createHttp2Server(toNodeHandler(handler));
    try {
      for (const server of [http1, http2]) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server: { address(): unknown }) => (server.address() as AddressInfo).port;
      const viaHttp1 = await fetch(`http://127.0.0.1:${port(http1)}/`);
      assert.deepEqual([viaHttp1.status, await viaHttp1.text(), viaHttp1.headers.get('x-kept'), viaHttp1.headers.get('x-hop'), viaHttp1.headers.get('upgrade')], [200, 'ok', '1', null, null]);
      const session = connectHttp2(`http://127.0.0.1:${port(http2)}`);
      try {
        const stream = session.request({ ':path': '/' });
        const [head] = (await once(stream, 'response')) as [Record<string, unknown>];
        let text = '';
        for await (const chunk of stream.setEncoding('utf8')) text += chunk;
        assert.deepEqual([head[':status'], text, head['x-kept'], head['x-hop']], [200, 'ok', '1', undefined]);
      } finally {
        session.close();
      }
    } finally {
      http1.closeAllConnections();
      for (const server of [http1, http2]) if (server.listening) await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('adapters: an event stream (text/event-stream)', () => {
  it('keeps every Set-Cookie and drops the headers about the connection, as a plain answer does', async () => {
    let cancelled!: () => void;
    const gone = new Promise<void>((resolve) => (cancelled = resolve));
    const handler = async () => {
      const headers = new Headers({ 'content-type': 'text/event-stream', connection: 'x-hop', 'x-hop': '1', upgrade: 'h2c', 'x-kept': '1' });
      headers.append('set-cookie', 'a=1; Path=/');
      headers.append('set-cookie', 'b=2; Path=/');
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(new TextEncoder().encode('data: hello\n\n')),
        cancel: () => cancelled(),
      });
      return new Response(body, { headers });
    };
    const server = createServer(toNodeHandler(handler));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
        httpRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`, resolve).on('error', reject).end();
      });
      assert.deepEqual(response.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
      assert.deepEqual([response.headers['x-kept'], response.headers['x-hop'], response.headers.upgrade], ['1', undefined, undefined]);
      const [chunk] = (await once(response, 'data')) as [Buffer];
      assert.equal(chunk.toString(), 'data: hello\n\n');
      response.destroy();
      await gone; // the client left: the handler's stream is cancelled
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('embed page headers', () => {
  it('frameAncestors builds the directive from dashboard origins and refuses anything else', () => {
    assert.equal(frameAncestors(['https://dashboard.example', 'http://127.0.0.1:4100']), 'frame-ancestors https://dashboard.example http://127.0.0.1:4100');
    assert.throws(() => frameAncestors(['http://127.0.0.1:4100/']), { code: 'ERR_CONFIG' }, 'exact origins only, as in hostOrigins');
    assert.throws(() => frameAncestors(['HTTPS://dashboard.example']), { code: 'ERR_CONFIG' });
    assert.equal(frameAncestors([]), "frame-ancestors 'none'");
    assert.throws(() => frameAncestors(['https://a.example; script-src *']), { code: 'ERR_CONFIG' });
    assert.throws(() => frameAncestors(['*']), { code: 'ERR_CONFIG' });
    assert.throws(() => frameAncestors(['https://a.example/path']), { code: 'ERR_CONFIG' });
  });

  it('earlyLaunchScript: the snippet sends the exchange only for a launch the runtime would accept', () => {
    const text = earlyLaunchScript({ backend: '/api/marketplace', hostOrigins: [DASHBOARD], timeoutMs: 5000 });
    const run = (href: string, options: EarlyRunOptions = {}) => runEarlyLaunch(text, href, options);

    const accepted = run(launchUrl(DASHBOARD), { ancestor: DASHBOARD });
    assert.deepEqual(
      accepted.sent.map(({ url, init }) => [url, init.method, init.body, init.referrerPolicy]),
      [[`${APP}/api/marketplace/session`, 'POST', JSON.stringify({ context: 'ctx', host: DASHBOARD }), 'no-referrer']],
    );
    assert.deepEqual(accepted.replaced, ['https://app.example/embed?view=1'], 'every mp_* parameter scrubbed, the rest kept');
    assert.deepEqual({ ...accepted.launch, response: undefined }, { href: launchUrl(DASHBOARD), backend: `${APP}/api/marketplace`, response: undefined });

    const noAncestors = run(launchUrl(DASHBOARD));
    assert.equal(noAncestors.sent.length, 1, 'a browser without location.ancestorOrigins (Firefox): the allowlist decides, as in the runtime');

    for (const [why, refused] of [
      ['host outside the allowlist', run(launchUrl('https://evil.example'))],
      ['an empty mp_context', run(`${APP}/embed?mp_context=&mp_host=${encodeURIComponent(DASHBOARD)}`)],
      ['a failure before sending (no AbortSignal.timeout)', run(launchUrl(DASHBOARD), { AbortSignal: {} })],
      ['not framed', run(launchUrl(DASHBOARD), { framed: false })],
      ['framed by another origin', run(launchUrl(DASHBOARD), { ancestor: 'https://evil.example' })],
      ['no launch parameters', run(`${APP}/embed?view=1`)],
    ] as const) {
      assert.deepEqual([refused.sent, refused.replaced, refused.launch], [[], [], undefined], `${why}: nothing sent, nothing touched`);
    }
  });

  it('earlyLaunchScript: the answer is read within its timeout, so createKit may take it later', async () => {
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-seen': req.url ?? '' });
      res.end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const app = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      // The request's timeout is the test's to fire: once the answer is in, then createKit takes it.
      const timer = new AbortController();
      const text = earlyLaunchScript({ backend: `${app}/api/marketplace/`, hostOrigins: [DASHBOARD] });
      const sent = Date.now();
      const { launch } = runEarlyLaunch(text, launchUrl(DASHBOARD, app), { fetch, AbortSignal: { timeout: () => timer.signal } });
      assert.equal(launch?.backend, `${app}/api/marketplace`, 'the base as the runtime writes it: absolute, no trailing slash');
      const response = await launch!.response;
      const receivedAt = launch!.receivedAt!;
      timer.abort(new DOMException('The operation timed out.', 'TimeoutError'));
      assert.equal(launch!.body, JSON.stringify({ ok: true }), 'the body as text, for createKit to parse at once');
      assert.deepEqual([response.status, response.headers.get('x-seen'), await response.json()], [200, '/api/marketplace/session', { ok: true }]);
      // When it arrived, not when createKit took it: its Date is of that moment.
      assert.ok(receivedAt >= sent && receivedAt <= Date.now(), `receivedAt ${receivedAt - sent} ms after sending`);
    } finally {
      await close(server);
    }
  });

  it('earlyLaunchScript: the answer handed over keeps its status, headers and body; the kit reads errors from it as its own', async () => {
    let answer = (res: import('node:http').ServerResponse) => void res.writeHead(204).end();
    const server = createServer((_req, res) => answer(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const app = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const text = earlyLaunchScript({ backend: `${app}/api/marketplace`, hostOrigins: [DASHBOARD] });
    const handOver = async () => (await runEarlyLaunch(text, launchUrl(DASHBOARD, app), { fetch }).launch!.response);
    try {
      const empty = await handOver();
      assert.deepEqual([empty.status, empty.body], [204, null], 'a status without a body');

      answer = (res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'ERR_CONTEXT_TOKEN_EXPIRED', message: 'The context token expired' } }));
      };
      const client = createBackendClient(`${app}/api/marketplace`, fetch, 1000, app, { now: Date.now, timeoutSignal: (ms) => AbortSignal.timeout(ms) });
      await assert.rejects(client.adopt({ response: handOver() }), { code: 'ERR_CONTEXT_TOKEN_EXPIRED', status: 401, message: 'The context token expired' });
    } finally {
      await close(server);
    }
  });

  it('earlyLaunchScript: the request has timeoutMs, 10 s unless set; the hash stays; the hand-over can be taken', () => {
    const timeouts: number[] = [];
    const recording = { timeout: (ms: number) => (timeouts.push(ms), AbortSignal.timeout(ms)) };
    const plain = runEarlyLaunch(earlyLaunchScript({ backend: '/api/marketplace', hostOrigins: [DASHBOARD] }), `${launchUrl(DASHBOARD)}#section`, { AbortSignal: recording });
    runEarlyLaunch(earlyLaunchScript({ backend: '/api/marketplace', hostOrigins: [DASHBOARD], timeoutMs: 2_500 }), launchUrl(DASHBOARD), { AbortSignal: recording });
    assert.deepEqual(timeouts, [10_000, 2_500]);
    assert.deepEqual(plain.replaced, ['https://app.example/embed?view=1#section']);
    // createKit deletes it from window (in strict code, where deleting what cannot be deleted throws).
    assert.equal(Reflect.deleteProperty(plain.page, Symbol.for(EARLY_LAUNCH_KEY)), true);
  });

  it('earlyLaunchScript: a request that fails with nobody to read it leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const text = earlyLaunchScript({ backend: '/api/marketplace', hostOrigins: [DASHBOARD] });
      const { launch } = runEarlyLaunch(text, launchUrl(DASHBOARD), { fetch: () => Promise.reject(new TypeError('Failed to fetch')) });
      assert.ok(launch, 'the request left');
      await eventLoopTurns(3); // a rejection nobody handles is reported before the loop turns again
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    assert.deepEqual(unhandled, []);
  });

  it('earlyLaunchScript: the hand-over key is the runtime\'s', () => {
    const text = earlyLaunchScript({ backend: '/api', hostOrigins: [DASHBOARD] });
    assert.ok(text.includes(`Symbol.for(${JSON.stringify(EARLY_LAUNCH_KEY)})`) || text.includes(`Symbol.for('${EARLY_LAUNCH_KEY}')`));
  });

  it('earlyLaunchScript: options as JSON that cannot close the <script> element; bad options refused', () => {
    const hostile = earlyLaunchScript({ backend: '/api</script><script>alert(1)//', hostOrigins: [] });
    assert.doesNotMatch(hostile, /<\//);
    assert.match(hostile, /\)\(\{"backend":"\/api\\u003c\/script>/);
    assert.throws(() => earlyLaunchScript({ backend: '', hostOrigins: [DASHBOARD] }), { code: 'ERR_CONFIG' });
    assert.throws(() => earlyLaunchScript({ backend: '/api', hostOrigins: ['https://dashboard.example/'] }), { code: 'ERR_CONFIG' });
    assert.throws(() => earlyLaunchScript({ backend: '/api', hostOrigins: [DASHBOARD], timeoutMs: 0 }), { code: 'ERR_CONFIG' });
    // createKit's range: a browser timer past 2³¹−1 ms may fire at once.
    assert.throws(() => earlyLaunchScript({ backend: '/api', hostOrigins: [DASHBOARD], timeoutMs: 2 ** 31 }), {
      code: 'ERR_CONFIG',
      message: 'earlyLaunchScript: timeoutMs must be a finite number from 1 to 2147483647, got 2147483648',
    });
    assert.match(earlyLaunchScript({ backend: '/api', hostOrigins: [DASHBOARD], timeoutMs: 2 ** 31 - 1 }), /"timeoutMs":2147483647/);
  });

  it('embedPageHeaders: frame-ancestors, and no Referer that could carry ?mp_context= to sub-resources', () => {
    assert.deepEqual(embedPageHeaders(DASHBOARD), { 'Content-Security-Policy': `frame-ancestors ${DASHBOARD}`, 'Referrer-Policy': 'no-referrer' });
    assert.deepEqual(embedPageHeaders([]), { 'Content-Security-Policy': "frame-ancestors 'none'", 'Referrer-Policy': 'no-referrer' });
    assert.throws(() => embedPageHeaders(['https://a.example; script-src *']), { code: 'ERR_CONFIG' });
    const response = new Response('x', { headers: { 'content-type': 'text/html', ...embedPageHeaders([DASHBOARD]) } });
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
  });

  it('applyEmbedPageHeaders sets both on a Response, Headers and a node response, keeping other CSP directives', async () => {
    const response = applyEmbedPageHeaders(
      new Response('x', { headers: { 'content-security-policy': "default-src 'self'; frame-ancestors *", 'referrer-policy': 'unsafe-url' } }),
      DASHBOARD,
    );
    assert.equal(response.headers.get('content-security-policy'), `default-src 'self'; frame-ancestors ${DASHBOARD}`);
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    const headers = applyEmbedPageHeaders(new Headers(), [DASHBOARD]);
    assert.equal(headers.get('content-security-policy'), `frame-ancestors ${DASHBOARD}`);
    assert.equal(headers.get('referrer-policy'), 'no-referrer');
    assert.throws(() => applyEmbedPageHeaders(new Headers(), ['*']), { code: 'ERR_CONFIG' });

    const server = createServer((_req, res) => {
      res.setHeader('content-security-policy', "img-src 'self'");
      applyEmbedPageHeaders(res, [DASHBOARD]).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      assert.equal(answer.headers.get('content-security-policy'), `img-src 'self'; frame-ancestors ${DASHBOARD}`);
      assert.equal(answer.headers.get('referrer-policy'), 'no-referrer');
    } finally {
      await close(server);
    }
  });

  it('applyEmbedPageHeaders works on an Express response before sendFile-style answers', async () => {
    const app = express();
    app.get('/embed', (_req, res) => {
      applyEmbedPageHeaders(res, [DASHBOARD]).type('html').send('<!doctype html><title>Embed</title>');
    });
    const { origin, server } = await listen(app);
    try {
      const answer = await fetch(`${origin}/embed`);
      assert.equal(answer.headers.get('content-security-policy'), `frame-ancestors ${DASHBOARD}`);
      assert.equal(answer.headers.get('referrer-policy'), 'no-referrer');
    } finally {
      await close(server);
    }
  });
});

describe('requestUrl', () => {
  it('makes the URL new URL(target, origin) would, for every path target, on this origin only', () => {
    const req = (host: string) => ({ headers: { host } }) as unknown as IncomingMessage;
    const targets = ['/', '/a/../b?x=1#f', '/a/./b/%2e%2e/c', '/é ü?q=é', '/a\\b', '/..%2F..%2Fetc', '/%2F%2Fevil.example', '/@evil.example', '/a?//evil.example', '/?#'];
    for (const host of ['app.example', 'app.example:8080', '127.0.0.1:3000', '[::1]:3000', 'APP.Example:80']) {
      for (const target of targets) {
        const expected = new URL(target, `http://${host}`);
        assert.equal(requestUrl(req(host), target, undefined).href, expected.href, `${host} ${target}`);
        assert.equal(requestUrl(req('ignored.example'), target, 'https://app.example').href, new URL(target, 'https://app.example').href);
      }
    }
    for (const target of ['//evil.example/x', '/\\evil.example', '/\t/evil.example/x', '/\n/evil.example', '/\r\n/evil.example', '/a\tb', 'x', '']) {
      assert.throws(() => requestUrl(req('app.example'), target, undefined), { code: 'ERR_INVALID_INPUT', status: 400 }, target);
    }
  });
});

describe('safeReturnTo', () => {
  const origin = 'https://app.example';
  const cases: Array<[string | null, string]> = [
    ['/notes?x=1#a', '/notes?x=1#a'],
    ['https://app.example/a', '/a'],
    [null, '/'],
    ['', '/'],
    ['//evil.example', '/'],
    ['///evil.example', '/'],
    ['/\\evil.example', '/'],
    ['\\/evil.example', '/'],
    ['https://evil.example', '/'],
    ['https://app.example.evil.example', '/'],
    ['https://app.example@evil.example', '/'],
    ['http://app.example/a', '/'],
    ['javascript:alert(1)', '/'],
    ['data:text/html,x', '/'],
    // A scheme that only names an http(s) URL inside it (blob: has the origin of that URL).
    ['blob:https://app.example/x', '/'],
    ['/\n/evil.example', '/'],
    ['/.//evil.example', '/'],
    ['/..//evil.example/x', '/'],
    ['/a/..//evil.example//x', '/'],
    ['/%2e//evil.example', '/'],
    ['https://app.example/.//evil.example', '/'],
    ['/a/./b/../c', '/a/c'],
    ['notes', '/'],
    // Absolute URLs that no URL parser takes: refused, never thrown (the OAuth start would answer 500).
    ['https://app example/a', '/'],
    ['http://[::1/x', '/'],
    ['https://app.example:99999/a', '/'],
    [`/${'a'.repeat(3000)}`, '/'],
    [`/${'a'.repeat(2047)}`, `/${'a'.repeat(2047)}`],
    // The length counts once percent-encoded too: é is %C3%A9.
    [`/${'é'.repeat(341)}`, `/${'%C3%A9'.repeat(341)}`],
    [`/${'é'.repeat(342)}`, '/'],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${expected}`, () => {
      assert.equal(safeReturnTo(input, origin), expected);
    });
  }

  it('keeps an absolute URL on a trusted origin (corsOrigins), and only there', () => {
    const trusted = new Set(['https://site.example']);
    assert.equal(safeReturnTo('https://site.example/reports?tab=2#a', origin, trusted), 'https://site.example/reports?tab=2#a');
    assert.equal(safeReturnTo('/notes', origin, trusted), '/notes', 'the app\'s own paths stay paths');
    // Neither a path nor an absolute URL, even when the host it would reach is trusted.
    for (const evil of ['https://site.example.evil.example/', 'https://site.example@evil.example/', 'http://site.example/', 'https://site.example/.//evil.example', 'https://evil.example/', '//site.example/x', '/\\site.example/x']) {
      assert.equal(safeReturnTo(evil, origin, trusted), '/', evil);
    }
  });
});

describe('toErrorResponse: the one place errors become answers', () => {
  const read = async (response: Response) => ({ status: response.status, body: (await response.json()) as { error: Record<string, string> } });

  it('answers kit errors with their own status and body', async () => {
    const { status, body } = await read(toErrorResponse(new MarketplaceKitError('ERR_INVALID_INPUT', 'bad', { status: 400 })));
    assert.equal(status, 400);
    assert.deepEqual(body, { error: { code: 'ERR_INVALID_INPUT', message: 'bad' } });
    const denied = await read(toErrorResponse(new AccessDeniedError('over_quota', 'Access denied: quota')));
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body, { error: { code: 'ERR_ACCESS_DENIED', message: 'Access denied: quota', reason: 'over_quota' } });
  });

  it('maps marketplace failures to 502/503/504, never the upstream status or text', async () => {
    const cases: Array<[MarketplaceApiError, number]> = [
      [new MarketplaceApiError('ERR_HTTP', 'entitlements', 'down', { status: 401 }), 502],
      [new MarketplaceApiError('ERR_RESPONSE_INVALID', 'whoami', 'bad', { status: 200 }), 502],
      [new MarketplaceApiError('ERR_TIMEOUT', 'token', 'slow'), 504],
      [new MarketplaceApiError('ERR_RATE_LIMITED', 'token', 'later', { status: 429, retryAfterMs: 1500 }), 503],
    ];
    for (const [error, status] of cases) {
      const response = toErrorResponse(error);
      assert.equal(response.status, status, error.code);
      if (error.retryAfterMs === undefined) assert.equal(response.headers.get('retry-after'), null, `${error.code}: no wait was asked for`);
      const { body } = await read(response);
      assert.equal(body.error!.code, error.code);
      assert.match(String(body.error!.message), /^The marketplace /, 'a message of its own, not the upstream text');
    }
    assert.equal(toErrorResponse(cases[3]![0]).headers.get('retry-after'), '2');
    // A wait that is no whole number of seconds once rounded gives no header, never "1e+23" or "NaN".
    for (const retryAfterMs of [1e26, Infinity, Number.NaN, -5_000]) {
      const response = toErrorResponse(new MarketplaceApiError('ERR_RATE_LIMITED', 'token', 'later', { status: 429, retryAfterMs }));
      assert.equal(response.headers.get('retry-after'), null, String(retryAfterMs));
    }
    // Any kit error that names a wait (an app's own, the backend's launch limit) sends it too.
    const own = toErrorResponse(new MarketplaceKitError('ERR_RATE_LIMITED', 'Slow down', { status: 429, retryAfterMs: 30_000 }));
    assert.deepEqual([own.status, own.headers.get('retry-after')], [429, '30']);
  });

  it('reveals nothing about unexpected errors', async () => {
    const { status, body } = await read(toErrorResponse(new Error('password=hunter2')));
    assert.equal(status, 500);
    assert.deepEqual(body, { error: { code: 'ERR_INTERNAL', message: 'Internal error' } });
  });
});

describe('safeReturnTo: the length as given counts too', () => {
  it('refuses a return_to over 2,048 characters as given, even when the place it names is shorter', () => {
    const origin = 'https://app.example';
    // The absolute form is 2,069 characters; the path it names alone would fit.
    const place = `/${'a'.repeat(2049 - origin.length)}`;
    assert.ok(`${origin}${place}`.length > 2048 && place.length <= 2048);
    assert.equal(safeReturnTo(`${origin}${place}`, origin), '/');
    assert.equal(safeReturnTo(`${'/a/..'.repeat(10)}${place}`, origin), '/', 'dot segments do not shorten it past the limit');
  });
});

describe('toErrorResponse: a wait of 0 s', () => {
  it('sends Retry-After: 0 for a wait that has just ended', () => {
    const answer = toErrorResponse(new MarketplaceKitError('ERR_RATE_LIMITED', 'now', { status: 429, retryAfterMs: 0 }));
    assert.deepEqual([answer.status, answer.headers.get('retry-after')], [429, '0']);
  });
});

describe('toNodeHandler: a request body cut off by the client', () => {
  it("makes the handler's read of a streamed body fail, instead of handing it the truncated body as complete", async () => {
    let reading!: Promise<unknown>;
    let started!: () => void;
    const arrived = new Promise<void>((resolve) => (started = resolve));
    const server = createServer(
      toNodeHandler(async (request) => {
        reading = request.text().then(
          (body) => ({ body }),
          (error: unknown) => ({ error }),
        );
        started();
        await reading;
        return new Response(null, { status: 204 });
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      // Over 64 KB: streamed to the handler as it arrives.
      socket.write(`POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${100 * 1024}\r\n\r\nonly a part`);
      await arrived;
      socket.destroy();
      const outcome = (await reading) as { body?: string; error?: unknown };
      assert.equal(outcome.body, undefined, `the truncated body was read as complete: ${JSON.stringify(outcome.body)}`);
      assert.ok(outcome.error !== undefined);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('never calls the handler with a small body cut off: it is read whole before the handler runs', async () => {
    let calls = 0;
    const server = createServer(
      toNodeHandler(async (request) => {
        calls++;
        return new Response(await request.text());
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const cut = connect(port, '127.0.0.1');
      cut.on('error', () => undefined);
      const closed = new Promise((resolve) => server.once('connection', (socket: Socket) => socket.once('close', resolve)));
      // The head and the part of the body travel in one write: the server has both once it saw the request.
      const arrived = new Promise((resolve) => server.once('request', resolve));
      cut.write('POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nonly a part');
      await arrived;
      cut.destroy();
      await closed;
      const whole = await fetch(`http://127.0.0.1:${port}/upload`, { method: 'POST', body: 'the whole body' });
      assert.equal(await whole.text(), 'the whole body');
      assert.equal(calls, 1, 'only the complete request reached the handler');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('toNodeHandler: a handler that reads slowly', () => {
  it('is sent the body only as fast as it reads it: the rest waits on the connection, not in memory', async () => {
    const SIZE = 64 * 1024 * 1024;
    const sockets: Socket[] = [];
    let readWhileWaiting = -1;
    let answered!: () => void;
    const done = new Promise<void>((resolve) => (answered = resolve));
    const server = createServer(
      toNodeHandler(async (request) => {
        const reader = request.body!.getReader();
        await reader.read(); // one chunk, then nothing until the connection stops delivering
        readWhileWaiting = await steadyValue(() => sockets.reduce((sum, socket) => sum + socket.bytesRead, 0), 200);
        await reader.cancel();
        answered();
        return new Response(null, { status: 204 });
      }),
    );
    server.on('connection', (socket: Socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(`POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${SIZE}\r\n\r\n`);
      let sentAll = false;
      socket.write(Buffer.alloc(SIZE, 0x61), () => (sentAll = true));
      await within(done, HANG_MS, 'the handler never saw the connection stop delivering');
      assert.equal(sentAll, false, 'the whole body left the client while the handler read one chunk');
      socket.destroy();
      assert.ok(readWhileWaiting > 0 && readWhileWaiting < 16 * 1024 * 1024, `read ${readWhileWaiting} bytes of the body while the handler read none`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
