/**
 * Sending a marketplace request and turning its answer into data or a typed error are separate
 * steps: `send` only moves bytes (with a timeout), `readJsonAnswer` and `answerError` decide what
 * the bytes mean. Every failure becomes a `MarketplaceApiError` carrying the HTTP status when one
 * arrived: RFC 6749 and API error bodies, HTML error pages, empty and truncated bodies alike.
 */
import type * as z from 'zod/mini';
import { ApiErrorBody, OAuthErrorBody, describeFailure } from '../../shared/schemas.js';
import { MarketplaceApiError, type MarketplaceEndpoint } from '../api-error.js';
import { linkSignals } from './abort.js';
import { readLimited } from './body.js';
import type { Clock } from './clock.js';

export interface Transport {
  fetch: typeof fetch;
  timeoutMs: number;
  clock: Clock;
}

/** An answer read completely: status, headers and the body as text. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** Sends one request and reads the whole body, all within `timeoutMs`. */
export async function send(
  transport: Transport,
  endpoint: MarketplaceEndpoint,
  url: string,
  init: RequestInit,
  signal?: AbortSignal,
): Promise<Answer> {
  if (signal?.aborted) {
    throw new MarketplaceApiError('ERR_ABORTED', endpoint, `The marketplace ${endpoint} request was aborted`, { cause: signal.reason });
  }
  const timeout = AbortSignal.timeout(transport.timeoutMs);
  const linked = signal ? linkSignals(signal, timeout) : null;
  const combined = linked?.signal ?? timeout;
  let status: number | undefined;
  try {
    // Raced against the signal too: a custom fetch that ignores it must not hold the call (and its
    // pacing slot) past the timeout.
    const response = await untilAborted(transport.fetch(url, { ...init, signal: combined, redirect: 'manual' }), combined);
    status = response.status;
    const text = await untilAborted(readText(response, endpoint), combined);
    return { status: response.status, headers: response.headers, text };
  } catch (error) {
    if (error instanceof MarketplaceApiError) throw error;
    const where = status === undefined ? '' : ` (after HTTP ${status}, while reading the body)`;
    const options = { ...(status === undefined ? {} : { status }), cause: error };
    if (timeout.aborted) {
      throw new MarketplaceApiError('ERR_TIMEOUT', endpoint, `The marketplace ${endpoint} request timed out after ${transport.timeoutMs} ms${where}`, options);
    }
    if (signal?.aborted) {
      throw new MarketplaceApiError('ERR_ABORTED', endpoint, `The marketplace ${endpoint} request was aborted${where}`, options);
    }
    // undici says only "fetch failed"; what happened (ECONNREFUSED, ENOTFOUND…) is in its cause.
    const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
    const detail = typeof cause?.code === 'string' ? ` (${cause.code})` : typeof cause?.message === 'string' ? ` (${cause.message})` : '';
    const reason = `${error instanceof Error ? error.message : String(error)}${detail}`;
    throw new MarketplaceApiError('ERR_NETWORK', endpoint, `The marketplace ${endpoint} request to ${new URL(url).origin} failed${where}: ${reason}`, options);
  } finally {
    linked?.dispose();
  }
}

/**
 * `work`, or a rejection with the signal's reason as soon as it aborts. `work` goes on; its own
 * outcome is then nobody's concern (and never an unhandled rejection).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Marketplace answers are small JSON documents; anything larger is refused before it is all read. */
export const MAX_ANSWER_BYTES = 1_000_000;

async function readText(response: Response, endpoint: MarketplaceEndpoint): Promise<string> {
  if (!response.body) return '';
  const tooLarge = () =>
    new MarketplaceApiError('ERR_RESPONSE_INVALID', endpoint, `The marketplace ${endpoint} answer (HTTP ${response.status}) is larger than ${MAX_ANSWER_BYTES} bytes`, {
      status: response.status,
    });
  // Node's ReadableStream is async iterable; the DOM lib's type does not say so.
  const bytes = await readLimited(response.body as unknown as AsyncIterable<Uint8Array>, response.headers.get('content-length'), MAX_ANSWER_BYTES, tooLarge);
  return new TextDecoder().decode(bytes);
}

/** The JSON of a 2xx answer, validated by `schema`; any other answer throws via `answerError`. */
export function readJsonAnswer<S extends z.ZodMiniType>(
  answer: Answer,
  endpoint: MarketplaceEndpoint,
  schema: S,
  now: number,
): z.infer<S> {
  if (answer.status < 200 || answer.status > 299) throw answerError(answer, endpoint, now);
  const invalid = (detail: string, cause?: unknown) =>
    new MarketplaceApiError('ERR_RESPONSE_INVALID', endpoint, `The marketplace ${endpoint} answer (HTTP ${answer.status}) ${detail}`, {
      status: answer.status,
      cause,
    });
  if (answer.text.trim() === '') throw invalid('has an empty body');
  const parsed = parseJson(answer.text);
  if (parsed === NOT_JSON) throw invalid(`is not JSON (${describeBody(answer)})`);
  const result = schema.safeParse(parsed.value);
  if (!result.success) {
    throw new MarketplaceApiError('ERR_RESPONSE_INVALID', endpoint, describeFailure(`marketplace ${endpoint} answer (HTTP ${answer.status})`, result.error), {
      status: answer.status,
      cause: result.error,
    });
  }
  return result.data as z.infer<S>;
}

