/**
 * The per-user revocation cut-off (docs/redis.md "What is shared"): sessions are not stored, so
 * `user.revoked` ends a user's sessions by remembering when it arrived; `requireSession` refuses
 * every session of that user issued before then (401 `ERR_SESSION_REVOKED`). Shared, an instance
 * that never saw the webhook refuses them too.
 */
import { functionOption, numberOption } from '../shared/options.js';
import { ExpiringRecords } from './lib/expiring-records.js';
import { StoreCapacity } from './lib/store-capacity.js';

/** The port. The memory default serves one process; `createRedisStores` shares it. */
export interface RevocationStore {
  /** The user revoked the app at `at` (ms): sessions issued up to then are refused until `keepUntil`, when every one of them has expired. */
  revoke(userId: string, at: number, keepUntil: number, now: number): void | Promise<void>;
  /** The latest cut-off of `userId`, or null when none holds. */
  revokedAt(userId: string, now: number): number | null | Promise<number | null>;
}

/**
 * Users whose cut-off the memory default holds at most. A cut-off lives as long as the sessions it
 * ends (15 min at most): 100 000 is a revocation every 9 ms for 15 minutes, far above what one app
 * sees; about 18 MB when full (docs/redis.md "Memory stores").
 */
const DEFAULT_REVOKED_USERS = 100_000;

const REVOCATION_NAMES = {
  name: 'revocation store',
  records: 'cut-offs',
  refused: 'user.revoked deliveries of other users',
  advice: 'Raise maxUsers of createMemoryRevocationStore or pass shared stores (docs/redis.md)',
};

/**
 * The in-memory default (one process). It keeps a cut-off only as long as sessions live, for up to
 * `maxUsers` users (default 100 000), and never forgets one that holds: full, it refuses a new
 * user's `user.revoked` with 503 `ERR_REPLAY_STORE_FULL` (the webhook route answers 503, so the
 * marketplace retries it), and tells `onFull` (default `console.warn`) once when it fills and once
 * when it has room again.
 *
 * @example
 * const backend = createAppBackend({ ...options, stores: { revocations: createMemoryRevocationStore({ maxUsers: 500_000 }) } });
 */
export function createMemoryRevocationStore(options: { maxUsers?: number | undefined; onFull?: ((message: string) => void) | undefined } = {}): RevocationStore {
  const cutoffs = new ExpiringRecords<number>(numberOption(options.maxUsers, DEFAULT_REVOKED_USERS, 'createMemoryRevocationStore: maxUsers', { min: 1 }));
  const capacity = new StoreCapacity(cutoffs, REVOCATION_NAMES, functionOption(options.onFull, 'createMemoryRevocationStore: onFull'));
  return {
    revoke(userId, at, keepUntil, now) {
      const held = cutoffs.get(userId, now);
      if (held === undefined) capacity.admit(now);
      cutoffs.set(userId, Math.max(at, held ?? 0), Math.max(keepUntil, cutoffs.expiresAt(userId, now) ?? 0));
    },
    revokedAt: (userId, now) => cutoffs.get(userId, now) ?? null,
  };
}
