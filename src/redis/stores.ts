/**
 * `createRedisStores`: every port of `MarketplaceStores` on one Redis (docs/redis.md), for an app
 * backend that runs as several instances. Each operation is one Lua script (atomic, one round
 * trip); every key is under `prefix`; keys made from tokens, signatures or API keys are digests,
 * and the one value made from tokens (a refresh result) is sealed.
 */
import { createHash } from 'node:crypto';
import { MarketplaceKitError } from '../shared/errors.js';
import { functionOption, numberOption } from '../shared/options.js';
import type { Entitlement } from '../shared/schemas.js';
import { pacerPerKey, type KeyPacer, type PacedKey } from '../server/api-key-pacing.js';
import type { EntitlementStore } from '../server/entitlement-store.js';
import { PacerWaitTooLong, type ReleaseSlot } from '../server/lib/pacer.js';
import type { LaunchLimiter } from '../server/launch-limiter.js';
import { randomToken } from '../server/oauth.js';
import type { RefreshFlight } from '../server/refresh-flight.js';
import type { ReplayStore } from '../server/replay-store.js';
import type { RevocationStore } from '../server/revocations.js';
import { StoreUnavailableError } from '../server/store-error.js';
import type { MarketplaceStores } from '../server/stores.js';
import type { WebhookProcessing } from '../server/webhook-processing.js';
import { redisLink, type RedisClient, type RedisLink } from './link.js';
import * as lua from './scripts.js';

/** Options of `createRedisStores`. */
export interface RedisStoresOptions {
  /**
   * A connected node-redis client (`await createClient({ url }).connect()`, the `redis` package v4
   * or later) or an ioredis client. The stores add an `error` listener (one log line per outage).
   */
  client: RedisClient;
  /** Put before every key (default `mpkit:`). On Redis Cluster, make it a hash tag such as `{mpkit}:`. */
  prefix?: string | undefined;
  /** Longest wait for any one Redis call; past it the call fails with `ERR_STORE_UNAVAILABLE` (default 1 000 ms). */
  timeoutMs?: number | undefined;
  /**
   * The longest life of what `replay` claims, from issue to expiry (default 310 000 ms: a context
   * token's 300 s plus 10 s of clock tolerance): a claim that does not say when its item was issued
   * is taken as issued that long before it expires. After Redis lost its data, claims of anything
   * issued before are refused (docs/redis.md "A Redis that lost its data").
   */
  replayLifetimeMs?: number | undefined;
  /** Where outages and recoveries are told, one line each. Default `console.warn`. */
  log?: ((line: string) => void) | undefined;
}

/** How long a user's entitlement generation outlives its last change: longer than any load takes. */
const GENERATION_KEEP_MS = 600_000;
/** Key digests: 192 bits of SHA-256. */
const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32);

/**
 * Every store of the kit on one Redis, shared by each instance that uses the same Redis and
 * prefix. Pass the result to `createAppBackend({ stores })` (and to `createMarketplaceClient({ stores })`
 * for clients of your own).
 *
 * @example
 * import { createClient } from 'redis';
 * import { createRedisStores } from 'marketplace-app-kit/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const backend = createAppBackend({ ...options, stores: createRedisStores({ client: redis }) });
 */
export function createRedisStores(options: RedisStoresOptions): MarketplaceStores {
  if (typeof options !== 'object' || options === null) {
    throw new MarketplaceKitError('ERR_CONFIG', 'createRedisStores: pass the options object ({ client, prefix? })');
  }
  const prefix = options.prefix ?? 'mpkit:';
  if (typeof prefix !== 'string') throw new MarketplaceKitError('ERR_CONFIG', 'createRedisStores: prefix must be a string');
  const timeoutMs = numberOption(options.timeoutMs, 1_000, 'createRedisStores: timeoutMs', { min: 1 });
  const replayLifetimeMs = numberOption(options.replayLifetimeMs, 310_000, 'createRedisStores: replayLifetimeMs', { min: 0 });
  const log = functionOption(options.log, 'createRedisStores: log') ?? ((line: string) => console.warn(line));
  const link = redisLink(options.client, { timeoutMs, log });
  const key = (...parts: string[]) => `${prefix}${parts.join(':')}`;
  const epoch = key('epoch');
  // Started now if this Redis has none (first use, or lost data); a failure here is met again by the first request.
  link.run(lua.TOUCH_EPOCH, [epoch], [Date.now()]).catch(() => undefined);
  return {
    replay: replayStore(link, key, epoch, replayLifetimeMs),
    webhooks: webhookProcessing(link, key, epoch),
    launches: launchLimiter(link, key),
    revocations: revocationStore(link, key, epoch),
    entitlements: entitlementStore(link, key, epoch),
    pacing: pacerPerKey((paced) => redisPacer(link, key, paced)),
    refresh: refreshFlight(link, key),
  };
}

