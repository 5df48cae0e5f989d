/**
 * The one place where errors become HTTP answers (like Hono's `HTTPException#getResponse()`),
 * and the JSON answer helper the handlers share.
 */
import { MarketplaceKitError, isKitError, type ErrorCode } from '../shared/errors.js';
import { MarketplaceApiError } from './api-error.js';
import { lazyResponse } from './lib/lazy-response.js';
import { LinkedHeaders } from './lib/linked-headers.js';

/** The headers of every JSON answer: its type, and that no cache keeps it. */
const JSON_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** What `new Headers()` takes. Not `HeadersInit`: a Node project without the DOM library lacks that name. */
type HeadersSource = ConstructorParameters<typeof Headers>[0];

/**
 * A JSON answer that no cache keeps.
 *
 * @example
 * return jsonResponse({ notes }, { status: 201 });
 */
export function jsonResponse(body: unknown, init: { status?: number | undefined; headers?: HeadersSource | undefined } = {}): Response {
  // Without headers of the caller's, a plain record: the Response copies it once.
  let headers: HeadersSource = JSON_HEADERS;
  if (init.headers !== undefined) {
    // The answer's own headers object, kept as it is (lib/lazy-response.ts).
    const merged = new LinkedHeaders(init.headers);
    for (const [name, value] of Object.entries(JSON_HEADERS)) merged.set(name, value);
    headers = merged;
  }
  // A Response made only if someone needs one: toNodeHandler writes it as it is (docs/server.md, "Speed").
  return lazyResponse(JSON.stringify(body), init.status ?? 200, headers);
}

/**
 * Turns any thrown value into the kit's error answer `{"error":{"code","message"}}`:
 * - kit errors answer with their own `status` (401 for sessions and context tokens, 403 for
 *   access, 400 for bad input, …), and their own message except where it describes this server's
 *   insides (`ERR_REPLAY_STORE_FULL`: sizes and settings, `ERR_STORE_UNAVAILABLE`: what Redis or
 *   its client said, are for `onError` and the log; the wait goes in `Retry-After`);
 * - failures of the marketplace itself answer 502, 503 (rate limited, with `Retry-After`) or
 *   504 (timeout), never the upstream status, which would misdescribe this server, and with a
 *   message of their own: the marketplace's text (a revoked API key, an OAuth description) is
 *   for the server's logs (`onError`), not for the browser;
 * - anything else is a 500 `ERR_INTERNAL` that reveals nothing.
 *
 * @example
 * try {
 *   const { session } = await backend.requireEntitlement(request, { feature: 'export' });
 *   return exportFor(session.userId);
 * } catch (error) {
 *   return toErrorResponse(error);
 * }
 */
export function toErrorResponse(error: unknown): Response {
  if (!isKitError(error)) {
    return jsonResponse(new MarketplaceKitError('ERR_INTERNAL', 'Internal error').toJSON(), { status: 500 });
  }
  const headers = new Headers();
  let status = error.status ?? 500;
  const publicMessage = INTERNAL_FAILURE[error.code];
  let body = publicMessage === undefined ? error.toJSON() : { error: { code: error.code, message: publicMessage } };
  if (error instanceof MarketplaceApiError) {
    status = error.code === 'ERR_TIMEOUT' ? 504 : error.code === 'ERR_RATE_LIMITED' ? 503 : 502;
    body = { error: { code: error.code, message: MARKETPLACE_FAILURE[error.code] ?? MARKETPLACE_FAILURE.ERR_HTTP! } };
  }
  const retryAfter = Math.ceil((error.retryAfterMs ?? Number.NaN) / 1000);
  if (Number.isSafeInteger(retryAfter) && retryAfter >= 0) headers.set('retry-after', String(retryAfter));
  if (status < 400 || status > 599) status = 500;
  if (status === 401 && error.code.startsWith('ERR_SESSION')) headers.set('www-authenticate', 'Bearer');
  return jsonResponse(body, { status, headers });
}

/** This server's own trouble: the details (sizes, settings) are for `onError`, not for the browser. */
const INTERNAL_FAILURE: Partial<Record<ErrorCode, string>> = {
  ERR_REPLAY_STORE_FULL: 'This server is busy: retry in a few minutes',
  ERR_STORE_UNAVAILABLE: 'This server cannot reach its shared store: retry in a few seconds',
};

const MARKETPLACE_FAILURE: Partial<Record<ErrorCode, string>> = {
  ERR_HTTP: 'The marketplace could not complete the request',
  ERR_RESPONSE_INVALID: 'The marketplace sent an answer this server could not read',
  ERR_TIMEOUT: 'The marketplace did not answer in time',
  ERR_RATE_LIMITED: 'The marketplace is busy: retry later',
  ERR_NETWORK: 'The marketplace could not be reached',
  ERR_OAUTH: 'The marketplace refused the sign-in',
  ERR_ABORTED: 'The request was cancelled',
};
