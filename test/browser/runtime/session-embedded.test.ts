// The session inside the dashboard (src/runtime/session-embedded.ts): the launch's context
// exchanged once, a bearer token kept in memory and renewed through getContext, by the backend's
// clock when the browser's is off, with pauses when the backend asks for them. Time is the kit's
// fake clock, moved by the tests.
import { expect } from '@open-wc/testing';
import type { EarlyLaunch } from '../../../src/shared/early-launch.js';
import { MarketplaceKitError } from '../../../src/shared/errors.js';
import type { Entitlement } from '../../../src/shared/schemas.js';
import { APP_ORIGIN, ENTITLEMENT, HOST_ORIGIN, USER, consoleCalls, fakeEnvironment, gate, jsonResponse, rejection, scriptedFetch, sessionBody, settled, until, windowPair } from '../../support/runtime-fakes.js';
import { BACKEND, LAUNCH, PRO, backend, dashboardEnd, embedded, freshState, start } from '../../support/runtime-kit.js';
import { utcSeconds } from '../../support/dates.js';

describe('the session inside the dashboard', () => {
  it('scrubs the URL, exchanges the launch token once, and applies theme and locale', async () => {
    const state = freshState();
    const { kit, env, fetch, contexts } = embedded(backend(state), {}, { autoResize: false });
    expect(env.replaced).to.deep.equal(['https://app.example/embed?view=1'], 'scrubbed before anything else');
    expect(fetch.calls).to.have.length(1, 'the exchange leaves at once');
    await kit.started;
    expect([kit.state, kit.embedded]).to.deep.equal(['ready', true]);
    expect(fetch.calls).to.have.length(1);
    expect(fetch.calls[0]).to.include({ method: 'POST', url: `${BACKEND}/session`, authorization: null });
    expect(JSON.parse(fetch.calls[0]!.body!)).to.deep.equal({ context: 'ctx-0', host: HOST_ORIGIN });
    expect([kit.theme, kit.locale]).to.deep.equal(['dark', 'de-DE']);
    expect(env.root!.dataset['mpTheme']).to.equal('dark');
    expect([env.root!.dataset['mpLocale'], env.root!.lang]).to.deep.equal(['de-DE', ''], 'lang is the app\'s to set');
    expect(contexts()).to.equal(0);
    // The dashboard's theme and locale win over the browser's preferences.
    expect(env.preferenceObservers).to.equal(0);
    env.changePreferences({ defaultTheme: 'light', defaultLocale: 'fr-FR' });
    expect([kit.theme, kit.locale]).to.deep.equal(['dark', 'de-DE']);
  });

  it('removes the launch parameters before the exchange leaves, and sends the kit\'s requests without a Referer', async () => {
    const env = fakeEnvironment(LAUNCH, { parent: windowPair()[0] });
    const pages: string[] = [];
    const fetch = scriptedFetch(backend(freshState()));
    const kit = start(env, (input, init) => (pages.push(env.url), fetch(input, init)), { autoResize: false });
    expect(pages).to.deep.equal([`${APP_ORIGIN}/embed?view=1`], 'the address bar (the Referer) no longer holds mp_context');
    await kit.started;
    await kit.refresh();
    expect(fetch.calls.map((c) => [c.method, c.referrerPolicy])).to.deep.equal([
      ['POST', 'no-referrer'],
      ['GET', 'no-referrer'],
    ]);
  });

  it('refuses a host outside the allowlist without any request', async () => {
    const fetch = scriptedFetch(() => jsonResponse({}));
    const env = fakeEnvironment(LAUNCH.replace(encodeURIComponent(HOST_ORIGIN), encodeURIComponent('https://evil.example')), { parent: windowPair()[0] });
    let kit!: ReturnType<typeof start>;
    const logged = await consoleCalls('error', async () => {
      kit = start(env, fetch);
      await kit.started;
    });
    expect([kit.state, kit.error?.code]).to.deep.equal(['error', 'ERR_HOST_NOT_ALLOWED']);
    expect(logged).to.have.length(1);
    expect(String(logged[0]?.[0])).to.match(/^\[marketplace-app-kit\] ERR_HOST_NOT_ALLOWED: .*evil\.example/);
    expect(env.replaced).to.deep.equal(['https://app.example/embed?view=1']);
    // A retry (the gate's "Try again") stays refused: no cookie session is read in that frame.
    expect((await rejection(kit.refresh())).code).to.equal('ERR_HOST_NOT_ALLOWED');
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect([kit.state, kit.error?.code]).to.deep.equal(['error', 'ERR_HOST_NOT_ALLOWED']);
    expect(fetch.calls).to.have.length(0);
  });

  it('refuses an answer without a token: inside the dashboard the session is a bearer token', async () => {
    const body = sessionBody('tok', 600_000);
    const { kit } = embedded(() => jsonResponse({ ...body, session: { expires_at: body.session.expires_at } }));
    await kit.started;
    expect([kit.state, kit.error?.code]).to.deep.equal(['error', 'ERR_RESPONSE_INVALID']);
  });

  it('after an in-frame reload (no parameters) asks the allowed dashboard for a context', async () => {
    const [host, app] = windowPair();
    dashboardEnd(host, app, { getContext: () => ({ context: 'ctx-again' }) });
    const fetch = scriptedFetch(backend(freshState()));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/embed`, { parent: host, self: app }), fetch, { autoResize: false });
    await kit.started;
    expect(kit.state).to.equal('ready');
    expect(JSON.parse(fetch.calls[0]!.body!)).to.deep.equal({ context: 'ctx-again', host: HOST_ORIGIN });
  });

  it('after an in-frame reload takes the theme and locale from the dashboard\'s answer, not the browser', async () => {
    const reload = async (answer: { context: string; theme?: 'light' | 'dark'; locale?: string }, browserTheme: 'light' | 'dark' = 'light') => {
      const [host, app] = windowPair();
      dashboardEnd(host, app, { getContext: () => answer });
      const env = fakeEnvironment(`${APP_ORIGIN}/embed`, { parent: host, self: app });
      env.changePreferences({ defaultTheme: browserTheme });
      const kit = start(env, scriptedFetch(backend(freshState())), { autoResize: false });
      await kit.started;
      return { kit, env };
    };
    const { kit, env } = await reload({ context: 'ctx-again', theme: 'dark', locale: 'de-DE' });
    expect([kit.state, kit.theme, kit.locale]).to.deep.equal(['ready', 'dark', 'de-DE']);
    expect(env.root?.dataset['mpTheme']).to.equal('dark');
    expect(env.root?.dataset['mpLocale']).to.equal('de-DE');
    const browser = fakeEnvironment(`${APP_ORIGIN}/embed`);
    const plain = await reload({ context: 'ctx-again', locale: 'not a tag' });
    expect([plain.kit.state, plain.kit.theme, plain.kit.locale]).to.deep.equal(['ready', browser.defaultTheme, browser.defaultLocale], 'without them (or with no language tag) the defaults stay');
    expect(plain.env.root?.dataset['mpTheme']).to.equal(browser.defaultTheme, 'data-mp-theme is set inside the dashboard all the same');
    for (const locale of ['de-DE-u-ca-gregory-co-phonebk-nu-latn', '']) {
      const unusable = await reload({ context: 'ctx-again', theme: 'dark', locale });
      expect([unusable.kit.state, unusable.kit.theme, unusable.kit.locale]).to.deep.equal(['ready', 'dark', browser.defaultLocale], `locale ${JSON.stringify(locale)} is left out, the context kept`);
    }
    // A dashboard with a third theme, or one that sends null for "none": left out, the context kept.
    for (const theme of ['system', 'sepia', null]) {
      const unknown = await reload({ context: 'ctx-again', theme: theme as unknown as 'dark', locale: null as unknown as string });
      expect([unknown.kit.state, unknown.kit.theme, unknown.kit.locale]).to.deep.equal(['ready', browser.defaultTheme, browser.defaultLocale], `theme ${JSON.stringify(theme)}`);
    }
    const light = await reload({ context: 'ctx-again', theme: 'light' }, 'dark');
    expect([light.kit.theme, light.env.root?.dataset['mpTheme']]).to.deep.equal(['light', 'light'], "the dashboard's light over the browser's dark");
  });

  it('a dashboard that answers an empty context: no exchange, state error', async () => {
    const [host, app] = windowPair();
    dashboardEnd(host, app, { getContext: () => ({ context: '' }) });
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/embed`, { parent: host, self: app }), fetch, { bridgeTimeoutMs: 300, autoResize: false });
    await kit.started;
    expect([kit.state, fetch.calls.length]).to.deep.equal(['error', 0]);
    expect(kit.error?.code).to.match(/^ERR_BRIDGE_/);
  });

  it('entitlementsChanged reloads the entitlement with ?refresh=1 and the bearer', async () => {
    const state = freshState();
    const { kit, fetch, hostSide } = embedded(backend(state));
    await kit.started;
    expect(kit.has('export')).to.equal(false);
    state.entitlement = PRO;
    const changed = new Promise((resolve) => kit.addEventListener('change', resolve, { once: true }));
    await hostSide.call('entitlementsChanged', {});
    await changed;
    expect(kit.has('export')).to.equal(true);
    expect(kit.hasPlan(['pro', 'business'])).to.equal(true);
    expect(kit.access({ feature: 'export', plan: 'pro' })).to.deep.equal({ granted: true, reason: 'granted' });
    expect(fetch.calls.at(-1)).to.include({ method: 'GET', url: `${BACKEND}/session?refresh=1`, authorization: 'Bearer tok-1' });
  });

  it('a refresh answered 401 even after a renewal fails, without signing out', async () => {
    const serve = backend(freshState());
    const { kit, contexts } = embedded((call) => (call.url.endsWith('?refresh=1') ? jsonResponse({ error: { code: 'ERR_SESSION_INVALID', message: 'revoked' } }, 401) : serve(call)));
    await kit.started;
    const error = await rejection(kit.refresh());
    expect([error.code, error.status, contexts()]).to.deep.equal(['ERR_SESSION_INVALID', 401, 1]);
    expect([kit.state, kit.user]).to.deep.equal(['ready', USER]);
  });

  it('an error answer is named by the URL it came from', async () => {
    const serve = backend(freshState());
    const { kit } = embedded((call) => {
      if (!call.url.endsWith('?refresh=1')) return serve(call);
      // As a real fetch answers: with its URL, here after a redirect.
      const answer = new Response('<h1>Bad gateway</h1>', { status: 502 });
      return Object.defineProperty(answer, 'url', { value: `${APP_ORIGIN}/moved/session?refresh=1` });
    });
    await kit.started;
    expect((await rejection(kit.refresh())).message).to.equal(`The app backend answered 502 at ${APP_ORIGIN}/moved/session?refresh=1`);
  });

  it('a reload the dashboard asked for that fails, queued behind a running one, keeps the entitlement with no unhandled rejection', async () => {
    const serve = backend(freshState());
    const held = gate();
    let reloads = 0;
    const { kit, hostSide } = embedded(async (call) => {
      if (!call.url.endsWith('?refresh=1')) return serve(call);
      if (++reloads === 1) await held.promise;
      return new Response('<h1>Bad gateway</h1>', { status: 502 });
    });
    await kit.started;
    const unhandled: unknown[] = [];
    const onUnhandled = (event: PromiseRejectionEvent) => {
      unhandled.push(event.reason);
      event.preventDefault();
    };
    window.addEventListener('unhandledrejection', onUnhandled);
    try {
      const running = kit.refresh().catch(() => undefined);
      await until(() => reloads === 1);
      await hostSide.call('entitlementsChanged', {}); // its reload waits behind the running one
      held.open();
      await running;
      await until(() => reloads === 2);
      await settled();
    } finally {
      window.removeEventListener('unhandledrejection', onUnhandled);
    }
    expect(unhandled).to.deep.equal([]);
    expect([kit.state, kit.entitlement]).to.deep.equal(['ready', ENTITLEMENT]);
  });
});

