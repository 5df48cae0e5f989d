/**
 * Small node:http helpers: bounded body reading, JSON and HTML answers, and the two error body
 * shapes of docs/decisions.md#marketplace-api (RFC 6749 §5.2 for OAuth endpoints, `{"error":{"code","message"}}` for the
 * API and the control API).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { readLimited } from '../server/lib/body.js';

/** Requests larger than this are refused with 413 before they are read completely. */
export const MAX_BODY_BYTES = 64 * 1024;

/** An answer in the API error shape; thrown by handlers and turned into a response by the router. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: OutgoingHttpHeaders = {},
  ) {
    super(message);
  }
}

/** An RFC 6749 §5.2 answer of the token endpoint. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly headers: OutgoingHttpHeaders = {},
  ) {
    super(description);
  }
}

export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  const bytes = await readLimited(req, req.headers['content-length'], limit, () => tooLarge(limit));
  return new TextDecoder().decode(bytes);
}

function tooLarge(limit: number): ApiError {
  return new ApiError(413, 'payload_too_large', `Request bodies are limited to ${limit} bytes.`, { connection: 'close' });
}

/** The media type of a request, lower-cased and without parameters. */
export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Reads a JSON object body; anything else is a 400 (or 415 for another media type). */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (mediaType(req) !== 'application/json') {
    throw new ApiError(415, 'unsupported_media_type', 'Send the body as Content-Type: application/json.');
  }
  const text = await readBody(req);
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

const NO_STORE = { 'cache-control': 'no-store' };

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  if (res.headersSent) return void res.end();
  const text = JSON.stringify(body);
  res.writeHead(status, { ...NO_STORE, ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendApiError(res: ServerResponse, error: ApiError, extraHeaders: OutgoingHttpHeaders = {}): void {
  sendJson(res, error.status, { error: { code: error.code, message: error.message } }, { ...extraHeaders, ...error.headers });
}

export function sendOAuthError(res: ServerResponse, error: OAuthError): void {
  sendJson(res, error.status, { error: error.error, error_description: error.description }, { pragma: 'no-cache', ...error.headers });
}

/**
 * Pages are never framed (clickjacking), run only the styles and scripts that carry the page's
 * nonce, and post forms only to `formAction` (the authorization page adds the app's origin,
 * because browsers apply form-action to the redirect that follows the form).
 */
export function sendHtml(
  res: ServerResponse,
  status: number,
  html: string,
  page: { nonce: string; formAction?: string; frameSrc?: string },
): void {
  const csp = [
    "default-src 'self'",
    `style-src 'nonce-${page.nonce}'`,
    `script-src 'self' 'nonce-${page.nonce}'`,
    `form-action 'self'${page.formAction ? ` ${page.formAction}` : ''}`,
    `frame-src ${page.frameSrc ?? "'none'"}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join('; ');
  res.writeHead(status, {
    ...NO_STORE,
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    // Not no-referrer: with it Chromium sends `Origin: null` on the page's own form posts.
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
  });
  res.end(html);
}

export function redirect(res: ServerResponse, location: string, status = 303): void {
  res.writeHead(status, { ...NO_STORE, location, 'referrer-policy': 'no-referrer', 'content-length': 0 });
  res.end();
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
