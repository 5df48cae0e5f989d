/**
 * The per-user revocation cut-off (docs/redis.md "What is shared"): sessions are not stored, so
 * `user.revoked` ends a user's sessions by remembering when it arrived; `requireSession` refuses
 * every session of that user issued before then (401 `ERR_SESSION_REVOKED`). Shared, an instance
 * that never saw the webhook refuses them too.
 */
import { ExpiringMap } from './lib/expiring-set.js';

/** The port. The memory default serves one process; `createRedisStores` shares it. */
export interface RevocationStore {
  /** The user revoked the app at `at` (ms): sessions issued up to then are refused until `keepUntil`, when every one of them has expired. */
  revoke(userId: string, at: number, keepUntil: number, now: number): void | Promise<void>;
  /** The latest cut-off of `userId`, or null when none holds. */
  revokedAt(userId: string, now: number): number | null | Promise<number | null>;
}

/**
 * The in-memory default (one process). It keeps a cut-off only as long as sessions live (15 min at
 * most), for up to 100 000 users.
 *
 * @example
 * const backend = createAppBackend({ ...options, stores: { revocations: createMemoryRevocationStore() } });
 */
export function createMemoryRevocationStore(): RevocationStore {
  const cutoffs = new ExpiringMap<number>(100_000);
  return {
    revoke(userId, at, keepUntil, now) {
      cutoffs.set(userId, Math.max(at, cutoffs.get(userId, now) ?? 0), Math.max(keepUntil, cutoffs.expiresAt(userId, now) ?? 0));
    },
    revokedAt: (userId, now) => cutoffs.get(userId, now) ?? null,
  };
}
