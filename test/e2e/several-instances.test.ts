// Three app backend instances as separate Node processes on one real redis-server, behind a
// round-robin proxy on 127.0.0.1, with the simulator as the marketplace (docs/guides/several-instances.md).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMarketplaceClient, signWebhookBody } from '../../src/server/index.js';
import type { ApiCallRecord, Simulator } from '../../src/simulator/index.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { startInstance, startProxy, type Instance, type Proxy } from '../support/instances.js';
import { CALLBACK, codeFor, startTestSimulator } from '../support/simulator-harness.js';
import { HANG_MS } from '../support/waiting.js';

/** The pacing scenario's clock runs this much faster (simulator and instances alike). */
const SPEED = 20;

interface Cluster {
  sim: Simulator;
  instances: Instance[];
  proxy: Proxy;
  calls: Array<ApiCallRecord & { time: number }>;
  close(): Promise<void>;
}

async function startCluster(redis: TestRedis, prefix: string, clock?: { t0: number; speed: number }): Promise<Cluster> {
  const sim = await startTestSimulator({
    webhookBackoffMs: 200,
    ...(clock ? { clock: () => clock.t0 + (Date.now() - clock.t0) * clock.speed } : {}),
  });
  const calls: Cluster['calls'] = [];
  sim.subscribe((event) => {
    if (event.type === 'api_call') calls.push({ ...event.data, time: Date.parse(event.data.at) });
  });
  const env = {
    REDIS_URL: redis.url,
    PREFIX: prefix,
    SITE_URL: sim.siteUrl,
    CLIENT_ID: sim.clientId,
    CLIENT_SECRET: sim.clientSecret,
    API_KEY: sim.testApiKey,
    WEBHOOK_SECRET: sim.webhookSecret,
    HOST_ORIGIN: new URL(sim.dashboardUrl).origin,
    FAIL_ONCE_USER: 'usr_ada',
    ...(clock ? { SPEED: String(clock.speed), T0: String(clock.t0) } : {}),
  };
  const instances = await Promise.all([1, 2, 3].map(() => startInstance(env)));
  const proxy = await startProxy(instances.map((instance) => instance.url));
  sim.configure({ webhook_url: `${proxy.url}/api/marketplace/webhooks` });
  return {
    sim,
    instances,
    proxy,
    calls,
    close: async () => {
      await proxy.close();
      await Promise.all(instances.map((instance) => instance.stop()));
      await sim.close();
    },
  };
}