describe('renewing the session inside the dashboard', () => {
  const api = (state: ReturnType<typeof freshState>) => (call: { url: string }) => (call.url.endsWith('/session') ? backend(state)(call as never) : jsonResponse({ ok: true }));

  it('renews near expiry through getContext alongside the requests, once for concurrent callers', async () => {
    const state = freshState(() => env.now());
    const { kit, env, fetch, contexts } = embedded(api(state));
    await kit.started;
    // The fake clock also runs with the real one: 30 s of slack either side of the margin.
    env.advance(600_000 - 90_000); // 90 s before expiry: outside the default margin of 60 s
    await kit.fetch('/api/early');
    await settled();
    expect(contexts()).to.equal(0, 'not renewed before the margin');
    env.advance(60_000); // 30 s before expiry: inside the 60 s margin
    state.entitlement = PRO; // makes the end of the renewal visible
    const renewed = new Promise((resolve) => kit.addEventListener('change', resolve, { once: true }));
    await Promise.all([kit.fetch('/api/a'), kit.fetch('/api/b'), kit.fetch('/api/c')]);
    await renewed;
    await kit.fetch('/api/d');
    expect([contexts(), state.exchanges]).to.deep.equal([1, 2]);
    expect(fetch.calls.filter((c) => /\/api\/[abcd]$/.test(c.url)).map((c) => c.authorization)).to.deep.equal(
      ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-2'],
      'the still valid token went out at once',
    );
    expect(JSON.parse(fetch.calls.find((c) => c.method === 'POST' && c.body?.includes('ctx-1'))!.body!)).to.deep.equal({ context: 'ctx-1', host: HOST_ORIGIN });
  });

  it('renews a session shorter than the margin at half its lifetime', async () => {
    const state = { ...freshState(() => env.now()), lifetimeMs: 40_000 };
    const { kit, env, contexts } = embedded(api(state));
    await kit.started;
    env.advance(19_000);
    await kit.fetch('/api/a');
    await settled();
    expect(contexts()).to.equal(0, 'before half the lifetime: no renewal');
    env.advance(1_000);
    await kit.fetch('/api/b');
    await until(() => state.exchanges === 2);
    expect(contexts()).to.equal(1, 'at half the lifetime: renewed');
  });

  it('a refresh that left with the old token and comes back after a renewal keeps the new token', async () => {
    // As the kit's backend does: an exchange makes a token that ends in 10 min; GET /session
    // answers the token it was sent, with that token's own end.
    const ends = new Map<string, number>();
    let entitlement: Entitlement = ENTITLEMENT;
    const held = gate();
    const { kit, env, fetch } = embedded(async (call) => {
      if (call.url.endsWith('?refresh=1')) await held.promise; // the backend waits out its refresh interval
      if (!call.url.includes('/session')) return jsonResponse({ ok: true });
      const token = call.method === 'POST' ? `tok-${ends.size + 1}` : call.authorization!.slice(7);
      if (!ends.has(token)) ends.set(token, env.now() + 600_000);
      return jsonResponse(sessionBody(token, ends.get(token)! - env.now(), entitlement, env.now()));
    });
    await kit.started;
    env.advance(545_000); // past the time to renew, 55 s before expiry
    entitlement = PRO;
    const refreshing = kit.refresh(); // sent with tok-1, and renews alongside
    await until(() => ends.size === 2 && kit.has('export')); // renewed: tok-2
    entitlement = { ...PRO, plan: 'business' };
    held.open();
    await refreshing;
    await kit.fetch('/api/after');
    expect(fetch.calls.find((c) => c.url.endsWith('/api/after'))?.authorization).to.equal('Bearer tok-2');
    expect(kit.entitlement?.plan).to.equal('business', 'the late answer still brings its entitlement');
  });

  it('takes a renewed token that ends sooner than the current one (a shorter session lifetime deployed), and does not renew on every call after it', async () => {
    let lifetimeMs = 600_000;
    let exchanges = 0;
    const { kit, env, fetch } = embedded((call) => {
      if (!call.url.endsWith('/session')) return jsonResponse({ ok: true });
      exchanges++;
      return jsonResponse(sessionBody(`tok-${exchanges}`, lifetimeMs, ENTITLEMENT, env.now()));
    });
    await kit.started;
    env.advance(545_000); // past the time to renew, 55 s before expiry
    lifetimeMs = 30_000; // the backend now makes sessions of 30 s: the new one ends 25 s before tok-1
    await kit.fetch('/api/a');
    await until(() => exchanges === 2);
    await settled(); // the renewal's answer is read and kept
    for (const path of ['/api/b', '/api/c', '/api/d']) {
      await kit.fetch(path);
      await settled(); // room for a renewal to show
    }
    expect(exchanges).to.equal(2, 'one renewal, not one per call');
    expect(fetch.calls.filter((c) => !c.url.endsWith('/session')).map((c) => c.authorization)).to.deep.equal(['Bearer tok-1', 'Bearer tok-2', 'Bearer tok-2', 'Bearer tok-2']);
  });

  it('renewing ahead of expiry holds no request back, even when the dashboard never answers', async () => {
    const state = freshState(() => env.now());
    let asked = 0;
    const { kit, env, fetch } = embedded(api(state), { getContext: () => (asked++, new Promise<never>(() => undefined)) });
    await kit.started;
    env.advance(550_000);
    expect((await kit.fetch('/api/a')).status).to.equal(200);
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    await until(() => asked > 0);
    expect(asked).to.equal(1, 'one renewal, shared');
    expect(fetch.calls.slice(1).map((c) => c.authorization)).to.deep.equal(['Bearer tok-1', 'Bearer tok-1']);
    expect([kit.state, kit.error]).to.deep.equal(['ready', null]);
  });

  it('a renewal that fails before expiry keeps the working token, tries again 5 s later, and fails only on an incurable 401', async () => {
    const state = freshState(() => env.now());
    let failures = 1;
    let asked = 0;
    let refused = '';
    const { kit, env, fetch } = embedded(
      (call) => (call.url.endsWith('/session') ? backend(state)(call) : call.authorization === refused ? jsonResponse({}, 401) : jsonResponse({ ok: true })),
      {
        getContext: () => {
          asked++;
          if (failures-- > 0) throw new Error('signing service busy');
          return { context: `ctx-${asked}` };
        },
      },
    );
    await kit.started;
    const events: string[] = [];
    kit.subscribe((k) => events.push(k.state));
    const sent = () => fetch.calls.filter((c) => !c.url.endsWith('/session')).map((c) => c.authorization);

    env.advance(550_000); // inside the 60 s margin, 50 s before expiry
    expect((await kit.fetch('/api/a')).status).to.equal(200);
    await until(() => asked === 1);
    await settled(); // the refusal, posted back as the dashboard was asked, has arrived
    expect([asked, kit.state, kit.error]).to.deep.equal([1, 'ready', null]);
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    env.advance(2_000); // the fake clock also runs with the real one: three seconds of slack
    expect((await kit.fetch('/api/b2')).status).to.equal(200);
    await settled();
    expect(asked).to.equal(1, 'not asked again within the 5 s after a failure');
    expect(sent()).to.deep.equal(['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1']);

    env.advance(3_000);
    state.entitlement = PRO; // makes the end of the renewal visible
    const renewed = new Promise((resolve) => kit.addEventListener('change', resolve, { once: true }));
    expect((await kit.fetch('/api/c')).status).to.equal(200);
    await renewed;
    expect(asked).to.equal(2);
    expect((await kit.fetch('/api/d')).status).to.equal(200);
    expect(sent().slice(3)).to.deep.equal(['Bearer tok-1', 'Bearer tok-2'], 'the renewal ran alongside /api/c');
    expect(events).to.deep.equal(['ready'], 'no error on the way');

    // The backend refuses the valid token, and no renewal can cure it.
    refused = 'Bearer tok-2';
    failures = 1;
    const error = await rejection(kit.fetch('/api/e'));
    expect([error.code, kit.state]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 'error']);
  });

  it('renews after a 401 and retries once; a 401 with the fresh token is returned, not retried', async () => {
    const state = freshState();
    let refuse = new Set(['Bearer tok-1']);
    const { kit, fetch, contexts } = embedded((call) => {
      if (call.url.endsWith('/session')) return backend(state)(call);
      return refuse.has(call.authorization ?? '') || refuse.has('*') ? jsonResponse({}, 401) : jsonResponse({ ok: true });
    });
    await kit.started;
    expect((await kit.fetch('/api/data')).status).to.equal(200);
    expect(contexts()).to.equal(1);
    refuse = new Set(['*']);
    const before = fetch.calls.length;
    expect((await kit.fetch('/api/data')).status).to.equal(401);
    expect(contexts()).to.equal(2);
    expect(fetch.calls.length - before).to.equal(3, 'request, exchange, one retry');
    expect(kit.state).to.equal('ready');
  });

  it('a renewal that fails once the session has expired is ERR_SESSION_REFRESH_FAILED and state error, once per call', async () => {
    const state = freshState(() => env.now());
    const { kit, env, fetch } = embedded(backend(state), {
      getContext: () => {
        throw new Error('dashboard session ended');
      },
    });
    await kit.started;
    const events: string[] = [];
    kit.subscribe((k) => events.push(k.state));
    env.advance(600_000);
    const [a, b] = await Promise.all([rejection(kit.fetch('/api/a')), rejection(kit.fetch('/api/b'))]);
    expect(a.code).to.equal('ERR_SESSION_REFRESH_FAILED');
    expect(b).to.equal(a, 'concurrent callers share the one renewal');
    expect((a.cause as MarketplaceKitError).code).to.equal('ERR_BRIDGE_REMOTE');
    expect([kit.state, kit.error]).to.deep.equal(['error', a]);
    expect(events).to.deep.equal(['error']);
    expect(fetch.calls).to.have.length(1, 'nothing was sent without a session');
  });

  it('a renewal refused with 401 is state error (not signed out), and the next call asks again', async () => {
    let exchanges = 0;
    const { kit, env, contexts } = embedded((call) => {
      if (call.method !== 'POST') return jsonResponse({ ok: true });
      exchanges++;
      return exchanges === 1 ? jsonResponse(sessionBody('tok-1', 600_000, ENTITLEMENT, env.now())) : jsonResponse({ error: { code: 'ERR_CONTEXT_TOKEN_EXPIRED', message: 'expired' } }, 401);
    });
    await kit.started;
    env.advance(600_000);
    const error = await rejection(kit.fetch('/api/a'));
    expect([error.code, error.status, kit.state]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 401, 'error']);
    await rejection(kit.fetch('/api/b'));
    expect(contexts()).to.equal(2, 'asked the dashboard again');
  });

  it('a token refused with a 401 that no renewal cured is not sent again', async () => {
    let available = false;
    const state = freshState();
    const { kit, fetch } = embedded(
      (call) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({}, call.authorization === 'Bearer tok-1' ? 401 : 200)),
      {
        getContext: () => {
          if (!available) throw new Error('signing service busy');
          return { context: 'ctx-again' };
        },
      },
    );
    await kit.started;
    expect((await rejection(kit.fetch('/api/a'))).code).to.equal('ERR_SESSION_REFRESH_FAILED');
    available = true;
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/b')).map((c) => c.authorization)).to.deep.equal(['Bearer tok-2'], 'renewed first');
  });

  it('a 401 for a token a renewal has replaced meanwhile retries with the new token, without renewing again', async () => {
    const state = freshState();
    const held = gate();
    const { kit, fetch, contexts } = embedded(async (call) => {
      if (call.url.endsWith('/session')) return backend(state)(call);
      if (call.url.endsWith('/api/slow') && call.authorization === 'Bearer tok-1') await held.promise;
      return call.authorization === 'Bearer tok-1' ? jsonResponse({}, 401) : jsonResponse({ ok: true });
    });
    await kit.started;
    const slow = kit.fetch('/api/slow'); // sent with tok-1; its 401 comes back after the renewal
    expect((await kit.fetch('/api/fast')).status).to.equal(200); // 401, renewed to tok-2, sent again
    expect(contexts()).to.equal(1);
    held.open();
    expect((await slow).status).to.equal(200);
    expect(contexts()).to.equal(1, 'no second renewal for a token already replaced');
    expect(state.exchanges).to.equal(2);
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/slow')).map((c) => c.authorization)).to.deep.equal(['Bearer tok-1', 'Bearer tok-2']);
  });

  it('a 401 for a replaced token that comes back after the new token has expired too renews again', async () => {
    const state = freshState(() => env.now());
    const held = gate();
    let refused = new Set(['Bearer tok-1']);
    const { kit, env, fetch, contexts } = embedded(async (call) => {
      if (call.url.endsWith('/session')) return backend(state)(call);
      if (call.url.endsWith('/api/slow') && call.authorization === 'Bearer tok-1') await held.promise;
      return refused.has(call.authorization ?? '') ? jsonResponse({}, 401) : jsonResponse({ ok: true });
    });
    await kit.started;
    const slow = kit.fetch('/api/slow'); // sent with tok-1; its 401 comes back once tok-2 has expired
    expect((await kit.fetch('/api/fast')).status).to.equal(200); // 401, renewed to tok-2, sent again
    env.advance(600_000);
    refused = new Set(['Bearer tok-1', 'Bearer tok-2']);
    held.open();
    expect((await slow).status).to.equal(200);
    expect(contexts()).to.equal(2);
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/slow')).map((c) => c.authorization)).to.deep.equal(['Bearer tok-1', 'Bearer tok-3']);
  });

  it('a session that looks expired on arrival (the clocks disagree) is used until a 401, not renewed on every call', async () => {
    // The backend's clock is an hour behind the page's: its ten-minute sessions end before they arrive.
    const state = freshState(() => env.now() - 3_600_000);
    const { kit, env, fetch, contexts } = embedded(api(state));
    await kit.started;
    expect((await kit.fetch('/api/a')).status).to.equal(200);
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    await settled();
    expect(contexts()).to.equal(0);
    expect(fetch.calls.slice(1).map((c) => c.authorization)).to.deep.equal(['Bearer tok-1', 'Bearer tok-1']);
  });

  it('a token is spent at its expires_at to the millisecond: a call then waits for the renewal and goes with the new token', async () => {
    let clock = Math.floor(Date.now() / 1000) * 1000; // stands still; a whole second, as expires_at is
    const state = freshState(() => clock);
    const { kit, env, fetch } = embedded(api(state));
    env.now = () => clock;
    await kit.started;
    clock += 600_000;
    expect((await kit.fetch('/api/a')).status).to.equal(200);
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/a')).map((c) => c.authorization)).to.deep.equal(['Bearer tok-2']);
  });
});

