/**
 * `client.entitlements()`, `invalidate()` and `isCached()` (docs/server.md#marketplace-client-createmarketplaceclientoptions,
 * docs/redis.md "What is shared"): the entitlement cache, in the store, per user, with a short
 * TTL, and the loads callers share.
 *
 * Each load carries the generation it read before it was sent, so that one sent before an
 * invalidation (a webhook) is never written back. Loads in flight are shared: by user id (dropped
 * by `invalidate`), or by access token, whose user shows only in the answer: those are joined only
 * while no invalidation came since (`tick`). A caller asking for a fresh answer joins only a fresh
 * load whose request has not gone out yet.
 */
import type { Entitlement } from '../../shared/schemas.js';
import type { SelectedUser } from '../client.js';
import { createMemoryEntitlementStore, MAX_CACHED_USERS, type EntitlementRead, type EntitlementStore } from '../entitlement-store.js';
import type { Clock } from '../lib/clock.js';
import { ExpiringMap } from '../lib/expiring-map.js';
import { abortable, abortedError } from './shared-work.js';

/** What the entitlement loads need of their client. */
export interface EntitlementLoadOptions {
  clock: Clock;
  /** How long a user's entitlement stays cached; 0 disables the cache. */
  ttlMs: number;
  /** The store given to the client; without one, a memory cache of its own. */
  store: EntitlementStore | undefined;
  /** Asks the marketplace for `who`'s entitlement; `onSend` hears when the request goes out. */
  fetch(who: SelectedUser, onSend: () => void): Promise<Entitlement | null>;
}

/** The client's entitlement methods, their arguments already checked. */
export interface EntitlementLoads {
  entitlements(who: SelectedUser, fresh: boolean, signal: AbortSignal | undefined): Promise<Entitlement | null>;
  invalidate(userId: string): Promise<void>;
  isCached(userId: string): boolean;
}

/** A load of an entitlement that callers share. */
interface EntitlementLoad {
  load: Promise<Entitlement | null>;
  /** The client's invalidation tick when it started. */
  started: number;
  /** It skips the cache. */
  fresh: boolean;
  /** Its request has gone out: a later caller asking for a fresh answer does not join it. */
  sent: boolean;
}

export function entitlementLoads({ clock, ttlMs, store, fetch }: EntitlementLoadOptions): EntitlementLoads {
  const cache = store ?? createMemoryEntitlementStore();
  const inflight = new Map<string, EntitlementLoad>();
  // What this client saw of a shared cache, for `isCached`.
  const seenCached = new ExpiringMap<true>(MAX_CACHED_USERS);
  let tick = 0;

  /** May a caller share the load `entry`? One asking for a fresh answer only shares one whose request has not gone out yet. */
  function joinable(entry: EntitlementLoad, fresh: boolean, byToken: boolean): boolean {
    if (fresh) return entry.fresh && !entry.sent;
    return !byToken || entry.started === tick;
  }

  async function load(who: SelectedUser, read: EntitlementRead | Promise<EntitlementRead> | null, entry: EntitlementLoad): Promise<Entitlement | null> {
    const found = read === null ? null : await read;
    if (found?.cached && !entry.fresh) return found.cached.value;
    const generation = found?.generation ?? (ttlMs > 0 ? await cache.generation(clock.now()) : '');
    const loadedAt = clock.now();
    const value = await fetch(who, () => (entry.sent = true));
    const userId = value?.user_id ?? who.userId;
    if (ttlMs > 0 && userId !== undefined) {
      const expiresAt = clock.now() + ttlMs;
      // The answer is good whether or not it could be cached: a failed write costs a reload, nothing more.
      const written = await Promise.resolve(cache.write(userId, { value, generation, loadedAt, expiresAt, now: clock.now() })).catch(() => false);
      if (written) seenCached.set(userId, true, expiresAt);
    }
    return value;
  }

  return {
    entitlements(who, fresh, signal) {
      const { userId } = who;
      const key = userId !== undefined ? `user:${userId}` : `token:${who.accessToken}`;
      let shared = inflight.get(key);
      if (shared && !joinable(shared, fresh, userId === undefined)) shared = undefined;
      if (!shared) {
        if (signal?.aborted) return Promise.reject(abortedError('entitlements', signal));
        // A load by user id reads the cache first (a fresh one only for the generation); a
        // synchronous store's hit costs no load at all.
        const read = userId !== undefined && ttlMs > 0 ? cache.read(userId, clock.now()) : null;
        if (read !== null && !isThenable(read) && read.cached && !fresh) {
          return abortable('entitlements', Promise.resolve(read.cached.value), signal);
        }
        const entry: EntitlementLoad = { started: tick, fresh, sent: false, load: Promise.resolve(null) };
        // Without the caller's signal: other callers may be waiting on the same load.
        entry.load = load(who, read, entry).finally(() => {
          if (inflight.get(key) === entry) inflight.delete(key);
        });
        inflight.set(key, (shared = entry));
      }
      return abortable('entitlements', shared.load, signal);
    },

    invalidate(userId) {
      inflight.delete(`user:${userId}`);
      seenCached.delete(userId);
      tick += 1;
      try {
        return Promise.resolve(cache.invalidate(userId, clock.now()));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    isCached(userId) {
      if (ttlMs <= 0) return false;
      if (store !== undefined) return seenCached.get(userId, clock.now()) !== undefined;
      return (cache.read(userId, clock.now()) as EntitlementRead).cached !== undefined;
    },
  };
}

/** A store's answer that has yet to come: a promise, or any thenable a custom store returns. */
function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
