/**
 * `client.refresh()`: one refresh per refresh token, for every caller
 * (docs/server.md#marketplace-client-createmarketplaceclientoptions, docs/redis.md "What is
 * shared"). A marketplace that rotates refresh tokens takes a second use of one for theft and
 * revokes the whole family, so:
 *
 * - concurrent calls in this client share one request;
 * - every client of one `RefreshFlight` (the instances, on shared stores) shares it too: the first
 *   takes a lease and sends it, the others wait for its sealed outcome, success or failure alike,
 *   and only a lease that ran out with no outcome (its holder died) is taken over;
 * - for `REFRESH_REUSE_WINDOW_MS` after it succeeded, a call with the spent token gets the same
 *   tokens; for `REFRESH_FAILURE_KEEP_MS` after it failed, the same failure, but after a 429 (the
 *   token unspent) only while the marketplace asks to wait.
 */
import { MarketplaceApiError } from '../api-error.js';
import type { Clock } from '../lib/clock.js';
import { ExpiringMap } from '../lib/expiring-map.js';
import { failedRefresh, openOutcome, refreshError, refreshKey, sealOutcome, type RefreshOutcome } from '../lib/sealed-refresh.js';
import { randomToken, type TokenSet } from '../oauth.js';
import type { RefreshFlight } from '../refresh-flight.js';
import { abortable, abortedError } from './shared-work.js';

/**
 * How long a successful refresh answers later calls with the refresh token it spent. A
 * marketplace that rotates refresh tokens takes a second use of one for theft and revokes the
 * whole family, the new tokens included (the simulator does): a caller that read the old token
 * before the refresh ended must not send it again.
 */
export const REFRESH_REUSE_WINDOW_MS = 60_000;
/**
 * How long a failed refresh answers the callers that were waiting for it, and later calls with
 * the same refresh token, with its failure instead of a second request with that token.
 */
const REFRESH_FAILURE_KEEP_MS = 10_000;
/** How long a 429 is kept at least: long enough for the callers polling now (`REFRESH_POLL_MS`). */
const RATE_LIMITED_KEEP_MS = 1_000;
const MAX_SETTLED_REFRESHES = 10_000;
/** How often a refresh waiting for another instance's looks for its outcome, at first and at most. */
const REFRESH_POLL_MS = [25, 250] as const;

/** What the single flight needs of its client. */
export interface RefreshOptions {
  clock: Clock;
  flight: RefreshFlight;
  /** A refresh with every retry it may make: a caller waiting for another's gives up after this. */
  leaseMs: number;
  /** Sends the refresh grant for `refreshToken`. */
  send(refreshToken: string): Promise<TokenSet>;
}

/** The client's `refresh`, its argument already checked. */
export function refreshSingleFlight({ clock, flight, leaseMs, send }: RefreshOptions): (refreshToken: string, signal?: AbortSignal) => Promise<TokenSet> {
  // Refreshes in flight in this client, then those that succeeded lately, by the refresh token they spent.
  const refreshes = new Map<string, Promise<TokenSet>>();
  const refreshed = new ExpiringMap<TokenSet>(MAX_SETTLED_REFRESHES);

  /** One refresh of `refreshToken` for every client of the flight store. */
  async function refreshOnce(refreshToken: string): Promise<TokenSet> {
    const key = refreshKey(refreshToken);
    const owner = randomToken('', 12);
    const giveUpAt = clock.now() + leaseMs;
    for (let pause: number = REFRESH_POLL_MS[0]; ; pause = Math.min(pause * 2, REFRESH_POLL_MS[1])) {
      const now = clock.now();
      const turn = await flight.begin(key, owner, now + leaseMs, now);
      if (turn.state === 'done') {
        const outcome = openOutcome(turn.sealed, refreshToken);
        if (outcome === null) throw new MarketplaceApiError('ERR_RESPONSE_INVALID', 'token', 'The refresh result another instance shared could not be opened');
        if ('failure' in outcome) throw refreshError(outcome.failure, clock.now());
        refreshed.set(refreshToken, outcome.tokens, keptUntil(outcome, clock.now()));
        return outcome.tokens;
      }
      if (turn.state === 'lead') return lead(refreshToken, key, owner);
      if (now >= giveUpAt) throw new MarketplaceApiError('ERR_TIMEOUT', 'token', `Another instance's refresh of this token did not finish within ${leaseMs} ms`);
      await clock.sleep(pause);
    }
  }

  /** Sends the refresh, and shares its outcome: the new tokens for a while, a failure briefly. */
  async function lead(refreshToken: string, key: string, owner: string): Promise<TokenSet> {
    let outcome: RefreshOutcome;
    let failure: unknown;
    try {
      outcome = { tokens: await send(refreshToken) };
    } catch (error) {
      failure = error;
      outcome = failedRefresh(error, clock.now());
    }
    const keepUntil = keptUntil(outcome, clock.now());
    if ('tokens' in outcome) refreshed.set(refreshToken, outcome.tokens, keepUntil);
    // The outcome is this caller's either way; others wait out the lease if the store failed.
    await Promise.resolve(flight.finish(key, owner, sealOutcome(outcome, refreshToken), keepUntil, clock.now())).catch(() => undefined);
    if ('failure' in outcome) throw failure;
    return outcome.tokens;
  }

  /** Until when `outcome` answers the calls with the same refresh token, from `now`. */
  function keptUntil(outcome: RefreshOutcome, now: number): number {
    if ('tokens' in outcome) return Math.min(now + REFRESH_REUSE_WINDOW_MS, outcome.tokens.expiresAt);
    const { code, retryAt = 0 } = outcome.failure;
    // A 429 left the token unspent: it may go again once the marketplace's wait is over.
    if (code === 'ERR_RATE_LIMITED') return Math.min(Math.max(now + RATE_LIMITED_KEEP_MS, retryAt), now + REFRESH_FAILURE_KEEP_MS);
    return now + REFRESH_FAILURE_KEEP_MS;
  }

  return async (refreshToken, signal) => {
    const settled = refreshed.get(refreshToken, clock.now());
    if (settled) return abortable('token', Promise.resolve(settled), signal);
    let shared = refreshes.get(refreshToken);
    if (!shared) {
      // A caller gone before the call starts no refresh (it would spend the token for nobody).
      if (signal?.aborted) throw abortedError('token', signal);
      // Shared by every caller, so no single caller's signal may cancel it.
      shared = refreshOnce(refreshToken).finally(() => refreshes.delete(refreshToken));
      refreshes.set(refreshToken, shared);
    }
    return abortable('token', shared, signal);
  };
}
