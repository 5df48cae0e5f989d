// The in-memory stores that must never forget a live record (replay claims, webhook marks, launch
// counts, revocation cut-offs): full, they refuse new records with 503 ERR_REPLAY_STORE_FULL and
// keep every live one, and they say so in one line when they fill and one when they have room
// again, not once per refusal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ReplayStoreFullError,
  createMemoryLaunchLimiter,
  createMemoryReplayStore,
  createMemoryRevocationStore,
  createMemoryWebhookProcessing,
} from '../../src/server/index.js';
import { ExpiringRecords } from '../../src/server/lib/expiring-records.js';
import { NOW } from '../support/server-http.js';

describe('ExpiringRecords', () => {
  it('is full only of live records, and has room again exactly when its earliest record expires', () => {
    const records = new ExpiringRecords<number>(2);
    records.set('a', 1, NOW + 100);
    records.add('b', NOW + 200);
    assert.equal(records.isFull(NOW + 99), true);
    assert.equal(records.nextExpiry(NOW + 99), NOW + 100);
    assert.deepEqual([records.get('a', NOW + 99), records.get('b', NOW + 99), records.expiresAt('b', NOW + 99)], [1, undefined, NOW + 200], 'a key alone has no value');
    assert.equal(records.isFull(NOW + 100), false);
    assert.equal(records.get('a', NOW + 100), undefined);
  });
});

describe('a memory store full of live records', () => {
  it('the replay store logs one line when a steady flood fills it, and one when it has room again', () => {
    const lines: string[] = [];
    const store = createMemoryReplayStore({ maxEntries: 10, onFull: (line) => lines.push(line) });
    // Keys live 1 s, 20 arrive a second: twice what it holds. Each second's expiries make room for
    // a few, which the flood takes at once; the store stays full throughout.
    let refused = 0;
    for (let i = 0; i < 400; i++) {
      const now = NOW + i * 50;
      try {
        store.claim(`k${i}`, now + 1_000, now);
      } catch (error) {
        assert.ok(error instanceof ReplayStoreFullError);
        refused += 1;
      }
    }
    assert.ok(refused > 150, `${refused} refused`);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /replay store full: 10 live keys; launches and deliveries are refused with 503 until keys expire\. Raise maxEntries \(replayStoreSize of createAppBackend\)/);
    // The flood ends; once the keys have expired, the next claim has room, and says so once.
    assert.equal(store.claim('later', NOW + 60_000, NOW + 30_000), true);
    assert.equal(store.claim('later-2', NOW + 60_000, NOW + 30_000), true);
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines[1]!, /replay store has room again: 0 of 10 live keys/);
  });

  it('the revocation store never forgets a live cut-off: full, it refuses a new user with 503', () => {
    const lines: string[] = [];
    const store = createMemoryRevocationStore({ onFull: (line) => lines.push(line) });
    const keepUntil = NOW + 900_000;
    let refusal: unknown;
    for (let i = 0; i < 150_000 && refusal === undefined; i++) {
      try {
        store.revoke(`usr_${i}`, NOW, keepUntil, NOW);
      } catch (error) {
        refusal = error;
      }
    }
    assert.ok(refusal instanceof ReplayStoreFullError, 'the 100 001st user is refused');
    assert.equal(refusal.status, 503);
    assert.equal(refusal.retryAfterMs, 900_000);
    assert.match(refusal.message, /revocation store/);
    assert.equal(store.revokedAt('usr_0', NOW + 1), NOW, 'the first cut-off is still there');
    assert.equal(store.revokedAt('usr_99999', NOW + 1), NOW);
    // A user already held takes a later cut-off without room.
    store.revoke('usr_0', NOW + 5_000, keepUntil + 5_000, NOW + 5_000);
    assert.equal(store.revokedAt('usr_0', NOW + 5_001), NOW + 5_000);
    assert.equal(lines.length, 1);
    // Cut-offs end with the sessions they end.
    assert.equal(store.revokedAt('usr_1', keepUntil), null);
    store.revoke('usr_new', keepUntil, keepUntil + 900_000, keepUntil);
    assert.equal(store.revokedAt('usr_new', keepUntil + 1), keepUntil);
  });

  it('the revocation store takes its size, at least 1', () => {
    const store = createMemoryRevocationStore({ maxUsers: 1, onFull: () => undefined });
    store.revoke('usr_a', NOW, NOW + 1_000, NOW);
    assert.throws(() => store.revoke('usr_b', NOW, NOW + 1_000, NOW), { code: 'ERR_REPLAY_STORE_FULL' });
    assert.throws(() => createMemoryRevocationStore({ maxUsers: 0 }), { code: 'ERR_CONFIG' });
  });

  it('the launch limiter and webhook processing log their filling once too', async () => {
    const lines: string[] = [];
    const launches = createMemoryLaunchLimiter({ maxUsers: 2, onFull: (line) => lines.push(line) });
    const webhooks = createMemoryWebhookProcessing({ maxEntries: 2, onFull: (line) => lines.push(line) });
    for (const user of ['a', 'b']) launches.take(user, 5, 60_000, NOW);
    for (const key of ['x', 'y']) webhooks.begin({ keys: [key], owner: key, leaseUntil: NOW + 10_000, doneUntil: NOW + 300_000, sentAt: NOW, now: NOW });
    for (let i = 0; i < 5; i++) {
      assert.throws(() => launches.take(`other-${i}`, 5, 60_000, NOW + i), { code: 'ERR_REPLAY_STORE_FULL', message: /launch limiter/ });
      assert.throws(() => webhooks.begin({ keys: [`z${i}`], owner: 'z', leaseUntil: NOW + 10_000, doneUntil: NOW + 300_000, sentAt: NOW, now: NOW + i }), {
        code: 'ERR_REPLAY_STORE_FULL',
        message: /webhook processing store/,
      });
    }
    assert.deepEqual(
      lines.map((line) => line.replace(/:.*/, '')),
      ['[marketplace-app-kit] launch limiter full', '[marketplace-app-kit] webhook processing store full'],
    );
  });
});
