/**
 * A node:http (or node:http2 compatibility) request as the Web `Request` the handler gets: its
 * URL, which can never name another origin than the server's, its headers, and its body, whole
 * when it was read before, else streamed no faster than the handler reads it. Also what the
 * adapters tell from a request before the handler runs: a body read before them, the webhook route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { finished } from 'node:stream';
import { MarketplaceKitError } from '../../shared/errors.js';
import { lazyRequest } from '../lib/lazy-request.js';

/**
 * The exact bytes of a body read before the adapter, where the framework kept them as
 * `req.rawBody` (NestJS with `rawBody: true`, Google Cloud Functions, Firebase): a signed webhook
 * then verifies. Undefined while the stream is unread, or without them.
 */
export function keptRawBody(req: IncomingMessage): Uint8Array<ArrayBuffer> | undefined {
  const { rawBody } = req as IncomingMessage & { rawBody?: unknown };
  return req.readableEnded && rawBody instanceof Uint8Array ? new Uint8Array(rawBody) : undefined;
}

/** Read already, though the client sent a body: what the handler would stream is gone. */
export function bodyGone(req: IncomingMessage): boolean {
  return req.readableEnded && declaresBody(req);
}

/**
 * A body the handler may need: only methods that send one to be read (the backend reads the
 * bodies of its POST routes only; a GET or DELETE with a body loses nothing). A chunked body
 * counts even when it turns out empty: once read, its length is unknown. So does an HTTP/2 body
 * without a length, which needs no chunking.
 */
export function declaresBody(req: IncomingMessage): boolean {
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
export function isWebhookRoute(url: URL, basePath: string | undefined): boolean {
  return basePath !== undefined && url.pathname.replace(/\/+$/, '') === `${basePath}/webhooks`;
}

/** A host name, IPv4 or bracketed IPv6 address, with an optional port: nothing that could carry a path or credentials. */
const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The URL of a request, which can never name another origin than the server's: the target must
 * be a path starting with exactly one `/` (`//evil.example/x` would make `new URL` take its host),
 * and the Host header must be a plain host.
 */
export function requestUrl(req: IncomingMessage, target: string, origin: string | undefined): URL {
  if (!PATH_TARGET.test(target)) throw invalidRequest('The request target must be a path that starts with a single /');
  // HTTP/2 (node:http2's compatibility API) names the host in `:authority`; a Host header that
  // differs from it makes the request malformed (RFC 9113 §8.3.1).
  const authority = req.headers[':authority'];
  const { host: named } = req.headers;
  if (origin === undefined && typeof authority === 'string' && named !== undefined && named.toLowerCase() !== authority.toLowerCase()) {
    throw invalidRequest('The Host header differs from :authority');
  }
  const host = typeof authority === 'string' ? authority : named;
  const base = origin ?? (host === undefined ? null : hostOrigin(host));
  if (base === null) throw invalidRequest('The Host header is missing or malformed');
  // A path after an origin is the whole URL: one parse, not the base's and the target's.
  const url = new URL(`${base}${target}`);
  if (url.origin !== base) throw invalidRequest('The request target must be a path on this server');
  return url;
}

/**
 * A path that starts with exactly one `/`: never `//host` or `/\host`, which would name another
 * origin; no tab or line break either, which a URL parser drops (`/\t/host` would be `//host`).
 * node:http's parser refuses them all; a rewritten `req.url` may not.
 */
const PATH_TARGET = /^\/(?![/\\])[^\t\n\r]*$/;

function invalidRequest(message: string): MarketplaceKitError {
  return new MarketplaceKitError('ERR_INVALID_INPUT', message, { status: 400 });
}

/** The origins of the Host headers seen lately: a server has few, so each is parsed once. */
const origins = new Map<string, string>();
const MAX_ORIGINS = 64;

/** `http://<host>` as an origin, or null when `host` is not a plain host. */
function hostOrigin(host: string): string | null {
  let origin = origins.get(host);
  if (origin === undefined) {
    if (!HOST_HEADER.test(host) || !URL.canParse(`http://${host}`)) return null;
    if (origins.size >= MAX_ORIGINS) origins.clear();
    origin = new URL(`http://${host}`).origin;
    origins.set(host, origin);
  }
  return origin;
}

/** node:http request → Web Request. `body` undefined: stream the request; null: no body. */
export function toRequest(req: IncomingMessage, res: ServerResponse, url: URL, body: BodyInit | null | undefined): Request {
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