type KeyOf = (...parts: string[]) => string;
const ttl = (until: number, now: number) => Math.max(1, Math.ceil(until - now));

function replayStore(link: RedisLink, key: KeyOf, epoch: string, lifetimeMs: number): ReplayStore {
  return {
    async claim(name, expiresAt, now, issuedAt = expiresAt - lifetimeMs) {
      const claim = key('claim', digest(name));
      const owner = randomToken('', 9);
      try {
        return (await link.run(lua.CLAIM, [epoch, claim], [now, owner, ttl(expiresAt, now), issuedAt])) === 1;
      } catch (error) {
        // A claim that timed out may still arrive: this runs after it on the same connection and
        // takes it back, so that the retry the 503 asks for is not taken for a replay.
        if (error instanceof StoreUnavailableError) link.run(lua.UNCLAIM, [claim], [owner]).catch(() => undefined);
        throw error;
      }
    },
    async release(name) {
      await link.run(lua.UNCLAIM_ANY, [key('claim', digest(name))], []);
    },
  };
}

function webhookProcessing(link: RedisLink, key: KeyOf, epoch: string): WebhookProcessing {
  const keysOf = (names: readonly string[]) => names.map((name) => key('webhook', digest(name)));
  return {
    async begin({ keys, owner, leaseUntil, doneUntil, sentAt, now }) {
      const reply = (await link.run(lua.WEBHOOK_BEGIN, [epoch, ...keysOf(keys)], [now, owner, ttl(leaseUntil, now), ttl(doneUntil, now), sentAt])) as [string, number?];
      if (reply[0] === 'claimed') return { state: 'claimed' };
      if (reply[0] === 'done') return { state: 'done' };
      return { state: 'busy', retryAfterMs: Number(reply[1]) };
    },
    async renew(keys, owner, leaseUntil, now) {
      return (await link.run(lua.WEBHOOK_RENEW, keysOf(keys), [owner, ttl(leaseUntil, now)])) === 1;
    },
    async finish(keys, _owner, doneUntil, now) {
      await link.run(lua.WEBHOOK_FINISH, keysOf(keys), [ttl(doneUntil, now)]);
    },
    async abandon(keys, owner) {
      await link.run(lua.WEBHOOK_ABANDON, keysOf(keys), [owner]);
    },
  };
}

function launchLimiter(link: RedisLink, key: KeyOf): LaunchLimiter {
  return {
    async take(userId, limit, windowMs) {
      const [counted, left] = (await link.run(lua.LAUNCH_TAKE, [key('launches', userId)], [limit === Infinity ? 2 ** 53 : limit, Math.ceil(windowMs)])) as [number, number];
      return counted === 1 ? { counted: true } : { counted: false, retryAfterMs: Number(left) };
    },
    async giveBack(userId) {
      await link.run(lua.LAUNCH_GIVE_BACK, [key('launches', userId)], []);
    },
  };
}

function revocationStore(link: RedisLink, key: KeyOf, epoch: string): RevocationStore {
  return {
    async revoke(userId, at, keepUntil, now) {
      await link.run(lua.REVOKE, [key('revoked', userId)], [Math.floor(at), ttl(keepUntil, now)]);
    },
    async revokedAt(userId, now) {
      const cutoff = Number(await link.run(lua.REVOKED_AT, [epoch, key('revoked', userId)], [now]));
      return cutoff > 0 ? cutoff : null;
    },
  };
}

