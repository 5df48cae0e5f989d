/**
 * The kit's calls to the app backend's session routes (docs/runtime.md), each with a timeout and a typed
 * error for every way it can fail: network, timeout, an error status, or a body that is not the
 * session JSON (an HTML error page, a truncated answer).
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKitError, type ErrorCode } from '../shared/errors.js';
import type { EarlyLaunch } from '../shared/early-launch.js';
import { parseOrThrow, sessionResponseSchema, type SessionResponse } from '../shared/schemas.js';
import type { KitTimers } from './environment.js';

/**
 * A `SessionResponse` with the backend's clock when it answered: its `Date` header (whole
 * seconds, so the middle of that second), when the answer had one.
 */
export type ServedSession = SessionResponse & { readonly servedAt?: number };

export interface BackendClient {
  /** Absolute base URL of the session routes, without a trailing slash. */
  readonly base: string;
  /** Sends a request with the kit's timeout; network failures and timeouts become kit errors. */
  send(url: string, init: RequestInit): Promise<Response>;
  /** Sends to `{base}/session{query}` and reads the `SessionResponse`; any other answer throws. */
  session(init: RequestInit, query?: string): Promise<ServedSession>;
  /** Reads a `SessionResponse` from an answer of the session route. */
  read(response: Response, url?: string): Promise<ServedSession>;
  /**
   * Reads the answer of a request sent before the kit existed (the early exchange), as `session`
   * does. Its `Date` is of when it arrived (`receivedAt`), which may be long before now.
   */
  adopt(early: Pick<EarlyLaunch, 'response' | 'receivedAt'>): Promise<ServedSession>;
}

const SERVER_CODE = /^ERR_[A-Z0-9_]{1,60}$/;

/** `work`, unless `signal` aborts first: then its reason (an `AbortError`, as `fetch` rejects). */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * `pageOrigin`: the page's own origin, to tell a backend on another origin (CORS) in messages;
 * `timers`: the kit's clock, for the timeouts and the early answer's age.
 */
export function createBackendClient(base: string, fetchImpl: typeof fetch, timeoutMs: number, pageOrigin: string, timers: Pick<KitTimers, 'now' | 'timeoutSignal'>): BackendClient {
  // A browser hides why a cross-origin request failed; the likeliest reason is named instead.
  const unreachable = !DEV
    ? ''
    : new URL(base).origin === pageOrigin
      ? `The app backend at ${base} could not be reached`
      : `The app backend at ${base} could not be reached: it is on another origin than this page (${pageOrigin}), so it must be running and list this origin in createAppBackend's corsOrigins`;
  /** `late`: how the timeout is named in the message. */
  const failure = (error: unknown, late = `within ${timeoutMs} ms`) => {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    return new MarketplaceKitError(
      timedOut ? 'ERR_TIMEOUT' : 'ERR_NETWORK',
      timedOut ? (DEV ? `The app backend did not answer ${late}` : '') : unreachable,
      { cause: error },
    );
  };
  // Each answer's timeout, which also bounds the reading of its body.
  const deadlines = new WeakMap<Response, AbortSignal>();
  const send = async (url: string, init: RequestInit): Promise<Response> => {
    try {
      // No Referer: the page URL is the app's business, not the backend's (and never the launch).
      // The wait ends at the timeout even if a custom fetch does not honour the signal.
      const signal = timers.timeoutSignal(timeoutMs);
      const response = await unlessAborted(fetchImpl(url, { ...init, referrerPolicy: 'no-referrer', signal }), signal);
      deadlines.set(response, signal);
      return response;
    } catch (error) {
      throw failure(error);
    }
  };

  const read = async (response: Response, url = response.url || base): Promise<ServedSession> => {
    let body: unknown;
    try {
      // Bounded here too: a custom fetch that ignores the signal would let a body that stalls
      // after its headers (a proxy stuck mid-answer) hold the kit for ever.
      body = await unlessAborted(response.json(), deadlines.get(response) ?? timers.timeoutSignal(timeoutMs));
    } catch (error) {
      // The timeout also covers reading the body, and a connection lost in its middle is a
      // TypeError; a body that is not JSON (a SyntaxError) is judged below.
      if (error instanceof DOMException || error instanceof TypeError) throw failure(error);
      if (response.ok) throw notJson(response, url, error);
    }
    if (!response.ok) throw errorFromResponse(response, body, url);
    const session = parseOrThrow(sessionResponseSchema(), body, DEV ? `session response from ${url}` : '', 'ERR_RESPONSE_INVALID', response.status);
    const date = Date.parse(response.headers.get('date') ?? '');
    return Number.isNaN(date) ? session : { ...session, servedAt: date + 500 };
  };

  return {
    base,
    send,
    read,
    session: async (init, query = '') => {
      const url = `${base}/session${query}`;
      return read(await send(url, init), url);
    },
    adopt: async (early) => {
      const session = await read(
        await early.response.catch((error: unknown) => Promise.reject(failure(error, DEV ? "the early exchange in time (earlyLaunchScript's timeoutMs)" : ''))),
      );
      // The answer waited for the page's bundle: the backend's clock has moved on as much since.
      const waited = typeof early.receivedAt === 'number' && Number.isFinite(early.receivedAt) ? timers.now() - early.receivedAt : 0;
      return session.servedAt === undefined || !(waited > 0) ? session : { ...session, servedAt: session.servedAt + waited };
    },
  };
}

/** A success status whose body is no JSON: most often a dev server's page where no proxy forwards. */
function notJson(response: Response, url: string, cause: unknown): MarketplaceKitError {
  return new MarketplaceKitError('ERR_RESPONSE_INVALID', DEV ? `The app backend answered ${response.status} at ${url} with ${bodyKind(response)}` : '', { status: response.status, cause });
}

/** What a body that is no JSON was, for a message. */
function bodyKind(response: Response): string {
  const type = response.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type';
  return /\bjson$/i.test(type) ? 'a body that is not valid JSON' : `${type}, not JSON: is that the app backend (does the dev server forward it)?`;
}

/**
 * The backend's `{error: {code, message}}` as a kit error; anything else as `ERR_HTTP`. A
 * `Retry-After` in seconds (what createAppBackend sends, and exposes to other origins) is kept.
 */
function errorFromResponse(response: Response, body: unknown, url: string): MarketplaceKitError {
  const { status } = response;
  const seconds = response.headers.get('retry-after')?.trim() ?? '';
  const options = /^\d{1,6}$/.test(seconds) ? { status, retryAfterMs: Number(seconds) * 1000 } : { status };
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error.code === 'string' && SERVER_CODE.test(error.code) && typeof error.message === 'string') {
    return new MarketplaceKitError(error.code as ErrorCode, error.message, options);
  }
  // Not the kit's error body: this is not createAppBackend answering (a wrong path or server).
  const hint = () => (status === 404 ? ": is createAppBackend's handler mounted there (createKit's backend, its basePath)?" : '');
  return new MarketplaceKitError('ERR_HTTP', DEV ? `The app backend answered ${status} at ${url}${hint()}` : '', options);
}
