/**
 * The one error of a shared store that failed (docs/redis.md "When Redis fails"): it did not answer
 * within its timeout, or could not be reached. The kit then fails closed: a launch or a webhook is
 * answered 503 with `Retry-After`, so that the browser or the marketplace tries again, and nothing
 * is accepted that the store could not check.
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
