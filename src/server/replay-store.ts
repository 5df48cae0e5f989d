/**
 * The one replay store behind webhook deliveries and context-token `jti`s (docs/decisions.md#session-exchange, docs/decisions.md#webhooks): a key
 * is claimed atomically, so two concurrent copies of one delivery or token cannot both pass, even
 * with a store shared by several processes.
 */
import { MarketplaceKitError } from '../shared/errors.js';
import { functionOption, numberOption } from '../shared/options.js';
import { ExpiringRecords } from './lib/expiring-records.js';
import { StoreCapacity } from './lib/store-capacity.js';
import { ReplayStoreFullError } from './store-error.js';

export { ReplayStoreFullError };

/**
 * Remembers what was already accepted. The default is in memory (one process); with several
 * processes, pass shared stores to `createAppBackend({ stores })`: `createRedisStores` from
 * `marketplace-app-kit/redis` (docs/redis.md), or your own, proven with the conformance suite of
 * `marketplace-app-kit/stores/conformance`.
 *
 * @example
 * const replayStore: ReplayStore = {
 *   claim: async (key, expiresAt, now) => (await redis.set(`mp:${key}`, '1', { PX: Math.max(1, expiresAt - now), NX: true })) === 'OK',
 *   release: async (key) => void (await redis.del(`mp:${key}`)),
 * };
 */
export interface ReplayStore {
  /**
   * Atomically records `key` until `expiresAt` (ms since epoch); false when it is already recorded
   * and unexpired (a replay). Redis: SET key 1 PX (expiresAt - now) NX. `issuedAt`, when the caller
   * knows it (a context token's `iat`), lets a store that lost its data refuse what was issued
   * before the loss.
   */
  claim(key: string, expiresAt: number, now: number, issuedAt?: number): boolean | Promise<boolean>;
  /** Forgets `key` (a delivery whose handler failed, so the marketplace's retry is handled). */
  release(key: string): void | Promise<void>;
}

/** Options of `createMemoryReplayStore`. */
export interface MemoryReplayStoreOptions {
  /** Live keys held at most (default 200 000: 500 launches a second for a context token's whole life). */
  maxEntries?: number | undefined;
  /**
   * Told once when the store fills, and once when it has room again (below 90 % of `maxEntries`):
   * not once per refused request. Default: `console.warn`.
   */
  onFull?: ((message: string) => void) | undefined;
}

/**
 * Live keys the default memory store holds: 500 launches a second for the whole life of a context
 * token (300 s, plus 10 s of clock tolerance) is 155 000; the rest is headroom.
 */
export const DEFAULT_REPLAY_STORE_ENTRIES = 200_000;

const REPLAY_STORE_NAMES = {
  name: 'replay store',
  records: 'keys',
  refused: 'launches and deliveries',
  advice: 'Raise maxEntries (replayStoreSize of createAppBackend) or pass shared stores (docs/redis.md)',
};

/**
 * The default replay store: in memory, bounded, keys forgotten once expired (docs/redis.md
 * "Memory stores"). It fails closed: when `maxEntries` keys are still live, a claim throws
 * `ERR_REPLAY_STORE_FULL` (503) instead of forgetting one, which would let its replay through.
 * A launch answered 503 can be retried as soon as the earliest key expires.
 *
 * @example
 * const replayStore = createMemoryReplayStore({ maxEntries: 500_000 });
 * await verifyWebhook(body, header, { secret, replayStore });
 * await verifyContextToken(token, { clientId, clientSecret, issuer, replayStore });
 */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): ReplayStore {
  const maxEntries = numberOption(options.maxEntries, DEFAULT_REPLAY_STORE_ENTRIES, 'createMemoryReplayStore: maxEntries', { min: 2 });
  const keys = new ExpiringRecords(maxEntries);
  const capacity = new StoreCapacity(keys, REPLAY_STORE_NAMES, functionOption(options.onFull, 'createMemoryReplayStore: onFull'));
  return {
    claim(key, expiresAt, now) {
      if (keys.expiresAt(key, now) !== undefined) return false;
      capacity.admit(now);
      keys.add(key, expiresAt);
      return true;
    },
    release: (key) => keys.delete(key),
  };
}

/**
 * Fails loudly (500, so a webhook is retried) on a store answering anything but a boolean, such
 * as Redis's raw "OK" / null: taking it for either answer would accept replays or drop deliveries.
 */
export function claimAnswer(value: unknown): boolean {
  if (value === true || value === false) return value;
  throw new MarketplaceKitError('ERR_CONFIG', `replayStore.claim must answer true or false (or a promise of one), got ${String(value)}`);
}

/**
 * Claims `keys` in order, for one item known by several keys (a webhook delivery: its signature,
 * then its id). True when every key was fresh; false at the first that was not, the keys before it
 * staying claimed. Identical copies of a delivery meet on the signature, so exactly one of them
 * goes on to the id; re-signed copies meet on the id. A re-signed copy refused by its id keeps its
 * signature claimed, so replaying that copy stays a duplicate after the id's claim (made by an
 * earlier copy, with an earlier timestamp) has expired.
 *
 * A store that fails mid-way gets back what it had claimed (the item is refused with a 5xx, so it
 * is retried, and the retry must not be a duplicate); if that fails too, both failures go to the
 * caller in an `AggregateError`.
 */
export async function claimInOrder(store: ReplayStore, keys: readonly string[], expiresAt: number, now: number, issuedAt?: number): Promise<boolean> {
  const claimed: string[] = [];
  try {
    for (const key of keys) {
      if (!claimAnswer(await store.claim(key, expiresAt, now, issuedAt))) return false;
      claimed.push(key);
    }
  } catch (error) {
    const failures = await releaseEach(store, claimed);
    if (failures.length > 0) throw new AggregateError([error, ...failures], 'The replay store failed to claim a delivery, then to release what it had claimed');
    throw error;
  }
  return true;
}

/** Releases every one of `keys`, even if another's release fails; the first failure is thrown. */
export async function releaseAll(store: ReplayStore, keys: readonly string[]): Promise<void> {
  const failures = await releaseEach(store, keys);
  if (failures.length > 0) throw failures[0];
}

/** Releases each of `keys`; what failed. */
async function releaseEach(store: ReplayStore, keys: readonly string[]): Promise<unknown[]> {
  const results = await Promise.allSettled(keys.map(async (key) => store.release(key)));
  return results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
}
