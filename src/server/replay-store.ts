/**
 * The one replay store behind webhook deliveries and context-token `jti`s (docs/decisions.md#session-exchange, docs/decisions.md#webhooks): a key
 * is claimed atomically, so two concurrent copies of one delivery or token cannot both pass, even
 * with a store shared by several processes.
 */
import { MarketplaceKitError } from '../shared/errors.js';
import { numberOption } from '../shared/options.js';
import { ExpiringSet } from './lib/expiring-set.js';

/**
 * `ERR_REPLAY_STORE_FULL` (503): the memory store holds `maxEntries` unexpired keys. `retryAfterMs`
 * is when its older half has expired at the latest; `toErrorResponse` sends it as `Retry-After`.
 */
export class ReplayStoreFullError extends MarketplaceKitError {
  constructor(retryAfterMs: number) {
    super(
      'ERR_REPLAY_STORE_FULL',
      `The replay store holds maxEntries unexpired keys: nothing new is accepted for up to ${Math.ceil(retryAfterMs / 1000)} s. Raise maxEntries or pass a shared replayStore`,
      { status: 503, retryAfterMs },
    );
  }
}

/**
 * Remembers what was already accepted. The default is in memory (one process); with several
 * processes, pass one shared store to `createAppBackend({ replayStore })`, e.g. on Redis:
 *
 * @example
 * const replayStore: ReplayStore = {
 *   claim: async (key, expiresAt) => (await redis.set(`mp:${key}`, '1', { PXAT: expiresAt, NX: true })) === 'OK',
 *   release: async (key) => void (await redis.del(`mp:${key}`)),
 * };
 */
export interface ReplayStore {
  /** Atomically records `key` until `expiresAt` (ms since epoch); false when it is already recorded and unexpired (a replay). Redis: SET key 1 PXAT expiresAt NX. */
  claim(key: string, expiresAt: number, now: number): boolean | Promise<boolean>;
  /** Forgets `key` (a delivery whose handler failed, so the marketplace's retry is handled). */
  release(key: string): void | Promise<void>;
}

/**
 * The default replay store: in memory, bounded, keys forgotten once expired. It fails closed:
 * when `maxEntries` keys are still live, a claim throws `ERR_REPLAY_STORE_FULL` (503) instead of
 * forgetting one, which would let its replay through. A launch answered 503 can be retried once
 * keys expire (at most about five minutes); whether the marketplace retries a webhook answered 503
 * is not documented, so `createAppBackend` gives webhooks a store of their own.
 *
 * @example
 * const replayStore = createMemoryReplayStore({ maxEntries: 50_000 });
 * await verifyWebhook(body, header, { secret, replayStore });
 * await verifyContextToken(token, { clientId, clientSecret, issuer, replayStore });
 */
export function createMemoryReplayStore(options: { maxEntries?: number | undefined } = {}): ReplayStore {
  // A NaN limit would never fill (memory without bound). Two is the least: one key in each of the
  // set's two generations.
  const set = new ExpiringSet(numberOption(options.maxEntries, 10_000, 'createMemoryReplayStore: maxEntries', { min: 2 }));
  return {
    claim(key, expiresAt, now) {
      if (set.has(key, now)) return false;
      if (set.isFull(now)) throw new ReplayStoreFullError(set.fullUntil - now);
      set.add(key, expiresAt);
      return true;
    },
    release: (key) => set.delete(key),
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
