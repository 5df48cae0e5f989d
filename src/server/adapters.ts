/**
 * Thin adapters from the Web-standard handler to node:http and Express, and what the app's
 * embedded page needs: its headers (`frame-ancestors`, `Referrer-Policy`) and the early exchange.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { finished } from 'node:stream';
import { earlyLaunch, type EarlyLaunchOptions } from '../shared/early-launch.js';
import { MarketplaceKitError } from '../shared/errors.js';
import { exactOrigin } from '../shared/origin.js';
import { functionOption, MAX_TIMER_MS, numberOption } from '../shared/options.js';
import { createErrorLog } from './error-log.js';
import { bodyReadFirst } from './lib/body.js';
import { lazyRequest } from './lib/lazy-request.js';
import { isLazyResponse, takeLazy } from './lib/lazy-response.js';
import { TextResponse } from './lib/text-response.js';
import { toErrorResponse } from './responses.js';

/** Any Web-standard handler, e.g. an `AppBackend`. */
export type FetchHandler = (request: Request) => Promise<Response>;

/** Options of `toNodeHandler`. */
export interface NodeAdapterOptions {
  /**
   * Exact origin used to build the request URL (default `http://<Host header>`). Security
   * decisions of the backend use its `publicOrigin`, never this URL (except on loopback hosts).
   */
  origin?: string | undefined;
  /**
   * Told of what the handler got wrong, which the client sees only as a 5xx: an error it threw
   * that answers 500 or more (anything but the kit's 4xx errors), or an answer that is not a
   * `Response` (a missing `return`); for `toExpressMiddleware`, also of a webhook body a parser
   * consumed first (`ERR_WEBHOOK_BODY_PARSED`); also of an answer whose body failed while it was
   * read (a stream that errored), which is then answered 500. Default: `createErrorLog`'s log on `console.error`. An `AppBackend` never
   * throws: it reports its own errors to `createAppBackend`'s `onError` (which logs by default too).
   */
  onError?: ((error: unknown, request: Request) => void) | undefined;
}

/**
 * Serves a Web-standard handler from node:http, node:https or node:http2 (its compatibility API,
 * `createSecureServer(options, toNodeHandler(backend))`).
 *
 * @example
 * import { createServer } from 'node:http';
 * createServer(toNodeHandler(backend)).listen(3000);
 */