const launch = (base: string, context: string, sim: Simulator) =>
  fetch(`${base}/api/marketplace/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ context, host: new URL(sim.dashboardUrl).origin }) });
const paid = (base: string, token: string) => fetch(`${base}/api/paid`, { headers: { authorization: `Bearer ${token}` } });
/**
 * How many instances printed a line matching `pattern`, once one has. The line is printed before
 * the instance answers; every copy has been answered when this is asked, so no later line can come.
 */
async function handled(cluster: Cluster, pattern: RegExp): Promise<number> {
  await Promise.any(cluster.instances.map((instance) => instance.waitFor(pattern, 10_000)));
  return cluster.instances.flatMap((instance) => instance.lines).filter((line) => pattern.test(line)).length;
}

describe('several instances on Redis, as separate processes', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let cluster: Cluster;
  before(async () => {
    redis = await startRedis();
    cluster = await startCluster(redis, 'e2e:');
  });
  after(async () => {
    await cluster?.close();
    await redis?.stop();
  });

  it('one context token sent to every instance at once gives exactly one session', async () => {
    const context = await cluster.sim.contextToken('usr_alan');
    const answers = await Promise.all(cluster.instances.map((instance) => launch(instance.url, context, cluster.sim)));
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 401, 401]);
  });

  it('one webhook delivery sent to every instance at once is handled exactly once', async () => {
    const body = JSON.stringify({ event: 'user.authorized', timestamp: new Date().toISOString(), data: { user_id: 'usr_linus' } });
    const signature = signWebhookBody(body, cluster.sim.webhookSecret);
    const answers = await Promise.all(
      cluster.instances.map((instance) => fetch(`${instance.url}/api/marketplace/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signature } })),
    );
    assert.deepEqual(answers.map((answer) => answer.status), [200, 200, 200]);
    assert.equal(await handled(cluster, /^handled user\.authorized usr_linus$/), 1);
  });

  it("a delivery whose handler failed is handled exactly once on the marketplace's retry", async () => {
    // The first delivery about usr_ada fails on whichever instance handles it (FAIL_ONCE_USER).
    const outcome = await cluster.sim.sendEvent('subscription.created', { user_id: 'usr_ada', plan: 'pro_monthly' });
    assert.equal(outcome.delivery.outcome, 'delivered');
    assert.deepEqual(outcome.delivery.attempts.map((attempt) => attempt.status), [500, 200]);
    assert.equal(await handled(cluster, /^handled subscription\.created usr_ada$/), 1);
  });

  it('once a cancellation reaches one instance, the paid route on every other answers 403 at once', async () => {
    const started = (await (await launch(cluster.proxy.url, await cluster.sim.contextToken('usr_katherine'), cluster.sim)).json()) as { session: { token: string } };
    const token = started.session.token;
    for (const instance of cluster.instances) assert.equal((await paid(instance.url, token)).status, 200);
    const outcome = await cluster.sim.sendEvent('subscription.cancelled', { user_id: 'usr_katherine' });
    assert.equal(outcome.delivery.outcome, 'delivered');
    // The instance that took the delivery invalidated the shared cache before it answered 200, so
    // the very next request on every instance already sees the cancellation: no wait, on any machine.
    for (const instance of cluster.instances) {
      const answer = await paid(instance.url, token);
      assert.equal(answer.status, 403, `${instance.url} answered ${answer.status} ${await answer.text()} after the cancellation was delivered`);
    }
  });

  it('one rotating refresh token refreshed from three instances at once makes one token request', async () => {
    const oauth = createMarketplaceClient({ siteUrl: cluster.sim.siteUrl, clientId: cluster.sim.clientId, clientSecret: cluster.sim.clientSecret });
    const { refreshToken } = await oauth.exchangeCode({ code: await codeFor(cluster.sim), redirectUri: CALLBACK });
    const before = cluster.calls.filter((call) => call.path.startsWith('/api/oauth/token')).length;
    const answers = await Promise.all(cluster.instances.map((instance) => fetch(`${instance.url}/api/refresh`, { method: 'POST', body: refreshToken! })));
    const tokens = (await Promise.all(answers.map((answer) => answer.json()))) as Array<{ accessToken: string }>;
    assert.equal(cluster.calls.filter((call) => call.path.startsWith('/api/oauth/token')).length - before, 1);
    assert.equal(new Set(tokens.map((set) => set.accessToken)).size, 1, 'every instance has the same new tokens');
    // Nothing revoked the family: the new access token works.
    assert.equal((await oauth.whoami({ accessToken: tokens[0]!.accessToken })).id, 'usr_ada');
  });

  it('stopping Redis mid-run gives 503s and no accepted replay; service resumes when it restarts', async () => {
    const used = await cluster.sim.contextToken('usr_grace');
    assert.equal((await launch(cluster.proxy.url, used, cluster.sim)).status, 200);
    // Context tokens carry whole seconds: a Redis back empty refuses those of earlier seconds.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await redis.stop();
    const during = [await launch(cluster.proxy.url, await cluster.sim.contextToken('usr_grace'), cluster.sim), await launch(cluster.proxy.url, used, cluster.sim)];
    for (const answer of during) {
      assert.equal(answer.status, 503);
      assert.ok(Number(answer.headers.get('retry-after')) > 0);
    }
    await redis.restart();
    const deadline = Date.now() + HANG_MS;
    // Until Redis is back, 503; a token minted in an earlier second than the one Redis came back
    // in is refused as a possible replay (docs/redis.md), so each try mints a fresh one.
    let status = 503;
    while (status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await launch(cluster.proxy.url, await cluster.sim.contextToken('usr_grace'), cluster.sim)).status;
    }
    assert.equal(status, 200, 'service resumed');
    for (const instance of cluster.instances) assert.equal((await launch(instance.url, used, cluster.sim)).status, 401, 'the token used before is no replay to accept');
  });
});

describe('API-key pacing shared by three instances', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let cluster: Cluster;
  before(async () => {
    redis = await startRedis();
    cluster = await startCluster(redis, 'pacing:', { t0: Date.now(), speed: SPEED });
  });
  after(async () => {
    await cluster?.close();
    await redis?.stop();
  });

  it('500 lookups of distinct users over one test_ key meet no 429 and never more than 100 requests in any 60-second window', async () => {
    const users = Array.from({ length: 500 }, (_, i) => `usr_pace${i}`);
    let next = 0;
    // 50 at a time through the proxy, round-robin over the three instances.
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < users.length) {
          const user = users[next++]!;
          const answer = await fetch(`${cluster.proxy.url}/api/lookup?user=${user}`);
          assert.equal(answer.status, 200, `lookup of ${user}: ${await answer.clone().text()}`);
        }
      }),
    );
    const lookups = cluster.calls.filter((call) => call.path.startsWith('/api/v1/entitlements')).sort((a, b) => a.time - b.time);
    assert.equal(lookups.length, 500, JSON.stringify(lookups.map((call) => `${call.path} ${call.status}`).filter((line, i, all) => all.indexOf(line) !== i)));
    assert.deepEqual(lookups.filter((call) => call.status === 429), [], 'no 429');
    let most = 0;
    for (const [i, call] of lookups.entries()) {
      let j = i;
      while (j < lookups.length && lookups[j]!.time < call.time + 60_000) j += 1;
      most = Math.max(most, j - i);
    }
    assert.ok(most <= 100, `${most} requests within one 60-second window`);
  });
});
