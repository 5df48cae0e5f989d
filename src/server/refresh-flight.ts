/**
 * Refresh-token single flight (docs/redis.md "What is shared"). A marketplace that rotates refresh
 * tokens takes a second use of one for theft and revokes the whole token family: two instances
 * refreshing one token at once must make one request. The first takes a lease and refreshes; the
 * others wait for its outcome, which is kept a short while: the new tokens, or how the refresh
 * failed, so that a failure (a refresh token the marketplace refused, say) is not followed by a
 * second request with the same token. It is sealed with a key derived from the refresh token
 * itself (`lib/sealed-refresh.ts`), so the store never holds a token in clear. Only a lease whose
 * holder died (it ran out with no outcome) is taken over.
 */
import { ExpiringMap } from './lib/expiring-map.js';

/** What `begin` found: this caller refreshes (`lead`), or another did (its `sealed` outcome), or is doing it (`wait`). */
export type RefreshTurn = { state: 'lead' } | { state: 'done'; sealed: string } | { state: 'wait' };

/** The port. Keys are digests of refresh tokens (`refreshKey`), never tokens. */
export interface RefreshFlight {
  /** The outcome if one is kept; else a lease for `owner` until `leaseUntil` if nobody holds one; else `wait`. */
  begin(key: string, owner: string, leaseUntil: number, now: number): RefreshTurn | Promise<RefreshTurn>;
  /** Keeps the sealed outcome (tokens or failure: the store cannot tell) until `keepUntil`, and ends the lease. */
  finish(key: string, owner: string, sealed: string, keepUntil: number, now: number): void | Promise<void>;
}

/** Settled refreshes the memory default keeps at most. */
const MAX_SETTLED_REFRESHES = 10_000;

/**
 * The in-memory default, one per client.
 *
 * @example
 * const client = createMarketplaceClient({ siteUrl, clientId, clientSecret, stores: { refresh: createMemoryRefreshFlight() } });
 */
export function createMemoryRefreshFlight(): RefreshFlight {
  const outcomes = new ExpiringMap<string>(MAX_SETTLED_REFRESHES);
  const leases = new ExpiringMap<string>(MAX_SETTLED_REFRESHES);
  return {
    begin(key, owner, leaseUntil, now) {
      const sealed = outcomes.get(key, now);
      if (sealed !== undefined) return { state: 'done', sealed };
      const holder = leases.get(key, now);
      if (holder !== undefined && holder !== owner) return { state: 'wait' };
      leases.set(key, owner, leaseUntil);
      return { state: 'lead' };
    },
    finish(key, _owner, sealed, keepUntil) {
      leases.delete(key);
      outcomes.set(key, sealed, keepUntil);
    },
  };
}
