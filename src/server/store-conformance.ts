/**
 * `marketplace-app-kit/stores/conformance`: the behaviour every implementation of
 * `MarketplaceStores` must have, as a suite for Node's test runner (docs/redis.md "Stores of your
 * own"). The kit runs it against its memory and Redis stores; a store on DynamoDB, Postgres or
 * Upstash proves itself with it: atomic claims under concurrency, expiry, leases and invalidation
 * fan-out across instances.
 *
 * It runs in real time (waits of a few hundred milliseconds) and passes `Date.now()` as `now`.
 *
 * @example
 * // my-stores.test.ts, run with `node --test`
 * import { describeStoreConformance } from 'marketplace-app-kit/stores/conformance';
 * describeStoreConformance('my Postgres stores', { stores: () => createPostgresStores({ pool }) });
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import type { Entitlement } from '../shared/schemas.js';
import { systemClock } from './lib/clock.js';
import type { MarketplaceStores } from './stores.js';

/** What the suite runs against. */
export interface ConformanceTarget {
  /**
   * The stores of one instance. Every call must give stores that share their state with the
   * other calls' (instances on one Redis, one table): the suite plays several instances with them.
   */
  stores(): MarketplaceStores | Promise<MarketplaceStores>;
  /** Called once the suite is done (close connections). */
  close?(): void | Promise<void>;
}

/**
 * Expiries the suite waits out. Redis (and most stores) expire by their own clock, so the suite
 * waits in real time; an expiry this far off cannot pass between two calls of a busy machine, and
 * `eventually` then waits for the store to show it, not for a fixed time.
 */
const SHORT_MS = 1_000;
/** How long `eventually` waits for a store to show an expiry before the rule counts as broken. */
const EXPIRY_WAIT_MS = 60_000;

/** Resolves once `check()` is true, asked every 50 ms; fails saying `what` after `EXPIRY_WAIT_MS`. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + EXPIRY_WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not so after ${EXPIRY_WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const entitlement = (userId: string, plan: string): Entitlement => ({
  user_id: userId,
  app_id: 'app_conformance',
  plan,
  status: 'active',
  features: [],
  usage: { api_calls: 0, limit: 100 },
  expires_at: null,
});

/**
 * Describes the conformance suite of `target` under `name` (one `describe` with a test per rule).
 *
 * @example
 * describeStoreConformance('memory', { stores: () => shared });
 */
