/**
 * Entitlement freshness and the entitlement cache (docs/redis.md "What is shared"). A webhook on
 * one instance invalidates a user's entitlement for every instance at once: the cache is the
 * store's, and each invalidation moves the user's generation on, so that a load that started
 * before it (its answer may predate the change) is never written back.
 */
import type { Entitlement } from '../shared/schemas.js';

/** What `read` found: the cached entitlement (`null`: the user holds none) if any, and the generation to write a load back with. */
export interface EntitlementRead {
  cached: { value: Entitlement | null } | undefined;
  generation: string;
}

/** A load's answer, to cache. */
export interface EntitlementWrite {
  value: Entitlement | null;
  /** From the `read` (or `generation()`) made before the load was sent. */
  generation: string;
  /** When the load was sent: an answer never replaces one from a load sent later. */
  loadedAt: number;
  expiresAt: number;
  now: number;
}

/** The port. The memory default is one cache per client; `createRedisStores` shares one. */
export interface EntitlementStore {
  read(userId: string, now: number): EntitlementRead | Promise<EntitlementRead>;
  /**
   * A generation for a load whose user is known only from its answer (a load by access token): a
   * write with it fails if any user was invalidated since (the memory store tells users apart).
   */
  generation(now: number): string | Promise<string>;
  /** Caches the answer, unless `userId` was invalidated since `generation`; true when written. */
  write(userId: string, entry: EntitlementWrite): boolean | Promise<boolean>;
  /** Drops the user's cached entitlement everywhere and moves the user's generation on. */
  invalidate(userId: string, now: number): void | Promise<void>;
}

/** Users the memory cache holds at most; the one cached first makes room. */
export const MAX_CACHED_USERS = 10_000;
/** Invalidations remembered for loads still running; past that, loads older than the one forgotten are not written. */
const MAX_INVALIDATIONS = 10_000;

/**
 * The in-memory default, one per client (synchronous: a cache hit costs no promise).
 *
 * @example
 * const client = createMarketplaceClient({ siteUrl, apiKey, stores: { entitlements: createMemoryEntitlementStore() } });
 */
export function createMemoryEntitlementStore(): EntitlementStore {
  const cache = new Map<string, { value: Entitlement | null; expiresAt: number; loadedAt: number }>();
  // Each invalidation gets a tick; a generation is the tick when it was read. `invalidatedAt` is
  // kept in tick order, so the oldest goes first; `forgottenUpTo` says which ones are gone.
  const invalidatedAt = new Map<string, number>();
  let tick = 0;
  let forgottenUpTo = 0;
  return {
    read(userId, now) {
      const hit = cache.get(userId);
      return { cached: hit && hit.expiresAt > now ? { value: hit.value } : undefined, generation: String(tick) };
    },
    generation: () => String(tick),
    write(userId, { value, generation, loadedAt, expiresAt, now }) {
      const readAt = Number(generation);
      if ((invalidatedAt.get(userId) ?? 0) > readAt || forgottenUpTo > readAt) return false;
      const current = cache.get(userId);
      if (current && current.expiresAt > now && current.loadedAt > loadedAt) return false;
      cache.delete(userId);
      if (cache.size >= MAX_CACHED_USERS) cache.delete(cache.keys().next().value!);
      cache.set(userId, { value, expiresAt, loadedAt });
      return true;
    },
    invalidate(userId) {
      cache.delete(userId);
      tick += 1;
      invalidatedAt.delete(userId);
      invalidatedAt.set(userId, tick);
      if (invalidatedAt.size > MAX_INVALIDATIONS) {
        const [oldest, at] = invalidatedAt.entries().next().value!;
        invalidatedAt.delete(oldest);
        forgottenUpTo = at;
      }
    },
  };
}
