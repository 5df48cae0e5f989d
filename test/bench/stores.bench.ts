// The memory the in-memory stores take per 100 000 live records, with realistic keys: context-token
// claims (`jti:<issuer> <client id> <22-character jti>`), revocation cut-offs and launch counts
// (user ids), webhook deliveries (a signature and an id each, two keys, marked done). Heap measured after a
// full garbage collection before and after filling a store. Figures: docs/redis.md "Memory stores".
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  createMemoryLaunchLimiter,
  createMemoryReplayStore,
  createMemoryRevocationStore,
  createMemoryWebhookProcessing,
} from '../../src/server/index.js';

export interface StoresBenchOptions {
  /** Records per store (default 100 000). */
  records?: number;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const userId = () => `usr_${randomBytes(8).toString('hex')}`;

/** Heap bytes taken by what `fill` returns, after a full collection on either side. */
function heapOf(fill: () => unknown): { bytes: number; kept: unknown } {
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = fill();
  gc();
  return { bytes: process.memoryUsage().heapUsed - before, kept };
}

export default async function storesBench(options: StoresBenchOptions = {}): Promise<void> {
  const records = options.records ?? 100_000;
  const now = Date.now();
  // Spread over the lifetime as live traffic leaves them: one expiry second in 300.
  const expiry = (i: number, life: number) => now + life - (i % 300) * 1_000;
  const series: Array<[string, () => unknown]> = [
    [
      'replay store (context-token claims)',
      () => {
        const store = createMemoryReplayStore({ maxEntries: records });
        for (let i = 0; i < records; i++) store.claim(`jti:https://marketplace.example client_0123456789 ${randomBytes(16).toString('base64url').slice(0, 22)}`, expiry(i, 310_000), now);
        return store;
      },
    ],
    [
      'revocation store (cut-offs)',
      () => {
        const store = createMemoryRevocationStore({ maxUsers: records });
        for (let i = 0; i < records; i++) store.revoke(userId(), now, expiry(i, 900_000), now);
        return store;
      },
    ],
    [
      'launch limiter (users)',
      () => {
        const store = createMemoryLaunchLimiter({ maxUsers: records });
        for (let i = 0; i < records; i++) store.take(userId(), 34, expiry(i, 300_000) - now, now);
        return store;
      },
    ],
    [
      'webhook processing (keys, 2 a delivery)',
      () => {
        const store = createMemoryWebhookProcessing({ maxEntries: records });
        for (let i = 0; i < records / 2; i++) {
          const keys = [`webhook:${randomBytes(32).toString('hex')}`, `webhook:id:evt_${randomBytes(8).toString('hex')}`];
          store.begin({ keys, owner: 'bench', leaseUntil: now + 10_000, doneUntil: expiry(i, 301_000), sentAt: now, now });
          store.finish(keys, 'bench', expiry(i, 301_000), now);
        }
        return store;
      },
    ],
  ];
  console.log(`heap per ${records.toLocaleString('en-US')} live records, realistic keys, after a full collection:`);
  for (const [name, fill] of series) {
    const { bytes } = heapOf(fill);
    console.log(`  ${name.padEnd(36)} ${(bytes / 1e6).toFixed(1)} MB`);
  }
}

