// The connection to the dashboard (src/runtime/host-connection.ts): kit.host at once, the bridge's
// code loaded on first use and opened after start-up (or a second after the request left), the
// document's height reported, the plan chooser. Timeouts run on the kit's clock, which the tests move.
import { expect } from '@open-wc/testing';
import type { MarketplaceKitError } from '../../../src/shared/errors.js';
import type { Entitlement } from '../../../src/shared/schemas.js';
import {
  APP_ORIGIN,
  ENTITLEMENT,
  consoleCalls,
  fakeEnvironment,
  gate,
  jsonResponse,
  rejection,
  scriptedFetch,
  sessionBody,
  settled,
  until,
  windowPair,
  type FakeEnvironment,
} from '../../support/runtime-fakes.js';
import { LAUNCH, PRO, backend, dashboardEnd, embedded, freshState, spyListeners, start } from '../../support/runtime-kit.js';
import type { KitOptions } from '../../../src/runtime/kit.js';

const realLink = () => import('../../../src/runtime/host-link.js');

/** A kit inside a fake dashboard whose bridge code comes from `load`. */
function framed(load: FakeEnvironment['loadHostLink'], options: Partial<KitOptions> = {}, url = LAUNCH) {
  const [host, app] = windowPair();
  const toasts: string[] = [];
  dashboardEnd(host, app, { getContext: () => ({ context: 'ctx-from-host' }), toast: ({ message }) => void toasts.push(message) });
  const spied = spyListeners(app);
  const env = fakeEnvironment(url, { parent: host, self: spied.window, loadHostLink: load });
  const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000))), { bridgeTimeoutMs: 300, ...options });
  return { kit, env, spied, toasts };
}

