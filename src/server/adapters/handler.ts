/**
 * What both adapters do around the app's handler: check what they are given, call it, and turn
 * what it threw (or an answer that is not a Response) into the kit's error answer, telling
 * `onError` of each 5xx.
 */
import { MarketplaceKitError } from '../../shared/errors.js';
import { exactOrigin } from '../../shared/origin.js';
import { functionOption } from '../../shared/options.js';
import { createErrorLog } from '../error-log.js';
import { isLazyResponse } from '../lib/lazy-response.js';
import { toErrorResponse } from '../responses.js';

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
 * The handler's answer. What it threw becomes the kit's error answer (`toErrorResponse`), and
 * `onError` hears of each 5xx among them; an answer that is not a `Response` is a 500 too.
 */
export async function answer(handler: FetchHandler, request: Request, options: NodeAdapterOptions): Promise<Response> {
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
export function tell(options: NodeAdapterOptions, error: unknown, request: Request): void {
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

/** The options with an `onError`: the app's, else a quiet log of the adapter's own (`createErrorLog`). */
export function withLog<T extends NodeAdapterOptions>(options: T): T {
  return options.onError ? options : { ...options, onError: createErrorLog({ context: 'the handler failed' }) };
}

export function assertAdapter(name: string, handler: unknown, options: NodeAdapterOptions): void {
  if (typeof handler !== 'function') {
    throw new MarketplaceKitError('ERR_CONFIG', `${name} needs a handler, (request: Request) => Promise<Response> such as createAppBackend's, got ${String(handler)}`);
  }
  functionOption(options.onError, `${name}: onError`);
  const { origin } = options;
  if (origin !== undefined && exactOrigin(origin) === null) {
    throw new MarketplaceKitError('ERR_CONFIG', `The adapter's origin must be an exact http(s) origin such as https://app.example, got ${JSON.stringify(origin)}`);
  }
}

/** The methods a Web `Request` carries to the handler: all a 405 of the adapters can name in `Allow`. */
const CARRIED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/** The kit's error answer for a request refused before the handler saw it; a 405 names what is served (RFC 9110 §15.5.6). */
export function refusedBeforeHandler(error: unknown): Response {
  const response = toErrorResponse(error);
  if (response.status === 405) response.headers.set('allow', CARRIED_METHODS);
  return response;
}