describe('the backend\'s clock inside the dashboard', () => {
  it('counts the session\'s lifetime by the backend\'s clock (Date) when the browser\'s is minutes off', async () => {
    for (const lead of [540_000, 900_000, -300_000]) {
      let exchanges = 0;
      const { kit, env, contexts } = embedded((call) => {
        if (!call.url.endsWith('/session')) return jsonResponse({ ok: true });
        exchanges++;
        const backendNow = env.now() - lead; // the browser clock is `lead` ms ahead
        const answer = jsonResponse(sessionBody(`tok-${exchanges}`, 600_000, ENTITLEMENT, backendNow));
        answer.headers.set('date', new Date(backendNow).toUTCString());
        return answer;
      });
      await kit.started;
      env.advance(530_000); // before the time to renew: 60 s before the end, by either clock
      await kit.fetch('/api/a');
      await settled();
      expect(contexts()).to.equal(0, `browser ${lead / 1000} s ahead: not renewed yet`);
      env.advance(20_000);
      await kit.fetch('/api/b');
      await until(() => exchanges === 2);
      expect(contexts()).to.equal(1, `browser ${lead / 1000} s ahead: renewed ahead of expiry`);
    }
  });

  it('trusts a browser clock within 2 s of the backend\'s, and counts by the backend\'s one 30 s off', async () => {
    // The clock stands still unless the test moves it: each boundary is checked to the millisecond.
    // The backend answers at a whole second, so its Date header is exact (read as the middle of that second).
    const second = Math.floor(Date.now() / 1000) * 1000;
    // [browser clock ahead of the backend's, when a renewal is due after start-up]
    for (const [lead, due] of [[1_000, 539_000], [30_000, 539_500]] as const) {
      let clock = second + lead;
      let exchanges = 0;
      const { kit, env, contexts } = embedded((call) => {
        if (!call.url.endsWith('/session')) return jsonResponse({ ok: true });
        exchanges++;
        const backendNow = clock - lead;
        const answer = jsonResponse(sessionBody(`tok-${exchanges}`, 600_000, ENTITLEMENT, backendNow));
        answer.headers.set('date', new Date(backendNow).toUTCString());
        return answer;
      });
      env.now = () => clock;
      await kit.started;
      // Within 2 s the browser's clock counts: 600 s from its now, less the 60 s margin. Past that,
      // the backend's: 600 s from its Date (half a second after it), less the margin.
      clock += due - 500;
      await kit.fetch('/api/a');
      await settled();
      expect(contexts()).to.equal(0, `browser ${lead} ms ahead: not renewed half a second early`);
      clock += 500;
      await kit.fetch('/api/b');
      await until(() => exchanges === 2);
      expect(contexts()).to.equal(1, `browser ${lead} ms ahead: renewed when due`);
    }
  });

  it('ends an entitlement by the backend\'s clock (Date) when the browser\'s is hours off', async () => {
    const hour = 3_600_000;
    // [browser clock ahead of the backend's, entitlement's end from the backend's now]
    for (const [lead, endsIn] of [[3 * hour, hour], [-3 * hour, -hour]] as const) {
      let expires_at = '';
      const { kit, env } = embedded((call) => {
        if (!call.url.includes('/session')) return jsonResponse({ ok: true });
        const backendNow = env.now() - lead;
        expires_at ||= utcSeconds(backendNow + endsIn);
        const answer = jsonResponse(sessionBody('tok-1', 600_000, { ...ENTITLEMENT, expires_at }, backendNow));
        answer.headers.set('date', new Date(backendNow).toUTCString());
        return answer;
      });
      await kit.started;
      const live = endsIn > 0;
      expect([kit.has('reports'), kit.access({}).reason]).to.deep.equal(live ? [true, 'granted'] : [false, 'expired'], `browser ${lead / hour} h ahead`);
      // The notice of its end is timed by the backend's clock too (by the browser's: none at all).
      const minutes = env.pending().filter((ms) => ms > 10 * 60_000).map((ms) => Math.round(ms / 60_000));
      expect(minutes).to.deep.equal(live ? [60] : [], 'minutes until the notice');
      if (!live) continue;
      const seen: boolean[] = [];
      kit.subscribe((k) => seen.push(k.hasPlan('basic')));
      env.advance(endsIn - 60_000); // the fake clock also runs with the real one: a minute to spare
      expect([kit.hasPlan('basic'), seen]).to.deep.equal([true, []], 'a minute before its end by the backend\'s clock');
      env.advance(60_000);
      expect([kit.hasPlan('basic'), seen]).to.deep.equal([false, [false]], 'past its end by the backend\'s clock: told once');
      await kit.refresh(); // the same entitlement again: nobody is told again
      expect(seen).to.deep.equal([false]);
    }
  });
});

