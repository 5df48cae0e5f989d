// The conformance suite of marketplace-app-kit/stores/conformance, run against the kit's own
// stores: in memory (one process: every "instance" is the same object, as it would be), and on a
// real redis-server with each of the two clients the kit supports (each instance its own connection).
import { after, before } from 'node:test';
import { createRedisStores } from '../../src/redis/index.js';
import { createMemoryStores, type MarketplaceStores } from '../../src/server/index.js';
import { describeStoreConformance } from '../../src/server/store-conformance.js';
import { REDIS_CLIENTS, startRedis, type TestRedis } from '../support/redis-server.js';

const memory = createMemoryStores();
describeStoreConformance('memory', { stores: () => memory });

let redis: TestRedis;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis?.stop();
});

for (const [name, connect] of Object.entries(REDIS_CLIENTS)) {
  const closers: Array<() => Promise<void>> = [];
  describeStoreConformance(`Redis (${name})`, {
    async stores(): Promise<MarketplaceStores> {
      const { client, close } = await connect(redis.url);
      closers.push(close);
      return createRedisStores({ client, prefix: `conformance-${name}:`, log: () => undefined });
    },
    close: async () => {
      await Promise.all(closers.splice(0).map((close) => close()));
    },
  });
}
