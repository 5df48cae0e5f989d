/**
 * The errors of a store that cannot take a request (docs/redis.md): a shared store that failed
 * (`ERR_STORE_UNAVAILABLE`: it did not answer within its timeout, could not be reached, or refused
 * the command), and a memory store full of live records (`ERR_REPLAY_STORE_FULL`). The kit then
 * fails closed: a launch or a webhook is answered 503 with `Retry-After`, so that the browser or
 * the marketplace tries again, and nothing is accepted that the store could not check.
 */
import { MarketplaceKitError } from '../shared/errors.js';

/** How long a caller refused for a store failure is asked to wait: a restarting Redis is back within seconds. */
export const STORE_RETRY_AFTER_MS = 2_000;

/** `ERR_STORE_UNAVAILABLE` (503, `retryAfterMs` 2 s): a shared store did not answer in time, or could not be reached. */
export class StoreUnavailableError extends MarketplaceKitError {
  override name = 'StoreUnavailableError';
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('ERR_STORE_UNAVAILABLE', message, { status: 503, retryAfterMs: STORE_RETRY_AFTER_MS, cause: options.cause });
  }
}

/**
 * `ERR_REPLAY_STORE_FULL` (503): a memory store (by default the replay store) holds `maxEntries`
 * unexpired records. `retryAfterMs` is when its earliest record expires, making room;
 * `toErrorResponse` sends it as `Retry-After`.
 */
export class ReplayStoreFullError extends MarketplaceKitError {
  /** `store` names the store and what to do, for a store other than the replay store. */
  constructor(retryAfterMs: number, store: { name: string; advice: string } = { name: 'replay store', advice: 'Raise maxEntries or pass a shared replayStore' }) {
    super(
      'ERR_REPLAY_STORE_FULL',
      `The ${store.name} holds maxEntries unexpired keys: nothing new is accepted for up to ${Math.ceil(retryAfterMs / 1000)} s. ${store.advice}`,
      { status: 503, retryAfterMs },
    );
  }
}