describe('a backend that asks the kit to wait (429 or 503)', () => {
  const busy = (status: number, retryAfter?: string) =>
    new Response(JSON.stringify({ error: { code: 'ERR_RATE_LIMITED', message: 'Too many sessions started for this user: retry in 30 s' } }), {
      status,
      headers: { 'content-type': 'application/json', ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) },
    });
  /** A dashboard kit whose session has expired; the backend answers exchanges with `refuse()` while it returns one. */
  async function expired(refuse: () => Response | null) {
    const state = freshState(() => env.now());
    let exchanges = 0;
    const { kit, env, contexts } = embedded((call) => {
      if (call.url.endsWith('/session') && call.method === 'POST') {
        exchanges++;
        if (exchanges > 1) return refuse() ?? backend(state)(call);
      }
      return call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true });
    });
    await kit.started;
    env.advance(600_000);
    return { kit, env, asked: () => [contexts(), exchanges - 1] };
  }

  it('pauses renewals for its Retry-After: calls meanwhile fail at once, without asking the dashboard or the backend', async () => {
    let refusing = true;
    const { kit, env, asked } = await expired(() => (refusing ? busy(429, '30') : null));
    const first = await rejection(kit.fetch('/api/a'));
    expect([first.code, first.status, first.retryAfterMs]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 429, 30_000]);
    expect((first.cause as MarketplaceKitError).code).to.equal('ERR_RATE_LIMITED');
    expect(asked()).to.deep.equal([1, 1]);
    expect([kit.state, kit.error]).to.deep.equal(['error', first]);
    // The fake clock also runs with real time: each boundary is checked with a second to spare.
    env.advance(29_000);
    refusing = false;
    expect(await rejection(kit.fetch('/api/b'))).to.equal(first, 'the same error, at once');
    expect(await rejection(kit.refresh())).to.equal(first, 'refresh() waits as told too');
    expect(asked()).to.deep.equal([1, 1], 'nothing asked during the pause');
    env.advance(1_000);
    expect((await kit.fetch('/api/c')).status).to.equal(200);
    expect(asked()).to.deep.equal([2, 2]);
    expect([kit.state, kit.error]).to.deep.equal(['ready', null]);
  });

  it('pauses 5 s after a 429 without Retry-After and at most 5 min, but not after a 503 that asked for no wait, nor a network failure', async () => {
    const html = () => new Response('<h1>Service unavailable</h1>', { status: 503, headers: { 'content-type': 'text/html' } });
    let answer: (() => Response) | null = () => busy(429);
    const { kit, env, asked } = await expired(() => answer?.() ?? null);
    const first = await rejection(kit.fetch('/api/a'));
    expect([first.code, first.status, first.retryAfterMs]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 429, undefined]);
    env.advance(4_000); // the fake clock also runs with real time: a second to spare
    expect(await rejection(kit.fetch('/api/b'))).to.equal(first);
    expect(asked()).to.deep.equal([1, 1]);
    env.advance(1_000);
    answer = () => busy(503, '86400'); // a day: capped
    const second = await rejection(kit.fetch('/api/c'));
    expect([second.status, second.retryAfterMs, asked()]).to.deep.equal([503, 86_400_000, [2, 2]]);
    env.advance(299_000);
    expect(await rejection(kit.fetch('/api/d'))).to.equal(second);
    env.advance(1_000);
    answer = () => busy(429, 'Fri, 31 Dec 2100 23:59:59 GMT'); // only seconds are read: 5 s
    expect((await rejection(kit.fetch('/api/e'))).retryAfterMs).to.equal(undefined);
    env.advance(5_000);
    answer = html;
    expect((await rejection(kit.fetch('/api/f'))).status).to.equal(503);
    expect((await rejection(kit.fetch('/api/g'))).status).to.equal(503);
    expect(asked()).to.deep.equal([5, 5], 'a 503 without Retry-After is asked again on the next call');
    answer = () => {
      throw new TypeError('Failed to fetch');
    };
    expect((await rejection(kit.fetch('/api/h'))).code).to.equal('ERR_SESSION_REFRESH_FAILED');
    expect((await rejection(kit.fetch('/api/i'))).code).to.equal('ERR_SESSION_REFRESH_FAILED');
    expect(asked()).to.deep.equal([7, 7], 'so is a network failure');
    answer = null;
    expect((await kit.fetch('/api/j')).status).to.equal(200);
  });

  it('a 503 page with Retry-After (a proxy in front of the backend) pauses renewals for that long too', async () => {
    let exchanges = 0;
    let refusing = true;
    const { kit, env, contexts } = embedded((call) => {
      if (call.method === 'POST' && call.url.endsWith('/session')) {
        exchanges++;
        if (refusing) return new Response('<h1>Service unavailable</h1>', { status: 503, headers: { 'content-type': 'text/html', 'retry-after': '20' } });
        return jsonResponse(sessionBody(`tok-${exchanges}`, 600_000, ENTITLEMENT, env.now()));
      }
      return jsonResponse({ ok: true });
    });
    await kit.started;
    expect([kit.state, kit.error?.code, kit.error?.status, kit.error?.retryAfterMs]).to.deep.equal(['error', 'ERR_HTTP', 503, 20_000]);
    refusing = false;
    const paused = await rejection(kit.fetch('/api/a'));
    expect([paused.code, paused.retryAfterMs, contexts(), exchanges]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 20_000, 0, 1], 'nothing asked during the pause');
    env.advance(20_000);
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    expect([contexts(), exchanges, kit.state]).to.deep.equal([1, 2, 'ready']);
  });

  it('a Retry-After on another error status (a 500, a 502) pauses nothing: the next call asks again', async () => {
    let answer: (() => Response) | null = () => busy(500, '30');
    const { kit, asked } = await expired(() => answer?.() ?? null);
    const first = await rejection(kit.fetch('/api/a'));
    expect([first.status, first.retryAfterMs, asked()]).to.deep.equal([500, 30_000, [1, 1]]);
    answer = () => busy(502, '30');
    expect((await rejection(kit.fetch('/api/b'))).status).to.equal(502);
    expect(asked()).to.deep.equal([2, 2], 'asked again at once');
    answer = null;
    expect((await kit.fetch('/api/c')).status).to.equal(200);
    expect(asked()).to.deep.equal([3, 3]);
  });

  it('a start-up exchange refused with a Retry-After pauses the first renewal too', async () => {
    const state = freshState(() => env.now());
    let refusing = true;
    const { kit, env, contexts } = embedded((call) => {
      if (call.method === 'POST' && refusing) return busy(429, '10');
      return call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true });
    });
    await kit.started;
    expect([kit.state, kit.error?.code, kit.error?.retryAfterMs]).to.deep.equal(['error', 'ERR_RATE_LIMITED', 10_000]);
    refusing = false;
    const paused = await rejection(kit.fetch('/api/a'));
    expect([paused.code, (paused.cause as MarketplaceKitError).code, contexts(), state.exchanges]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 'ERR_RATE_LIMITED', 0, 0]);
    env.advance(10_000);
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    expect([contexts(), state.exchanges, kit.state]).to.deep.equal([1, 1, 'ready']);
  });
});