describe('the bridge\'s code (loaded on first use)', () => {
  it('inside the dashboard it is loaded once, after start-up, whoever asks for it', async () => {
    const { kit, env, spied, toasts } = framed(realLink);
    await kit.started;
    expect(env.hostLinkLoads).to.equal(0, 'not needed to get ready');
    await Promise.all([kit.host!.toast('a'), kit.host!.toast('b'), kit.host!.toast('c')]);
    await settled();
    expect(toasts).to.deep.equal(['a', 'b', 'c']);
    expect([env.hostLinkLoads, spied.added]).to.deep.equal([1, 1]);
  });

  it('a launch without a context loads it during start-up, to ask the dashboard for one', async () => {
    const { kit, env } = framed(realLink, {}, `${APP_ORIGIN}/embed`); // a reload: the launch parameters are gone
    await kit.started;
    expect([kit.state, env.hostLinkLoads]).to.deep.equal(['ready', 1]);
  });

  it('a failed load fails the call with ERR_NETWORK, and the next call loads it again', async () => {
    let loads = 0;
    const { kit, toasts } = framed(() => (++loads <= 2 ? Promise.reject(new TypeError('Failed to fetch dynamically imported module')) : realLink()));
    await kit.started;
    await until(() => loads === 1); // the scheduled opening after start-up failed quietly
    const failed = await rejection(kit.host!.toast('lost'));
    expect([failed.code, failed.message]).to.deep.equal(['ERR_NETWORK', "The host bridge's code could not be loaded: Failed to fetch dynamically imported module"]);
    await kit.host!.toast('delivered');
    await settled();
    expect([loads, kit.state]).to.deep.equal([3, 'ready']);
    expect(toasts).to.deep.equal(['delivered']);
  });

  it('a load that never ends fails the call with ERR_TIMEOUT after timeoutMs', async () => {
    const { kit, env } = framed(() => new Promise(() => undefined), { timeoutMs: 50 });
    await kit.started;
    const failed = rejection(kit.host!.toast('late'));
    await settled();
    env.advance(50);
    expect(await failed.then((error) => [error.code, error.message])).to.deep.equal(['ERR_TIMEOUT', "The host bridge's code did not load within 50 ms"]);
  });

  it('destroyed while it loads: no bridge is opened, nothing is posted or observed', async () => {
    const held = gate();
    const { kit, env, spied } = framed(() => held.promise.then(realLink));
    await kit.started;
    const call = kit.host!.toast('after destroy');
    kit.destroy();
    held.open();
    expect((await rejection(call)).code).to.equal('ERR_BRIDGE_CLOSED');
    env.resizeTo(800);
    expect([spied.added, spied.listening.size]).to.deep.equal([0, 0]);
  });

  it('destroyed while a load that then fails is under way: ERR_BRIDGE_CLOSED, not the load error', async () => {
    const held = gate();
    const { kit } = framed(() => held.promise.then(() => Promise.reject(new TypeError('Failed to fetch dynamically imported module'))));
    await kit.started;
    const call = kit.host!.toast('x');
    kit.destroy();
    held.open();
    expect((await rejection(call)).code).to.equal('ERR_BRIDGE_CLOSED');
  });

  it('destroyed while a load that never ends is under way: start-up and calls end at once, not after timeoutMs', async () => {
    // An in-frame reload: start-up itself waits for the bridge (getContext).
    const { kit, env } = framed(() => new Promise(() => undefined), { timeoutMs: 10_000 }, `${APP_ORIGIN}/embed`);
    await settled();
    const call = rejection(kit.host!.toast('x'));
    kit.destroy();
    // No clock moves: only destroy() can end these.
    expect(await call.then((error) => error.code)).to.equal('ERR_BRIDGE_CLOSED');
    expect(await kit.started.then(() => 'settled')).to.equal('settled');
    expect(env.pending()).to.deep.equal([], 'no timer left behind');
  });

  it('a host call through a kit.host kept from before destroy() opens nothing: ERR_BRIDGE_CLOSED', async () => {
    const { kit, env, spied } = framed(realLink);
    await kit.started;
    const host = kit.host!;
    kit.destroy(); // before the scheduled opening ran
    expect((await rejection(host.toast('late'))).code).to.equal('ERR_BRIDGE_CLOSED');
    await settled();
    expect([env.hostLinkLoads, spied.added]).to.deep.equal([0, 0]);
  });

  it('a slow start-up does not keep the bridge closed: it opens a second after the request left', async () => {
    const [host, app] = windowPair();
    const hostSide = dashboardEnd(host, app, { getContext: () => ({ context: 'ctx' }) }, 3000);
    const spied = spyListeners(app);
    const answer = gate();
    const env = fakeEnvironment(LAUNCH, { parent: host, self: spied.window });
    const kit = start(env, scriptedFetch(async () => (await answer.promise, jsonResponse(sessionBody('tok', 600_000)))));
    // The dashboard switches the theme while the exchange is still out: the call waits for the bridge.
    const themed = hostSide.call('themeChanged', { theme: 'light' }, { timeoutMs: 10_000 });
    await settled();
    env.advance(999);
    await settled();
    expect(env.hostLinkLoads).to.equal(0, 'not before the second');
    env.advance(1);
    await themed;
    expect([kit.state, kit.theme, env.hostLinkLoads]).to.deep.equal(['loading', 'light', 1]);
    answer.open();
    await kit.started;
    await settled(); // the opening scheduled after start-up finds the bridge open
    expect([kit.state, env.hostLinkLoads, spied.added]).to.deep.equal(['ready', 1, 1]);
  });

  it('a host call made as soon as start-up ends opens the bridge itself; one bridge is ever opened', async () => {
    const titles: string[] = [];
    const { kit, spied } = embedded(backend(freshState()), { setTitle: ({ title }) => void titles.push(title) });
    await kit.started;
    await kit.host!.setTitle('Reports');
    await settled();
    expect(titles).to.deep.equal(['Reports']);
    expect(spied.added).to.equal(1, 'one message listener: the scheduled opening found the bridge open');
  });

  it('kit.host is there as soon as the kit exists: a call made at once (an mp-kit-created listener) reaches the dashboard', async () => {
    const asked: unknown[] = [];
    const { kit } = embedded(backend(freshState()), { openUpgrade: (params) => (asked.push(params), { outcome: 'dismissed' }) });
    const host = kit.host;
    const outcome = kit.upgrade({ plan: 'pro' });
    expect(host === null, 'kit.host right after the kit was created').to.equal(false);
    expect(await outcome).to.equal('dismissed');
    expect(asked).to.deep.equal([{ plan: 'pro' }]);
    await kit.started;
    expect([kit.host === host, kit.state]).to.deep.equal([true, 'ready']);
  });

  it('without options, bridge calls wait 5 s and the plan chooser 10 min', async () => {
    const { kit, env } = embedded(backend(freshState()), { toast: () => new Promise(() => undefined), openUpgrade: () => new Promise(() => undefined) }, { bridgeTimeoutMs: undefined });
    await kit.started;
    const toast = rejection(kit.host!.toast('Saved'));
    const upgrade = rejection(kit.upgrade({ plan: 'pro' }));
    await settled();
    env.advance(4_999);
    await settled();
    env.advance(1);
    expect((await toast).code).to.equal('ERR_BRIDGE_TIMEOUT');
    env.advance(600_000 - 5_001);
    await settled();
    env.advance(1);
    expect((await upgrade).code).to.equal('ERR_BRIDGE_TIMEOUT');
  });

  it('answers the dashboard\'s localeChanged with an error for a value that is no language tag', async () => {
    const { kit, hostSide } = embedded(backend(freshState()));
    await kit.started;
    await hostSide.call('localeChanged', { locale: 'fr-CA' });
    expect(kit.locale).to.equal('fr-CA');
    const error = await rejection(hostSide.call('localeChanged', { locale: 'not a locale!!' }));
    expect(error.code).to.equal('ERR_BRIDGE_REMOTE');
    expect(error.message).to.contain('is not a BCP 47 language tag');
    expect(kit.locale).to.equal('fr-CA');
  });
});