/** The typed error for a non-2xx answer. */
export function answerError(answer: Answer, endpoint: MarketplaceEndpoint, now: number): MarketplaceApiError {
  const { status } = answer;
  const parsed = parseJson(answer.text);
  const value = parsed === NOT_JSON ? undefined : parsed.value;
  const prefix = `The marketplace ${endpoint} request failed with HTTP ${status}`;

  if (status === 429) {
    const asked = readRetryAfter(answer.headers.get('retry-after'), now);
    const retryAfterMs = asked === undefined ? undefined : Math.min(asked, MAX_RETRY_AFTER_MS);
    const seconds = (ms: number) => Math.ceil(ms / 1000);
    const after =
      asked === undefined ? '' : `; retry after ${seconds(asked)} s${asked > MAX_RETRY_AFTER_MS ? ` (read as ${seconds(MAX_RETRY_AFTER_MS)} s, the longest pause the kit takes)` : ''}`;
    return new MarketplaceApiError('ERR_RATE_LIMITED', endpoint, `${prefix}: rate limited${after}`, {
      status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  const oauth = OAuthErrorBody.safeParse(value);
  if (oauth.success) {
    const error = upstreamText(oauth.data.error, MAX_UPSTREAM_CODE);
    const description = oauth.data.error_description ? `: ${upstreamText(oauth.data.error_description)}` : '';
    // An OAuth error answer is a 4xx (RFC 6749 §5.2). A 5xx is trouble on the marketplace's side
    // whatever its body says (ERR_HTTP, with what it said): never a refusal that ends a user's grant.
    const code = status >= 400 && status < 500 ? 'ERR_OAUTH' : 'ERR_HTTP';
    return new MarketplaceApiError(code, endpoint, `${prefix}: ${error}${description}`, { status, upstreamCode: error });
  }
  const api = ApiErrorBody.safeParse(value);
  if (api.success) {
    const code = upstreamText(api.data.error.code, MAX_UPSTREAM_CODE);
    return new MarketplaceApiError('ERR_HTTP', endpoint, `${prefix}: ${code}: ${upstreamText(api.data.error.message)}`, { status, upstreamCode: code });
  }
  return new MarketplaceApiError('ERR_HTTP', endpoint, `${prefix} (${describeBody(answer)})`, { status });
}

// The three HTTP-date forms a recipient must read (RFC 9110 §5.6.7): IMF-fixdate, RFC 850 and
// asctime (which names no zone: it is GMT).
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
const IMF_FIXDATE = new RegExp(`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC_850 = new RegExp(`^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME = new RegExp(`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/**
 * The longest wait a `Retry-After` is taken for. The seed's limits are per minute (§8): after a
 * minute the key's budget is whole again, so a longer value (a misconfigured proxy's) is read as a
 * minute, and one such answer cannot stop every API-key call for hours. A marketplace that still
 * refuses answers 429 again, and the pause starts over.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * `Retry-After` in milliseconds, at most `MAX_RETRY_AFTER_MS`: delta-seconds or an HTTP date
 * (RFC 9110 §10.2.3). Undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  const asked = readRetryAfter(value, now);
  return asked === undefined ? undefined : Math.min(asked, MAX_RETRY_AFTER_MS);
}

/** `Retry-After` in milliseconds as the answer gives it, not capped. */
function readRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Only an HTTP date: Date.parse alone reads "1.5" or "-5" as dates in 2001.
  const text = IMF_FIXDATE.test(trimmed) || RFC_850.test(trimmed) ? trimmed : ASCTIME.test(trimmed) ? `${trimmed} GMT` : null;
  if (text === null) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): { value: unknown } | typeof NOT_JSON {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return NOT_JSON;
  }
}

const MAX_UPSTREAM_TEXT = 500;
const MAX_UPSTREAM_CODE = 100;

/**
 * The marketplace's own words, as they go into a message that ends up in a log: on one line (a
 * line break cannot forge another log line) and cut at `max` characters.
 */
function upstreamText(text: string, max = MAX_UPSTREAM_TEXT): string {
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ');
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function describeBody(answer: Answer): string {
  if (answer.text.trim() === '') return 'empty body';
  const type = answer.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type';
  if (/^\s*</.test(answer.text)) return `an HTML or XML page, ${type}`;
  if (/json/i.test(type) || /^\s*[[{]/.test(answer.text)) {
    return parseJson(answer.text) === NOT_JSON ? `unreadable or truncated JSON, ${type}` : `JSON without an error object, ${type}`;
  }
  return `a non-JSON body, ${type}`;
}
