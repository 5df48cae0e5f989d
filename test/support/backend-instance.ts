/**
 * One app backend instance, as its own Node process, for test/e2e/several-instances.test.ts and
 * the Redis benchmark: `createAppBackend` on `createRedisStores` (node-redis), served by node:http
 * on 127.0.0.1 (a free port). It prints `listening <port>` once it serves, and one line per event:
 * `handled <event> <user_id>` when `onEvent` ran to its end.
 *
 * Environment: REDIS_URL, PREFIX, SITE_URL, CLIENT_ID, CLIENT_SECRET, API_KEY, WEBHOOK_SECRET,
 * HOST_ORIGIN; SPEED (the clock runs SPEED times faster from T0, as the simulator's does; default 1).
 *
 * Routes besides the kit's (under /api/marketplace):
 * - `GET /api/paid`: `requireEntitlement` with the feature `export`;
 * - `GET /api/lookup?user=…`: the entitlement of a user, through the client (API key, paced);
 * - `POST /api/refresh` with the refresh token as body: `client.refresh`, answering the token set.
 * The first delivery about the user FAIL_ONCE_USER fails, whichever instance handles it.
 */
import { createServer } from 'node:http';
import { createClient } from 'redis';
import { createRedisStores } from '../../src/redis/index.js';
import { createAppBackend, createMarketplaceClient, jsonResponse, toErrorResponse, toNodeHandler, type Clock } from '../../src/server/index.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`backend-instance: ${name} is not set`);
  return value;
};

/** The clock: real, or SPEED times faster from T0 (ms since the epoch), as the simulator's. */
function testClock(): Clock {
  const speed = Number(process.env.SPEED ?? '1');
  if (speed === 1) return { now: () => Date.now(), sleep: (ms, signal) => sleepReal(ms, signal) };
  const t0 = Number(env('T0'));
  return { now: () => t0 + (Date.now() - t0) * speed, sleep: (ms, signal) => sleepReal(ms / speed, signal) };
}

function sleepReal(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

const redis = createClient({ url: env('REDIS_URL'), disableOfflineQueue: true, socket: { reconnectStrategy: (retries: number) => Math.min(50 + retries * 50, 500) } });
redis.on('error', () => undefined);
await redis.connect();
const stores = createRedisStores({ client: redis, prefix: env('PREFIX'), log: (line) => console.log(`log ${line}`) });
const clock = testClock();

const backend = createAppBackend({
  siteUrl: env('SITE_URL'),
  clientId: env('CLIENT_ID'),
  clientSecret: env('CLIENT_SECRET'),
  apiKey: env('API_KEY'),
  webhookSecret: env('WEBHOOK_SECRET'),
  sessionSecret: 'instance-session-secret-0123456789-abcdefghij',
  hostOrigins: [env('HOST_ORIGIN')],
  stores,
  clock,
  onError: () => undefined,
  async onEvent(delivery) {
    const userId = String(delivery.data.user_id);
    if (userId === process.env.FAIL_ONCE_USER && (await redis.set(`${env('PREFIX')}test-failed:${userId}`, '1', { NX: true })) === 'OK') {
      throw new Error('the first handling fails');
    }
    console.log(`handled ${delivery.event} ${userId}`);
  },
});
// On the same stores as the backend's own client (one window for the key), but lookups here may
// wait their turn under the shared rate limit however long it takes.
// Its request timeout is real time while its clock may run SPEED times faster: scaled with it, so
// that a slot in flight is held (timeout + 1 s, in clock time) as long as the request may take.
const lookups = createMarketplaceClient({
  siteUrl: env('SITE_URL'),
  apiKey: env('API_KEY'),
  clientId: env('CLIENT_ID'),
  clientSecret: env('CLIENT_SECRET'),
  clock,
  stores,
  maxQueueWaitMs: Infinity,
  timeoutMs: 10_000 * Number(process.env.SPEED ?? '1'),
});

async function handle(request: Request): Promise<Response> {
  const url = new URL(request.url);
  try {
    if (url.pathname.startsWith(backend.basePath)) return await backend(request);
    if (url.pathname === '/api/paid') {
      const { entitlement } = await backend.requireEntitlement(request, { feature: 'export' });
      return jsonResponse({ plan: entitlement?.plan ?? null });
    }
    if (url.pathname === '/api/lookup') return jsonResponse({ entitlement: await lookups.entitlements({ userId: url.searchParams.get('user')! }) });
    if (url.pathname === '/api/refresh') return jsonResponse(await lookups.refresh(await request.text()));
    return jsonResponse({ error: { code: 'ERR_NOT_FOUND', message: url.pathname } }, { status: 404 });
  } catch (error) {
    return toErrorResponse(error);
  }
}

const server = createServer(toNodeHandler(handle));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
  void redis.quit().catch(() => undefined).finally(() => process.exit(0));
});