describe('the plan chooser (kit.upgrade)', () => {
  it('opens the plan chooser and reloads only when upgraded', async () => {
    const state = freshState();
    let outcome: 'upgraded' | 'dismissed' = 'dismissed';
    const asked: unknown[] = [];
    const { kit, fetch } = embedded(backend(state), {
      openUpgrade: (params) => {
        asked.push(params);
        state.entitlement = PRO;
        return { outcome };
      },
    });
    await kit.started;
    expect(await kit.upgrade({ feature: 'export' })).to.equal('dismissed');
    expect(fetch.calls).to.have.length(1);
    outcome = 'upgraded';
    expect(await kit.upgrade({ plan: 'pro' })).to.equal('upgraded');
    expect(kit.has('export')).to.equal(true);
    expect(asked).to.deep.equal([{ feature: 'export' }, { plan: 'pro' }]);
  });

  /**
   * A kit whose dashboard, once the user bought `bought()` in its chooser, announces
   * `entitlementsChanged` before answering `upgraded` (unless `announce` is false then). `fail`
   * reloads (`?refresh=1`) answer 502 first.
   */
  function announcingDashboard(options: { bought: () => Entitlement; announce?: () => boolean; fail?: number }) {
    const state = freshState();
    const serve = backend(state);
    let failures = options.fail ?? 0;
    const reloads = () => setup.fetch.calls.filter((call) => call.url.endsWith('?refresh=1')).length;
    const setup = embedded((call) => (call.url.endsWith('?refresh=1') && failures-- > 0 ? new Response('<h1>Bad gateway</h1>', { status: 502 }) : serve(call)), {
      openUpgrade: async () => {
        state.entitlement = options.bought();
        if (options.announce?.() ?? true) await setup.hostSide.call('entitlementsChanged', {});
        return { outcome: 'upgraded' as const };
      },
    });
    return { kit: setup.kit, reloads };
  }

  it('shares the reload the dashboard asked for while its chooser was open, instead of queuing a second one', async () => {
    // A second reload so soon would wait out the backend's refresh interval (5 s) before upgrade() settles.
    let bought = PRO;
    let announce = true;
    const { kit, reloads } = announcingDashboard({ bought: () => bought, announce: () => announce });
    await kit.started;
    expect(await kit.upgrade({ plan: 'pro' })).to.equal('upgraded');
    expect(kit.has('export'), 'upgrade() settles once the new plan is known').to.equal(true);
    expect(reloads()).to.equal(1);
    // Without an announcement while the chooser is open, upgrade() reloads by itself.
    bought = { ...PRO, features: [...PRO.features, 'sso'] };
    announce = false;
    expect(await kit.upgrade({ plan: 'pro' })).to.equal('upgraded');
    expect([reloads(), kit.has('sso')]).to.deep.equal([2, true]);
  });

  it('reloads by itself when the reload the dashboard asked for during the chooser failed', async () => {
    const { kit, reloads } = announcingDashboard({ bought: () => PRO, fail: 1 });
    await kit.started;
    expect(await kit.upgrade({ plan: 'pro' })).to.equal('upgraded');
    expect([reloads(), kit.has('export')]).to.deep.equal([2, true]);
  });

  it('answers upgraded even when the reload after it fails, and says so in the console', async () => {
    const serve = backend(freshState());
    const { kit } = embedded((call) => (call.url.endsWith('?refresh=1') ? new Response('<h1>Bad gateway</h1>', { status: 502 }) : serve(call)), { openUpgrade: () => ({ outcome: 'upgraded' }) });
    await kit.started;
    const logged = await consoleCalls('error', async () => expect(await kit.upgrade({ plan: 'pro' })).to.equal('upgraded'));
    expect(logged).to.have.length(1);
    expect((logged[0]![1] as MarketplaceKitError).status).to.equal(502);
    expect([kit.state, kit.entitlement]).to.deep.equal(['ready', ENTITLEMENT]);
  });

  it('waits for the plan chooser upgradeTimeoutMs, longer than other bridge calls', async () => {
    const chooser = gate();
    const slowChooser = () => chooser.promise.then(() => ({ outcome: 'dismissed' as const }));
    const patient = embedded(backend(freshState()), { openUpgrade: slowChooser });
    await patient.kit.started;
    const waited = patient.kit.upgrade({ plan: 'pro' });
    await settled();
    patient.env.advance(300); // the bridge's own timeout: not the chooser's
    chooser.open();
    expect(await waited).to.equal('dismissed');

    const hasty = embedded(backend(freshState()), { openUpgrade: () => new Promise(() => undefined) }, { upgradeTimeoutMs: 100 });
    await hasty.kit.started;
    const timedOut = rejection(hasty.kit.upgrade({ plan: 'pro' }));
    await settled();
    hasty.env.advance(100);
    expect((await timedOut).code).to.equal('ERR_BRIDGE_TIMEOUT');
  });

  it('after signOut() still answers the chooser\'s outcome, and reloads nothing', async () => {
    const { kit, fetch } = embedded(backend(freshState()), { openUpgrade: () => ({ outcome: 'upgraded' }) });
    await kit.started;
    await kit.signOut();
    const calls = fetch.calls.length;
    const logged = await consoleCalls('error', async () => expect(await kit.upgrade({ plan: 'pro' })).to.equal('upgraded'));
    expect([kit.state, fetch.calls.length]).to.deep.equal(['signed-out', calls]);
    expect(logged).to.deep.equal([], 'no reload is tried, so none fails');
  });
});

