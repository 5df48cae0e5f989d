import { MarketplaceKitError, type ErrorCode, type MarketplaceKitErrorOptions } from '../shared/errors.js';

/** Which marketplace call failed. */
export type MarketplaceEndpoint = 'token' | 'whoami' | 'entitlements';

/** The details of a `MarketplaceApiError`. */
export interface MarketplaceApiErrorOptions extends MarketplaceKitErrorOptions {
  /** The marketplace's HTTP status, when an answer arrived. */
  status?: number | undefined;
  /** The marketplace's own error code: RFC 6749 `error`, or the API's `error.code`. */
  upstreamCode?: string | undefined;
  /** How long the marketplace asked us to wait (429 `Retry-After`), in milliseconds. */
  retryAfterMs?: number | undefined;
}

/**
 * A call to the marketplace failed. `status` is the marketplace's HTTP status, when its answer
 * began (a timeout or network failure while the body was read keeps it; one before any answer has
 * none); the kit's handlers answer such errors with 502/503/504, never
 * with the upstream status itself.
 *
 * @example
 * try {
 *   await client.entitlements({ userId });
 * } catch (error) {
 *   if (error instanceof MarketplaceApiError && error.code === 'ERR_RATE_LIMITED') retryLater(error.retryAfterMs);
 * }
 */
export class MarketplaceApiError extends MarketplaceKitError {
  override name = 'MarketplaceApiError';
  readonly endpoint: MarketplaceEndpoint;

  constructor(code: ErrorCode, endpoint: MarketplaceEndpoint, message: string, options: MarketplaceApiErrorOptions = {}) {
    super(code, message, options);
    this.endpoint = endpoint;
  }
}
