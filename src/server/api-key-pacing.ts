/**
 * API-key pacing (docs/redis.md "What is shared"): the marketplace limits each key (100 or 1,000
 * requests a minute), not each client or process. So there is one sliding window per key, shared
 * by every client that uses it (in one process by default, across instances on Redis), and one
 * pause after a 429 that holds all of them.
 */
import { createHash } from 'node:crypto';
import type { Clock } from './lib/clock.js';
import { Pacer, type ReleaseSlot } from './lib/pacer.js';

/** The pacer of one key: slots in arrival order, at most `limit` requests in any `windowMs`. */
export interface KeyPacer {
  /**
   * Waits for a slot and takes it; the returned function gives it back once the request's answer
   * arrived (or it failed), and the slot frees one window later. Rejects with `PacerWaitTooLong`
   * when the slot would come more than `maxWaitMs` after the call, with the signal's reason when
   * it aborts. `holdMs`: the longest a request may take; a slot never given back (its process
   * died) counts as answered then.
   */
  acquire(signal?: AbortSignal, maxWaitMs?: number, holdMs?: number): Promise<ReleaseSlot>;
  /** Nobody sends before `until` (ms since the epoch): the marketplace's Retry-After. */
  pauseUntil(until: number): void | Promise<void>;
}

/** Which key, and its limit. */
export interface PacedKey {
  /** A digest of the API key and the marketplace it is for (`pacedKeyId`): never the key itself. */
  id: string;
  limit: number;
  windowMs: number;
  clock: Clock;
}

/** The port: the pacer of a key. Every call with the same key and limit gets the same pacer. */
export interface ApiKeyPacing {
  pacer(key: PacedKey): KeyPacer;
}

/** The id of an API key at a marketplace: a digest, so that no store holds the key. */
export function pacedKeyId(apiBaseUrl: string, apiKey: string): string {
  return createHash('sha256').update(`${new URL(apiBaseUrl).origin}\n${apiKey}`).digest('base64url');
}

/**
 * Pacing whose `pacer` gives every caller with the same key, limit and clock one pacer, made by
 * `make` the first time: the memory pacing's and the Redis pacing's.
 */
export function pacerPerKey(make: (key: PacedKey) => KeyPacer): ApiKeyPacing {
  // Per clock: clients on a test's virtual clock and on the real one never wait for each other.
  const pacers = new WeakMap<Clock, Map<string, KeyPacer>>();
  return {
    pacer(key) {
      let byKey = pacers.get(key.clock);
      if (!byKey) pacers.set(key.clock, (byKey = new Map()));
      const name = `${key.id} ${key.limit}/${key.windowMs}`;
      let pacer = byKey.get(name);
      if (!pacer) byKey.set(name, (pacer = make(key)));
      return pacer;
    },
  };
}

/**
 * In-memory pacing: one pacer per key, limit and clock, for every client that is given this
 * object. The default of `createMarketplaceClient` is one such object for the whole process, so
 * that two clients on one key never send twice its limit.
 *
 * @example
 * const pacing = createMemoryPacing();
 * const a = createMarketplaceClient({ siteUrl, apiKey, stores: { pacing } });
 */
export function createMemoryPacing(): ApiKeyPacing {
  return pacerPerKey(({ limit, windowMs, clock }) => new Pacer(limit, windowMs, clock));
}

/** The process-wide default. */
export const processPacing: ApiKeyPacing = createMemoryPacing();
