/**
 * The launch limiter behind `maxExchangesPerUser` (docs/redis.md "What is shared"): context tokens
 * one user may exchange for sessions in a window. Shared, it is a cap per user, not per process;
 * it is also what bounds one user's share of the replay store.
 */
import { functionOption, numberOption } from '../shared/options.js';
import { ExpiringRecords } from './lib/expiring-records.js';
import { StoreCapacity } from './lib/store-capacity.js';

/** `counted`: the launch counts; else `retryAfterMs` until the user's window ends. */
export type LaunchDecision = { counted: true } | { counted: false; retryAfterMs: number };

/** The port. The memory default serves one process; `createRedisStores` shares it (one Lua script per call). */
export interface LaunchLimiter {
  /**
   * Counts one launch of `userId`. A window of `windowMs` starts with the user's first counted
   * launch; within it at most `limit` count, and one over the limit counts nothing.
   */
  take(userId: string, limit: number, windowMs: number, now: number): LaunchDecision | Promise<LaunchDecision>;
  /** Takes back one launch of the current window: it made no session (the marketplace failed), so a retry may use it. */
  giveBack(userId: string, now: number): void | Promise<void>;
}

const LAUNCH_NAMES = {
  name: 'launch limiter',
  records: 'users',
  refused: 'launches of other users',
  advice: 'Raise replayStoreSize of createAppBackend (maxUsers of createMemoryLaunchLimiter) or pass shared stores (docs/redis.md)',
};

/**
 * The in-memory default: one process, as many users as the default replay store holds keys, so that
 * no user's count is forgotten while their tokens are live. Full, it refuses with 503
 * `ERR_REPLAY_STORE_FULL`, and tells `onFull` (default `console.warn`) once when it fills and once
 * when it has room again.
 *
 * @example
 * const backend = createAppBackend({ ...options, stores: { launches: createMemoryLaunchLimiter() } });
 */
export function createMemoryLaunchLimiter(options: { maxUsers?: number | undefined; onFull?: ((message: string) => void) | undefined } = {}): LaunchLimiter {
  const counts = new ExpiringRecords<number>(numberOption(options.maxUsers, 200_000, 'createMemoryLaunchLimiter: maxUsers', { min: 1 }));
  const capacity = new StoreCapacity(counts, LAUNCH_NAMES, functionOption(options.onFull, 'createMemoryLaunchLimiter: onFull'));
  return {
    take(userId, limit, windowMs, now) {
      const count = counts.get(userId, now);
      if (count === undefined) {
        capacity.admit(now);
        counts.set(userId, 1, now + windowMs);
        return { counted: true };
      }
      const until = counts.expiresAt(userId, now)!;
      if (count >= limit) return { counted: false, retryAfterMs: until - now };
      counts.set(userId, count + 1, until);
      return { counted: true };
    },
    giveBack(userId, now) {
      const count = counts.get(userId, now);
      if (count !== undefined && count > 0) counts.set(userId, count - 1, counts.expiresAt(userId, now)!);
    },
  };
}
