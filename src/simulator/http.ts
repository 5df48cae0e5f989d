/**
 * The simulator's HTTP vocabulary, in Web-standard terms (`Request` in, `Response` out, as the
 * server module's handlers): bounded body reading, JSON and HTML answers, and the two error body
 * shapes of the marketplace (docs/simulator.md): RFC 6749 §5.2 for OAuth endpoints,
 * `{"error":{"code","message"}}` for the API and the control API.
 */
import { readLimited } from '../server/lib/body.js';

/** Requests larger than this are refused with 413 before they are read completely. */
export const MAX_BODY_BYTES = 64 * 1024;

const NO_STORE = { 'cache-control': 'no-store' };

/** An answer in the API error shape; thrown by handlers, and turned into a response by the router. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** The error as the API answers it; `headers` go with it (the rate-limit headers, say). */
  toResponse(headers: Record<string, string> = {}): Response {
    return json(this.status, { error: { code: this.code, message: this.message } }, { ...headers, ...this.headers });
  }
}

/** An RFC 6749 §5.2 answer of the token endpoint. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }

  toResponse(): Response {
    return json(this.status, { error: this.error, error_description: this.description }, { pragma: 'no-cache', ...this.headers });
  }
}

/** The body as text, refused with 413 past `limit` bytes (before all of it is read). */
export async function readBody(request: Request, limit = MAX_BODY_BYTES): Promise<string> {
  const tooLarge = () => new ApiError(413, 'payload_too_large', `Request bodies are limited to ${limit} bytes.`, { connection: 'close' });
  if (!request.body) return '';
  // Node's ReadableStream is async iterable; the DOM lib's type does not say so.
  const bytes = await readLimited(request.body as unknown as AsyncIterable<Uint8Array>, request.headers.get('content-length'), limit, tooLarge);
  return new TextDecoder().decode(bytes);
}

/** The media type of a request, lower-cased and without parameters. */
export function mediaType(request: Request): string {
  return (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Reads a JSON object body; anything else is a 400 (or 415 for another media type). */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  if (mediaType(request) !== 'application/json') {
    throw new ApiError(415, 'unsupported_media_type', 'Send the body as Content-Type: application/json.');
  }
  const text = await readBody(request);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_json', 'The body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(400, 'invalid_request', 'The body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...NO_STORE, ...headers, 'content-type': 'application/json; charset=utf-8' } });
}

/**
 * Pages are never framed (clickjacking), run only the styles and scripts that carry the page's
 * nonce or come from the simulator itself, and post forms only to `formAction` (the authorization
 * page adds the app's origin, because browsers apply form-action to the redirect that follows the form).
 */
export function html(status: number, page: string, options: { nonce: string; formAction?: string; frameSrc?: string }): Response {
  const csp = [
    "default-src 'self'",
    `style-src 'nonce-${options.nonce}'`,
    `script-src 'self' 'nonce-${options.nonce}'`,
    `form-action 'self'${options.formAction ? ` ${options.formAction}` : ''}`,
    `frame-src ${options.frameSrc ?? "'none'"}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join('; ');
  return new Response(page, {
    status,
    headers: {
      ...NO_STORE,
      'content-security-policy': csp,
      'x-frame-options': 'DENY',
      // Not no-referrer: with it Chromium sends `Origin: null` on the page's own form posts.
      'referrer-policy': 'same-origin',
      'x-content-type-options': 'nosniff',
      'content-type': 'text/html; charset=utf-8',
    },
  });
}

export function redirect(location: string, status = 303): Response {
  return new Response(null, { status, headers: { ...NO_STORE, location, 'referrer-policy': 'no-referrer' } });
}

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The simulator's origin on `port`, and the Host headers it serves. A URL leaves out port 80 (so
 * do browsers in their Host header), which a check against `127.0.0.1:80` would never match.
 */
export function loopbackOrigin(port: number): { origin: string; hosts: Set<string> } {
  const origin = new URL(`http://127.0.0.1:${port}`).origin;
  const hosts = ['127.0.0.1', 'localhost'].flatMap((name) => [`${name}:${port}`, new URL(`http://${name}:${port}`).host]);
  return { origin, hosts: new Set(hosts) };
}
