// The demo's several-instances variant (DEMO_REDIS_URL=… npm start): two sample backend instances
// on one redis-server behind a round-robin proxy, each launch and webhook served by either.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDemo, type Demo } from '../../demo/launch.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';

describe('demo on Redis: two sample backend instances', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let demo: Demo;
  const lines: string[] = [];
  before(async () => {
    redis = await startRedis();
    demo = await startDemo({ ports: { simulator: 0, backend: 0, vite: 0 }, redisUrl: redis.url, log: (line) => lines.push(line), viteLogLevel: 'silent' });
  });
  after(async () => {
    await demo?.close();
    await redis?.stop();
  });

  it('serves launches, the paid route and webhooks from either instance, sharing the kit state on Redis', async () => {
    assert.equal(demo.instances.length, 2);
    const host = new URL(demo.simulator.dashboardUrl).origin;
    const launch = async () => {
      const answer = await fetch(`${demo.urls.backend}/api/marketplace/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ context: await demo.simulator.contextToken('usr_alan'), host }),
      });
      assert.equal(answer.status, 200);
      return ((await answer.json()) as { session: { token: string } }).session.token;
    };
    const token = await launch();
    await launch();
    const exportCsv = () => fetch(`${demo.urls.backend}/api/notes/export.csv`, { headers: { authorization: `Bearer ${token}` } });
    // Round-robin: the two exports reach both instances, and each takes the session the other minted.
    assert.deepEqual([(await exportCsv()).status, (await exportCsv()).status], [200, 200]);
    await demo.simulator.sendEvent('subscription.cancelled', { user_id: 'usr_alan' });
    assert.deepEqual([(await exportCsv()).status, (await exportCsv()).status], [403, 403], 'the cancellation reached both');
    for (const name of ['instance A', 'instance B']) assert.ok(lines.some((line) => line.startsWith(`${name}: `)), `${name} served nothing: ${lines.join('\n')}`);
  });
});