export function describeStoreConformance(name: string, target: ConformanceTarget): void {
  // Keys and users of this run only: a shared store may hold others'.
  const run = randomUUID().slice(0, 8);
  const id = (what: string) => `${what}-${run}-${randomUUID().slice(0, 8)}`;
  const user = () => `usr_${run}${randomUUID().slice(0, 8)}`;
  const instances = async (count: number) => Promise.all(Array.from({ length: count }, () => target.stores()));

  describe(`store conformance: ${name}`, () => {
    after(async () => {
      await target.close?.();
    });

    it('replay: of concurrent claims of one key on several instances, exactly one wins', async () => {
      const stores = await instances(3);
      const key = id('jti');
      const now = Date.now();
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => stores[i % 3]!.replay.claim(key, now + 60_000, now, now)));
      assert.equal(answers.filter((answer) => answer === true).length, 1);
      assert.ok(answers.every((answer) => answer === true || answer === false), 'each answer is a boolean');
      const distinct = await Promise.all(Array.from({ length: 10 }, (_, i) => stores[i % 3]!.replay.claim(id('jti'), now + 60_000, now, now)));
      assert.ok(distinct.every((answer) => answer === true), 'distinct keys are all fresh');
    });

    it('replay: a claim expires, and release() frees it at once', async () => {
      const [a, b] = await instances(2);
      const key = id('jti');
      const now = Date.now();
      assert.equal(await a!.replay.claim(key, now + SHORT_MS, now, now), true);
      assert.equal(await b!.replay.claim(key, now + SHORT_MS, now, now), false, 'a replay until it expires');
      await eventually(async () => {
        const later = Date.now();
        return b!.replay.claim(key, later + 60_000, later, later);
      }, 'the claim expired');
      await b!.replay.release(key);
      assert.equal(await a!.replay.claim(key, now + 60_000, now, now), true, 'released');
    });

    it('webhooks: of concurrent copies on several instances one claims, the others are busy; done after finish', async () => {
      const stores = await instances(3);
      const keys = [id('webhook'), id('webhook:id')];
      const now = Date.now();
      const request = (owner: string) => ({ keys, owner, leaseUntil: now + 10_000, doneUntil: now + 60_000, sentAt: now, now });
      const owners = Array.from({ length: 9 }, (_, i) => `owner-${i}`);
      const claims = await Promise.all(owners.map((owner, i) => stores[i % 3]!.webhooks.begin(request(owner))));
      const winners = owners.filter((_, i) => claims[i]!.state === 'claimed');
      assert.equal(winners.length, 1);
      for (const claim of claims) {
        if (claim.state === 'busy') assert.ok(claim.retryAfterMs > 0 && claim.retryAfterMs <= 10_000, `retryAfterMs ${claim.retryAfterMs}`);
        else assert.equal(claim.state, 'claimed');
      }
      await stores[1]!.webhooks.finish(keys, winners[0]!, now + 60_000, Date.now());
      assert.deepEqual(await stores[2]!.webhooks.begin(request('late')), { state: 'done' });
      // A re-signed copy (a new signature, the same id) is done, and so is its signature from then on.
      const resigned = id('webhook');
      assert.deepEqual(await stores[0]!.webhooks.begin({ ...request('retry'), keys: [resigned, keys[1]!] }), { state: 'done' });
      assert.deepEqual(await stores[0]!.webhooks.begin({ ...request('retry-copy'), keys: [resigned] }), { state: 'done' });
    });

    it('webhooks: an abandoned claim is taken by the next copy; a lease that runs out is taken over; renew keeps it', async () => {
      const [a, b] = await instances(2);
      let now = Date.now();
      const abandoned = [id('webhook')];
      const request = (keys: string[], owner: string, leaseMs: number) => ({ keys, owner, leaseUntil: now + leaseMs, doneUntil: now + 60_000, sentAt: now, now });
      assert.equal((await a!.webhooks.begin(request(abandoned, 'first', 10_000))).state, 'claimed');
      await a!.webhooks.abandon(abandoned, 'first');
      assert.equal((await b!.webhooks.begin(request(abandoned, 'second', 10_000))).state, 'claimed', 'the handler failed: the retry handles it');

      const died = [id('webhook')];
      const kept = [id('webhook')];
      assert.equal((await a!.webhooks.begin(request(died, 'dead', SHORT_MS))).state, 'claimed');
      assert.equal((await a!.webhooks.begin(request(kept, 'alive', SHORT_MS))).state, 'claimed');
      assert.equal(await a!.webhooks.renew(kept, 'alive', Date.now() + 60_000, Date.now()), true);
      assert.equal(await b!.webhooks.renew(kept, 'someone-else', Date.now() + 60_000, Date.now()), false, 'only the holder renews');
      await eventually(async () => {
        now = Date.now();
        return (await b!.webhooks.begin(request(died, 'retry', 10_000))).state === 'claimed';
      }, 'the holder died: its lease ran out');
      assert.equal((await b!.webhooks.begin(request(kept, 'retry', 10_000))).state, 'busy', 'a renewed lease still holds');
      await a!.webhooks.abandon(kept, 'someone-else');
      assert.equal((await b!.webhooks.begin(request(kept, 'retry', 10_000))).state, 'busy', 'only the holder abandons');
    });

    it('launches: concurrent launches of one user on several instances count up to the limit, exactly; giveBack returns one', async () => {
      const stores = await instances(3);
      const userId = user();
      const now = Date.now();
      const decisions = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 3]!.launches.take(userId, 5, 60_000, now)));
      assert.equal(decisions.filter((decision) => decision.counted).length, 5);
      for (const decision of decisions) if (!decision.counted) assert.ok(decision.retryAfterMs > 0 && decision.retryAfterMs <= 60_000);
      await stores[1]!.launches.giveBack(userId, Date.now());
      assert.equal((await stores[2]!.launches.take(userId, 5, 60_000, Date.now())).counted, true, 'given back');
      assert.equal((await stores[0]!.launches.take(userId, 5, 60_000, Date.now())).counted, false);
      assert.equal((await stores[0]!.launches.take(user(), 5, 60_000, Date.now())).counted, true, 'per user');
    });

    it('launches: the window ends, and counting starts again', async () => {
      const [a, b] = await instances(2);
      const userId = user();
      assert.equal((await a!.launches.take(userId, 1, SHORT_MS, Date.now())).counted, true);
      assert.equal((await b!.launches.take(userId, 1, SHORT_MS, Date.now())).counted, false);
      await eventually(async () => (await b!.launches.take(userId, 1, SHORT_MS, Date.now())).counted, 'the window ended');
    });

    it('revocations: a cut-off set on one instance holds on every other, the latest wins, and it ends at keepUntil', async () => {
      const [a, b] = await instances(2);
      const userId = user();
      const now = Date.now();
      const before = await b!.revocations.revokedAt(userId, now);
      await a!.revocations.revoke(userId, now, now + SHORT_MS, now);
      assert.equal(await b!.revocations.revokedAt(userId, now), Math.max(now, before ?? 0));
      await b!.revocations.revoke(userId, now - 5_000, now + SHORT_MS, now);
      assert.equal(await a!.revocations.revokedAt(userId, now), Math.max(now, before ?? 0), 'an earlier cut-off does not move it back');
      await eventually(async () => (await a!.revocations.revokedAt(userId, Date.now())) === before, 'the cut-off ended');
    });

    it('entitlements: cached on one instance, read on another; an invalidation anywhere ends it everywhere and refuses older loads', async () => {
      const [a, b, c] = await instances(3);
      const userId = user();
      let now = Date.now();
      const first = await a!.entitlements.read(userId, now);
      assert.equal(first.cached, undefined);
      assert.equal(await a!.entitlements.write(userId, { value: entitlement(userId, 'pro'), generation: first.generation, loadedAt: now, expiresAt: now + 60_000, now }), true);
      assert.deepEqual((await b!.entitlements.read(userId, Date.now())).cached, { value: entitlement(userId, 'pro') });

      // A load sent before the webhook: its answer may predate the change.
      const stale = await c!.entitlements.read(userId, Date.now());
      const staleByToken = await c!.entitlements.generation(Date.now());
      await b!.entitlements.invalidate(userId, Date.now());
      now = Date.now();
      assert.equal((await a!.entitlements.read(userId, now)).cached, undefined, 'invalidated for every instance');
      assert.equal((await c!.entitlements.read(userId, now)).cached, undefined);
      assert.equal(await c!.entitlements.write(userId, { value: entitlement(userId, 'pro'), generation: stale.generation, loadedAt: now, expiresAt: now + 60_000, now }), false);
      assert.equal(await c!.entitlements.write(userId, { value: entitlement(userId, 'pro'), generation: staleByToken, loadedAt: now, expiresAt: now + 60_000, now }), false);

      const fresh = await c!.entitlements.read(userId, now);
      assert.equal(await c!.entitlements.write(userId, { value: null, generation: fresh.generation, loadedAt: now, expiresAt: now + 60_000, now }), true);
      assert.deepEqual((await a!.entitlements.read(userId, Date.now())).cached, { value: null }, 'null (no entitlement) is cached as such');
      // An answer from a load sent earlier never replaces a later one's.
      assert.equal(await a!.entitlements.write(userId, { value: entitlement(userId, 'old'), generation: fresh.generation, loadedAt: now - 1_000, expiresAt: now + 60_000, now }), false);
      // Another user's invalidation leaves this one alone.
      await a!.entitlements.invalidate(user(), Date.now());
      assert.deepEqual((await b!.entitlements.read(userId, Date.now())).cached, { value: null });
    });

    it('entitlements: a cached entitlement expires', async () => {
      const [a, b] = await instances(2);
      const userId = user();
      const now = Date.now();
      const { generation } = await a!.entitlements.read(userId, now);
      await a!.entitlements.write(userId, { value: entitlement(userId, 'pro'), generation, loadedAt: now, expiresAt: now + SHORT_MS, now });
      assert.equal((await b!.entitlements.read(userId, Date.now())).cached?.value?.plan, 'pro', 'cached until it expires');
      await eventually(async () => (await b!.entitlements.read(userId, Date.now())).cached === undefined, 'the cached entitlement expired');
    });

    it('pacing: the pacers of one key on several instances never grant more than the limit in any window', async () => {
      const stores = await instances(3);
      const key = { id: id('key'), limit: 3, windowMs: 400, clock: systemClock };
      const pacers = stores.map((store) => store.pacing.pacer(key));
      const granted: number[] = [];
      await Promise.all(
        Array.from({ length: 9 }, async (_, i) => {
          const release = await pacers[i % 3]!.acquire(undefined, 10_000, 5_000);
          granted.push(Date.now());
          release();
        }),
      );
      granted.sort((x, y) => x - y);
      for (const [i, start] of granted.entries()) {
        const inWindow = granted.filter((time) => time >= start && time < start + key.windowMs).length;
        assert.ok(inWindow <= key.limit, `${inWindow} slots granted within ${key.windowMs} ms of slot ${i}`);
      }
      assert.ok(granted.at(-1)! - granted[0]! >= 2 * key.windowMs - 20, 'nine slots at three a window take two more windows');
    });

    it('pacing: a pause after a 429 holds every instance; a wait longer than maxWaitMs is refused at once', async () => {
      const [a, b] = await instances(2);
      const key = { id: id('key'), limit: 10, windowMs: 60_000, clock: systemClock };
      const started = Date.now();
      await a!.pacing.pacer(key).pauseUntil(started + 250);
      await assert.rejects(b!.pacing.pacer(key).acquire(undefined, 50, 5_000), (error: Error) => error.name === 'PacerWaitTooLong');
      const release = await b!.pacing.pacer(key).acquire(undefined, 10_000, 5_000);
      release();
      assert.ok(Date.now() - started >= 240, `sent after ${Date.now() - started} ms`);
    });

    it('refresh: one lead among concurrent refreshes on several instances; the others get its outcome, which expires; only a dead lead is taken over', async () => {
      const stores = await instances(3);
      const key = id('refresh');
      const now = Date.now();
      const turns = await Promise.all(Array.from({ length: 9 }, (_, i) => stores[i % 3]!.refresh.begin(key, `owner-${i}`, now + 10_000, now)));
      const leads = turns.map((turn, i) => (turn.state === 'lead' ? i : -1)).filter((i) => i >= 0);
      assert.equal(leads.length, 1);
      assert.ok(turns.every((turn) => turn.state === 'lead' || turn.state === 'wait'));
      await stores[0]!.refresh.finish(key, `owner-${leads[0]}`, 'sealed-result', now + 60_000, Date.now());
      assert.deepEqual(await stores[2]!.refresh.begin(key, 'late', Date.now() + 10_000, Date.now()), { state: 'done', sealed: 'sealed-result' });

      // A failed refresh's outcome is kept briefly: it is what the others get, not a lease to take.
      const failed = id('refresh');
      assert.equal((await stores[0]!.refresh.begin(failed, 'first', Date.now() + 10_000, Date.now())).state, 'lead');
      await stores[0]!.refresh.finish(failed, 'first', 'sealed-failure', Date.now() + SHORT_MS, Date.now());
      assert.deepEqual(await stores[1]!.refresh.begin(failed, 'second', Date.now() + 10_000, Date.now()), { state: 'done', sealed: 'sealed-failure' });
      await eventually(
        async () => (await stores[1]!.refresh.begin(failed, 'second', Date.now() + 10_000, Date.now())).state === 'lead',
        'once the failure expired, the next caller leads',
      );

      const dead = id('refresh');
      assert.equal((await stores[0]!.refresh.begin(dead, 'first', Date.now() + SHORT_MS, Date.now())).state, 'lead');
      assert.equal((await stores[1]!.refresh.begin(dead, 'second', Date.now() + 10_000, Date.now())).state, 'wait');
      await eventually(async () => (await stores[1]!.refresh.begin(dead, 'second', Date.now() + 10_000, Date.now())).state === 'lead', 'a lease whose holder died is taken over');
    });
  });
}
