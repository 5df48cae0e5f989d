// What the kit shows and who hears of it (src/runtime/store.ts): each listener once per visible
// change, the entitlement's end noticed while the page is open (on the kit's clock, which these
// tests move), and nothing after destroy().
import { expect } from '@open-wc/testing';
import type { Entitlement } from '../../../src/shared/schemas.js';
import { APP_ORIGIN, ENTITLEMENT, fakeEnvironment, jsonResponse, scriptedFetch, sessionBody } from '../../support/runtime-fakes.js';
import { PRO, backend, freshState, start } from '../../support/runtime-kit.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

describe('change notifications', () => {
  it('notify each listener once per change, and nobody for an update that changes nothing', async () => {
    const state = freshState();
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(backend(state)));
    const counts = new Array<number>(1000).fill(0);
    const unsubscribes = counts.map((_, i) => kit.subscribe(() => counts[i]!++));
    let events = 0;
    kit.addEventListener('change', () => events++);
    await kit.started;
    expect(new Set(counts)).to.deep.equal(new Set([1]));
    expect(events).to.equal(1);
    await kit.refresh();
    expect(new Set(counts)).to.deep.equal(new Set([1]), 'same entitlement: nobody notified');
    state.entitlement = PRO;
    await kit.refresh();
    expect(new Set(counts)).to.deep.equal(new Set([2]));
    expect(events).to.equal(2);
    unsubscribes[0]!();
    state.entitlement = ENTITLEMENT;
    await kit.refresh();
    expect(counts[0]).to.equal(2);
    expect(counts[1]).to.equal(3);
  });

  it('a listener unsubscribed by another during a notification is not told of it', async () => {
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(backend(freshState())));
    const told: string[] = [];
    let stopLater = () => {};
    kit.subscribe(() => {
      told.push('first');
      stopLater();
    });
    stopLater = kit.subscribe(() => told.push('later'));
    await kit.started;
    expect(told).to.deep.equal(['first']);
  });

  it('a listener that unsubscribes and subscribes itself again while it is told is told once per change', async () => {
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000))));
    let calls = 0;
    let stop = () => undefined as unknown;
    const listener = () => {
      calls++;
      if (calls > 3) return; // bounded, so that a wrong kit loops a little instead of for ever
      stop();
      stop = kit.subscribe(listener);
    };
    stop = kit.subscribe(listener);
    await kit.started;
    expect(calls).to.equal(1);
  });

  it('a listener that changes the kit while it is told: everyone hears of the newer state once, nobody twice', async () => {
    const fetch = scriptedFetch((call) => (call.method === 'DELETE' ? new Response(null, { status: 204 }) : jsonResponse(sessionBody('tok', 600_000))));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    const first: string[] = [];
    const second: string[] = [];
    const events: string[] = [];
    // An app that signs out a user it refuses, as soon as the kit is ready.
    kit.subscribe((k) => {
      first.push(k.state);
      if (k.state === 'ready') void k.signOut().catch(() => undefined);
    });
    kit.subscribe((k) => second.push(k.state));
    kit.addEventListener('change', () => events.push(kit.state));
    await kit.started;
    expect(first).to.deep.equal(['ready', 'signed-out']);
    // `ready` was over before its turn came: it is told of the state there is, once.
    expect(second).to.deep.equal(['signed-out']);
    expect(events).to.deep.equal(['signed-out']);
  });

  it('a listener that destroys the kit: no later listener and no change event hears of that change', async () => {
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/account`), scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000))));
    const heard: string[] = [];
    kit.subscribe(() => kit.destroy());
    kit.subscribe(() => heard.push('second listener'));
    kit.addEventListener('change', () => heard.push('change event'));
    await kit.started;
    expect([kit.destroyed, heard]).to.deep.equal([true, []]);
  });

  it('the last listener told: one that destroys the kit leaves no change event, one that changes it no second event', async () => {
    const fetch = scriptedFetch((call) => (call.method === 'DELETE' ? new Response(null, { status: 204 }) : jsonResponse(sessionBody('tok', 600_000))));
    const destroyed = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    const heard: string[] = [];
    destroyed.subscribe(() => destroyed.destroy());
    destroyed.addEventListener('change', () => heard.push('change event'));
    await destroyed.started;
    expect([destroyed.destroyed, heard]).to.deep.equal([true, []]);

    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    const told: string[] = [];
    const events: string[] = [];
    kit.subscribe((k) => {
      told.push(k.state);
      if (k.state === 'ready') void k.signOut().catch(() => undefined);
    });
    kit.addEventListener('change', () => events.push(kit.state));
    await kit.started;
    expect(told).to.deep.equal(['ready', 'signed-out']);
    expect(events).to.deep.equal(['signed-out']);
  });

  it('a throwing listener does not starve the others', async () => {
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(() => jsonResponse(sessionBody('t', 600_000))));
    const reported: unknown[] = [];
    // The kit reports a listener's exception as an uncaught error; keep the test runner's handler out.
    const runnerHandler = window.onerror;
    window.onerror = (_message, _source, _line, _column, error) => void reported.push(error);
    let later = 0;
    kit.subscribe(() => {
      throw new Error('listener bug');
    });
    kit.subscribe(() => later++);
    try {
      await kit.started;
    } finally {
      window.onerror = runnerHandler;
    }
    expect(later).to.equal(1);
    expect(reported).to.have.length(1);
  });
});

describe('the entitlement\'s end', () => {
  const endingIn = (ms: number, now: number): Entitlement => ({ ...ENTITLEMENT, expires_at: new Date(now + ms).toISOString() });

  it('tells listeners when the entitlement ends while the page is open, once', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account`);
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000, endingIn(1_000, env.now())))));
    await kit.started;
    const seen: boolean[] = [];
    kit.subscribe((k) => seen.push(k.has('reports')));
    expect(kit.has('reports')).to.equal(true);
    // The timer is set for a millisecond past the end: a timer never fires early, and at the end
    // itself the entitlement has not ended yet.
    env.advance(999);
    expect(seen).to.deep.equal([]);
    env.advance(1_000);
    expect(seen).to.deep.equal([false], 'one notice, at the end');
    env.advance(60_000);
    expect(seen).to.deep.equal([false], 'and no second one');
    expect(env.pending()).to.deep.equal([]);
  });

  it('looks again when the page is shown after the device slept (timers count no sleep)', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account`);
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000, endingIn(3_600_000, env.now())))));
    await kit.started;
    const seen: boolean[] = [];
    kit.subscribe((k) => seen.push(k.has('reports')));
    env.wake();
    expect(seen).to.deep.equal([], 'nothing changed: no notice');
    // Asleep for two hours: the page's clock moved, its timers did not fire.
    const now = env.now;
    const slept = now() + 2 * 3_600_000;
    env.now = () => slept;
    expect(kit.has('reports')).to.equal(false);
    expect(seen).to.deep.equal([], 'asleep: no timer has fired');
    env.wake();
    env.wake();
    expect(seen).to.deep.equal([false], 'one notice, on waking');
    kit.destroy();
    expect(env.wakeObservers).to.equal(0);
  });

  it('an entitlement that ends beyond what setTimeout can wait sets one capped timer, not a loop of them', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/`);
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000, endingIn(30 * 86_400_000, env.now())))));
    await kit.started;
    expect(env.pending()).to.deep.equal([MAX_TIMER_MS]);
    const seen: boolean[] = [];
    kit.subscribe((k) => seen.push(k.has('reports')));
    env.advance(MAX_TIMER_MS);
    expect([kit.has('reports'), seen]).to.deep.equal([true, []], 'not ended yet: timed again, nobody told');
    expect(env.pending()).to.have.length(1);
    env.advance(30 * 86_400_000 - MAX_TIMER_MS + 1);
    expect(seen).to.deep.equal([false]);
  });

  it('keeps one timer for the entitlement\'s end however often the kit changes, and none after destroy()', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/`);
    let entitlement = endingIn(3_600_000, env.now());
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000, entitlement))));
    await kit.started;
    const counts = [env.pending().length];
    env.changePreferences({ defaultTheme: 'dark' });
    entitlement = { ...entitlement, features: ['reports', 'export'] };
    await kit.refresh();
    await kit.refresh();
    counts.push(env.pending().length);
    kit.destroy();
    counts.push(env.pending().length);
    expect(counts).to.deep.equal([1, 1, 0]);
  });
});
