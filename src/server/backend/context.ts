/** What every part of `createAppBackend` shares: its options, checked configuration, clock, client, stores and cookies. */
import { isKitError } from '../../shared/errors.js';
import { createErrorLog } from '../error-log.js';
import type { AppBackendOptions } from '../backend.js';
import type { MarketplaceClient } from '../client.js';
import type { Clock } from '../lib/clock.js';
import type { AppCookies } from './cookies.js';
import type { BackendConfig, BackendStores } from './config.js';

export interface BackendContext {
  options: AppBackendOptions;
  config: BackendConfig;
  clock: Clock;
  client: MarketplaceClient;
  stores: BackendStores;
  cookies: AppCookies;
  /** Tells `onError` (or the console) of an error, never failing itself. */
  report(error: unknown, request: Request): void;
}

/** A route's handler. */
export type Route = (request: Request, url: URL) => Promise<Response> | Response;

/**
 * The `report` of a backend: `onError`, or by default the quiet log of `createErrorLog` (one line
 * per expected rejection, repeats counted: docs/server.md, "Quiet logs"). A full memory store and
 * a shared store that fails log one line themselves when that starts (docs/redis.md), so the
 * default leaves out the requests they refuse; `onError` hears of every one.
 */
export function reporter(options: AppBackendOptions): BackendContext['report'] {
  const log = createErrorLog({ context: 'app backend', clock: options.clock });
  return (error, request) => {
    try {
      if (options.onError) options.onError(error, request);
      else if (!isKitError(error, 'ERR_REPLAY_STORE_FULL') && !isKitError(error, 'ERR_STORE_UNAVAILABLE')) log(error, request);
    } catch {
      // A failing logger must not change the answer.
    }
  };
}
