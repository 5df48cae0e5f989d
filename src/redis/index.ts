/**
 * `marketplace-app-kit/redis`: the kit's shared state on Redis, for an app backend that runs as
 * several instances (docs/redis.md, docs/guides/several-instances.md). Works with a node-redis
 * client (the `redis` package, v4 or later) or an ioredis client; neither is a dependency of the
 * kit, install the one you use.
 */
export { createRedisStores } from './stores.js';
export type { RedisStoresOptions } from './stores.js';
export type { RedisClient, NodeRedisClient, IoRedisClient } from './link.js';