describe('auto-resize', () => {
  it('reports the document height, once per distinct height; autoResize: false reports nothing', async () => {
    const heights: number[] = [];
    const { kit, env, spied } = embedded(backend(freshState()), { resize: ({ height }) => void heights.push(height) });
    await kit.started;
    // The bridge, and with it the height observer, opens once its code has loaded after start-up.
    await until(() => spied.added === 1);
    env.resizeTo(400);
    env.resizeTo(640);
    env.resizeTo(640);
    await kit.host!.resize(10);
    await settled();
    expect(heights).to.deep.equal([400, 640, 10]);

    const quiet: number[] = [];
    const other = embedded(backend(freshState()), { resize: ({ height }) => void quiet.push(height) }, { autoResize: false });
    await other.kit.started;
    await until(() => other.spied.added === 1);
    other.env.resizeTo(900);
    await settled();
    expect(quiet).to.deep.equal([]);
  });

  it('host.resize() without a height sends the document\'s height', async () => {
    const heights: number[] = [];
    const { kit, env } = embedded(backend(freshState()), { resize: ({ height }) => void heights.push(height) }, { autoResize: false });
    await kit.started;
    env.height = 777;
    await kit.host!.resize();
    expect(heights).to.deep.equal([777]);
  });

  it('destroy() stops the height observer', async () => {
    const { kit, env, spied } = embedded(backend(freshState()));
    let observing = 0;
    const observe = env.observeHeight;
    env.observeHeight = (callback) => {
      observing++;
      const stop = observe(callback);
      return () => {
        observing--;
        stop();
      };
    };
    await kit.started;
    await until(() => spied.added === 1);
    expect(observing).to.equal(1);
    kit.destroy();
    expect(observing).to.equal(0);
  });

  it('a browser without ResizeObserver: no automatic resizing, but the bridge opens and host.resize() works', async () => {
    const heights: number[] = [];
    const { kit, env, spied } = embedded(backend(freshState()), { resize: ({ height }) => void heights.push(height), setTitle: () => undefined });
    env.observeHeight = () => {
      throw new ReferenceError('ResizeObserver is not defined');
    };
    await kit.started;
    await until(() => spied.added === 1);
    await kit.host!.setTitle('Reports');
    await kit.host!.resize(321);
    expect([heights, kit.state]).to.deep.equal([[321], 'ready']);
  });

  it('tells a dashboard that starts its end over the height, which it never heard, with no change of height', async () => {
    const [host, app] = windowPair();
    const heights: number[] = [];
    // The old end never answers its resize: the restart fails that call.
    dashboardEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => (heights.push(height), new Promise<void>(() => undefined)) });
    const env = fakeEnvironment(LAUNCH, { parent: host, self: app });
    const kit = start(env, scriptedFetch(backend(freshState())));
    await kit.started;
    await until(() => heights.length === 1);
    // The dashboard re-mounts its embed on the same frame (a second connectApp), with no reload in it.
    const again: number[] = [];
    dashboardEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => void again.push(height) });
    await until(() => again.length === 1);
    // The old end's failed call does not undo the new one: the same height is not sent again.
    env.resizeTo(400);
    // Messages keep their order: a duplicate would come before this one.
    await kit.host!.resize(999);
    expect([heights, again]).to.deep.equal([[400], [400, 999]]);
    expect(kit.state).to.equal('ready');
  });

  it('reports the height again once a dashboard that connects late has answered the handshake', async () => {
    const [host, app] = windowPair();
    const spied = spyListeners(app);
    const env = fakeEnvironment(LAUNCH, { parent: host, self: spied.window });
    const kit = start(env, scriptedFetch(backend(freshState())), { bridgeTimeoutMs: 100 });
    await kit.started;
    await until(() => spied.added === 1); // the bridge opened, the first height's call is out: nobody listens
    env.advance(100); // and has timed out
    await settled();
    const heights: number[] = [];
    const hostSide = dashboardEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => void heights.push(height) }, 100);
    await hostSide.ready;
    await until(() => heights.length > 0);
    await settled(); // room for a (wrong) second report
    expect(heights).to.deep.equal([env.height]);
  });

  it('a height whose call failed is not sent again when a newer one is still on its way at the handshake', async () => {
    const [host, app] = windowPair();
    const spied = spyListeners(app);
    const env = fakeEnvironment(LAUNCH, { parent: host, self: spied.window });
    const kit = start(env, scriptedFetch(backend(freshState())), { bridgeTimeoutMs: 3_000 });
    await kit.started;
    await until(() => spied.added === 1); // the first height (400) is on its way: nobody answers yet
    await settled();
    env.advance(1_500);
    env.resizeTo(500); // the second one leaves 1.5 s later
    await settled();
    env.advance(1_500); // the first has timed out; the second has 1.5 s left
    await settled();
    const heights: number[] = [];
    const hostSide = dashboardEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => void heights.push(height) }, 600);
    await hostSide.ready;
    await until(() => heights.length > 0);
    await settled(); // and nothing after it
    expect(heights).to.deep.equal([500]);
  });
});