function entitlementStore(link: RedisLink, key: KeyOf, epoch: string): EntitlementStore {
  const everyone = key('entitlements-generation');
  return {
    async read(userId, now) {
      const [value, expiresAt, generation] = (await link.run(lua.ENTITLEMENT_READ, [epoch, key('entitlement', userId)], [now])) as [string | null, string, string];
      const cached = typeof value === 'string' && Number(expiresAt) > now ? { value: JSON.parse(value) as Entitlement | null } : undefined;
      return { cached, generation };
    },
    async generation(now) {
      return String(await link.run(lua.ENTITLEMENT_GENERATION, [epoch, everyone], [now]));
    },
    async write(userId, { value, generation, loadedAt, expiresAt, now }) {
      const keep = Math.max(GENERATION_KEEP_MS, ttl(expiresAt, now));
      const reply = await link.run(lua.ENTITLEMENT_WRITE, [epoch, key('entitlement', userId), everyone], [now, JSON.stringify(value), generation, loadedAt, expiresAt, keep]);
      return reply === 1;
    },
    async invalidate(userId) {
      await link.run(lua.ENTITLEMENT_INVALIDATE, [key('entitlement', userId), everyone], [GENERATION_KEEP_MS]);
    },
  };
}

/**
 * The shared sliding window of one key. Callers of this process queue in arrival order, so that
 * only the first asks Redis at a time; the window itself is Redis's, shared by every instance.
 * When it is full, the wait is exact for slots already answered, and at least a window for slots
 * still in flight (an answer now frees its slot one window from now): it asks again then.
 */
function redisPacer(link: RedisLink, key: KeyOf, { id, limit, windowMs, clock }: PacedKey): KeyPacer {
  const slots = key('pace', id, `${limit}per${windowMs}`);
  const pause = key('pace-pause', id);
  let tail: Promise<unknown> = Promise.resolve();

  async function take(since: number, maxWaitMs: number, holdMs: number, signal?: AbortSignal): Promise<ReleaseSlot> {
    const slot = randomToken('', 9);
    for (;;) {
      signal?.throwIfAborted();
      const now = clock.now();
      const [taken, wait, paused] = (await link.run(lua.PACE_TAKE, [slots, pause], [now, windowMs, limit, slot, now + holdMs])) as [number, number?, number?];
      if (taken === 1) {
        let given = false;
        return () => {
          if (given) return;
          given = true;
          // Not given back (Redis failed): the slot ends at its hold time instead, which is later.
          link.run(lua.PACE_RELEASE, [slots], [slot, clock.now(), windowMs]).catch(() => undefined);
        };
      }
      const waitMs = Number(wait);
      if (now + waitMs - since > maxWaitMs) throw new PacerWaitTooLong(waitMs, paused === 1);
      await clock.sleep(waitMs, signal);
    }
  }

  return {
    acquire(signal, maxWaitMs = Number.POSITIVE_INFINITY, holdMs = 60_000) {
      const since = clock.now();
      const turn = tail.then(() => take(since, maxWaitMs, holdMs, signal));
      tail = turn.catch(() => undefined);
      return turn;
    },
    async pauseUntil(until) {
      await link.run(lua.PACE_PAUSE, [pause], [Math.ceil(until), clock.now()]);
    },
  };
}

function refreshFlight(link: RedisLink, key: KeyOf): RefreshFlight {
  const keys = (name: string) => [key('refresh', name), key('refresh-lease', name)];
  return {
    async begin(name, owner, leaseUntil, now) {
      const reply = (await link.run(lua.REFRESH_BEGIN, keys(name), [owner, ttl(leaseUntil, now)])) as [string, string?];
      if (reply[0] === 'done') return { state: 'done', sealed: String(reply[1]) };
      return reply[0] === 'lead' ? { state: 'lead' } : { state: 'wait' };
    },
    async finish(name, _owner, sealed, keepUntil, now) {
      await link.run(lua.REFRESH_FINISH, keys(name), [sealed, ttl(keepUntil, now)]);
    },
  };
}
