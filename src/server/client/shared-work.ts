/**
 * Work that several callers of the marketplace client share (a refresh, an entitlement load, a
 * pacing slot): each caller may stop waiting for it with its own signal, which never cancels it
 * for the others.
 */
import { MarketplaceApiError, type MarketplaceEndpoint } from '../api-error.js';
import { untilAborted } from '../lib/http.js';

/** `work` as one caller waits for it: its own signal ends its wait with `ERR_ABORTED`, nothing else. */
export function abortable<T>(endpoint: MarketplaceEndpoint, work: Promise<T>, signal?: AbortSignal): Promise<T> {
  const guarded = work.catch((error: unknown) => {
    throw signal?.aborted && !(error instanceof MarketplaceApiError) ? abortedError(endpoint, signal) : error;
  });
  if (!signal) return guarded;
  return untilAborted(guarded, signal).catch((error: unknown) => {
    throw error === signal.reason && signal.aborted ? abortedError(endpoint, signal) : error;
  });
}

/** `ERR_ABORTED` for a caller whose signal aborted. */
export function abortedError(endpoint: MarketplaceEndpoint, signal: AbortSignal): MarketplaceApiError {
  return new MarketplaceApiError('ERR_ABORTED', endpoint, `The marketplace ${endpoint} request was aborted`, { cause: signal.reason });
}
