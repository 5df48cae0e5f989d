import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { after, before, describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { createMemoryReplayStore, isKitError, verifyWebhook, type WebhookDelivery } from '../../src/server/index.js';
import { signWebhookBody } from '../../src/server/signers.js';
import type { Simulator, SimulatorEvent } from '../../src/simulator/index.js';
import { exponentialBackoff } from '../../src/simulator/webhooks.js';
import { HANG_MS, within } from '../support/waiting.js';
import { FIXED, postJson, startReceiver, startTestSimulator, virtualClock, type Receiver } from '../support/simulator-harness.js';

/** Closes the simulator and the receiver when the test ends, also when it times out (its finally block does not run then). */
function closedAtEnd(t: TestContext, sim: Simulator, receiver: Receiver): () => Promise<void> {
  const close = async () => {
    await sim.close();
    await receiver.close();
  };
  t.signal.addEventListener('abort', () => void close(), { once: true });
  return close;
}

describe('simulator: webhook deliveries', () => {
  let sim: Simulator;
  let receiver: Receiver;
  const verified: WebhookDelivery[] = [];
  const replayStore = createMemoryReplayStore();

  before(async () => {
    receiver = await startReceiver(async (request, res) => {
      try {
        verified.push(await verifyWebhook(request.body, request.headers['x-service-signature'] as string, { secret: FIXED.webhookSecret, replayStore }));
        res.writeHead(204).end();
      } catch (error) {
        res.writeHead(isKitError(error) ? (error.status ?? 400) : 500).end();
      }
    });
    sim = await startTestSimulator({ webhookUrl: receiver.url });
  });
  after(async () => {
    await sim.close();
    await receiver.close();
  });

  it('signs each delivery so that verifyWebhook accepts it, with the documented body shape', async (t) => {
    // On Node 20 each AbortSignal.any keeps an entry on the simulator's long-lived stop signal.
    const any = t.mock.method(AbortSignal, 'any');
    const answer = await postJson(`${sim.siteUrl}/_simulator/events`, { event: 'subscription.created', data: { user_id: 'usr_ada', plan: 'pro_monthly' } });
    assert.equal(answer.status, 200);
    const result = (await answer.json()) as { outcome: string; status: number; attempts: number };
    assert.deepEqual({ outcome: result.outcome, status: result.status, attempts: result.attempts }, { outcome: 'delivered', status: 204, attempts: 1 });
    const delivery = verified.at(-1)!;
    assert.equal(delivery.event, 'subscription.created');
    assert.deepEqual(delivery.data, { user_id: 'usr_ada', plan: 'pro_monthly' });
    const raw = receiver.received.at(-1)!;
    assert.equal(raw.headers['content-type'], 'application/json');
    assert.equal(raw.headers['x-service-signature'], signWebhookBody(raw.body, FIXED.webhookSecret));
    // As a receiver written from the documentation alone computes it, with none of the kit's code:
    // HMAC-SHA256 of the raw body, keyed with the secret as printed (its UTF-8 bytes), in lower-case hex.
    assert.equal(raw.headers['x-service-signature'], `sha256=${createHmac('sha256', Buffer.from(FIXED.webhookSecret, 'utf8')).update(raw.body, 'utf8').digest('hex')}`);
    assert.deepEqual(Object.keys(JSON.parse(raw.body)), ['event', 'timestamp', 'data']);
    assert.match(JSON.parse(raw.body).timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(any.mock.callCount(), 0);
  });

  it('applies what each event means to the entitlement', async () => {
    await sim.sendEvent('subscription.created', { user_id: 'usr_alan', plan: 'lifetime' });
    assert.equal(sim.entitlement('usr_alan')?.plan, 'lifetime');
    assert.equal(sim.entitlement('usr_alan')?.expires_at, null);
    const cancelled = await sim.sendEvent('subscription.cancelled', { user_id: 'usr_alan' });
    assert.equal(cancelled.entitlement?.status, 'cancelled');
    assert.deepEqual(verified.at(-1)?.data, { user_id: 'usr_alan', plan: 'lifetime' });
    await sim.sendEvent('user.revoked', { user_id: 'usr_alan' });
    assert.equal(sim.entitlement('usr_alan'), null);
    // Nothing to cancel: the plan cannot default to the current one.
    await assert.rejects(sim.sendEvent('subscription.cancelled', { user_id: 'usr_alan' }), {
      code: 'ERR_INVALID_INPUT',
      message: 'usr_alan holds no entitlement to cancel: give the cancelled plan as data.plan.',
    });
    const entitlements = await fetch(`${sim.baseUrl}/entitlements?user_id=usr_alan`, { headers: { 'x-api-key': sim.testApiKey } });
    assert.equal(entitlements.status, 404);
    const authorized = await sim.sendEvent('user.authorized', { user_id: 'usr_alan' });
    assert.equal(authorized.outcome, 'delivered');
    assert.equal(sim.entitlement('usr_alan'), null);
    // A plan outside the catalogue is refused, naming the catalogue's plans: nothing is sent or changed.
    const delivered = sim.state().deliveries.length;
    const listed = "\"enterprise\" is not a plan of the simulator's catalogue; its plans are free, pro_monthly, pro_annual, lifetime.";
    await assert.rejects(sim.sendEvent('subscription.created', { user_id: 'usr_alan', plan: 'enterprise' }), { code: 'ERR_INVALID_INPUT', message: listed });
    const refused = await postJson(`${sim.siteUrl}/_simulator/events`, { event: 'subscription.created', data: { user_id: 'usr_alan', plan: 'enterprise' } });
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), { error: { code: 'unknown_plan', message: listed } });
    assert.equal(sim.state().deliveries.length, delivered);
    assert.equal(sim.entitlement('usr_alan'), null);
    const monthly = await sim.sendEvent('subscription.created', { user_id: 'usr_alan', plan: 'pro_monthly' });
    assert.equal(monthly.entitlement?.status, 'active');
    assert.match(monthly.entitlement?.expires_at ?? '', /Z$/);
    // A new plan keeps the calls already made in the period; the limit is the new plan's.
    const usedBefore = sim.entitlement('usr_katherine')!.usage.api_calls;
    assert.ok(usedBefore > 0);
    const upgraded = await sim.sendEvent('subscription.created', { user_id: 'usr_katherine', plan: 'pro_monthly' });
    assert.deepEqual(upgraded.entitlement?.usage, { api_calls: usedBefore, limit: 10_000 });
  });

  it('passes unknown event kinds on as generic deliveries without touching entitlements', async () => {
    const before = sim.entitlement('usr_grace');
    const result = await sim.sendEvent('app.custom_thing', { anything: 1 });
    assert.equal(result.outcome, 'delivered');
    assert.equal(verified.at(-1)?.event, 'app.custom_thing');
    assert.deepEqual(sim.entitlement('usr_grace'), before);
  });

  it('refuses events with bad data before sending anything', async () => {
    const count = receiver.received.length;
    const cases: [unknown, number][] = [
      [{ event: 'subscription.created', data: { user_id: 'usr_ada' } }, 400],
      [{ event: 'subscription.created', data: { user_id: 'usr_nobody', plan: 'free' } }, 404],
      [{ event: 'user.revoked', data: {} }, 400],
      [{ event: 'user.revoked', data: [] }, 400],
      [{ event: 'app.custom_thing', data: [] }, 400],
      [{ event: 'x'.repeat(201), data: {} }, 400],
      [{ event: 'user.revoked', data: { user_id: 'ada' } }, 400],
      [{ event: '', data: {} }, 400],
      [{ event: 7 }, 400],
      [{ event: 'user.revoked', data: { user_id: 'usr_ada' }, extra: 1 }, 400],
      // An entitlement /entitlements could not serve (a plan name over 100 characters).
      [{ event: 'subscription.created', data: { user_id: 'usr_ada', plan: 'p'.repeat(101) } }, 400],
      // A plan the user does not hold: the receiver would hear of it while another is cancelled.
      [{ event: 'subscription.cancelled', data: { user_id: 'usr_ada', plan: `not-${sim.entitlement('usr_ada')!.plan}` } }, 400],
      [{ data: {} }, 400],
    ];
    for (const [body, status] of cases) {
      const answer = await postJson(`${sim.siteUrl}/_simulator/events`, body);
      assert.equal(answer.status, status, JSON.stringify(body));
      assert.equal(typeof ((await answer.json()) as { error: { message: string } }).error.message, 'string');
    }
    assert.equal(receiver.received.length, count);
  });

  it('announces the entitlement as it is once its delivery ends', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let firstCalled!: () => void;
    const first = new Promise<void>((resolve) => (firstCalled = resolve));
    let calls = 0;
    const slow = await startReceiver(async (_request, res) => {
      if (++calls === 1) {
        firstCalled();
        await gate; // the first delivery ends last (a retry, a slow receiver)
      }
      res.writeHead(200).end();
    });
    sim.configure({ webhook_url: slow.url });
    const heard: string[] = [];
    const unsubscribe = sim.subscribe((event: SimulatorEvent) => {
      if (event.type === 'entitlement') heard.push(`${event.data.entitlement?.plan}/${event.data.entitlement?.status}`);
    });
    try {
      const created = sim.sendEvent('subscription.created', { user_id: 'usr_grace', plan: 'pro_annual' });
      await first;
      await sim.sendEvent('subscription.cancelled', { user_id: 'usr_grace' });
      release();
      await created;
      assert.deepEqual(heard, ['pro_annual/cancelled', 'pro_annual/cancelled']);
    } finally {
      unsubscribe();
      sim.configure({ webhook_url: receiver.url });
      await slow.close();
    }
  });

  it('tells listeners of an entitlement change only after the receiver answered', async () => {
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let called!: () => void;
    const receiverCalled = new Promise<void>((resolve) => (called = resolve));
    const slow = await startReceiver(async (_request, res) => {
      order.push('receiver called');
      called();
      await gate;
      order.push('receiver answers');
      res.writeHead(200).end();
    });
    sim.configure({ webhook_url: slow.url });
    const unsubscribe = sim.subscribe((event: SimulatorEvent) => {
      if (event.type === 'entitlement') order.push('entitlement event');
    });
    try {
      const sent = sim.sendEvent('subscription.created', { user_id: 'usr_grace', plan: 'pro_annual' });
      await receiverCalled;
      assert.deepEqual(order, ['receiver called']);
      // The marketplace state changed at once: an app that asks now already sees the new plan.
      assert.equal(sim.entitlement('usr_grace')?.plan, 'pro_annual');
      release();
      await sent;
      assert.deepEqual(order, ['receiver called', 'receiver answers', 'entitlement event']);
    } finally {
      unsubscribe();
      sim.configure({ webhook_url: receiver.url });
      await slow.close();
    }
  });

  it('tells subscribers of each API call and each finished delivery', async () => {
    const events: SimulatorEvent[] = [];
    const unsubscribe = sim.subscribe((event) => events.push(event));
    try {
      const whoami = await fetch(`${sim.baseUrl}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': sim.testApiKey } });
      assert.equal(whoami.status, 200);
      const result = await sim.sendEvent('app.subscriber_check', { n: 1 });
      const call = events.find((event) => event.type === 'api_call');
      assert.ok(call, 'no api_call event');
      assert.equal(call.data.status, 200);
      assert.equal(call.data.path, '/api/v1/whoami?user_id=usr_ada');
      const delivery = events.find((event) => event.type === 'delivery');
      assert.ok(delivery, 'no delivery event');
      assert.equal(delivery.data.event, 'app.subscriber_check');
      assert.equal(delivery.data.outcome, 'delivered');
      assert.equal(delivery.data.id, result.delivery.id);
    } finally {
      unsubscribe();
    }
  });

  it('answers the API call and tells the other listeners when a subscriber throws; the error is thrown again, uncaught', async () => {
    // In a process of its own: the uncaught error would fail whichever test ran here.
    const script = `
      const { startSimulator } = await import(${JSON.stringify(new URL('../../src/simulator/index.ts', import.meta.url).href)});
      const uncaught = [];
      process.on('uncaughtException', (error) => uncaught.push(error.message));
      const sim = await startSimulator();
      const heard = [];
      sim.subscribe(() => { throw new Error('listener bug'); });
      sim.subscribe((event) => heard.push(event.type));
      const whoami = await fetch(sim.baseUrl + '/whoami?user_id=usr_ada', { headers: { 'x-api-key': sim.testApiKey } });
      await sim.close();
      console.log(JSON.stringify({ status: whoami.status, heard, uncaught }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    assert.deepEqual(JSON.parse(stdout), { status: 200, heard: ['api_call'], uncaught: ['listener bug'] });
  });

  it('records a delivery as skipped when no webhook URL is configured, still changing the entitlement', async () => {
    sim.configure({ webhook_url: null });
    try {
      const result = await sim.sendEvent('subscription.cancelled', { user_id: 'usr_grace' });
      assert.equal(result.outcome, 'skipped');
      assert.equal(result.attempts, 0);
      assert.equal(sim.entitlement('usr_grace')?.status, 'cancelled');
    } finally {
      sim.configure({ webhook_url: receiver.url });
    }
  });
});

describe('simulator: webhook retries', () => {
  it('retries a failing receiver with backoff by the simulator\'s clock, re-stamping and re-signing each attempt', async () => {
    const clock = virtualClock();
    let calls = 0;
    const receiver = await startReceiver((_request, res) => {
      calls += 1;
      res.writeHead(calls < 3 ? 503 : 200).end(calls < 3 ? 'busy' : 'ok');
    });
    // Backoffs of 200 s then 400 s: waited in real time, they would outlast the test's hang guard.
    const sim = await startTestSimulator({ webhookUrl: receiver.url, clock, webhookBackoffMs: 200_000 });
    try {
      const sent = clock.now();
      const result = await sim.sendEvent('user.authorized', { user_id: 'usr_ada' });
      assert.equal(result.outcome, 'delivered');
      assert.equal(result.attempts, 3);
      assert.deepEqual(result.delivery.attempts.map((a) => a.status), [503, 503, 200]);
      assert.equal(result.delivery.attempts[0]?.body, 'busy');
      // A doubling counted from the wrong attempt would wait 400 s then 800 s.
      assert.deepEqual(clock.waits, [200_000, 400_000]);
      // Each attempt is stamped when it is made, by that clock, and signed again.
      const bodies = receiver.received.map((r) => JSON.parse(r.body) as { timestamp: string });
      assert.deepEqual(bodies.map((b) => Date.parse(b.timestamp) - sent), [0, 200_000, 600_000]);
      assert.deepEqual(result.delivery.attempts.map((a) => Date.parse(a.at) - sent), [0, 200_000, 600_000]);
      for (const r of receiver.received) assert.equal(r.headers['x-service-signature'], signWebhookBody(r.body, FIXED.webhookSecret));
      assert.equal(new Set(receiver.received.map((r) => r.headers['x-service-signature'])).size, 3);
    } finally {
      await sim.close();
      await receiver.close();
    }
  });

  it('waits 1 s, 2 s, 4 s, 8 s between the five attempts by default', async () => {
    assert.deepEqual([1, 2, 3, 4].map(exponentialBackoff(1000)), [1000, 2000, 4000, 8000]);
    const receiver = await startReceiver((_request, res) => void res.writeHead(503).end());
    const clock = virtualClock();
    // No webhookBackoffMs nor webhookMaxAttempts: the simulator's own defaults.
    const sim = await startTestSimulator({ webhookUrl: receiver.url, webhookBackoffMs: undefined, clock });
    try {
      const result = await sim.sendEvent('user.authorized', { user_id: 'usr_ada' });
      assert.deepEqual([result.outcome, result.attempts], ['failed', 5]);
      assert.deepEqual(clock.waits, [1000, 2000, 4000, 8000]);
    } finally {
      await sim.close();
      await receiver.close();
    }
  });

  it('with a clock that is only a function, still waits its backoff in real time', async () => {
    const arrivals: number[] = [];
    const receiver = await startReceiver((_request, res) => {
      arrivals.push(performance.now());
      res.writeHead(arrivals.length === 1 ? 503 : 204).end();
    });
    const clock = virtualClock();
    const sim = await startTestSimulator({ webhookUrl: receiver.url, webhookBackoffMs: 200, clock: clock.now });
    try {
      const result = await sim.sendEvent('user.authorized', { user_id: 'usr_ada' });
      assert.deepEqual([result.outcome, result.attempts], ['delivered', 2]);
      const waited = arrivals[1]! - arrivals[0]!;
      assert.ok(waited >= 190, `waited ${waited} ms`);
    } finally {
      await sim.close();
      await receiver.close();
    }
  });

  it('does not follow redirects: a 3xx answer is a failed attempt', async () => {
    const elsewhere = await startReceiver((_request, res) => void res.writeHead(200).end());
    const redirecting = await startReceiver((_request, res) => void res.writeHead(307, { location: elsewhere.url }).end());
    const sim = await startTestSimulator({ webhookUrl: redirecting.url, webhookBackoffMs: 1, webhookMaxAttempts: 2 });
    try {
      const result = await sim.sendEvent('user.authorized', { user_id: 'usr_ada' });
      assert.deepEqual({ outcome: result.outcome, status: result.status, attempts: result.attempts }, { outcome: 'failed', status: 307, attempts: 2 });
      assert.equal(elsewhere.received.length, 0);
    } finally {
      await sim.close();
      await redirecting.close();
      await elsewhere.close();
    }
  });

  it('counts a 300 answer as a failed attempt', async () => {
    const receiver = await startReceiver((_request, res) => void res.writeHead(300).end());
    const sim = await startTestSimulator({ webhookUrl: receiver.url, webhookMaxAttempts: 1 });
    try {
      const result = await sim.sendEvent('user.authorized', { user_id: 'usr_ada' });
      assert.deepEqual({ outcome: result.outcome, status: result.status, attempts: result.attempts }, { outcome: 'failed', status: 300, attempts: 1 });
    } finally {
      await sim.close();
      await receiver.close();
    }
  });

  it('gives up on an attempt the receiver does not answer within webhookTimeoutMs', async (t) => {
    const receiver = await startReceiver(() => new Promise<void>(() => {}));
    const sim = await startTestSimulator({ webhookUrl: receiver.url, webhookTimeoutMs: 100, webhookMaxAttempts: 1 });
    const cleanUp = closedAtEnd(t, sim, receiver);
    try {
      const result = await within(sim.sendEvent('user.authorized', { user_id: 'usr_ada' }), HANG_MS, 'the attempt was still waiting long after its 100 ms timeout');
      assert.equal(result.outcome, 'failed');
      assert.equal(result.status, null);
      assert.equal(result.attempts, 1);
      assert.ok(result.delivery.attempts[0]!.error);
    } finally {
      await cleanUp();
    }
  });

  it('gives each attempt 10 s by default', async (t) => {
    const timeout = t.mock.method(AbortSignal, 'timeout');
    const receiver = await startReceiver((_request, res) => void res.writeHead(204).end());
    const sim = await startTestSimulator({ webhookUrl: receiver.url });
    try {
      assert.equal((await sim.sendEvent('user.authorized', { user_id: 'usr_ada' })).outcome, 'delivered');
      assert.deepEqual(timeout.mock.calls.map((call) => call.arguments[0]), [10_000]);
    } finally {
      await sim.close();
      await receiver.close();
    }
  });

  it('gives up after 5 attempts and reports the last answer', async () => {
    const receiver = await startReceiver((_request, res) => void res.writeHead(500).end());
    const sim = await startTestSimulator({ webhookUrl: receiver.url, webhookBackoffMs: 1 });
    try {
      const answer = await postJson(`${sim.siteUrl}/_simulator/events`, { event: 'user.revoked', data: { user_id: 'usr_ada' } });
      const result = (await answer.json()) as { outcome: string; status: number; attempts: number };
      assert.deepEqual({ outcome: result.outcome, status: result.status, attempts: result.attempts }, { outcome: 'failed', status: 500, attempts: 5 });
      assert.equal(receiver.received.length, 5);
      assert.equal(sim.state().deliveries[0]?.outcome, 'failed');
    } finally {
      await sim.close();
      await receiver.close();
    }
  });

  it('reports a receiver that does not listen as failed attempts without a status', async () => {
    const receiver = await startReceiver((_request, res) => void res.end());
    const url = receiver.url;
    await receiver.close();
    const sim = await startTestSimulator({ webhookUrl: url, webhookBackoffMs: 1, webhookMaxAttempts: 2 });
    try {
      const result = await sim.sendEvent('user.authorized', { user_id: 'usr_ada' });
      assert.equal(result.outcome, 'failed');
      assert.equal(result.status, null);
      assert.equal(result.attempts, 2);
      assert.ok(result.delivery.attempts.every((a) => a.error));
    } finally {
      await sim.close();
    }
  });

  it('stops retrying when the simulator closes', async (t) => {
    let answered!: () => void;
    const firstAttempt = new Promise<void>((resolve) => (answered = resolve));
    const receiver = await startReceiver((_request, res) => {
      res.writeHead(500).end();
      answered();
    });
    // Two attempts 5 s apart: a close that did not end the wait would let the retry through (two
    // attempts, below) instead of ending the delivery at once.
    const sim = await startTestSimulator({ webhookUrl: receiver.url, webhookBackoffMs: 5_000, webhookMaxAttempts: 2 });
    const cleanUp = closedAtEnd(t, sim, receiver);
    try {
      const sent = sim.sendEvent('user.authorized', { user_id: 'usr_ada' });
      await firstAttempt;
      await sim.close();
      const result = await within(sent, HANG_MS, 'the delivery was still waiting to retry after close()');
      assert.equal(result.outcome, 'failed');
      assert.equal(result.attempts, 1);
      assert.equal(receiver.received.length, 1);
    } finally {
      await cleanUp();
    }
  });

  it('records an attempt that close() cuts short as stopped by the shutdown, not as a failure of the receiver', async (t) => {
    let arrived!: () => void;
    const waiting = new Promise<void>((resolve) => (arrived = resolve));
    const receiver = await startReceiver(() => {
      arrived();
      return new Promise<void>(() => {});
    });
    const sim = await startTestSimulator({ webhookUrl: receiver.url });
    const cleanUp = closedAtEnd(t, sim, receiver);
    try {
      const sent = sim.sendEvent('subscription.created', { user_id: 'usr_ada', plan: 'pro_monthly' });
      await waiting;
      await sim.close();
      const result = await within(sent, HANG_MS, 'the attempt was still waiting after close()');
      assert.equal(result.outcome, 'failed');
      assert.deepEqual(result.delivery.attempts.map((attempt) => [attempt.status, attempt.error]), [[null, 'stopped: the simulator is shutting down']]);
    } finally {
      await cleanUp();
    }
  });
});