export function toNodeHandler(
  handler: FetchHandler & { basePath?: string },
  options: NodeAdapterOptions = {},
): (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void {
  assertAdapter('toNodeHandler', handler, options);
  options = withLog(options);
  const origin = options.origin === undefined ? undefined : new URL(options.origin);
  return (incoming, outgoing) => {
    // node:http2's request and response offer all that is used here, under the same names.
    const [req, res] = [incoming as IncomingMessage, outgoing as ServerResponse];
    void (async () => {
      let response: Response;
      let request: Request | undefined;
      try {
        const url = requestUrl(req, req.url ?? '/', origin);
        // A framework's body parser (Fastify's, Koa's) or a logger read the stream first.
        const reader = "Something before toNodeHandler (a body parser, such as Fastify's or Koa's, or a middleware)";
        const kept = keptRawBody(req);
        const refused = !kept && bodyGone(req) ? bodyReadFirst(isWebhookRoute(url, handler.basePath), reader, 'give toNodeHandler the request unread') : null;
        // A small body of a declared length is read whole first: a stream costs more than the rest of a launch.
        const reading = refused || kept ? undefined : smallBody(req);
        const small = reading === undefined ? undefined : await reading;
        request = toRequest(req, res, url, refused ? null : (kept ?? small));
        response = await answer(refused ? () => Promise.reject(refused) : handler, request, options);
      } catch (error) {
        response = refusedBeforeHandler(error);
      }
      await writeResponse(res, response, request, options);
    })().catch((error: unknown) => res.destroy(error instanceof Error ? error : undefined));
  };
}

/**
 * The handler's answer. What it threw becomes the kit's error answer (`toErrorResponse`), and
 * `onError` hears of each 5xx among them; an answer that is not a `Response` is a 500 too.
 */
async function answer(handler: FetchHandler, request: Request, options: NodeAdapterOptions): Promise<Response> {
  let problem: unknown;
  try {
    const response: unknown = await handler(request);
    // By shape, not instanceof: a Response of another fetch library or realm (undici's, say) serves as well.
    if (isLazyResponse(response) || isResponseLike(response)) return response as Response;
    problem = new MarketplaceKitError('ERR_INTERNAL', `The handler answered ${response === undefined ? 'undefined (a missing return?)' : typeof response}, not a Response`, { status: 500 });
  } catch (error) {
    problem = error;
  }
  const response = toErrorResponse(problem);
  if (response.status >= 500) tell(options, problem, request);
  return response;
}

/** Tells `onError` (see `withLog`) what the handler got wrong. */
function tell(options: NodeAdapterOptions, error: unknown, request: Request): void {
  try {
    options.onError?.(error, request);
  } catch {
    // A failing logger must not take the answer down with it.
  }
}

function isResponseLike(value: unknown): value is Response {
  const candidate = value as { status?: unknown; headers?: { forEach?: unknown; get?: unknown }; arrayBuffer?: unknown } | null | undefined;
  return (
    typeof candidate?.status === 'number' &&
    typeof candidate.headers?.forEach === 'function' &&
    typeof candidate.headers.get === 'function' &&
    typeof candidate.arrayBuffer === 'function'
  );
}

/**
 * Each Set-Cookie line: `getSetCookie()`, else node-fetch's `raw()`, else the one value `get()`
 * gives (several cookies arrive joined there, and cannot be split safely).
 */
function setCookieLines(headers: Headers): string[] {
  if (typeof headers.getSetCookie === 'function') return headers.getSetCookie();
  const raw = (headers as { raw?: () => Record<string, string[] | undefined> }).raw?.()['set-cookie'];
  if (Array.isArray(raw)) return raw;
  const value = headers.get('set-cookie');
  return value === null ? [] : [value];
}

/** The parts of an Express request the adapter reads (Express 4 and 5). */
interface ExpressRequest extends IncomingMessage {
  originalUrl?: string | undefined;
  /** The path the middleware (or its router) is mounted at, '' at the root. */
  baseUrl?: string | undefined;
  body?: unknown;
}

/** Options of `toExpressMiddleware`. */
export interface ExpressAdapterOptions extends NodeAdapterOptions {
  /** Requests whose path is outside it go to `next()` (default: the backend's `basePath`, else `/`). */
  basePath?: string | undefined;
}

/**
 * Mounts a Web-standard handler in Express. Mount it before `express.json()`: a raw
 * (`express.raw`) or text body is used as is, so are bytes kept as `req.rawBody` (NestJS's
 * `rawBody: true`), and a JSON-parsed one is re-serialised for the session route, but on the
 * webhook route, whose signature covers the exact bytes, a parsed body is refused
 * (`ERR_WEBHOOK_BODY_PARSED`).
 *
 * @example
 * const app = express();
 * app.use(toExpressMiddleware(backend)); // before express.json()
 * app.get('/api/export', async (req, res) => { ... });
 */
export function toExpressMiddleware(
  handler: FetchHandler & { basePath?: string },
  options: ExpressAdapterOptions = {},
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  assertAdapter('toExpressMiddleware', handler, options);
  options = withLog(options);
  const basePath = (options.basePath ?? handler.basePath ?? '').replace(/\/+$/, '');
  if (options.basePath !== undefined && handler.basePath !== undefined && basePath !== handler.basePath) {
    throw new MarketplaceKitError(
      'ERR_CONFIG',
      `toExpressMiddleware: basePath ${JSON.stringify(options.basePath)} differs from the backend's ${JSON.stringify(handler.basePath)}, which would answer every request 404: set basePath in createAppBackend instead`,
    );
  }
  if (handler.basePath === '') {
    // Its router owns every path under its basePath: at the root, no request would reach the app's routes.
    throw new MarketplaceKitError(
      'ERR_CONFIG',
      "toExpressMiddleware: a backend at the root (basePath '/') would answer every request of the app: give it a basePath such as /api/marketplace, or serve it on its own with toNodeHandler",
    );
  }
  const origin = options.origin === undefined ? undefined : new URL(options.origin);
  return (req, res, next) => {
    const expressReq = req as ExpressRequest;
    const target = expressReq.originalUrl ?? req.url ?? '/';
    const path = target.split('?')[0] ?? '/';
    const under = (prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
    let mistake: MarketplaceKitError | null = null;
    if (basePath !== '' && !under(basePath)) {
      // Mounted with a path (`app.use('/mp', …)`, a router): the backend still sees the whole
      // path, which its basePath must then include. Said at once, not left to Express's 404.
      const mount = expressReq.baseUrl ?? '';
      // Mounted at a prefix of basePath (`app.use('/api', …)` for /api/marketplace) is right.
      const fine = mount === '' || basePath.startsWith(`${mount}/`);
      if (fine || !under(`${mount}${basePath}`)) return next();
      mistake = new MarketplaceKitError(
        'ERR_CONFIG',
        `toExpressMiddleware is mounted under ${mount}, and the backend sees whole paths: its basePath (createAppBackend's) must be ${JSON.stringify(`${mount}${basePath}`)}, or mount it without a path`,
        { status: 500 },
      );
    }
    void (async () => {
      let response: Response;
      let request: Request | undefined;
      try {
        const url = requestUrl(req, target, origin);
        const body = mistake ?? bodyFromParser(expressReq, isWebhookRoute(url, basePath));
        // A body a parser consumed is the app's set-up mistake, as a wrong mount is: answered 500
        // in the handler's place, so that onError (console.error by default) hears of it like any 5xx.
        const refused = body instanceof MarketplaceKitError;
        request = toRequest(req, res, url, refused ? null : body);
        response = await answer(refused ? () => Promise.reject(body) : handler, request, options);
      } catch (error) {
        response = refusedBeforeHandler(error);
      }
      await writeResponse(res, response, request, options);
    })().catch(next);
  };
}

/**
 * The `Content-Security-Policy` value that lets only the given dashboard origins frame a page.
 *
 * @example
 * frameAncestors(['https://dashboard.example']); // "frame-ancestors https://dashboard.example"
 */
export function frameAncestors(dashboardOrigins: string | readonly string[]): string {
  const list = typeof dashboardOrigins === 'string' ? [dashboardOrigins] : dashboardOrigins;
  if (!Array.isArray(list)) throw new MarketplaceKitError('ERR_CONFIG', `frameAncestors: pass the dashboard origins (a string or an array), got ${String(list)}`);
  const origins = list.map((value) => {
    const origin = exactOrigin(value);
    if (origin === null) throw new MarketplaceKitError('ERR_CONFIG', `frameAncestors: ${JSON.stringify(value)} is not an origin`);
    return origin;
  });
  return `frame-ancestors ${origins.length === 0 ? "'none'" : origins.join(' ')}`;
}

/** The headers of a page the dashboard embeds (see `embedPageHeaders`). */
export interface EmbedPageHeaders {
  'Content-Security-Policy': string;
  'Referrer-Policy': 'no-referrer';
}

/**
 * The headers for the page the dashboard embeds (the app's embed URL):
 * - `Content-Security-Policy: frame-ancestors …`, so that only the dashboard can frame it;
 * - `Referrer-Policy: no-referrer`, because the page is opened with the context token in its
 *   query (`?mp_context=…`): without it, every stylesheet, script or image the page loads before
 *   the kit removes the parameters would carry the token to its server in `Referer`.
 *
 * @example
 * return new Response(html, { headers: { 'content-type': 'text/html', ...embedPageHeaders(hostOrigins) } });
 */
export function embedPageHeaders(dashboardOrigins: string | readonly string[]): EmbedPageHeaders {
  return { 'Content-Security-Policy': frameAncestors(dashboardOrigins), 'Referrer-Policy': 'no-referrer' };
}

/**
 * Sets the embed page's headers (`embedPageHeaders`) on a Response, a Headers object or a
 * node:http, node:http2 or Express response. `frame-ancestors` replaces any in an existing policy and keeps
 * the policy's other directives.
 *
 * @example
 * return applyEmbedPageHeaders(new Response(html, { headers: { 'content-type': 'text/html' } }), hostOrigins);
 * // node:http / Express: applyEmbedPageHeaders(res, hostOrigins).end(html);
 */
export function applyEmbedPageHeaders<T extends Response | Headers | ServerResponse | Http2ServerResponse>(target: T, dashboardOrigins: string | readonly string[]): T {
  const headers = embedPageHeaders(dashboardOrigins);
  const directive = headers['Content-Security-Policy'];
  const merge = (existing: string | null | undefined) => {
    const kept = (existing ?? '')
      .split(';')
      .map((part) => part.trim())
      .filter((part) => part !== '' && !/^frame-ancestors(\s|$)/i.test(part));
    return [...kept, directive].join('; ');
  };
  if (target instanceof Response || target instanceof Headers) {
    const list = target instanceof Response ? target.headers : target;
    list.set('content-security-policy', merge(list.get('content-security-policy')));
    list.set('referrer-policy', headers['Referrer-Policy']);
  } else {
    const current = target.getHeader('content-security-policy');
    target.setHeader('content-security-policy', merge(Array.isArray(current) ? current.join('; ') : current?.toString()));
    target.setHeader('referrer-policy', headers['Referrer-Policy']);
  }
  return target;
}

/**
 * The early exchange, as script text for an inline `<script>` in the embedded page's `<head>`,
 * before the app's own scripts: it sends the start-up request while they download, and
 * `createKit` (given the same `backend`) adopts it. Pass `createKit`'s `backend`, `hostOrigins`
 * and `timeoutMs`. The text depends only on the options: compute it once, and allow it in a
 * Content-Security-Policy with a nonce or its `sha256-` hash.
 *
 * @example
 * const early = earlyLaunchScript({ backend: '/api/marketplace', hostOrigins: ['https://dashboard.example'] });
 * const html = `<!doctype html><head><script>${early}</script><script type="module" src="/app.js"></script></head>`;
 */
export function earlyLaunchScript(options: EarlyLaunchOptions): string {
  if (typeof options?.backend !== 'string' || options.backend === '') {
    throw new MarketplaceKitError('ERR_CONFIG', 'earlyLaunchScript needs the backend URL given to createKit');
  }
  if (!Array.isArray(options.hostOrigins) || options.hostOrigins.some((origin) => exactOrigin(origin) !== origin)) {
    throw new MarketplaceKitError('ERR_CONFIG', 'earlyLaunchScript needs hostOrigins: exact dashboard origins, as given to createKit');
  }
  const { backend, hostOrigins, timeoutMs } = options;
  // The range of createKit's timeoutMs: past MAX_TIMER_MS a browser timer may fire at once.
  if (timeoutMs !== undefined) numberOption(timeoutMs, 0, 'earlyLaunchScript: timeoutMs', { min: 1, max: MAX_TIMER_MS });
  // JSON inside a <script>: `<` is escaped so that no value can close the element.
  const json = JSON.stringify({ backend, hostOrigins, timeoutMs }).replace(/</g, '\\u003c');
  return `(${earlyLaunch.toString()})(${json});`;
}

/**
 * What a body parser left: raw bytes or text to use, a parsed value, or nothing (`undefined`: the
 * body is still to be read). A parsed webhook body, or a body read and not kept, gives the error
 * to answer instead.
 */
function bodyFromParser(req: ExpressRequest, isWebhook: boolean): BodyInit | null | undefined | MarketplaceKitError {
  const { body } = req;
  // The exact bytes first, where a parser kept them (also beside a text body it decoded).
  const kept = keptRawBody(req);
  if (kept) return kept;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return new Uint8Array(body);
  // Read by a parser or not at all: a body value alone says nothing, as Express 4's parsers set
  // `req.body = {}` on every request, also on those they leave unread.
  if (!req.readableEnded) return undefined;
  const parsed = body !== undefined && body !== null;
  if (!parsed && !declaresBody(req)) return null; // nothing was lost
  if (isWebhook || !parsed) {
    return bodyReadFirst(
      isWebhook,
      parsed ? 'A body parser (e.g. express.json())' : 'A middleware before toExpressMiddleware',
      'mount toExpressMiddleware(backend) before it, or use express.raw({ type: "application/json", limit: "1mb" }) for the webhook path (in NestJS: create the app with { rawBody: true })',
    );
  }
  return JSON.stringify(body);
}

/**
 * The exact bytes of a body read before the adapter, where the framework kept them as
 * `req.rawBody` (NestJS with `rawBody: true`, Google Cloud Functions, Firebase): a signed webhook
 * then verifies. Undefined while the stream is unread, or without them.
 */
function keptRawBody(req: IncomingMessage): Uint8Array<ArrayBuffer> | undefined {
  const { rawBody } = req as IncomingMessage & { rawBody?: unknown };
  return req.readableEnded && rawBody instanceof Uint8Array ? new Uint8Array(rawBody) : undefined;
}

/** Read already, though the client sent a body: what the handler would stream is gone. */
function bodyGone(req: IncomingMessage): boolean {
  return req.readableEnded && declaresBody(req);
}

/**
 * A body the handler may need: only methods that send one to be read (the backend reads the
 * bodies of its POST routes only; a GET or DELETE with a body loses nothing). A chunked body
 * counts even when it turns out empty: once read, its length is unknown. So does an HTTP/2 body
 * without a length, which needs no chunking.
 */
function declaresBody(req: IncomingMessage): boolean {
  if (!BODY_METHODS.has(req.method ?? '')) return false;
  const length = req.headers['content-length'];
  // An HTTP/2 request whose headers ended the stream has no body at all.
  const http2 = req.httpVersionMajor === 2 && length === undefined && !(req as unknown as Http2ServerRequest).stream?.endAfterHeaders;
  return Number(length ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined || http2;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The webhook route as the backend's router sees it: dot segments resolved (by URL), trailing
 * slashes dropped, so `/webhooks/` or `/x/../webhooks` cannot slip a consumed body past the check.
 */
function isWebhookRoute(url: URL, basePath: string | undefined): boolean {
  return basePath !== undefined && url.pathname.replace(/\/+$/, '') === `${basePath}/webhooks`;
}

/** The options with an `onError`: the app's, else a quiet log of the adapter's own (`createErrorLog`). */
function withLog<T extends NodeAdapterOptions>(options: T): T {
  return options.onError ? options : { ...options, onError: createErrorLog({ context: 'the handler failed' }) };
}

function assertAdapter(name: string, handler: unknown, options: NodeAdapterOptions): void {
  if (typeof handler !== 'function') {
    throw new MarketplaceKitError('ERR_CONFIG', `${name} needs a handler, (request: Request) => Promise<Response> such as createAppBackend's, got ${String(handler)}`);
  }
  functionOption(options.onError, `${name}: onError`);
  const { origin } = options;
  if (origin !== undefined && exactOrigin(origin) === null) {
    throw new MarketplaceKitError('ERR_CONFIG', `The adapter's origin must be an exact http(s) origin such as https://app.example, got ${JSON.stringify(origin)}`);
  }
}

/** A host name, IPv4 or bracketed IPv6 address, with an optional port: nothing that could carry a path or credentials. */
const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The URL of a request, which can never name another origin than the server's: the target must
 * be a path starting with exactly one `/` (`//evil.example/x` would make `new URL` take its host),
 * and the Host header must be a plain host.
 */
function requestUrl(req: IncomingMessage, target: string, origin: URL | undefined): URL {
  const invalid = (message: string) => new MarketplaceKitError('ERR_INVALID_INPUT', message, { status: 400 });
  if (!/^\/(?![/\\])/.test(target)) throw invalid('The request target must be a path that starts with a single /');
  // HTTP/2 (node:http2's compatibility API) names the host in `:authority`; a Host header that
  // differs from it makes the request malformed (RFC 9113 §8.3.1).
  const authority = req.headers[':authority'];
  const { host: named } = req.headers;
  if (origin === undefined && typeof authority === 'string' && named !== undefined && named.toLowerCase() !== authority.toLowerCase()) {
    throw invalid('The Host header differs from :authority');
  }
  const host = typeof authority === 'string' ? authority : named;
  const base = origin ?? (host === undefined ? null : hostBase(host));
  if (base === null) throw invalid('The Host header is missing or malformed');
  const url = new URL(target, base);
  if (url.origin !== base.origin) throw invalid('The request target must be a path on this server');
  return url;
}

/** The base URLs of the Host headers seen lately: a server has few, so each is parsed once. */
const bases = new Map<string, URL>();
const MAX_BASES = 64;

/** `http://<host>` as a URL, or null when `host` is not a plain host. */
function hostBase(host: string): URL | null {
  let base = bases.get(host);
  if (base === undefined) {
    if (!HOST_HEADER.test(host) || !URL.canParse(`http://${host}`)) return null;
    if (bases.size >= MAX_BASES) bases.clear();
    base = new URL(`http://${host}`);
    bases.set(host, base);
  }
  return base;
}

/** Bodies up to this size, of a declared length, are read whole before the Request is made. */
const SMALL_BODY_BYTES = 64 * 1024;

/**
 * The whole body of a request that declares a small one (`Content-Length` up to 64 KB, no chunking),
 * read before the handler runs; undefined for any other (GET, a large or chunked body: streamed).
 */
function smallBody(req: IncomingMessage): Promise<Buffer<ArrayBuffer>> | undefined {
  const method = req.method ?? 'GET';
  const length = req.headers['content-length'];
  if (method === 'GET' || method === 'HEAD' || req.readableEnded || length === undefined || req.headers['transfer-encoding'] !== undefined) return undefined;
  if (!(Number(length) <= SMALL_BODY_BYTES)) return undefined;
  return new Promise((resolve, reject) => {
    const chunks: Buffer<ArrayBuffer>[] = [];
    req.on('data', (chunk: Buffer<ArrayBuffer> | string) => void chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    finished(req, (error) => (error ? reject(error) : resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))));
  });
}

/** node:http request → Web Request. `body` undefined: stream the request; null: no body. */
function toRequest(req: IncomingMessage, res: ServerResponse, url: URL, body: BodyInit | null | undefined): Request {
  const method = req.method ?? 'GET';
  // Methods a Request cannot carry (Fetch's forbidden methods), which node:http still takes.
  if (/^(connect|trace|track)$/i.test(method)) {
    throw new MarketplaceKitError('ERR_METHOD_NOT_ALLOWED', `${method} is not served here`, { status: 405 });
  }
  const given = req.headers;
  // Bytes a parser kept may differ from what was declared; a small body read here is exactly that.
  const sendsBody = method !== 'GET' && method !== 'HEAD';
  const declared = !sendsBody || body === undefined || body === null || (body instanceof Buffer && body.byteLength === Number(given['content-length']));
  // Name-value pairs, which the Request copies once (a Headers object would be copied again).
  const headers: Array<[string, string]> = [];
  for (const name in given) {
    const value = given[name];
    if (name.startsWith(':') || value === undefined || (name === 'content-length' && !declared)) continue;
    if (Array.isArray(value)) for (const item of value) headers.push([name, item]);
    else headers.push([name, value]);
  }
  // No body, or a small one read whole: the Request is made only if the handler needs it.
  if (!sendsBody || body === null || (body instanceof Buffer && declared)) {
    return lazyRequest({ href: url.href, method, headers, body: sendsBody && body instanceof Buffer ? (body as Buffer<ArrayBuffer>) : null });
  }
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (sendsBody) {
    if (body === undefined) {
      init.body = requestBody(req, res);
      init.duplex = 'half';
    } else if (body !== null) {
      init.body = body;
    }
  }
  return new Request(url.href, init);
}

/** The methods a Web `Request` carries to the handler: all a 405 of the adapters can name in `Allow`. */
const CARRIED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/** The kit's error answer for a request refused before the handler saw it; a 405 names what is served (RFC 9110 §15.5.6). */
function refusedBeforeHandler(error: unknown): Response {
  const response = toErrorResponse(error);
  if (response.status === 405) response.headers.set('allow', CARRIED_METHODS);
  return response;
}

/**
 * The request's body as a Web stream, read only as fast as the handler reads it. What the handler
 * leaves unread is read and thrown away, as node:http does with a body nobody reads, instead of
 * being left on the wire, where it would stall the kept-alive connection until it is reset (the
 * client gets ECONNRESET, often in place of the answer): the rest of a body the handler refused
 * (413) or cancelled, or a whole body no handler looked at once the answer is sent.
 * (`Readable.toWeb` destroys the request when its stream is cancelled, which resets it too.)
 */
function requestBody(req: IncomingMessage, res: ServerResponse): ReadableStream<Uint8Array> {
  let cancelled = false;
  let onData: (chunk: Buffer | string) => void = () => undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      onData = (chunk) => {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        controller.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      };
      req.pause().on('data', onData);
      finished(req, (error) => {
        if (cancelled) return;
        if (error) controller.error(error);
        else controller.close();
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      cancelled = true;
      req.off('data', onData);
      req.resume();
    },
  });
  // A handler that is reading the body (the stream is locked) may go on after it answered.
  res.once('finish', () => {
    if (!stream.locked) stream.cancel().catch(() => undefined);
  });
  return stream;
}

/** An answer's headers onto node:http's response, but those about the connection. */
function copyHeaders(res: ServerResponse, headers: Headers): void {
  const cookies = setCookieLines(headers);
  // A Response of your own may carry them: one passed on from `fetch(upstream)` does.
  const named = (headers.get('connection') ?? '').split(',').map((name) => name.trim().toLowerCase());
  headers.forEach((value, name) => {
    if (name !== 'set-cookie' && !HOP_BY_HOP.has(name) && !named.includes(name)) res.setHeader(name, value);
  });
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
}

/** Headers about one connection (RFC 9110 §7.6.1): node:http writes its own, node:http2 refuses them. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'transfer-encoding', 'upgrade']);

/**
 * Writes the answer. Its body is read first: one that fails (a handler's stream that errored)
 * becomes an error answer (a 500, told to `onError` with the `request`), not a connection cut midway.
 */
async function writeResponse(res: ServerResponse, answer: Response, request: Request | undefined, options: NodeAdapterOptions): Promise<void> {
  // The kit's JSON answers, never made a Response: status, headers and text as they are.
  const lazy = takeLazy(answer);
  if (lazy !== undefined) {
    res.statusCode = lazy.status;
    if (lazy.headers instanceof Headers) copyHeaders(res, lazy.headers);
    else for (const name in lazy.headers) res.setHeader(name, lazy.headers[name]!);
    res.end(lazy.text);
    return;
  }
  // The type first: asking a TextResponse for its body would make it a stream.
  if (/^text\/event-stream\b/i.test(answer.headers.get('content-type') ?? '') && answer.body) return writeEventStream(res, answer);
  const response = answer;
  // A TextResponse hands its text over as it is: nothing to read.
  let body: Buffer | string | undefined = TextResponse.take(response);
  try {
    if (body === undefined && response.body) body = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const refusal = toErrorResponse(error);
    // A client that left mid-upload fails a body made of its request: no fault of the handler.
    const gone = res.destroyed || res.req?.destroyed;
    if (request && refusal.status >= 500 && !gone) tell(options, error, request);
    return writeResponse(res, refusal, undefined, options);
  }
  res.statusCode = response.status;
  copyHeaders(res, response.headers);
  res.end(body);
}

/**
 * Writes an event stream (`text/event-stream`, Server-Sent Events), which never ends: each chunk
 * as it comes, no faster than the client reads (the handler's stream is read only once the socket
 * drained). The handler's stream is cancelled when the client leaves; one that fails cuts the
 * connection, which tells an `EventSource` to reconnect.
 */
async function writeEventStream(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  copyHeaders(res, response.headers);
  res.flushHeaders();
  const reader = response.body!.getReader();
  const left = new Promise<void>((resolve) => res.once('close', resolve));
  void left.then(() => reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      // A stream that fails while the client is slow ends the wait too (`closed` rejects).
      if (!res.write(Buffer.from(value.buffer, value.byteOffset, value.byteLength))) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), left, reader.closed]);
    }
    res.end();
  } catch {
    res.destroy();
  }
}
