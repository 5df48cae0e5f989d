// Launches (POST /session) and webhook deliveries (POST /webhooks) a second: one instance on the
// memory stores, and three instances (each its own node-redis connection) on one redis-server
// started for the run, requests spread round-robin; and the Redis round trips each takes on the
// happy path (target: at most two each). Request → Response in this process: no HTTP, and the
// marketplace is a fetch that answers at once, so the figures are the kit's and Redis's own.
// The series alternate (memory, Redis, memory, …) and the best of each is printed, so a burst of
// load from elsewhere spoils one round, not the result. Figures: docs/benchmarks.md "## Redis".
import { createClient } from 'redis';
import { createRedisStores } from '../../src/redis/index.js';
import {
  createAppBackend,
  createMarketplaceClient,
  createMemoryStores,
  signContextToken,
  signWebhookBody,
  type AppBackend,
  type MarketplaceStores,
} from '../../src/server/index.js';
import { startRedis } from '../support/redis-server.js';

const SITE = 'https://marketplace.example';
const CLIENT_ID = 'client_bench';
const CLIENT_SECRET = 'client-secret-bench-0123456789-abcdefgh';
const WEBHOOK_SECRET = 'whsec_bench_0123456789';
const DASHBOARD = 'https://dashboard.example';
const USERS = 500;
const CONCURRENCY = 16;

export interface RedisBenchOptions {
  /** Requests per series (default 2 000). */
  requests?: number;
  /** Alternating rounds (default 3). */
  rounds?: number;
}

/** Answers every entitlement lookup at once, as a marketplace with no latency would. */
const marketplace: typeof fetch = async (input) => {
  const userId = new URL(String(input instanceof Request ? input.url : input)).searchParams.get('user_id');
  const entitlement = { user_id: userId, app_id: 'app_bench', plan: 'pro', status: 'active', features: ['export'], usage: { api_calls: 1, limit: 1000 }, expires_at: null };
  return new Response(JSON.stringify(entitlement), { headers: { 'content-type': 'application/json' } });
};

function backendOn(stores: MarketplaceStores): AppBackend {
  const { entitlements, pacing, refresh, ...own } = stores;
  const client = createMarketplaceClient({
    siteUrl: SITE,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    apiKey: 'live_bench',
    fetch: marketplace,
    entitlementTtlMs: 600_000,
    rateLimit: { limit: 1_000_000 },
    stores: { entitlements, pacing, refresh },
  });
  return createAppBackend({
    siteUrl: SITE,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    apiKey: 'live_bench',
    sessionSecret: 'bench-session-secret-0123456789-abcdefghij',
    webhookSecret: WEBHOOK_SECRET,
    hostOrigins: [DASHBOARD],
    maxExchangesPerUser: Infinity,
    client,
    stores: own,
    onError: (error) => console.error(error),
  });
}

const user = (i: number) => ({ id: `usr_${i % USERS}`, email: 'b@example.test', name: 'Bench', avatar_url: 'https://example.test/a.png' });

function launches(count: number): Promise<Request[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const context = await signContextToken({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: SITE, host: DASHBOARD, appId: 'app_bench', user: user(i) });
      return new Request('https://app.example/api/marketplace/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ context, host: DASHBOARD }) });
    }),
  );
}

function deliveries(count: number): Request[] {
  const timestamp = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => {
    const body = JSON.stringify({ id: `evt_${Math.random().toString(36).slice(2)}_${i}`, event: 'subscription.created', timestamp, data: { user_id: user(i).id, plan: 'pro' } });
    return new Request('https://app.example/api/marketplace/webhooks', { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, WEBHOOK_SECRET) } });
  });
}

/** Requests a second through `backends`, round-robin, `CONCURRENCY` at a time; each answer must be `status`. */
async function rate(backends: AppBackend[], requests: Request[], status: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests.length) {
        const i = next++;
        const answer = await backends[i % backends.length]!(requests[i]!);
        if (answer.status !== status) throw new Error(`answered ${answer.status}: ${await answer.text()}`);
      }
    }),
  );
  return requests.length / ((performance.now() - started) / 1000);
}

/** Counts commands, and round trips: a command sent while none is in flight starts one. */
function counting(client: { sendCommand(args: string[]): Promise<unknown> }) {
  const counts = { commands: 0, roundTrips: 0 };
  let inFlight = 0;
  const send = client.sendCommand.bind(client);
  (client as { sendCommand: unknown }).sendCommand = async (args: string[]) => {
    counts.commands += 1;
    if (inFlight === 0) counts.roundTrips += 1;
    inFlight += 1;
    try {
      return await send(args);
    } finally {
      inFlight -= 1;
    }
  };
  return counts;
}

export default async function redisBench(options: RedisBenchOptions = {}): Promise<void> {
  const requests = options.requests ?? 2_000;
  const rounds = options.rounds ?? 3;
  const redis = await startRedis();
  const connections = await Promise.all([1, 2, 3, 4].map(async () => createClient({ url: redis.url }).on('error', () => undefined).connect()));
  try {
    const shared = (client: (typeof connections)[number]) => createRedisStores({ client, prefix: 'bench:' });
    const onRedis = connections.slice(0, 3).map((client) => backendOn(shared(client)));
    const inMemory = [backendOn(createMemoryStores())];
    // Every user's entitlement cached once (the happy path of a launch), then the series.
    for (const backends of [inMemory, onRedis]) await rate(backends, await launches(USERS), 200);
    const best = { memoryLaunch: 0, redisLaunch: 0, memoryDelivery: 0, redisDelivery: 0 };
    for (let round = 0; round < rounds; round++) {
      best.memoryLaunch = Math.max(best.memoryLaunch, await rate(inMemory, await launches(requests), 200));
      best.redisLaunch = Math.max(best.redisLaunch, await rate(onRedis, await launches(requests), 200));
      best.memoryDelivery = Math.max(best.memoryDelivery, await rate(inMemory, deliveries(requests), 200));
      best.redisDelivery = Math.max(best.redisDelivery, await rate(onRedis, deliveries(requests), 200));
    }
    console.log(`launches/s       1 instance, memory: ${best.memoryLaunch.toFixed(0)}   3 instances, Redis: ${best.redisLaunch.toFixed(0)}   (${(best.redisLaunch / best.memoryLaunch).toFixed(2)}x)`);
    console.log(`deliveries/s     1 instance, memory: ${best.memoryDelivery.toFixed(0)}   3 instances, Redis: ${best.redisDelivery.toFixed(0)}   (${(best.redisDelivery / best.memoryDelivery).toFixed(2)}x)`);

    // Round trips, one request at a time on an instance of its own connection.
    const counted = counting(connections[3]!);
    const single = [backendOn(shared(connections[3]!))];
    await rate(single, await launches(USERS), 200); // its cache reads warm
    const perRequest = async (list: Request[]) => {
      const before = { ...counted };
      for (const request of list) await single[0]!(request);
      return { commands: (counted.commands - before.commands) / list.length, roundTrips: (counted.roundTrips - before.roundTrips) / list.length };
    };
    const launch = await perRequest(await launches(200));
    const delivery = await perRequest(deliveries(200));
    console.log(`Redis per launch:   ${launch.roundTrips.toFixed(2)} round trips (${launch.commands.toFixed(2)} commands)   target <= 2`);
    console.log(`Redis per delivery: ${delivery.roundTrips.toFixed(2)} round trips (${delivery.commands.toFixed(2)} commands)   target <= 2`);
  } finally {
    await Promise.all(connections.map((client) => client.quit().catch(() => undefined)));
    await redis.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await redisBench();