describe('signing out inside the dashboard', () => {
  it('lasts: a later kit.fetch or refresh asks the dashboard for no new context and sends nothing', async () => {
    const state = freshState();
    const { kit, fetch, contexts } = embedded(backend(state));
    await kit.started;
    await kit.signOut();
    expect(fetch.calls.at(-1)).to.include({ method: 'DELETE', url: `${BACKEND}/session`, credentials: 'include', authorization: 'Bearer tok-1' });
    const exchanges = state.exchanges;
    const contextsBefore = contexts();
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect((await rejection(kit.refresh())).code).to.equal('ERR_SESSION_MISSING');
    expect([kit.state, state.exchanges, contexts()]).to.deep.equal(['signed-out', exchanges, contextsBefore]);
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/data'))).to.deep.equal([]);
  });

  it('signIn() asks the dashboard to open the OAuth page; after destroy() it is ERR_NOT_EMBEDDED and navigates nothing', async () => {
    const opened: string[] = [];
    const { kit, env } = embedded(backend(freshState()), { openExternal: ({ url }) => void opened.push(url) });
    await kit.started;
    await kit.signIn('/after');
    expect(opened).to.deep.equal([`${BACKEND}/oauth/start?return_to=${encodeURIComponent(`${APP_ORIGIN}/after`)}`]);
    kit.destroy();
    expect((await rejection(kit.signIn())).code).to.equal('ERR_NOT_EMBEDDED');
    expect(env.navigated).to.deep.equal([]);
  });
});

