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
  /** The request answered, when `send` sent it: its errors name its route and never quote its credentials. */
  request?: SentRequest | undefined;
}

/** What the messages about a request may say of it. */
export interface SentRequest {
  /** Method and path, such as `GET /api/v1/whoami`: never the query (it names a user) or a credential. */
  route: string;
  /**
   * `text` with every credential the request carried replaced by `[redacted]`: a proxy or
   * marketplace error that repeats the request (a client secret, an API key, a token, a code)
   * must not carry it into a message and on to `onError` and the logs.
   */
  redact(text: string): string;
}

/**
 * Sends one request and reads the whole body, all within `timeoutMs`. `secrets` are the
 * credentials it carries, which no message of its errors will show.
 */
export async function send(
  transport: Transport,
  endpoint: MarketplaceEndpoint,
  url: string,
  init: RequestInit,
  signal?: AbortSignal,
  secrets: readonly string[] = [],
): Promise<Answer> {
  const request = sentRequest(url, init, secrets);
  const name = requestName(endpoint, request);
  if (signal?.aborted) {
    throw new MarketplaceApiError('ERR_ABORTED', endpoint, `The ${name} was aborted`, { cause: signal.reason });
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
    const text = await untilAborted(readText(response, endpoint, request), combined);
    return { status: response.status, headers: response.headers, text, request };
  } catch (error) {
    if (error instanceof MarketplaceApiError) throw error;
    const where = status === undefined ? '' : ` (after HTTP ${status}, while reading the body)`;
    // A cause goes into the logs with the message (its message, its stack): one that quotes a
    // credential is left out, and the message keeps its reason, redacted.
    const options = { ...(status === undefined ? {} : { status }), ...(quotesCredential(error, request) ? {} : { cause: error }) };
    if (timeout.aborted) {
      throw new MarketplaceApiError('ERR_TIMEOUT', endpoint, `The ${name} timed out after ${transport.timeoutMs} ms${where}`, options);
    }
    if (signal?.aborted) {
      throw new MarketplaceApiError('ERR_ABORTED', endpoint, `The ${name} was aborted${where}`, options);
    }
    // undici says only "fetch failed"; what happened (ECONNREFUSED, ENOTFOUND…) is in its cause.
    const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
    const detail = typeof cause?.code === 'string' ? ` (${cause.code})` : typeof cause?.message === 'string' ? ` (${cause.message})` : '';
    // A fetch of the app's own (a wrapper, a proxy agent) may quote the request in its error.
    const reason = request.redact(`${error instanceof Error ? error.message : String(error)}${detail}`);
    throw new MarketplaceApiError('ERR_NETWORK', endpoint, `The ${name} to ${new URL(url).origin} failed${where}: ${reason}`, options);
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

const REDACTED = '[redacted]';
/**
 * Shorter "credentials" are left as they are: no issued one is that short, and a test's code `c`
 * would turn every `c` of a message into `[redacted]`.
 */
const MIN_REDACTED_LENGTH = 8;

function sentRequest(url: string, init: RequestInit, secrets: readonly string[]): SentRequest {
  // Longest first: a credential that holds another is replaced whole. As an echo may hold it too:
  // JSON text (an echo of the JSON body, read from a JSON answer, holds `"` and `\` escaped, and
  // `/` as `\/` from PHP), and percent-encoded (a query or form echo: a base64 secret's `+/=`).
  const forms = [
    ...new Set(
      secrets
        .filter((secret) => secret.length >= MIN_REDACTED_LENGTH)
        .flatMap((secret) => {
          const json = JSON.stringify(secret).slice(1, -1);
          return [secret, json, json.replaceAll('/', '\\/'), encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)];
        }),
    ),
  ];
  forms.sort((a, b) => b.length - a.length);
  return {
    route: `${(init.method ?? 'GET').toUpperCase()} ${new URL(url).pathname}`,
    redact: (text) => forms.reduce((redacted, form) => redacted.replaceAll(form, REDACTED), text),
  };
}

/** Whether an error, or a cause of it, quotes a credential of `request` in its message or stack. */
function quotesCredential(error: unknown, request: SentRequest): boolean {
  for (let level = error, depth = 0; level !== null && level !== undefined && depth < 5; level = (level as { cause?: unknown }).cause, depth++) {
    const texts = typeof level === 'object' ? [(level as { message?: unknown }).message, (level as { stack?: unknown }).stack] : [level];
    if (texts.some((text) => typeof text === 'string' && request.redact(text) !== text)) return true;
    if (typeof level !== 'object') break;
  }
  return false;
}

/** `marketplace whoami request (GET /api/v1/whoami)`: which call, and where it went when `send` sent it. */
export function requestName(endpoint: MarketplaceEndpoint, request?: SentRequest): string {
  return `marketplace ${endpoint} request${request ? ` (${request.route})` : ''}`;
}

/** `marketplace whoami answer (HTTP 200, GET /api/v1/whoami)`. */
export function answerName(endpoint: MarketplaceEndpoint, status: number, request?: SentRequest): string {
  return `marketplace ${endpoint} answer (HTTP ${status}${request ? `, ${request.route}` : ''})`;
}

async function readText(response: Response, endpoint: MarketplaceEndpoint, request: SentRequest): Promise<string> {
  if (!response.body) return '';
  const tooLarge = () =>
    new MarketplaceApiError('ERR_RESPONSE_INVALID', endpoint, `The ${answerName(endpoint, response.status, request)} is larger than ${MAX_ANSWER_BYTES} bytes`, {
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
  const name = answerName(endpoint, answer.status, answer.request);
  const invalid = (detail: string, cause?: unknown) =>
    new MarketplaceApiError('ERR_RESPONSE_INVALID', endpoint, `The ${name} ${detail}`, {
      status: answer.status,
      cause,
    });
  if (answer.text.trim() === '') throw invalid('has an empty body');
  const parsed = parseJson(answer.text);
  if (parsed === NOT_JSON) throw invalid(`is not JSON (${describeBody(answer)})`);
  const result = schema.safeParse(parsed.value);
  if (!result.success) {
    throw new MarketplaceApiError('ERR_RESPONSE_INVALID', endpoint, describeFailure(name, result.error), {
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
  const prefix = `The ${requestName(endpoint, answer.request)} failed with HTTP ${status}`;
  // The marketplace's own words, without what the request carried (an echo of it).
  const words = (text: string, max?: number) => upstreamText(answer.request?.redact(text) ?? text, max);

  if (status === 429) {
    const asked = readRetryAfter(answer.headers.get('retry-after'), now) ?? readRateLimitReset(answer.headers.get('x-ratelimit-reset'), now);
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
    const error = words(oauth.data.error, MAX_UPSTREAM_CODE);
    const description = oauth.data.error_description ? `: ${words(oauth.data.error_description)}` : '';
    // An OAuth error answer is a 4xx (RFC 6749 §5.2). A 5xx is trouble on the marketplace's side
    // whatever its body says (ERR_HTTP, with what it said): never a refusal that ends a user's grant.
    const code = status >= 400 && status < 500 ? 'ERR_OAUTH' : 'ERR_HTTP';
    return new MarketplaceApiError(code, endpoint, `${prefix}: ${error}${description}`, { status, upstreamCode: error });
  }
  const api = ApiErrorBody.safeParse(value);
  if (api.success) {
    const code = words(api.data.error.code, MAX_UPSTREAM_CODE);
    return new MarketplaceApiError('ERR_HTTP', endpoint, `${prefix}: ${code}: ${words(api.data.error.message)}`, { status, upstreamCode: code });
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
 * The longest wait a `Retry-After` is taken for. The marketplace's limits are per minute (docs/marketplace.md#rate-limits): after a
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

/**
 * The wait until `X-RateLimit-Reset` (Unix seconds, docs/decisions.md#marketplace-api), for a 429 without `Retry-After`.
 * Undefined when absent, unreadable or already past (a clock apart from the marketplace's): the
 * client then backs off as it would without either header.
 */
function readRateLimitReset(value: string | null, now: number): number | undefined {
  const trimmed = value?.trim() ?? '';
  if (!/^\d{1,12}$/.test(trimmed)) return undefined;
  const wait = Number(trimmed) * 1000 - now;
  return wait > 0 ? wait : undefined;
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
  // The server's words as well: cut, like an upstream code.
  const type = upstreamText(answer.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type', MAX_UPSTREAM_CODE);
  if (/^\s*</.test(answer.text)) return `an HTML or XML page, ${type}`;
  if (/json/i.test(type) || /^\s*[[{]/.test(answer.text)) {
    return parseJson(answer.text) === NOT_JSON ? `unreadable or truncated JSON, ${type}` : `JSON without an error object, ${type}`;
  }
  return `a non-JSON body, ${type}`;
}
