/**
 * The server's default log of what goes wrong (docs/server.md, "Quiet logs"): quiet under attack,
 * loud about bugs.
 *
 * - An expected rejection (a kit error answered 4xx, such as a forged webhook signature or a bad
 *   context token, or the load-shedding `ERR_REPLAY_STORE_FULL` and `ERR_RATE_LIMITED`) is one
 *   line without a stack, and its repeats are counted: at most one line per code every 10 s,
 *   then one line with how many more came.
 * - Anything else is unexpected (a bug, a store or upstream failure): every one is written with
 *   its stack, as `console.error` writes an error.
 */
import { isKitError, type ErrorCode } from '../shared/errors.js';
import type { Clock } from './lib/clock.js';

/** Options of `createErrorLog`. */
export interface ErrorLogOptions {
  /** Where lines go, as `console.error` takes them (the default). */
  write?: ((...parts: unknown[]) => void) | undefined;
  /** Said before an unexpected error, as in `[marketplace-app-kit] app backend: <error>` (default `server`). */
  context?: string | undefined;
  /** Injected clock (tests); by default the real one, whose timers never keep the process alive. */
  clock?: Clock | undefined;
  /** How long repeats of one code are counted before the next line about it (default 10 000 ms). */
  intervalMs?: number | undefined;
}

/** What `createErrorLog` returns: pass it errors (and the request, when there is one). */
export type ErrorLog = (error: unknown, request?: Request) => void;

/** Rejections that a flood of bad or excess requests causes, with nothing to debug in their stacks. */
const EXPECTED_LOAD_CODES: ReadonlySet<ErrorCode> = new Set(['ERR_REPLAY_STORE_FULL', 'ERR_RATE_LIMITED']);

const PREFIX = '[marketplace-app-kit]';

/** True for an error the server expects under attack or load: logged as one line, repeats counted. */
export function isExpectedRejection(error: unknown): boolean {
  return isKitError(error) && ((error.status !== undefined && error.status >= 400 && error.status < 500) || EXPECTED_LOAD_CODES.has(error.code));
}

/**
 * Creates the quiet log that `createAppBackend` and the adapters use when given no `onError`.
 * Use it in an `onError` of your own to keep its lines beside your own handling.
 *
 * @example
 * const log = createErrorLog({ context: 'app backend' });
 * const backend = createAppBackend({ ...options, onError: (error, request) => { metrics.count(error); log(error, request); } });
 */
export function createErrorLog(options: ErrorLogOptions = {}): ErrorLog {
  const write = options.write ?? ((...parts: unknown[]) => console.error(...parts));
  const context = options.context ?? 'server';
  const intervalMs = options.intervalMs ?? 10_000;
  const { clock } = options;
  const now = () => (clock ? clock.now() : Date.now());
  /** Codes with a line written lately: their repeats until `until` are counted, not written. */
  const windows = new Map<ErrorCode, { until: number; repeats: number; latest: string; generation: number }>();
  let generations = 0;

  /** Opens a window for `code` from now, closed by a timer unless a later window replaced it. */
  const open = (code: ErrorCode, latest: string) => {
    const generation = ++generations;
    windows.set(code, { until: now() + intervalMs, repeats: 0, latest, generation });
    const close = () => {
      const window = windows.get(code);
      if (window?.generation === generation) settle(code);
    };
    if (clock) void clock.sleep(intervalMs).then(close, () => undefined);
    else setTimeout(close, intervalMs).unref();
  };

  /** Ends the window of `code`: the count of its repeats, if any, in one line, which opens the next window. */
  const settle = (code: ErrorCode) => {
    const window = windows.get(code)!;
    if (window.repeats === 0) {
      windows.delete(code);
      return;
    }
    write(`${PREFIX} ${code}: ${window.repeats} more in the last ${Math.round(intervalMs / 1000)} s (latest: ${window.latest})`);
    open(code, window.latest);
  };

  return (error, request) => {
    if (!isExpectedRejection(error) || !isKitError(error)) {
      write(`${PREFIX} ${context}:`, error);
      return;
    }
    const line = `${error.code} (${error.status ?? 500})${request ? ` ${request.method} ${pathOf(request)}` : ''}: ${error.message}`;
    let window = windows.get(error.code);
    // Its timer is late (a busy event loop): the count goes out now, and this one counts in the next window.
    if (window && now() >= window.until) {
      settle(error.code);
      window = windows.get(error.code);
    }
    if (window) {
      window.repeats++;
      window.latest = line;
      return;
    }
    write(`${PREFIX} ${line}`);
    open(error.code, line);
  };
}

/** The request's path without its query, which may carry tokens. */
function pathOf(request: Request): string {
  const { url } = request;
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const end = url.indexOf('?');
  return start < 0 ? '/' : url.slice(start, end < 0 ? undefined : end);
}