describe('the early exchange (the page sent the start-up request before the kit existed)', () => {
  const SCRUBBED = `${APP_ORIGIN}/embed?view=1`;
  const early = (response: Promise<Response>, backendUrl = BACKEND, href = LAUNCH) => ({ href, backend: backendUrl, response });
  /** A frame of the dashboard; `hidesOrigin`: a browser that does not tell the framing origin (Firefox). */
  function framedEnv(earlyLaunch: EarlyLaunch, hidesOrigin = false) {
    const [host, app] = windowPair();
    dashboardEnd(host, app, { getContext: () => ({ context: 'ctx-from-host' }) });
    return fakeEnvironment(SCRUBBED, { parent: host, self: app, earlyLaunch, ...(hidesOrigin ? { parentOrigin: undefined } : {}) });
  }

  it('adopts the request: no request of its own, ready with its answer, launch read from the URL it had', async () => {
    const env = framedEnv(early(Promise.resolve(jsonResponse(sessionBody('tok-early', 600_000)))));
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000)));
    const kit = start(env, fetch);
    await kit.started;
    expect([kit.state, kit.embedded, kit.theme, kit.locale]).to.deep.equal(['ready', true, 'dark', 'de-DE']);
    expect(kit.user).to.deep.equal(USER);
    expect(fetch.calls).to.have.length(0);
    expect(env.replaced).to.deep.equal([], 'the page URL was already clean');
    await kit.fetch('/api/data');
    expect(fetch.calls.map((call) => call.authorization)).to.deep.equal(['Bearer tok-early']);
  });

  it('an answer that waited for the bundle is no clock skew: its Date is of when it arrived', async () => {
    // The browser's clock is right; the answer arrived 30 s before createKit ran.
    const arrived = Date.now() - 30_000;
    const body = sessionBody('tok-early', 600_000, { ...ENTITLEMENT, expires_at: utcSeconds(arrived + 20_000) }, arrived);
    const answer = new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json', date: new Date(arrived).toUTCString() } });
    const env = framedEnv({ ...early(Promise.resolve(answer)), receivedAt: arrived });
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000))));
    await kit.started;
    expect(kit.state).to.equal('ready');
    expect(kit.access({ feature: 'reports' }), 'the entitlement ended 10 s ago').to.deep.equal({ granted: false, reason: 'expired' });
  });

  it('destroyed while the adopted request is out: its answer is dropped, no session, nobody notified', async () => {
    const answer = gate();
    const env = framedEnv(early(answer.promise.then(() => jsonResponse(sessionBody('tok-early', 600_000)))));
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000)));
    const kit = start(env, fetch);
    let changes = 0;
    kit.subscribe(() => changes++);
    kit.destroy();
    answer.open();
    await kit.started;
    expect([kit.state, kit.user, changes, env.hostLinkLoads]).to.deep.equal(['loading', null, 0, 0]);
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect(fetch.calls).to.have.length(0);
  });

  it('an early request that failed is the start-up error, typed as if the kit had sent it', async () => {
    const env = framedEnv(early(Promise.reject(new TypeError('Failed to fetch'))));
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000))));
    await kit.started;
    expect([kit.state, kit.error?.code]).to.deep.equal(['error', 'ERR_NETWORK']);
    const html = framedEnv(early(Promise.resolve(new Response('<h1>502</h1>', { status: 502, headers: { 'content-type': 'text/html' } }))));
    const other = start(html, scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000))));
    await other.started;
    expect([other.state, other.error?.code, other.error?.status]).to.deep.equal(['error', 'ERR_HTTP', 502]);
  });

  it('an early exchange that timed out is ERR_TIMEOUT, naming earlyLaunchScript\'s timeoutMs', async () => {
    const timedOut = Promise.reject(new DOMException('signal timed out', 'TimeoutError'));
    const kit = start(framedEnv(early(timedOut)), scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000))), { autoResize: false });
    await kit.started;
    expect([kit.state, kit.error?.code, kit.error?.message]).to.deep.equal(['error', 'ERR_TIMEOUT', "The app backend did not answer the early exchange in time (earlyLaunchScript's timeoutMs)"]);
  });

  it('a request sent to another backend is not adopted: the kit asks the dashboard for a context instead', async () => {
    const env = framedEnv(early(Promise.resolve(jsonResponse(sessionBody('tok-elsewhere', 600_000))), 'https://elsewhere.example/api/marketplace'));
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000)));
    let kit!: ReturnType<typeof start>;
    await consoleCalls('warn', async () => {
      kit = start(env, fetch);
      await kit.started;
    });
    expect(kit.state).to.equal('ready');
    expect(fetch.calls.map((call) => [call.method, call.url, call.body && JSON.parse(call.body).context])).to.deep.equal([['POST', `${BACKEND}/session`, 'ctx-from-host']]);
    await kit.fetch('/api/data');
    expect(fetch.calls[1]?.authorization).to.equal('Bearer tok-kit');
  });

  it('a request sent to another backend, in a browser that does not tell the framing origin: still embedded, asks the dashboard', async () => {
    const env = framedEnv(early(Promise.resolve(jsonResponse(sessionBody('tok-elsewhere', 600_000))), 'https://elsewhere.example/api/marketplace'), true);
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000)));
    const warnings = await consoleCalls('warn', async () => {
      const kit = start(env, fetch);
      await kit.started;
      expect([kit.state, kit.embedded, kit.theme]).to.deep.equal(['ready', true, 'dark']);
    });
    expect(fetch.calls.map((call) => [call.method, call.body && JSON.parse(call.body).context])).to.deep.equal([['POST', 'ctx-from-host']]);
    expect(String(warnings[0]?.[0])).to.contain('https://elsewhere.example/api/marketplace');
  });

  it('its launch is checked like the kit\'s own: a host outside hostOrigins is refused and the answer unused', async () => {
    const foreign = `${APP_ORIGIN}/embed?mp_context=ctx-0&mp_host=${encodeURIComponent('https://evil.example')}`;
    const env = framedEnv(early(Promise.resolve(jsonResponse(sessionBody('tok-early', 600_000))), BACKEND, foreign));
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000)));
    let kit!: ReturnType<typeof start>;
    await consoleCalls('error', async () => {
      kit = start(env, fetch);
      await kit.started;
    });
    expect([kit.state, kit.error?.code, kit.user]).to.deep.equal(['error', 'ERR_HOST_NOT_ALLOWED', null]);
    expect(fetch.calls).to.have.length(0);
  });

  it('a hand-over that is not the early exchange\'s (no answer promise, no launch URL) is ignored: the kit asks the dashboard', async () => {
    const genuine = early(Promise.resolve(jsonResponse(sessionBody('tok-early', 600_000))));
    for (const handed of [{ ...genuine, response: {} }, { ...genuine, href: 42 }] as unknown as EarlyLaunch[]) {
      const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000)));
      const kit = start(framedEnv(handed), fetch, { autoResize: false });
      await kit.started;
      expect(kit.state).to.equal('ready');
      expect(fetch.calls.map((call) => call.body && JSON.parse(call.body).context)).to.deep.equal(['ctx-from-host']);
    }
  });
});
