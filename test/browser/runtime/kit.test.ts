import { expect } from '@open-wc/testing';
import { createKit, getKit, KIT_CREATED_EVENT, KIT_DESTROYED_EVENT, type Kit } from '../../../src/runtime/index.js';
import { MarketplaceKit, browserEnvironment, type KitOptions } from '../../../src/runtime/kit.js';
import { onKitsChanged } from '../../../src/runtime/registry.js';
import type { HandlerTable, HostMethods } from '../../../src/shared/bridge.js';
import { EARLY_LAUNCH_KEY, type EarlyLaunch } from '../../../src/shared/early-launch.js';
import { MarketplaceKitError } from '../../../src/shared/errors.js';
import type { Entitlement } from '../../../src/shared/schemas.js';
import {
  APP_ORIGIN,
  ENTITLEMENT,
  HOST_ORIGIN,
  USER,
  consoleCalls,
  fakeEnvironment,
  jsonResponse,
  openHostEnd,
  gate,
  scriptedFetch,
  rejection,
  sessionBody,
  tick,
  timerDelays,
  until,
  windowPair,
  type FakeEnvironment,
  type FakeWindow,
  type FetchCall,
} from '../../support/runtime-fakes.js';


const BACKEND = `${APP_ORIGIN}/api/marketplace`;
const LAUNCH = `${APP_ORIGIN}/embed?view=1&mp_context=ctx-0&mp_host=${encodeURIComponent(HOST_ORIGIN)}&mp_locale=de-DE&mp_theme=dark`;
const PRO = { ...ENTITLEMENT, plan: 'pro', features: ['reports', 'export'] };

const kits: Kit[] = [];
afterEach(() => {
  for (const kit of kits.splice(0)) kit.destroy();
});

function start(env: FakeEnvironment, fetch: typeof globalThis.fetch, options: Partial<KitOptions> = {}) {
  const kit = new MarketplaceKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch, ...options }, env);
  kits.push(kit);
  return kit;
}

/** A kit inside a fake dashboard: the host end is a real bridge with `handlers`. */
function embedded(route: (call: FetchCall) => Response | Promise<Response>, handlers: Partial<HandlerTable<HostMethods>> = {}, options: Partial<KitOptions> = {}) {
  const [host, app] = windowPair();
  let contexts = 0;
  const hostSide = openHostEnd(host, app, { getContext: () => ({ context: `ctx-${++contexts}` }), ...handlers }, 300);
  const spied = spyListeners(app);
  const env = fakeEnvironment(LAUNCH, { parent: host, self: spied.window });
  const fetch = scriptedFetch(route);
  const kit = start(env, fetch, { bridgeTimeoutMs: 300, ...options });
  kits.push({ destroy: () => hostSide.destroy() } as Kit);
  return { kit, env, fetch, hostSide, spied, contexts: () => contexts };
}

/** `win` with its message listeners counted: how many were ever added, which are still there. */
function spyListeners(win: FakeWindow) {
  const spied = {
    added: 0,
    listening: new Set<unknown>(),
    window: {
      ...win,
      self: {
        addEventListener(type: 'message', listener: (event: MessageEvent) => void) {
          spied.added++;
          spied.listening.add(listener);
          win.self.addEventListener(type, listener);
        },
        removeEventListener(type: 'message', listener: (event: MessageEvent) => void) {
          spied.listening.delete(listener);
          win.self.removeEventListener(type, listener);
        },
      },
    } as FakeWindow,
  };
  return spied;
}

/** Backend: POST exchanges, GET reads, with a token per exchange and the given entitlement. */
function backend(state: { entitlement: typeof ENTITLEMENT | null; lifetimeMs: number; exchanges: number; now?: () => number }) {
  return (call: FetchCall) => {
    if (call.method === 'POST') {
      state.exchanges++;
      return jsonResponse(sessionBody(`tok-${state.exchanges}`, state.lifetimeMs, state.entitlement, state.now?.()));
    }
    const token = call.authorization?.slice(7) ?? 'cookie';
    return jsonResponse(sessionBody(token, state.lifetimeMs, state.entitlement, state.now?.()));
  };
}

describe('kit on the developer\'s own site', () => {
  it('reads the cookie session with one request and becomes ready', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account`);
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
    const kit = start(env, fetch);
    expect(kit.state).to.equal('loading');
    await kit.started;
    expect(kit.state).to.equal('ready');
    expect(kit.user).to.deep.equal(USER);
    expect(kit.entitlement).to.deep.equal(ENTITLEMENT);
    expect(kit.embedded).to.equal(false);
    expect(kit.host).to.equal(null);
    expect(fetch.calls).to.have.length(1);
    expect(fetch.calls[0]).to.include({ method: 'GET', url: `${BACKEND}/session`, credentials: 'include', authorization: null });
    expect(env.replaced).to.deep.equal([], 'a URL without mp_* is left alone');
  });

  it('tells listeners when the entitlement ends while the page is open', async () => {
    // It ends 1 s after the backend answers, not after the test began: a slow start-up must not
    // use up the time before `has()` is checked.
    const ending = () => ({ ...ENTITLEMENT, expires_at: new Date(Date.now() + 1_000).toISOString() });
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/account`), scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000, ending()))));
    await kit.started;
    const seen: boolean[] = [];
    kit.subscribe((k) => seen.push(k.has('reports')));
    expect(kit.has('reports')).to.equal(true);
    await until(() => seen.length > 0);
    await tick(100); // and no second one
    expect(seen).to.deep.equal([false], 'one notice, at the end');
  });

  it('looks at the entitlement\'s end again when the page is shown after the device slept', async () => {
    // setTimeout does not count a device's sleep: an hour asleep leaves the end's timer an hour away.
    const env = fakeEnvironment(`${APP_ORIGIN}/account`);
    const ending = { ...ENTITLEMENT, expires_at: new Date(Date.now() + 3_600_000).toISOString() };
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000, ending))));
    await kit.started;
    const seen: boolean[] = [];
    kit.subscribe((k) => seen.push(k.has('reports')));
    env.wake();
    expect(seen).to.deep.equal([], 'nothing changed: no notice');
    env.advance(2 * 3_600_000);
    expect(kit.has('reports')).to.equal(false);
    expect(seen).to.deep.equal([], 'asleep: no timer has fired');
    env.wake();
    env.wake();
    expect(seen).to.deep.equal([false], 'one notice, on waking');
    kit.destroy();
    expect(env.wakeObservers).to.equal(0);
  });

  it('follows the browser\'s color scheme and language live, and stops with destroy()', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account`);
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000))));
    await kit.started;
    const seen: string[] = [];
    kit.subscribe(() => seen.push(`${kit.theme} ${kit.locale}`));
    env.changePreferences({ defaultTheme: 'dark' });
    env.changePreferences({ defaultLocale: 'fr-FR' });
    env.changePreferences({}); // nothing changed: no notification
    expect(seen).to.deep.equal(['dark en-US', 'dark fr-FR']);
    expect(env.root!.dataset['mpTheme']).to.equal(undefined, 'the page\'s own CSS decides there');
    kit.destroy();
    expect(env.preferenceObservers).to.equal(0);
  });

  it('is signed out on a 401, and kit.fetch then refuses with ERR_SESSION_MISSING', async () => {
    const fetch = scriptedFetch(() => jsonResponse({ error: { code: 'ERR_SESSION_MISSING', message: 'none' } }, 401));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    expect(kit.state).to.equal('signed-out');
    expect(kit.error).to.equal(null);
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect(fetch.calls).to.have.length(1);
  });

  it('is signed out with ERR_OAUTH after a denied sign-in, and removes mp_oauth_error from the URL', async () => {
    const fetch = scriptedFetch(() => jsonResponse({ error: { code: 'ERR_SESSION_MISSING', message: 'none' } }, 401));
    const env = fakeEnvironment(`${APP_ORIGIN}/account?tab=1&mp_oauth_error=access_denied`);
    const kit = start(env, fetch);
    await kit.started;
    expect(kit.state).to.equal('signed-out');
    expect(kit.error?.code).to.equal('ERR_OAUTH');
    expect(kit.error?.message).to.contain('access_denied');
    expect(kit.error?.upstreamCode).to.equal('access_denied');
    expect(env.replaced).to.deep.equal(['https://app.example/account?tab=1']);
    expect(fetch.calls).to.have.length(1);
  });

  it('reports backend failures as typed errors', async () => {
    const cases: Array<[Response | (() => Promise<Response>), string, number | undefined]> = [
      [jsonResponse({ error: { code: 'ERR_CONFIG', message: 'misconfigured' } }, 500), 'ERR_CONFIG', 500],
      [new Response('<html>oops</html>', { status: 502 }), 'ERR_HTTP', 502],
      // An error body from something else than the kit's backend: its code is not taken for one of ours.
      [jsonResponse({ error: { code: 'nope', message: 'x' } }, 500), 'ERR_HTTP', 500],
      [jsonResponse({ error: { code: `ERR_${'X'.repeat(61)}`, message: 'x' } }, 500), 'ERR_HTTP', 500],
      [jsonResponse({ error: { code: 'XERR_CONFIG', message: 'x' } }, 500), 'ERR_HTTP', 500],
      // A code without a message is not the kit's error body either.
      [jsonResponse({ error: { code: 'ERR_CONFIG' } }, 500), 'ERR_HTTP', 500],
      [new Response('<html>hello</html>', { status: 200 }), 'ERR_RESPONSE_INVALID', 200],
      [jsonResponse({ session: { token: 'x' } }), 'ERR_RESPONSE_INVALID', 200],
      [() => Promise.reject(new TypeError('Failed to fetch')), 'ERR_NETWORK', undefined],
      // Only the kit's own timeout is ERR_TIMEOUT; another DOMException (an app's fetch that aborts) is not.
      [() => Promise.reject(new DOMException('The user aborted a request.', 'AbortError')), 'ERR_NETWORK', undefined],
    ];
    for (const [answer, code, status] of cases) {
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(() => (typeof answer === 'function' ? answer() : answer.clone())));
      await kit.started;
      expect(kit.state, code).to.equal('error');
      expect(kit.error?.code, code).to.equal(code);
      expect(kit.error?.status, code).to.equal(status);
    }
  });

  it('names the backend URL and the likely mistake in its messages: a wrong path, a backend on another origin', async () => {
    const failing = async (answer: () => Promise<Response>, backend: string) => {
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(answer), { backend });
      await kit.started;
      return kit;
    };
    const notFound = await failing(async () => new Response('<h1>Not Found</h1>', { status: 404 }), '/api/marketplce');
    expect(notFound?.error?.message).to.equal(
      `The app backend answered 404 at ${APP_ORIGIN}/api/marketplce/session: is createAppBackend's handler mounted there (createKit's backend, its basePath)?`,
    );
    const badGateway = await failing(async () => new Response('<h1>Bad gateway</h1>', { status: 502 }), '/api/marketplace');
    expect(badGateway?.error?.message).to.equal(`The app backend answered 502 at ${BACKEND}/session`, 'the mounting hint is for a 404 only');
    // A dev server with no proxy to the backend answers with its own index.html.
    const page = () => new Response('<!doctype html><title>App</title>', { headers: { 'content-type': 'text/html; charset=utf-8' } });
    const devServer = await failing(async () => page(), '/api/marketplace');
    expect(devServer?.error?.message).to.equal(
      `The app backend answered 200 at ${BACKEND}/session with text/html, not JSON: is that the app backend (does the dev server forward it)?`,
    );
    const cut = await failing(async () => new Response('{"session":', { headers: { 'content-type': 'application/json; charset=utf-8' } }), '/api/marketplace');
    expect(cut?.error?.message).to.equal(`The app backend answered 200 at ${BACKEND}/session with a body that is not valid JSON`);
    const untyped = await failing(async () => new Response(new TextEncoder().encode('hello').buffer), '/api/marketplace');
    expect(untyped?.error?.message).to.match(/ with no content type, not JSON: /);
    const wrongShape = await failing(async () => new Response('{"session":{}}', { headers: { 'content-type': 'application/json' } }), '/api/marketplace');
    expect(wrongShape?.error?.message).to.match(new RegExp(`^Invalid session response from ${BACKEND}/session at `));
    const sameOrigin = await failing(() => Promise.reject(new TypeError('Failed to fetch')), '/api/marketplace');
    expect(sameOrigin?.error?.message).to.equal(`The app backend at ${APP_ORIGIN}/api/marketplace could not be reached`);
    const otherOrigin = await failing(() => Promise.reject(new TypeError('Failed to fetch')), 'https://api.example/api/marketplace');
    expect(otherOrigin?.error?.message).to.match(/^The app backend at https:\/\/api\.example\/api\/marketplace could not be reached: .*another origin .*corsOrigins/);
  });

  it('signIn resolves a relative return address against the page, not the backend on another origin', async () => {
    const env = fakeEnvironment('https://site.example/account?tab=1');
    const fetch = scriptedFetch(() => jsonResponse({ error: { code: 'ERR_SESSION_MISSING', message: 'none' } }, 401));
    const kit = start(env, fetch, { backend: 'https://api.example/api/marketplace' });
    await kit.started;
    await kit.signIn('/reports');
    await kit.signIn('../up?x=1');
    // No URL at all: sent as it is, for the backend to refuse (it returns to "/").
    await kit.signIn('http://[');
    expect(env.navigated.map((href) => new URL(href).searchParams.get('return_to'))).to.deep.equal([
      'https://site.example/reports',
      'https://site.example/up?x=1',
      'http://[',
    ]);
  });

  it('times out a backend that never answers even when a custom fetch ignores the abort signal', async () => {
    const deaf: typeof globalThis.fetch = () => new Promise(() => undefined);
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), deaf, { timeoutMs: 50 });
    await kit.started;
    expect([kit.state, kit.error?.code, kit.error?.message]).to.deep.equal(['error', 'ERR_TIMEOUT', 'The app backend did not answer within 50 ms']);
  });

  it('times out a body that stalls after its headers, even when a custom fetch ignores the abort signal; refresh() works again after', async () => {
    // A proxy stuck mid-answer: the headers arrive, then a few bytes, then nothing.
    const stalled = () =>
      new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('{"session":{"tok')) }), {
        headers: { 'content-type': 'application/json' },
      });
    let stalledBody: Response | undefined;
    const stalling = () => (stalledBody = stalled());
    const answers = [stalling, () => jsonResponse(sessionBody('tok-1', 600_000)), stalling, () => jsonResponse(sessionBody('tok-2', 600_000))];
    // The kit's timeouts run out when the test says, once it reads a stalled body: a real 50 ms one
    // could also run out on the answers that do come, on a busy machine.
    const deadlines: AbortController[] = [];
    const timeout = AbortSignal.timeout;
    AbortSignal.timeout = (() => {
      const deadline = new AbortController();
      deadlines.push(deadline);
      return deadline.signal;
    }) as typeof AbortSignal.timeout;
    const runOutOnceStalled = async () => {
      await until(() => stalledBody?.bodyUsed === true);
      stalledBody = undefined;
      for (const deadline of deadlines.splice(0)) deadline.abort(new DOMException('signal timed out', 'TimeoutError'));
    };
    try {
      const deaf: typeof globalThis.fetch = async () => answers.shift()!();
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), deaf, { timeoutMs: 50 });
      await runOutOnceStalled();
      await kit.started;
      expect([kit.state, kit.error?.code, kit.error?.message]).to.deep.equal(['error', 'ERR_TIMEOUT', 'The app backend did not answer within 50 ms']);
      await kit.refresh();
      expect(kit.state).to.equal('ready');
      const failed = kit.refresh().catch((error: MarketplaceKitError) => error.code);
      await runOutOnceStalled();
      expect(await failed).to.equal('ERR_TIMEOUT');
      await kit.refresh();
      expect([kit.state, answers.length]).to.deep.equal(['ready', 0]);
    } finally {
      AbortSignal.timeout = timeout;
    }
  });

  it('times out a backend that never answers', async () => {
    // Answers only by rejecting when the kit's timeout aborts the request.
    const hanging: typeof globalThis.fetch = (_input, init) =>
      new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), hanging, { timeoutMs: 50 });
    await kit.started;
    expect(kit.state).to.equal('error');
    expect(kit.error?.code).to.equal('ERR_TIMEOUT');
  });

  it('signIn navigates to the backend\'s OAuth start with a return address; signOut forgets and deletes', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account?tab=2`);
    const fetch = scriptedFetch((call) => (call.method === 'DELETE' ? new Response(null, { status: 204 }) : jsonResponse(sessionBody('tok', 600_000))));
    const kit = start(env, fetch);
    await kit.started;
    await kit.signIn();
    await kit.signIn('/welcome');
    expect(env.navigated).to.deep.equal([
      `${BACKEND}/oauth/start?return_to=${encodeURIComponent(`${APP_ORIGIN}/account?tab=2`)}`,
      `${BACKEND}/oauth/start?return_to=${encodeURIComponent(`${APP_ORIGIN}/welcome`)}`,
    ]);
    await kit.signOut();
    expect(kit.state).to.equal('signed-out');
    expect(kit.user).to.equal(null);
    expect(kit.entitlement).to.equal(null);
    expect(fetch.calls.at(-1)).to.include({ method: 'DELETE', url: `${BACKEND}/session`, credentials: 'include', authorization: 'Bearer tok' });
    expect((await rejection(kit.upgrade())).code).to.equal('ERR_NOT_EMBEDDED');
  });

  it('keeps a frozen copy of planNames that answers only its own keys', () => {
    const planNames = { pro_monthly: 'Pro', ['__proto__']: 'Proto' };
    const kit = new MarketplaceKit({ backend: '/api', hostOrigins: [HOST_ORIGIN], planNames, fetch: scriptedFetch(() => jsonResponse({})) }, fakeEnvironment(LAUNCH));
    planNames.pro_monthly = 'changed later';
    expect(kit.planNames.pro_monthly).to.equal('Pro');
    expect(kit.planNames.constructor).to.equal(undefined);
    expect(Object.getPrototypeOf(kit.planNames)).to.equal(null);
    expect(Object.isFrozen(kit.planNames)).to.equal(true);
    expect(Object.keys(kit.planNames)).to.have.members(['pro_monthly', '__proto__']);
    const plain = new MarketplaceKit({ backend: '/api', hostOrigins: [HOST_ORIGIN], fetch: scriptedFetch(() => jsonResponse({})) }, fakeEnvironment(LAUNCH));
    expect(Object.keys(plain.planNames)).to.deep.equal([]);
    kit.destroy();
    plain.destroy();
  });

  it('refuses a configuration mistake with ERR_CONFIG, after scrubbing the URL', () => {
    const env = fakeEnvironment(LAUNCH);
    const fetch = scriptedFetch(() => jsonResponse({}));
    expect(() => new MarketplaceKit({ backend: '', hostOrigins: [HOST_ORIGIN], fetch }, env)).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    expect(env.replaced).to.deep.equal(['https://app.example/embed?view=1']);
    for (const hostOrigins of [['*'], [`${HOST_ORIGIN}/`], 'https://x.example' as unknown as string[]]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins, fetch }, fakeEnvironment(LAUNCH))).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    }
    for (const bearerOrigins of [['*'], [`${APP_ORIGIN}/api`], 'https://x.example' as unknown as string[]]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], bearerOrigins, fetch }, fakeEnvironment(LAUNCH))).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    }
    for (const planNames of [['Pro'], 'Pro', { pro: 1 }, 7, null] as unknown as Record<string, string>[]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], planNames, fetch }, fakeEnvironment(LAUNCH)), JSON.stringify(planNames))
        .to.throw(MarketplaceKitError)
        .with.property('code', 'ERR_CONFIG');
    }
    // Not a TypeError at the first request, reported as the backend being unreachable.
    for (const notFetch of ['fetch', {}, null]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], fetch: notFetch as unknown as typeof fetch }, fakeEnvironment(LAUNCH)), String(notFetch))
        .to.throw(MarketplaceKitError, "createKit's fetch must be a function")
        .with.property('code', 'ERR_CONFIG');
    }
    for (const autoResize of ['no', 'false', 0, null]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], autoResize: autoResize as unknown as boolean, fetch }, fakeEnvironment(LAUNCH)), String(autoResize))
        .to.throw(MarketplaceKitError, "createKit's autoResize must be true or false")
        .with.property('code', 'ERR_CONFIG');
    }
    const unparsable = fakeEnvironment(LAUNCH);
    expect(() => new MarketplaceKit({ backend: 'http://[', hostOrigins: [HOST_ORIGIN], fetch }, unparsable)).to.throw(MarketplaceKitError).with.property('code', 'ERR_CONFIG');
    expect(unparsable.replaced).to.deep.equal(['https://app.example/embed?view=1']);
    expect(fetch.calls).to.have.length(0);
  });

  it('createKit rejects an unparsable backend URL with ERR_CONFIG', async () => {
    const error = await rejection(createKit({ backend: 'http://[', hostOrigins: [], fetch: scriptedFetch(() => jsonResponse({})) }));
    expect(error.code).to.equal('ERR_CONFIG');
  });

  it('renews on a 401 only: re-reads the cookie session once, and is signed out when it is gone', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/`);
    let cookie = 'tok-a';
    const fetch = scriptedFetch((call) => {
      if (call.url.endsWith('/session')) {
        return cookie ? jsonResponse(sessionBody(cookie, 600_000, ENTITLEMENT, env.now())) : jsonResponse({ error: { code: 'ERR_SESSION_MISSING', message: 'none' } }, 401);
      }
      return call.authorization === `Bearer ${cookie}` ? jsonResponse({ ok: true }) : jsonResponse({}, 401);
    });
    const kit = start(env, fetch);
    await kit.started;
    env.advance(599_000); // near expiry: re-reading the cookie early would only return the same token
    expect((await kit.fetch('/api/a')).status).to.equal(200);
    expect(fetch.calls.map((c) => c.url)).to.deep.equal([`${BACKEND}/session`, `${APP_ORIGIN}/api/a`]);
    cookie = 'tok-b'; // a new sign-in (another tab) renewed the cookie
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    expect(fetch.calls.slice(2).map((c) => [c.url, c.authorization])).to.deep.equal([
      [`${APP_ORIGIN}/api/b`, 'Bearer tok-a'],
      [`${BACKEND}/session`, null],
      [`${APP_ORIGIN}/api/b`, 'Bearer tok-b'],
    ]);
    expect(fetch.calls[3]!.credentials).to.equal('include', 'the re-read sends the cookie');
    cookie = ''; // signed out elsewhere
    const error = await rejection(kit.fetch('/api/c'));
    expect(error.code).to.equal('ERR_SESSION_REFRESH_FAILED');
    expect(error.status).to.equal(401);
    expect(kit.state).to.equal('signed-out');
    expect(fetch.calls.slice(5).map((c) => c.url)).to.deep.equal([`${APP_ORIGIN}/api/c`, `${BACKEND}/session`]);
  });

  it('a network error while re-reading the session after a 401 is state error, and the next call tries again', async () => {
    let cookie = 'tok-a';
    let online = true;
    const fetch = scriptedFetch((call) => {
      if (call.url.endsWith('/session')) return online ? jsonResponse(sessionBody(cookie, 600_000)) : Promise.reject(new TypeError('Failed to fetch'));
      return jsonResponse({}, call.authorization === `Bearer ${cookie}` ? 200 : 401);
    });
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    cookie = 'tok-b'; // renewed in another tab
    online = false;
    const error = await rejection(kit.fetch('/api/a'));
    expect(error.code).to.equal('ERR_SESSION_REFRESH_FAILED');
    expect((error.cause as MarketplaceKitError).code).to.equal('ERR_NETWORK');
    expect(kit.state).to.equal('error');
    expect(kit.error).to.equal(error);
    online = true;
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    expect([kit.state, kit.error]).to.deep.equal(['ready', null]);
    expect(fetch.calls.slice(-3).map((c) => [c.url, c.authorization])).to.deep.equal([
      [`${APP_ORIGIN}/api/b`, 'Bearer tok-a'],
      [`${BACKEND}/session`, null],
      [`${APP_ORIGIN}/api/b`, 'Bearer tok-b'],
    ]);
  });
});

describe('kit inside the dashboard', () => {
  it('scrubs the URL, exchanges the launch token once, and applies theme and locale', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const { kit, env, fetch, contexts } = embedded(backend(state), {}, { autoResize: false });
    expect(env.replaced).to.deep.equal(['https://app.example/embed?view=1'], 'scrubbed before anything else');
    expect(fetch.calls).to.have.length(1, 'the exchange leaves at once');
    await kit.started;
    expect(kit.state).to.equal('ready');
    expect(kit.embedded).to.equal(true);
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
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const env = fakeEnvironment(LAUNCH, { parent: windowPair()[0] });
    const pages: string[] = [];
    const fetch = scriptedFetch(backend(state));
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
    let kit!: MarketplaceKit;
    const logged = await consoleCalls('error', async () => {
      kit = start(env, fetch);
      await kit.started;
    });
    expect(kit.state).to.equal('error');
    expect(kit.error?.code).to.equal('ERR_HOST_NOT_ALLOWED');
    expect(logged).to.have.length(1);
    expect(String(logged[0]?.[0])).to.match(/^\[marketplace-app-kit\] ERR_HOST_NOT_ALLOWED: .*evil\.example/);
    expect(env.replaced).to.deep.equal(['https://app.example/embed?view=1']);
    // A retry (the gate's "Try again") stays refused: no cookie session is read in that frame.
    expect((await rejection(kit.refresh())).code).to.equal('ERR_HOST_NOT_ALLOWED');
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect([kit.state, kit.error?.code]).to.deep.equal(['error', 'ERR_HOST_NOT_ALLOWED']);
    expect(fetch.calls).to.have.length(0);
  });

  it('after an in-frame reload (no parameters) asks the allowed dashboard for a context', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const [host, app] = windowPair();
    const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'ctx-again' }) });
    kits.push({ destroy: () => hostSide.destroy() } as Kit);
    const fetch = scriptedFetch(backend(state));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/embed`, { parent: host, self: app }), fetch, { autoResize: false });
    await kit.started;
    expect(kit.state).to.equal('ready');
    expect(JSON.parse(fetch.calls[0]!.body!)).to.deep.equal({ context: 'ctx-again', host: HOST_ORIGIN });
  });

  it('after an in-frame reload takes the theme and locale from the dashboard\'s answer, not the browser', async () => {
    const reload = async (answer: { context: string; theme?: 'light' | 'dark'; locale?: string }, browserTheme: 'light' | 'dark' = 'light') => {
      const [host, app] = windowPair();
      const hostSide = openHostEnd(host, app, { getContext: () => answer });
      kits.push({ destroy: () => hostSide.destroy() } as Kit);
      const env = fakeEnvironment(`${APP_ORIGIN}/embed`, { parent: host, self: app });
      env.changePreferences({ defaultTheme: browserTheme });
      const kit = start(env, scriptedFetch(backend({ entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 })), { autoResize: false });
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

  it('kit.fetch adds the bearer for the backend\'s origin only', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const { kit, fetch } = embedded((call) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true })));
    await kit.started;
    await kit.fetch('/api/data', { method: 'POST', body: 'x' });
    await kit.fetch(new Request(`${APP_ORIGIN}/api/other`));
    await kit.fetch('https://third-party.example/pixel');
    expect(fetch.calls.slice(1).map((c) => [c.url, c.authorization, c.body])).to.deep.equal([
      [`${APP_ORIGIN}/api/data`, 'Bearer tok-1', 'x'],
      [`${APP_ORIGIN}/api/other`, 'Bearer tok-1', null],
      ['https://third-party.example/pixel', null, null],
    ]);
  });

  it('kit.fetch gives your API\'s answers as they are: an error status resolves, a network failure is fetch\'s TypeError', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const offline = new TypeError('Failed to fetch');
    const { kit } = embedded((call) =>
      call.url.endsWith('/session') ? backend(state)(call) : call.url.endsWith('/down') ? Promise.reject(offline) : new Response('<h1>Oops</h1>', { status: 500 }),
    );
    await kit.started;
    expect((await kit.fetch('/api/broken')).status).to.equal(500);
    expect(await kit.fetch('/api/down').then(() => 'resolved', (error: unknown) => error)).to.equal(offline);
    expect(kit.state).to.equal('ready');
  });

  it('kit.fetch keeps the bearer from the page\'s origin when the backend is elsewhere, unless bearerOrigins lists it', async () => {
    const api = 'https://api.example';
    const route = (state: Parameters<typeof backend>[0]) => (call: FetchCall) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true }));
    const apart = embedded(route({ entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 }), {}, { backend: `${api}/api/marketplace` });
    await apart.kit.started;
    await apart.kit.fetch('/api/data');
    await apart.kit.fetch(`${api}/api/reports`);
    expect(apart.fetch.calls.slice(1).map((c) => [c.url, c.authorization])).to.deep.equal([
      [`${APP_ORIGIN}/api/data`, null],
      [`${api}/api/reports`, 'Bearer tok-1'],
    ]);

    const listed = embedded(route({ entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 }), {}, { backend: `${api}/api/marketplace`, bearerOrigins: [APP_ORIGIN] });
    await listed.kit.started;
    await listed.kit.fetch('/api/data');
    await listed.kit.fetch(`${api}/api/reports`);
    await listed.kit.fetch('https://third-party.example/pixel');
    expect(listed.fetch.calls.slice(1).map((c) => [c.url, c.authorization])).to.deep.equal([
      [`${APP_ORIGIN}/api/data`, 'Bearer tok-1'],
      [`${api}/api/reports`, 'Bearer tok-1'],
      ['https://third-party.example/pixel', null],
    ]);
  });

  it('renews near expiry through getContext alongside the requests, once for concurrent callers', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => env.now() };
    const { kit, env, fetch, contexts } = embedded((call) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true })));
    await kit.started;
    // The fake clock also runs with the real one: 30 s of slack either side of the margin.
    env.advance(600_000 - 90_000); // 90 s before expiry: outside the default margin of 60 s
    await kit.fetch('/api/early');
    await tick(50); // a renewal runs alongside: give it time to show
    expect(contexts()).to.equal(0, 'not renewed before the margin');
    env.advance(60_000); // 30 s before expiry: inside the 60 s margin
    state.entitlement = PRO; // makes the end of the renewal visible
    const renewed = new Promise((resolve) => kit.addEventListener('change', resolve, { once: true }));
    await Promise.all([kit.fetch('/api/a'), kit.fetch('/api/b'), kit.fetch('/api/c')]);
    await renewed;
    await kit.fetch('/api/d');
    expect(contexts()).to.equal(1);
    expect(state.exchanges).to.equal(2);
    expect(fetch.calls.filter((c) => /\/api\/[abcd]$/.test(c.url)).map((c) => c.authorization)).to.deep.equal(
      ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-2'],
      'the still valid token went out at once',
    );
    expect(JSON.parse(fetch.calls.find((c) => c.method === 'POST' && c.body?.includes('ctx-1'))!.body!)).to.deep.equal({ context: 'ctx-1', host: HOST_ORIGIN });
  });

  it('renews a session shorter than the margin at half its lifetime', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 40_000, exchanges: 0, now: () => env.now() };
    const { kit, env, contexts } = embedded((call) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true })));
    await kit.started;
    env.advance(19_000);
    await kit.fetch('/api/a');
    await new Promise((resolve) => setTimeout(resolve, 50)); // a renewal runs alongside: give it time to show
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
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(contexts()).to.equal(0, `browser ${lead / 1000} s ahead: not renewed yet`);
      env.advance(20_000);
      await kit.fetch('/api/b');
      await until(() => exchanges === 2);
      expect(contexts()).to.equal(1, `browser ${lead / 1000} s ahead: renewed ahead of expiry`);
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
        expires_at ||= new Date(backendNow + endsIn).toISOString().replace(/\.\d{3}Z$/, 'Z');
        const answer = jsonResponse(sessionBody('tok-1', 600_000, { ...ENTITLEMENT, expires_at }, backendNow));
        answer.headers.set('date', new Date(backendNow).toUTCString());
        return answer;
      });
      const delays = await timerDelays(() => kit.started);
      const live = endsIn > 0;
      expect([kit.has('reports'), kit.access({}).reason]).to.deep.equal(live ? [true, 'granted'] : [false, 'expired'], `browser ${lead / hour} h ahead`);
      // The notice of its end is timed by the backend's clock too (by the browser's: none at all).
      const minutes = delays.filter((ms) => ms > 10 * 60_000).map((ms) => Math.round(ms / 60_000));
      expect(minutes).to.deep.equal(live ? [60] : [], 'minutes until the notice');
      if (!live) continue;
      const seen: boolean[] = [];
      kit.subscribe((k) => seen.push(k.hasPlan('basic')));
      env.advance(endsIn - 60_000); // the fake clock also runs with the real one: a minute to spare
      expect(kit.hasPlan('basic')).to.equal(true, 'a minute before its end by the backend\'s clock');
      env.advance(60_000);
      expect(kit.hasPlan('basic')).to.equal(false, 'past its end by the backend\'s clock');
      await kit.refresh(); // the same entitlement again: listeners hear of its end once
      expect(seen).to.deep.equal([false]);
    }
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
    await tick();
    for (const path of ['/api/b', '/api/c', '/api/d']) {
      await kit.fetch(path);
      await new Promise((resolve) => setTimeout(resolve, 20)); // room for a renewal to show
    }
    expect(exchanges).to.equal(2, 'one renewal, not one per call');
    expect(fetch.calls.filter((c) => !c.url.endsWith('/session')).map((c) => c.authorization)).to.deep.equal(['Bearer tok-1', 'Bearer tok-2', 'Bearer tok-2', 'Bearer tok-2']);
  });

  it('renewing ahead of expiry holds no request back, even when the dashboard never answers', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => env.now() };
    let asked = 0;
    const { kit, env, fetch } = embedded(
      (call) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true })),
      { getContext: () => (asked++, new Promise<never>(() => undefined)) },
      { bridgeTimeoutMs: 60_000 }, // longer than the test's own timeout: a request that waited would fail it
    );
    await kit.started;
    env.advance(550_000);
    expect((await kit.fetch('/api/a')).status).to.equal(200);
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    await until(() => asked > 0);
    expect(asked).to.equal(1, 'one renewal, shared');
    expect(fetch.calls.slice(1).map((c) => c.authorization)).to.deep.equal(['Bearer tok-1', 'Bearer tok-1']);
    expect([kit.state, kit.error]).to.deep.equal(['ready', null]);
  });

  it('renews after a 401 and retries once; a 401 with the fresh token is returned, not retried', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
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
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => env.now() };
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
    expect(kit.state).to.equal('error');
    expect(kit.error).to.equal(a);
    expect(events).to.deep.equal(['error']);
    expect(fetch.calls).to.have.length(1, 'nothing was sent without a session');
  });

  describe('a backend that asks the kit to wait (429 or 503)', () => {
    const busy = (status: number, retryAfter?: string) =>
      new Response(JSON.stringify({ error: { code: 'ERR_RATE_LIMITED', message: 'Too many sessions started for this user: retry in 30 s' } }), {
        status,
        headers: { 'content-type': 'application/json', ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) },
      });
    /** A dashboard kit whose session has expired; the backend answers exchanges with `refuse()` while it returns one. */
    async function expired(refuse: () => Response | null) {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => env.now() };
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

    it('on the developer\'s site, a refresh() that reads the session again lets the next 401 renew at once', async () => {
      const env = fakeEnvironment(`${APP_ORIGIN}/`);
      let cookie = 'tok-a';
      let busy = false;
      const reads: string[] = [];
      const fetch = scriptedFetch((call) => {
        if (call.url.includes('/api/marketplace/session')) {
          reads.push(call.url.slice(call.url.indexOf('/session')));
          if (busy) {
            return new Response(JSON.stringify({ error: { code: 'ERR_RATE_LIMITED', message: 'busy' } }), {
              status: 429,
              headers: { 'content-type': 'application/json', 'retry-after': '60' },
            });
          }
          return jsonResponse(sessionBody(cookie, 600_000, ENTITLEMENT, env.now()));
        }
        return call.authorization === `Bearer ${cookie}` ? jsonResponse({ ok: true }) : jsonResponse({}, 401);
      });
      const kit = start(env, fetch);
      await kit.started;
      cookie = 'tok-b';
      busy = true;
      const refused = await rejection(kit.fetch('/api/a'));
      expect([refused.code, refused.status, refused.retryAfterMs]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 429, 60_000]);
      busy = false;
      await kit.refresh();
      expect([kit.state, kit.error]).to.deep.equal(['ready', null]);
      cookie = 'tok-c'; // another sign-in: the next call gets a 401 with tok-b
      expect((await kit.fetch('/api/b')).status).to.equal(200, 'renewed at once: the backend has answered a session since the 429');
      expect(reads).to.deep.equal(['/session', '/session', '/session?refresh=1', '/session']);
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
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => env.now() };
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

  it('a renewal that fails before expiry keeps the working token, tries again later, and fails only on an incurable 401', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => env.now() };
    let failures = 1;
    let asked = 0;
    let refused = '';
    const { kit, env, fetch } = embedded(
      (call) => {
        if (call.url.endsWith('/session')) return backend(state)(call);
        return call.authorization === refused ? jsonResponse({}, 401) : jsonResponse({ ok: true });
      },
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
    await tick(); // the refusal, posted back as the dashboard was asked, has arrived
    expect([asked, kit.state, kit.error]).to.deep.equal([1, 'ready', null]);
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    expect(asked).to.equal(1, 'not asked again on every call right after a failure');
    expect(sent()).to.deep.equal(['Bearer tok-1', 'Bearer tok-1']);

    env.advance(10_000);
    state.entitlement = PRO; // makes the end of the renewal visible
    const renewed = new Promise((resolve) => kit.addEventListener('change', resolve, { once: true }));
    expect((await kit.fetch('/api/c')).status).to.equal(200);
    await renewed;
    expect(asked).to.equal(2);
    expect((await kit.fetch('/api/d')).status).to.equal(200);
    expect(sent().slice(2)).to.deep.equal(['Bearer tok-1', 'Bearer tok-2'], 'the renewal ran alongside /api/c');
    expect(events).to.deep.equal(['ready'], 'no error on the way');

    // The backend refuses the valid token, and no renewal can cure it.
    refused = 'Bearer tok-2';
    failures = 1;
    const error = await rejection(kit.fetch('/api/e'));
    expect(error.code).to.equal('ERR_SESSION_REFRESH_FAILED');
    expect(kit.state).to.equal('error');
  });

  it('entitlementsChanged reloads the entitlement with ?refresh=1 and the bearer', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
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

  it('upgrade opens the plan chooser and reloads only when upgraded', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
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
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
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

  it('upgrade shares the reload the dashboard asked for while its chooser was open, instead of queuing a second one', async () => {
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

  it('upgrade reloads by itself when the reload the dashboard asked for during the chooser failed', async () => {
    const { kit, reloads } = announcingDashboard({ bought: () => PRO, fail: 1 });
    await kit.started;
    expect(await kit.upgrade({ plan: 'pro' })).to.equal('upgraded');
    expect([reloads(), kit.has('export')]).to.deep.equal([2, true]);
  });

  it('upgrade answers upgraded even when the reload after it fails, and says so in the console', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const serve = backend(state);
    const { kit } = embedded(
      (call) => (call.url.endsWith('?refresh=1') ? new Response('<h1>Bad gateway</h1>', { status: 502 }) : serve(call)),
      { openUpgrade: () => ({ outcome: 'upgraded' }) },
    );
    await kit.started;
    const logged = await consoleCalls('error', async () => expect(await kit.upgrade({ plan: 'pro' })).to.equal('upgraded'));
    expect(logged).to.have.length(1);
    expect((logged[0]![1] as MarketplaceKitError).status).to.equal(502);
    expect([kit.state, kit.entitlement]).to.deep.equal(['ready', ENTITLEMENT]);
  });

  it('upgrade waits for the plan chooser longer than other bridge calls (upgradeTimeoutMs)', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const slowChooser = () => new Promise<{ outcome: 'dismissed' }>((resolve) => setTimeout(() => resolve({ outcome: 'dismissed' }), 600));
    const patient = embedded(backend(state), { openUpgrade: slowChooser });
    await patient.kit.started;
    expect(await patient.kit.upgrade({ plan: 'pro' })).to.equal('dismissed');

    const hasty = embedded(backend({ ...state }), { openUpgrade: slowChooser }, { upgradeTimeoutMs: 100 });
    await hasty.kit.started;
    let code = '';
    await hasty.kit.upgrade({ plan: 'pro' }).catch((error: MarketplaceKitError) => (code = error.code));
    expect(code).to.equal('ERR_BRIDGE_TIMEOUT');
  });

  it('a host call made as soon as start-up ends opens the bridge itself; one bridge is ever opened', async () => {
    const titles: string[] = [];
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const { kit, spied } = embedded(backend(state), { setTitle: ({ title }) => void titles.push(title) });
    await kit.started;
    await kit.host!.setTitle('Reports');
    await tick(20);
    expect(titles).to.deep.equal(['Reports']);
    expect(spied.added).to.equal(1, 'one message listener: the scheduled opening found the bridge open');
  });

  it('reports the document height, once per distinct height; autoResize: false reports nothing', async () => {
    const heights: number[] = [];
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    // A first call that timed out (a machine stalled past the usual 300 ms) is sent again after the
    // handshake, by design: a long timeout keeps that out of this test of the common case.
    const { kit, env, spied } = embedded(backend(state), { resize: ({ height }) => void heights.push(height) }, { bridgeTimeoutMs: 10_000 });
    await kit.started;
    // The bridge, and with it the height observer, opens once its code has loaded after start-up.
    await until(() => spied.added === 1);
    env.resizeTo(400);
    env.resizeTo(640);
    await kit.host!.resize(10);
    await tick(20);
    expect(heights).to.deep.equal([400, 640, 10]);

    const quiet: number[] = [];
    const other = embedded(backend({ ...state }), { resize: ({ height }) => void quiet.push(height) }, { autoResize: false });
    await other.kit.started;
    other.env.resizeTo(900);
    await tick(20);
    expect(quiet).to.deep.equal([]);
  });
});

describe('auto-resize with a dashboard that starts its end over', () => {
  it('tells the new end the height, which it never heard, with no change of height', async () => {
    const [host, app] = windowPair();
    const heights: number[] = [];
    // The old end never answers its resize: the restart fails that call.
    const first = openHostEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => (heights.push(height), new Promise<void>(() => undefined)) }, 300);
    kits.push({ destroy: () => first.destroy() } as Kit);
    const env = fakeEnvironment(LAUNCH, { parent: host, self: app });
    const kit = start(env, scriptedFetch(backend({ entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 })), { bridgeTimeoutMs: 10_000 });
    await kit.started;
    await until(() => heights.length === 1);
    // The dashboard re-mounts its embed on the same frame (a second connectApp), with no reload in it.
    const again: number[] = [];
    const second = openHostEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => void again.push(height) }, 300);
    kits.push({ destroy: () => second.destroy() } as Kit);
    await until(() => again.length === 1);
    // The old end's failed call does not undo the new one: the same height is not sent again.
    env.resizeTo(400);
    // Messages keep their order: a duplicate would come before this one.
    await kit.host!.resize(999);
    expect([heights, again]).to.deep.equal([[400], [400, 999]]);
    expect(kit.state).to.equal('ready');
  });
});

describe('auto-resize with a dashboard that connects late', () => {
  it('reports the height again once the dashboard has answered the handshake', async () => {
    const [host, app] = windowPair();
    const env = fakeEnvironment(LAUNCH, { parent: host, self: app });
    const kit = start(env, scriptedFetch(backend({ entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 })), { bridgeTimeoutMs: 100 });
    await kit.started;
    await tick(300); // the bridge opened and the first height's call timed out: nobody listened
    const heights: number[] = [];
    const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => void heights.push(height) }, 100);
    kits.push({ destroy: () => hostSide.destroy() } as Kit);
    await hostSide.ready;
    // Waited for, not timed: when the bridge opened late, the first call is still out and its
    // height comes a few tasks after the handshake.
    await until(() => heights.length > 0);
    await tick(50); // room for a (wrong) second report
    expect(heights).to.deep.equal([env.height]);
  });
});

describe('destroy', () => {
  it('during start-up opens no bridge, observes nothing, keeps no session and notifies nobody', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const [host, app] = windowPair();
    const spied = spyListeners(app);
    const heights: number[] = [];
    const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => void heights.push(height) }, 200);
    kits.push({ destroy: () => hostSide.destroy() } as Kit);
    const env = fakeEnvironment(LAUNCH, { parent: host, self: spied.window });
    const fetch = scriptedFetch(backend(state));
    const kit = start(env, fetch);
    let changes = 0;
    kit.addEventListener('change', () => changes++);
    kit.destroy(); // as an mp-kit-created listener may, before start-up goes on
    await kit.started;
    env.resizeTo(700);
    expect([spied.added, spied.listening.size]).to.deep.equal([0, 0], 'no message listener ever');
    expect((await rejection(hostSide.call('themeChanged', { theme: 'light' }))).code).to.equal('ERR_BRIDGE_TIMEOUT');
    expect(heights).to.deep.equal([]);
    expect(changes).to.equal(0);
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect(fetch.calls).to.have.length(1, 'only the exchange that had already left');
  });

  it('after start-up closes the bridge; then host is null, upgrade is ERR_NOT_EMBEDDED and nothing changes', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const { kit, fetch, spied } = embedded((call) => (call.method === 'DELETE' ? new Response(null, { status: 204 }) : backend(state)(call)));
    await kit.started;
    expect([spied.added, spied.listening.size]).to.deep.equal([0, 0], 'ready before the bridge opens');
    await until(() => spied.added === 1); // loaded and opened after start-up
    let changes = 0;
    kit.addEventListener('change', () => changes++);
    kit.destroy();
    expect([spied.added, spied.listening.size]).to.deep.equal([1, 0], 'the one listener was removed at once');
    expect(kit.host === null).to.equal(true, 'kit.host is null'); // a boolean: a failure then prints no bridge object
    expect((await rejection(kit.upgrade())).code).to.equal('ERR_NOT_EMBEDDED');
    await kit.signOut(); // still tells the backend, but the dead kit's state stays as it was
    expect(fetch.calls.at(-1)?.method).to.equal('DELETE');
    expect([kit.state, kit.user, changes]).to.deep.equal(['ready', USER, 0]);
  });

  it('marks the kit destroyed and announces it on window with mp-kit-destroyed', async () => {
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
    const kit = await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch });
    const announced: unknown[] = [];
    const listener = (event: Event) => announced.push((event as CustomEvent<Kit>).detail);
    window.addEventListener(KIT_DESTROYED_EVENT, listener);
    try {
      expect(kit.destroyed).to.equal(false);
      kit.destroy();
      kit.destroy();
    } finally {
      window.removeEventListener(KIT_DESTROYED_EVENT, listener);
    }
    expect([kit.destroyed, getKit(), announced.length, announced[0] === kit]).to.deep.equal([true, null, 1, true]);
  });

  it('from an mp-kit-created listener: createKit resolves a dead kit without a session', async () => {
    window.addEventListener(KIT_CREATED_EVENT, (event) => event.detail.destroy(), { once: true });
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
    const kit = await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch });
    let changes = 0;
    kit.subscribe(() => changes++);
    expect(getKit()).to.equal(null);
    expect(kit.state).to.equal('loading');
    expect(kit.user).to.equal(null);
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect(changes).to.equal(0);
    expect(fetch.calls).to.have.length(1);
  });
});

describe('sign-out and destroy while session work is under way', () => {
  const work = { fetch: (kit: Kit) => kit.fetch('/api/data'), refresh: (kit: Kit) => kit.refresh() };
  const end = { signOut: (kit: Kit) => kit.signOut(), destroy: (kit: Kit) => kit.destroy() };
  const after = { signOut: 'signed-out', destroy: 'ready' }; // a destroyed kit changes no more

  for (const ending of ['signOut', 'destroy'] as const) {
    it(`${ending} on the developer's site: a 401 re-read or refresh answering later is dropped with ERR_SESSION_MISSING`, async () => {
      for (const doing of ['fetch', 'refresh'] as const) {
        const answer = gate();
        let reads = 0;
        const fetch = scriptedFetch(async (call) => {
          if (call.method === 'DELETE') return new Response(null, { status: 204 });
          if (call.url.includes('/session')) {
            if (++reads > 1) await answer.promise;
            return jsonResponse(sessionBody(`tok-${reads}`, 600_000));
          }
          return jsonResponse({}, call.authorization === 'Bearer tok-1' ? 401 : 200);
        });
        const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
        await kit.started;
        const outcome = rejection(work[doing](kit));
        await until(() => reads === 2);
        await end[ending](kit);
        answer.open();
        expect((await outcome).code, doing).to.equal('ERR_SESSION_MISSING');
        expect(kit.state, doing).to.equal(after[ending]);
        expect(fetch.calls.filter((c) => c.authorization === 'Bearer tok-2'), doing).to.deep.equal([]);
        expect((await rejection(kit.fetch('/api/later'))).code, doing).to.equal('ERR_SESSION_MISSING');
      }
    });

    it(`${ending} inside the dashboard: a renewal or refresh answering later is dropped with ERR_SESSION_MISSING`, async () => {
      for (const doing of ['fetch', 'refresh'] as const) {
        const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => env.now() };
        const answer = gate();
        let held = 0;
        let hold = false;
        const { kit, env, fetch } = embedded(async (call) => {
          if (hold && call.url.includes('/session') && call.method !== 'DELETE') {
            held++;
            await answer.promise;
          }
          return call.url.includes('/session') ? backend(state)(call) : jsonResponse({ ok: true });
        });
        await kit.started;
        hold = true;
        if (doing === 'fetch') env.advance(600_000); // expired: the request waits for the renewal
        const outcome = rejection(work[doing](kit));
        await until(() => held === 1);
        await end[ending](kit);
        answer.open();
        expect((await outcome).code, doing).to.equal('ERR_SESSION_MISSING');
        expect(kit.state, doing).to.equal(after[ending]);
        expect(fetch.calls.filter((c) => c.url.endsWith('/api/data')), doing).to.deep.equal([]);
      }
    });
  }
});

describe('sign-out inside the dashboard', () => {
  it('lasts: a later kit.fetch or refresh asks the dashboard for no new context and sends nothing', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const { kit, fetch, contexts } = embedded(backend(state));
    await kit.started;
    expect(kit.state).to.equal('ready');
    await kit.signOut();
    const exchanges = state.exchanges;
    const contextsBefore = contexts();
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect((await rejection(kit.refresh())).code).to.equal('ERR_SESSION_MISSING');
    expect([kit.state, state.exchanges, contexts()]).to.deep.equal(['signed-out', exchanges, contextsBefore]);
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/data'))).to.deep.equal([]);
  });

  it('kit.upgrade still answers the plan chooser\'s outcome, and reloads nothing', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const { kit, fetch } = embedded(backend(state), { openUpgrade: () => ({ outcome: 'upgraded' }) });
    await kit.started;
    await kit.signOut();
    const calls = fetch.calls.length;
    const logged = await consoleCalls('error', async () => expect(await kit.upgrade({ plan: 'pro' })).to.equal('upgraded'));
    expect([kit.state, fetch.calls.length]).to.deep.equal(['signed-out', calls]);
    expect(logged).to.deep.equal([], 'no reload is tried, so none fails');
  });
});

describe('change notifications', () => {
  it('notify each listener once per change, and nobody for an update that changes nothing', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
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
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(backend(state)));
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
    await kit.started;
    window.onerror = runnerHandler;
    expect(later).to.equal(1);
    expect(reported).to.have.length(1);
  });

  it('concurrent refreshes share requests: one running, at most one more queued', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const fetch = scriptedFetch(backend(state));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    await Promise.all([kit.refresh(), kit.refresh(), kit.refresh(), kit.refresh()]);
    expect(fetch.calls.filter((c) => c.url.endsWith('?refresh=1'))).to.have.length(2);
  });
});

describe('global registration', () => {
  it('createKit registers the kit in loading state before start-up and announces it', async () => {
    const seen: unknown[] = [];
    const onCreated = (event: Event) => seen.push((event as CustomEvent<Kit>).detail);
    window.addEventListener(KIT_CREATED_EVENT, onCreated);
    const fetch = scriptedFetch(() => jsonResponse({ error: { code: 'ERR_SESSION_MISSING', message: 'none' } }, 401));
    const pending = createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch });
    const early = getKit();
    expect(early?.state).to.equal('loading');
    const kit = await pending;
    window.removeEventListener(KIT_CREATED_EVENT, onCreated);
    expect(kit).to.equal(early);
    expect(seen).to.deep.equal([kit]);
    expect(kit.state).to.equal('signed-out');
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('marketplace-app-kit.kit')]).to.equal(kit);
    kit.destroy();
    expect(getKit()).to.equal(null);
  });

  it('warns when a second kit replaces one that still runs, not when the first was destroyed', async () => {
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
    const options = { backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch };
    getKit()?.destroy(); // a kit left over by another test would count as running
    const warnings: unknown[][] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void warnings.push(args);
    const created: Kit[] = [];
    try {
      const first = await createKit(options);
      const second = await createKit(options);
      created.push(first, second);
      expect(warnings).to.have.length(1);
      expect(String(warnings[0]?.[0])).to.contain('ERR_KIT_REPLACED: createKit() replaced a running kit');
      expect(getKit() === second).to.equal(true);
      second.destroy();
      first.destroy();
      created.push(await createKit(options));
    } finally {
      console.warn = warn;
      for (const kit of created) kit.destroy();
    }
    expect(warnings).to.have.length(1);
  });
});

describe('early exchange (the page sent the start-up request before the kit existed)', () => {
  const SCRUBBED = `${APP_ORIGIN}/embed?view=1`;
  const early = (response: Promise<Response>, backend = BACKEND, href = LAUNCH) => ({ href, backend, response });
  function framedEnv(earlyLaunch: EarlyLaunch) {
    const [host, app] = windowPair();
    const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'ctx-from-host' }) }, 300);
    kits.push({ destroy: () => hostSide.destroy() } as Kit);
    return fakeEnvironment(SCRUBBED, { parent: host, self: app, earlyLaunch });
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
    const answer = () => {
      const body = sessionBody('tok-early', 600_000, { ...ENTITLEMENT, expires_at: new Date(arrived + 20_000).toISOString().replace(/\.\d{3}Z$/, 'Z') }, arrived);
      return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json', date: new Date(arrived).toUTCString() } });
    };
    const env = framedEnv({ ...early(Promise.resolve(answer())), receivedAt: arrived });
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

  it('a request sent to another backend is not adopted: the kit asks the dashboard for a context instead', async () => {
    const env = framedEnv(early(Promise.resolve(jsonResponse(sessionBody('tok-elsewhere', 600_000))), 'https://elsewhere.example/api/marketplace'));
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000)));
    const kit = start(env, fetch);
    await kit.started;
    expect(kit.state).to.equal('ready');
    expect(fetch.calls.map((call) => [call.method, call.url, call.body && JSON.parse(call.body).context])).to.deep.equal([
      ['POST', `${BACKEND}/session`, 'ctx-from-host'],
    ]);
    await kit.fetch('/api/data');
    expect(fetch.calls[1]?.authorization).to.equal('Bearer tok-kit');
  });

  it('a request sent to another backend, in a browser that does not tell the framing origin: still embedded, asks the dashboard', async () => {
    const [host, app] = windowPair();
    const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'ctx-from-host' }) }, 300);
    kits.push({ destroy: () => hostSide.destroy() } as Kit);
    const elsewhere = early(Promise.resolve(jsonResponse(sessionBody('tok-elsewhere', 600_000))), 'https://elsewhere.example/api/marketplace');
    const env = fakeEnvironment(SCRUBBED, { parent: host, self: app, parentOrigin: undefined, earlyLaunch: elsewhere });
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
    const kit = start(env, fetch);
    await kit.started;
    expect([kit.state, kit.error?.code, kit.user]).to.deep.equal(['error', 'ERR_HOST_NOT_ALLOWED', null]);
    expect(fetch.calls).to.have.length(0);
  });
});

describe('the bridge\'s code (loaded on first use)', () => {
  /** A kit inside a fake dashboard whose bridge code comes from `load`. */
  function framed(load: FakeEnvironment['loadHostLink'], options: Partial<KitOptions> = {}, url = LAUNCH) {
    const [host, app] = windowPair();
    const toasts: string[] = [];
    const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'ctx-from-host' }), toast: ({ message }) => void toasts.push(message) }, 300);
    kits.push({ destroy: () => hostSide.destroy() } as Kit);
    const spied = spyListeners(app);
    const env = fakeEnvironment(url, { parent: host, self: spied.window, loadHostLink: load });
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000))), { bridgeTimeoutMs: 300, ...options });
    return { kit, env, spied, toasts };
  }
  const realLink = () => import('../../../src/runtime/host-link.js');

  it('is never loaded on the developer\'s own site', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account`);
    const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000))));
    await kit.started;
    await kit.fetch('/api/data');
    await kit.refresh();
    await tick(20);
    expect([kit.state, kit.host, env.hostLinkLoads]).to.deep.equal(['ready', null, 0]);
  });

  it('inside the dashboard it is loaded once, after start-up, whoever asks for it', async () => {
    const { kit, env, spied, toasts } = framed(realLink);
    await kit.started;
    expect(env.hostLinkLoads).to.equal(0, 'not needed to get ready');
    await Promise.all([kit.host!.toast('a'), kit.host!.toast('b'), kit.host!.toast('c')]);
    await tick(20);
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
    await tick(20);
    expect([loads, kit.state]).to.deep.equal([3, 'ready']);
    expect(toasts).to.deep.equal(['delivered']);
  });

  it('a load that never ends fails the call with ERR_TIMEOUT after timeoutMs', async () => {
    const { kit } = framed(() => new Promise(() => undefined), { timeoutMs: 50 });
    await kit.started;
    const failed = await rejection(kit.host!.toast('late'));
    expect([failed.code, failed.message]).to.deep.equal(['ERR_TIMEOUT', "The host bridge's code did not load within 50 ms"]);
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
    const { kit } = framed(() => new Promise(() => undefined), { timeoutMs: 10_000 }, `${APP_ORIGIN}/embed`);
    await tick(20);
    const call = rejection(kit.host!.toast('x'));
    kit.destroy();
    const soon = (pending: Promise<unknown>) => Promise.race([pending, tick(1_000).then(() => 'still waiting')]);
    expect(await soon(call.then((error) => error.code))).to.equal('ERR_BRIDGE_CLOSED');
    expect(await soon(kit.started.then(() => 'settled', () => 'settled'))).to.equal('settled');
  });

  it('a host call through a kit.host kept from before destroy() opens nothing: ERR_BRIDGE_CLOSED', async () => {
    const { kit, env, spied } = framed(realLink);
    await kit.started;
    const host = kit.host!;
    kit.destroy(); // before the scheduled opening ran
    expect((await rejection(host.toast('late'))).code).to.equal('ERR_BRIDGE_CLOSED');
    await tick(20);
    expect([env.hostLinkLoads, spied.added]).to.deep.equal([0, 0]);
  });

  it('a slow start-up does not keep the bridge closed: it opens a second after the request left', async () => {
    const [host, app] = windowPair();
    const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'ctx' }) }, 3000);
    kits.push({ destroy: () => hostSide.destroy() } as Kit);
    const spied = spyListeners(app);
    const answer = gate();
    const env = fakeEnvironment(LAUNCH, { parent: host, self: spied.window });
    let kit!: MarketplaceKit;
    const delays = await timerDelays(async () => {
      kit = start(env, scriptedFetch(async () => (await answer.promise, jsonResponse(sessionBody('tok', 600_000)))));
    });
    const sent = performance.now();
    // The dashboard switches the theme while the exchange is still out: the call waits for the bridge.
    await hostSide.call('themeChanged', { theme: 'light' }, { timeoutMs: 10_000 });
    // Opened by a timer of one second. Timers never fire early (a busy machine makes them late: no
    // upper bound); start-up, still held, is not what opened it.
    expect(delays).to.include(1_000, 'a timer of one second');
    expect(performance.now() - sent).to.be.at.least(900);
    expect([kit.state, kit.theme, env.hostLinkLoads]).to.deep.equal(['loading', 'light', 1]);
    answer.open();
    await kit.started;
    await tick(20); // the opening scheduled after start-up finds the bridge open
    expect([kit.state, env.hostLinkLoads, spied.added]).to.deep.equal(['ready', 1, 1]);
  });
});

describe('edge cases found by review', () => {
  it('a listener that destroys the kit: no later listener and no change event hears of that change', async () => {
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/account`), fetch);
    const heard: string[] = [];
    kit.subscribe(() => kit.destroy());
    kit.subscribe(() => heard.push('second listener'));
    kit.addEventListener('change', () => heard.push('change event'));
    await kit.started;
    expect([kit.destroyed, heard]).to.deep.equal([true, []]);
  });

  it('a destroyed kit on the developer\'s site reads no session on refresh()', async () => {
    const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok-1', 600_000)));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    kit.destroy();
    expect((await rejection(kit.refresh())).code).to.equal('ERR_SESSION_MISSING');
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect(fetch.calls.map((c) => c.url)).to.deep.equal([`${BACKEND}/session`], 'nothing was sent after destroy()');
  });

  it('refresh() right after signOut() waits for the cookie to be deleted, and stays signed out', async () => {
    let cookie = true;
    const deleted = gate();
    const fetch = scriptedFetch(async (call) => {
      if (call.method === 'DELETE') {
        await deleted.promise;
        cookie = false;
        return new Response(null, { status: 204 });
      }
      return cookie ? jsonResponse(sessionBody('tok-1', 600_000)) : jsonResponse({ error: { code: 'ERR_SESSION_MISSING', message: 'none' } }, 401);
    });
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    const signingOut = kit.signOut();
    const refreshing = kit.refresh();
    await tick(20);
    expect(fetch.calls.map((c) => c.method)).to.deep.equal(['GET', 'DELETE'], 'the refresh waits for the DELETE');
    deleted.open();
    await signingOut;
    await refreshing;
    expect([kit.state, kit.user]).to.deep.equal(['signed-out', null]);
  });

  it('on the developer\'s site, kit.fetch after a failed start-up reads the cookie session again', async () => {
    let reads = 0;
    const fetch = scriptedFetch((call) => {
      if (call.url.endsWith('/session')) {
        reads++;
        return reads === 1 ? new Response('<html>Bad gateway</html>', { status: 503, headers: { 'content-type': 'text/html' } }) : jsonResponse(sessionBody('tok-1', 600_000));
      }
      return jsonResponse({ ok: call.authorization });
    });
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    expect([kit.state, kit.error?.code]).to.deep.equal(['error', 'ERR_HTTP']);
    const response = await kit.fetch('/api/data');
    expect(await response.json()).to.deep.equal({ ok: 'Bearer tok-1' });
    expect(kit.state).to.equal('ready');
  });

  it('kit.fetch gives up waiting for a renewal when its signal aborts', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const never = new Promise<{ context: string }>(() => undefined);
    const { kit, env } = embedded(backend(state), { getContext: () => never }, { bridgeTimeoutMs: 3000 });
    await kit.started;
    env.advance(700_000); // the session has expired: kit.fetch must renew first
    const controller = new AbortController();
    const sent = performance.now();
    const pending = kit.fetch('/api/data', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const error = await pending.then(() => null, (reason: unknown) => reason);
    expect(error).to.be.instanceOf(DOMException);
    expect((error as DOMException).name).to.equal('AbortError');
    expect(performance.now() - sent).to.be.below(1000);
  });

  it('refuses timing options that are not usable timers with ERR_CONFIG', () => {
    const fetch = scriptedFetch(() => jsonResponse({}));
    for (const bad of [{ timeoutMs: null as unknown as number }, { timeoutMs: Infinity }, { timeoutMs: -1 }, { timeoutMs: 0 }, { upgradeTimeoutMs: 30 * 86_400_000 }, { bridgeTimeoutMs: NaN }, { refreshMarginMs: NaN }, { timeoutMs: '5000' as unknown as number }]) {
      expect(() => new MarketplaceKit({ backend: '/api', hostOrigins: [], fetch, ...bad }, fakeEnvironment(`${APP_ORIGIN}/`)), JSON.stringify(bad))
        .to.throw(MarketplaceKitError, /createKit's \w+ must be a finite number from/)
        .with.property('code', 'ERR_CONFIG');
    }
    expect(fetch.calls).to.have.length(0);
    // refreshMarginMs may be 0 (renew at expiry only), as docs/runtime.md says; the others start at 1.
    new MarketplaceKit({ backend: '/api', hostOrigins: [], fetch, refreshMarginMs: 0 }, fakeEnvironment(`${APP_ORIGIN}/`)).destroy();
  });

  it('gives every configuration mistake the same status (500), whatever found it', () => {
    const fetch = scriptedFetch(() => jsonResponse({}));
    const statusOf = (options: Partial<KitOptions>) => {
      try {
        new MarketplaceKit({ backend: '/api', hostOrigins: [], fetch, ...options }, fakeEnvironment(`${APP_ORIGIN}/`));
      } catch (error) {
        return [(error as MarketplaceKitError).code, (error as MarketplaceKitError).status];
      }
      return 'accepted';
    };
    expect([statusOf({ backend: '' }), statusOf({ hostOrigins: ['*'] }), statusOf({ timeoutMs: NaN })]).to.deep.equal([
      ['ERR_CONFIG', 500],
      ['ERR_CONFIG', 500],
      ['ERR_CONFIG', 500],
    ]);
  });

  it('a connection that breaks in the middle of the answer is ERR_NETWORK, not an invalid answer', async () => {
    const broken = () =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"session":{"tok'));
            controller.error(new TypeError('network error'));
          },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(broken));
    await kit.started;
    expect([kit.state, kit.error?.code]).to.deep.equal(['error', 'ERR_NETWORK']);
  });

  it('answers the dashboard\'s localeChanged with an error for a value that is no language tag', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const { kit, hostSide } = embedded(backend(state));
    await kit.started;
    await hostSide.call('localeChanged', { locale: 'fr-CA' });
    expect(kit.locale).to.equal('fr-CA');
    const error = await rejection(hostSide.call('localeChanged', { locale: 'not a locale!!' }));
    expect(error.code).to.equal('ERR_BRIDGE_REMOTE');
    expect(error.message).to.contain('is not a BCP 47 language tag');
    expect(kit.locale).to.equal('fr-CA');
  });
});

describe('kit: what mutation testing found unchecked', () => {
  it('after a failed early renewal, asks the dashboard again only 5 s later', async () => {
    let asked = 0;
    const { kit, env } = embedded(
      (call) => (call.url.endsWith('/session') ? jsonResponse(sessionBody('tok-1', 600_000, ENTITLEMENT, env.now())) : jsonResponse({ ok: true })),
      {
        getContext: () => {
          asked++;
          throw new Error('busy');
        },
      },
    );
    await kit.started;
    env.advance(550_000);
    await kit.fetch('/api/a');
    await until(() => asked === 1);
    await kit.fetch('/api/b');
    await tick(50); // time for a (wrong) second getContext to reach the dashboard
    expect(asked).to.equal(1);
    env.advance(2_000); // the fake clock also runs with the real one: three seconds of slack
    await kit.fetch('/api/b2');
    await tick(50);
    expect(asked).to.equal(1, 'not asked again within the 5 s');
    env.advance(3_000);
    await kit.fetch('/api/c');
    await until(() => asked === 2);
  });

  it('a sign-out the backend answers 401 (the session was already gone) succeeds', async () => {
    const fetch = scriptedFetch((call) =>
      call.method === 'DELETE' ? jsonResponse({ error: { code: 'ERR_SESSION_MISSING', message: 'none' } }, 401) : jsonResponse(sessionBody('tok', 600_000)),
    );
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    await kit.signOut();
    expect(kit.state).to.equal('signed-out');
  });

  it('inside the dashboard, a renewal refused with 401 is state error (not signed out), and the next call asks again', async () => {
    let exchanges = 0;
    const { kit, env, contexts } = embedded((call) => {
      if (call.method !== 'POST') return jsonResponse({ ok: true });
      exchanges++;
      return exchanges === 1
        ? jsonResponse(sessionBody('tok-1', 600_000, ENTITLEMENT, env.now()))
        : jsonResponse({ error: { code: 'ERR_CONTEXT_TOKEN_EXPIRED', message: 'expired' } }, 401);
    });
    await kit.started;
    env.advance(600_000);
    const error = await rejection(kit.fetch('/api/a'));
    expect([error.code, error.status, kit.state]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 401, 'error']);
    await rejection(kit.fetch('/api/b'));
    expect(contexts()).to.equal(2, 'asked the dashboard again');
  });
});

describe('kit: what a second mutation run found unchecked', () => {
  describe('timeouts and their defaults', () => {
    it('gives each backend request timeoutMs to answer, 10 s unless set', async () => {
      const timeout = AbortSignal.timeout;
      const asked: number[] = [];
      AbortSignal.timeout = (ms: number) => (asked.push(ms), timeout.call(AbortSignal, ms));
      try {
        for (const options of [{}, { timeoutMs: 2_500 }]) {
          const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000))), options);
          await kit.started;
        }
      } finally {
        AbortSignal.timeout = timeout;
      }
      expect(asked).to.deep.equal([10_000, 2_500]);
    });

    it('without options, bridge calls wait 5 s, the plan chooser 10 min, and auto-resize runs', async () => {
      const heights: number[] = [];
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const { kit } = embedded(
        backend(state),
        { resize: ({ height }) => void heights.push(height), toast: () => undefined, openUpgrade: () => ({ outcome: 'dismissed' }) },
        { bridgeTimeoutMs: undefined },
      );
      await kit.started;
      await until(() => heights.length === 1);
      const delays = await timerDelays(async () => {
        await kit.host!.toast('Saved');
        await kit.upgrade({ plan: 'pro' });
      });
      expect(delays.filter((ms) => ms > 1_000)).to.deep.equal([5_000, 600_000]);
    });

    it('inside the dashboard the bridge opens one second after the start-up request left, however long start-up takes', async () => {
      const [host] = windowPair();
      const answer = gate();
      const env = fakeEnvironment(LAUNCH, { parent: host });
      const load = env.loadHostLink;
      let loadedAfter: number | undefined;
      const sent = performance.now();
      env.loadHostLink = () => ((loadedAfter = performance.now() - sent), load());
      let kit!: MarketplaceKit;
      const delays = await timerDelays(async () => {
        kit = start(env, scriptedFetch(async () => (await answer.promise, jsonResponse(sessionBody('tok', 600_000)))));
      });
      expect(delays).to.include(1_000, 'a timer of one second');
      await until(() => loadedAfter !== undefined);
      // Timers never fire early (a busy machine makes them late: no upper bound).
      expect(loadedAfter).to.be.at.least(990, 'opened at the second, not before');
      expect(kit.state).to.equal('loading', 'while start-up still waits');
      answer.open();
      await kit.started;
    });
  });

  describe('configuration', () => {
    it('a backend given with a trailing slash: the routes get one slash', async () => {
      const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch, { backend: '/api/marketplace/' });
      await kit.started;
      await kit.signIn();
      expect(fetch.calls.map((c) => c.url)).to.deep.equal([`${BACKEND}/session`]);
      expect(kit.state).to.equal('ready');
    });

    it('on the developer\'s site the browser\'s color scheme and language are there from the start', async () => {
      const env = fakeEnvironment(`${APP_ORIGIN}/`);
      Object.assign(env, { defaultTheme: 'dark', defaultLocale: 'fr-FR' });
      const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000))));
      expect([kit.state, kit.theme, kit.locale]).to.deep.equal(['loading', 'dark', 'fr-FR']);
      await kit.started;
      expect([kit.state, kit.theme, kit.locale]).to.deep.equal(['ready', 'dark', 'fr-FR']);
    });

    it('launch parameters on a page that is not framed are refused: no request, URL scrubbed', async () => {
      const env = fakeEnvironment(LAUNCH);
      const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
      let kit!: MarketplaceKit;
      await consoleCalls('error', async () => {
        kit = start(env, fetch);
        await kit.started;
      });
      expect([kit.state, kit.error?.code, kit.embedded, fetch.calls.length]).to.deep.equal(['error', 'ERR_HOST_NOT_ALLOWED', false, 0]);
      expect(env.replaced).to.deep.equal(['https://app.example/embed?view=1']);
    });
  });

  describe('refreshes and change notifications', () => {
    it('a refresh queued behind one that fails still runs, and one asked for after the queue emptied sends again', async () => {
      let entitlement: Entitlement = ENTITLEMENT;
      let reloads = 0;
      const held = gate();
      const fetch = scriptedFetch(async (call) => {
        if (call.url.endsWith('?refresh=1') && ++reloads === 1) {
          await held.promise;
          return new Response('<h1>Bad gateway</h1>', { status: 502 });
        }
        return jsonResponse(sessionBody('tok', 600_000, entitlement));
      });
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
      await kit.started;
      const first = kit.refresh();
      const second = kit.refresh(); // queued: it may carry news the first one missed
      entitlement = PRO;
      held.open();
      expect((await rejection(first)).status).to.equal(502);
      await second;
      expect([reloads, kit.has('export')]).to.deep.equal([2, true]);
      await kit.refresh();
      expect(reloads).to.equal(3, 'nothing queued any more: a request of its own');
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

    it('an error that changes only its message notifies too, and a failed renewal says why in its message', async () => {
      const answers = [
        () => new Response('<h1>Service unavailable</h1>', { status: 503 }),
        () => Promise.reject(new TypeError('Failed to fetch')),
        () => new Response('<h1>Bad gateway</h1>', { status: 502 }),
      ];
      let reads = 0;
      const fetch = scriptedFetch((call) => (call.url.endsWith('/session') ? answers[reads++]!() : jsonResponse({ ok: true })));
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
      await kit.started;
      expect(kit.error?.code).to.equal('ERR_HTTP');
      const seen: string[] = [];
      kit.subscribe((k) => seen.push(k.error!.message));
      const offline = await rejection(kit.fetch('/api/a'));
      const failing = await rejection(kit.fetch('/api/b'));
      expect([offline.code, failing.code]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 'ERR_SESSION_REFRESH_FAILED']);
      expect(offline.message).to.equal(`The session could not be renewed: The app backend at ${BACKEND} could not be reached`);
      expect(failing.message).to.equal(`The session could not be renewed: The app backend answered 502 at ${BACKEND}/session`);
      expect(seen).to.deep.equal([offline.message, failing.message]);
    });

    it('an entitlement that ends beyond what setTimeout can wait sets one capped timer, not a loop of them', async () => {
      const far = { ...ENTITLEMENT, expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() };
      const delays = await timerDelays(async () => {
        const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000, far))));
        await kit.started;
        await tick(100);
        expect(kit.has('reports')).to.equal(true);
      });
      expect(delays.filter((ms) => ms > 86_400_000)).to.deep.equal([2 ** 31 - 1]);
    });

    it('a reload the dashboard asked for that fails, queued behind a running one, keeps the entitlement with no unhandled rejection', async () => {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const serve = backend(state);
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
        await tick(50);
      } finally {
        window.removeEventListener('unhandledrejection', onUnhandled);
      }
      expect(unhandled).to.deep.equal([]);
      expect([kit.state, kit.entitlement]).to.deep.equal(['ready', ENTITLEMENT]);
    });
  });

  describe('kit.fetch and the session', () => {
    it('hands back 403, 429 and 5xx answers as they are: no renewal, no retry', async () => {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const { kit, fetch, contexts } = embedded((call) =>
        call.url.endsWith('/session') ? backend(state)(call) : new Response('<h1>no</h1>', { status: Number(new URL(call.url).searchParams.get('status')) }),
      );
      await kit.started;
      for (const status of [403, 429, 500, 503]) expect((await kit.fetch(`/api/data?status=${status}`)).status).to.equal(status);
      expect(contexts()).to.equal(0);
      expect(fetch.calls.filter((c) => c.url.includes('/api/data'))).to.have.length(4);
      expect(kit.state).to.equal('ready');
    });

    it('a signal that aborts while start-up runs, or was aborted already, ends kit.fetch at once and sends nothing', async () => {
      const answer = gate();
      const fetch = scriptedFetch(async (call) => (call.url.endsWith('/session') ? (await answer.promise, jsonResponse(sessionBody('tok', 600_000))) : jsonResponse({ ok: true })));
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
      const controller = new AbortController();
      const pending = kit.fetch('/api/during', { signal: controller.signal }).then(() => 'sent', (error: unknown) => (error as DOMException).name);
      controller.abort();
      expect(await Promise.race([pending, tick(1_000).then(() => 'still waiting')])).to.equal('AbortError');
      answer.open();
      await kit.started;
      const aborted = await kit.fetch('/api/after', { signal: AbortSignal.abort() }).then(() => 'sent', (error: unknown) => (error as DOMException).name);
      expect(aborted).to.equal('AbortError');
      expect(fetch.calls.map((c) => c.url)).to.deep.equal([`${BACKEND}/session`]);
    });

    it('a session that looks expired on arrival (the clocks disagree) is used until a 401, not renewed on every call', async () => {
      // The backend's clock is an hour behind the page's: its ten-minute sessions end before they arrive.
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => env.now() - 3_600_000 };
      const { kit, env, fetch, contexts } = embedded((call) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true })));
      await kit.started;
      expect((await kit.fetch('/api/a')).status).to.equal(200);
      expect((await kit.fetch('/api/b')).status).to.equal(200);
      await tick(50);
      expect(contexts()).to.equal(0);
      expect(fetch.calls.slice(1).map((c) => c.authorization)).to.deep.equal(['Bearer tok-1', 'Bearer tok-1']);
    });

    it('inside the dashboard a token refused with a 401 that no renewal cured is not sent again', async () => {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      let available = false;
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

    it('sends no bearer to an origin that only starts like the backend\'s', async () => {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const { kit, fetch } = embedded((call) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true })));
      await kit.started;
      await kit.fetch(`${APP_ORIGIN}.evil.example/steal`);
      await kit.fetch(`${APP_ORIGIN}:8443/other-port`);
      expect(fetch.calls.slice(1).map((c) => c.authorization)).to.deep.equal([null, null]);
    });

    it('on the developer\'s site refresh() sends the session\'s bearer with the cookie', async () => {
      const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
      await kit.started;
      await kit.refresh();
      expect(fetch.calls.at(-1)).to.include({ method: 'GET', url: `${BACKEND}/session?refresh=1`, credentials: 'include', authorization: 'Bearer tok' });
    });

    it('inside the dashboard a refresh answered 401 even after a renewal fails, without signing out', async () => {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const serve = backend(state);
      const { kit, contexts } = embedded((call) =>
        call.url.endsWith('?refresh=1') ? jsonResponse({ error: { code: 'ERR_SESSION_INVALID', message: 'revoked' } }, 401) : serve(call),
      );
      await kit.started;
      const error = await rejection(kit.refresh());
      expect([error.code, error.status, contexts()]).to.deep.equal(['ERR_SESSION_INVALID', 401, 1]);
      expect([kit.state, kit.user]).to.deep.equal(['ready', USER]);
    });

    it('an error answer is named by the URL it came from', async () => {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const serve = backend(state);
      const { kit } = embedded((call) => {
        if (!call.url.endsWith('?refresh=1')) return serve(call);
        // As a real fetch answers: with its URL, here after a redirect.
        const answer = new Response('<h1>Bad gateway</h1>', { status: 502 });
        return Object.defineProperty(answer, 'url', { value: `${APP_ORIGIN}/moved/session?refresh=1` });
      });
      await kit.started;
      expect((await rejection(kit.refresh())).message).to.equal(`The app backend answered 502 at ${APP_ORIGIN}/moved/session?refresh=1`);
    });
  });

  describe('start-up, sign-in and sign-out', () => {
    it('on the developer\'s site a 401 at start-up is signed out whatever its body; a 403 is an error', async () => {
      const cases: Array<[Response, string, string | undefined]> = [
        [new Response('<h1>401 Authorization Required</h1>', { status: 401, headers: { 'content-type': 'text/html' } }), 'signed-out', undefined],
        [jsonResponse({ error: { code: 'ERR_FORBIDDEN', message: 'not for you' } }, 403), 'error', 'ERR_FORBIDDEN'],
      ];
      for (const [answer, state, code] of cases) {
        const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(() => answer));
        await kit.started;
        expect([kit.state, kit.error?.code], state).to.deep.equal([state, code]);
      }
    });

    it('a start-up read that fails after signOut() leaves the kit signed out, without an error', async () => {
      const answer = gate();
      const fetch = scriptedFetch(async (call) => {
        if (call.method === 'DELETE') return new Response(null, { status: 204 });
        await answer.promise;
        return new Response('<h1>Bad gateway</h1>', { status: 502 });
      });
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
      await kit.signOut();
      answer.open();
      await kit.started;
      expect([kit.state, kit.error]).to.deep.equal(['signed-out', null]);
    });

    it('signOut() refused by the backend (not 401) rejects with ERR_HTTP and its status, and is signed out all the same', async () => {
      const fetch = scriptedFetch((call) => (call.method === 'DELETE' ? new Response('<h1>Forbidden</h1>', { status: 403 }) : jsonResponse(sessionBody('tok', 600_000))));
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
      await kit.started;
      const error = await rejection(kit.signOut());
      expect([error.code, error.status, error.message]).to.deep.equal(['ERR_HTTP', 403, 'Sign-out answered 403']);
      expect(kit.state).to.equal('signed-out');
      expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING', 'the page holds no session');
      // The cookie was not deleted: a refresh (like a reload) finds the session the backend kept.
      await kit.refresh();
      expect(kit.state).to.equal('ready');
    });

    it('kit.host is there as soon as the kit exists: a call made at once (an mp-kit-created listener) reaches the dashboard', async () => {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const asked: unknown[] = [];
      const { kit } = embedded(backend(state), { openUpgrade: (params) => (asked.push(params), { outcome: 'dismissed' }) });
      const host = kit.host;
      const outcome = kit.upgrade({ plan: 'pro' });
      expect(host === null, 'kit.host right after the kit was created').to.equal(false);
      expect(await outcome).to.equal('dismissed');
      expect(asked).to.deep.equal([{ plan: 'pro' }]);
      await kit.started;
      expect(kit.host).to.equal(host);
      expect(kit.state).to.equal('ready');
    });

    it('signIn() inside the dashboard asks it to open the OAuth page; after destroy() it is ERR_NOT_EMBEDDED and navigates nothing', async () => {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const opened: string[] = [];
      const { kit, env } = embedded(backend(state), { openExternal: ({ url }) => void opened.push(url) });
      await kit.started;
      await kit.signIn('/after');
      expect(opened).to.deep.equal([`${BACKEND}/oauth/start?return_to=${encodeURIComponent(`${APP_ORIGIN}/after`)}`]);
      kit.destroy();
      expect((await rejection(kit.signIn())).code).to.equal('ERR_NOT_EMBEDDED');
      expect(env.navigated).to.deep.equal([]);
    });
  });

  describe('inside the dashboard', () => {
    it('host.resize() without a height sends the document\'s height', async () => {
      const heights: number[] = [];
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const { kit, env } = embedded(backend(state), { resize: ({ height }) => void heights.push(height) }, { autoResize: false });
      await kit.started;
      env.height = 777;
      await kit.host!.resize();
      expect(heights).to.deep.equal([777]);
    });

    it('destroy() stops the height observer', async () => {
      const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
      const { kit, env, spied } = embedded(backend(state));
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

    it('a height whose call failed is not sent again when a newer one is still on its way at the handshake', async () => {
      const [host, app] = windowPair();
      const env = fakeEnvironment(LAUNCH, { parent: host, self: app });
      let observed = false;
      const observe = env.observeHeight;
      env.observeHeight = (callback) => ((observed = true), observe(callback));
      const kit = start(env, scriptedFetch(backend({ entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 })), { bridgeTimeoutMs: 3_000 });
      await kit.started;
      await until(() => observed); // the first height (400) is on its way: nobody answers yet
      await tick(1_500);
      env.resizeTo(500); // the second one leaves 1.5 s later
      await tick(2_250); // the first has timed out 0.75 s ago; the second has 0.75 s left
      const heights: number[] = [];
      const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => void heights.push(height) }, 600);
      kits.push({ destroy: () => hostSide.destroy() } as Kit);
      await hostSide.ready;
      await until(() => heights.length > 0);
      await tick(300); // and nothing after it
      expect(heights).to.deep.equal([500]);
    });

    it('a dashboard that answers an empty context: no exchange, state error', async () => {
      const [host, app] = windowPair();
      const hostSide = openHostEnd(host, app, { getContext: () => ({ context: '' }) }, 300);
      kits.push({ destroy: () => hostSide.destroy() } as Kit);
      const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/embed`, { parent: host, self: app }), fetch, { bridgeTimeoutMs: 300, autoResize: false });
      await kit.started;
      expect([kit.state, fetch.calls.length]).to.deep.equal(['error', 0]);
      expect(kit.error?.code).to.match(/^ERR_BRIDGE_/);
    });
  });

  describe('early exchange and registration', () => {
    const SCRUBBED = `${APP_ORIGIN}/embed?view=1`;

    it('a hand-over that is not the early exchange\'s (no answer promise, no launch URL) is ignored: the kit asks the dashboard', async () => {
      const genuine = { href: LAUNCH, backend: BACKEND, response: Promise.resolve(jsonResponse(sessionBody('tok-early', 600_000))) };
      for (const handed of [{ ...genuine, response: {} }, { ...genuine, href: 42 }] as unknown as EarlyLaunch[]) {
        const [host, app] = windowPair();
        const hostSide = openHostEnd(host, app, { getContext: () => ({ context: 'ctx-from-host' }) }, 300);
        kits.push({ destroy: () => hostSide.destroy() } as Kit);
        const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000)));
        const kit = start(fakeEnvironment(SCRUBBED, { parent: host, self: app, earlyLaunch: handed }), fetch, { autoResize: false });
        await kit.started;
        expect(kit.state).to.equal('ready');
        expect(fetch.calls.map((call) => call.body && JSON.parse(call.body).context)).to.deep.equal(['ctx-from-host']);
      }
    });

    it('an early exchange that timed out is ERR_TIMEOUT, naming earlyLaunchScript\'s timeoutMs', async () => {
      const [host, app] = windowPair();
      const timedOut = Promise.reject(new DOMException('signal timed out', 'TimeoutError'));
      const env = fakeEnvironment(SCRUBBED, { parent: host, self: app, earlyLaunch: { href: LAUNCH, backend: BACKEND, response: timedOut } });
      const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok-kit', 600_000))), { autoResize: false });
      await kit.started;
      expect([kit.state, kit.error?.code, kit.error?.message]).to.deep.equal([
        'error',
        'ERR_TIMEOUT',
        "The app backend did not answer the early exchange in time (earlyLaunchScript's timeoutMs)",
      ]);
    });

    it('createKit takes the early exchange\'s hand-over off the window', async () => {
      const key = Symbol.for(EARLY_LAUNCH_KEY);
      const handed: EarlyLaunch = { href: location.href, backend: 'https://elsewhere.example/api', response: Promise.resolve(new Response(null, { status: 204 })) };
      Object.defineProperty(window, key, { value: handed, configurable: true });
      try {
        const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
        const kit = await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch });
        kits.push(kit);
        expect(key in window).to.equal(false);
      } finally {
        // Left there by a regression, it would be taken by the next test's kit.
        delete (window as unknown as Record<symbol, unknown>)[key];
      }
    });

    it('destroying a kit that a newer one replaced leaves the newer one registered', async () => {
      const options = { backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch: scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000))) };
      await consoleCalls('warn', async () => {
        const first = await createKit(options);
        const second = await createKit(options);
        kits.push(first, second);
        first.destroy();
        expect(getKit() === second).to.equal(true);
      });
    });

    it('onKitsChanged hears of created and destroyed kits until its stop function is called', async () => {
      getKit()?.destroy(); // one left by an earlier test is not this test's to hear of
      let heard = 0;
      const stop = onKitsChanged(() => heard++);
      const fetch = scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000)));
      const kit = await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch });
      kit.destroy();
      expect(heard).to.equal(2);
      stop();
      const later = await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch });
      later.destroy();
      expect(heard).to.equal(2);
    });
  });
});

describe('kit: what the coverage report found unreached', () => {
  it('a 401 for a token a renewal has replaced meanwhile retries with the new token, without renewing again', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
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

  it('a browser without ResizeObserver: no automatic resizing, but the bridge opens and host.resize() works', async () => {
    const heights: number[] = [];
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const { kit, env, spied } = embedded(backend(state), { resize: ({ height }) => void heights.push(height), setTitle: () => undefined });
    env.observeHeight = () => {
      throw new ReferenceError('ResizeObserver is not defined');
    };
    await kit.started;
    await until(() => spied.added === 1);
    await kit.host!.setTitle('Reports');
    await kit.host!.resize(321);
    expect(heights).to.deep.equal([321]);
    expect(kit.state).to.equal('ready');
  });

  describe('the real browser environment (browserEnvironment)', () => {
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));

    it('reports the document\'s height as it changes, and nothing more once stopped', async () => {
      const env = browserEnvironment();
      const filler = document.createElement('div');
      document.body.append(filler);
      const heights: number[] = [];
      const stop = env.observeHeight((height) => heights.push(height));
      try {
        filler.style.height = '4321px';
        await until(() => heights.includes(env.measureHeight()));
        expect(env.measureHeight()).to.be.at.least(4321);
        stop();
        const seen = heights.length;
        filler.style.height = '6543px';
        await frame();
        await tick(20);
        expect(heights.length).to.equal(seen, 'no height after stop()');
      } finally {
        stop();
        filler.remove();
      }
    });

    it('reports the page being shown again (visibilitychange), and nothing more once stopped', () => {
      const env = browserEnvironment();
      let calls = 0;
      const stop = env.observeWake(() => calls++);
      try {
        document.dispatchEvent(new Event('visibilitychange'));
        expect(calls).to.equal(1);
        stop();
        document.dispatchEvent(new Event('visibilitychange'));
        expect(calls).to.equal(1, 'none after stop()');
      } finally {
        stop();
      }
    });

    it('scrubs the URL without touching history.state, which a router of the app may keep there', () => {
      const env = browserEnvironment();
      const original = location.href;
      const state = history.state as unknown;
      try {
        history.replaceState({ route: 'reports' }, '', original);
        env.replaceUrl(`${location.pathname}?scrubbed=1`);
        expect(location.search).to.equal('?scrubbed=1');
        expect(history.state).to.deep.equal({ route: 'reports' });
      } finally {
        history.replaceState(state, '', original);
      }
    });
  });
});

describe('kit: what a third mutation run found unchecked', () => {
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
      await tick(50);
      expect(contexts()).to.equal(0, `browser ${lead} ms ahead: not renewed half a second early`);
      clock += 500;
      await kit.fetch('/api/b');
      await until(() => exchanges === 2);
      expect(contexts()).to.equal(1, `browser ${lead} ms ahead: renewed when due`);
    }
  });

  it('a token is spent at its expires_at to the millisecond: a call then waits for the renewal and goes with the new token', async () => {
    let clock = Math.floor(Date.now() / 1000) * 1000; // stands still; a whole second, as expires_at is
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => clock };
    const { kit, env, fetch } = embedded((call) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true })));
    env.now = () => clock;
    await kit.started;
    clock += 600_000;
    expect((await kit.fetch('/api/a')).status).to.equal(200);
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/a')).map((c) => c.authorization)).to.deep.equal(['Bearer tok-2']);
  });

  it('a 401 for a replaced token that comes back after the new token has expired too renews again', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0, now: () => env.now() };
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

  it('a destroyed kit whose start-up failed on the developer\'s site: kit.fetch reads no session and sends nothing', async () => {
    const fetch = scriptedFetch(() => new Response('<h1>Bad gateway</h1>', { status: 502 }));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    expect(kit.state).to.equal('error');
    kit.destroy();
    expect((await rejection(kit.fetch('/api/a'))).code).to.equal('ERR_SESSION_MISSING');
    expect(fetch.calls.map((c) => c.url)).to.deep.equal([`${BACKEND}/session`]);
  });

  it('kit.fetch sends a request\'s body again when it retries after a 401', async () => {
    const state = { entitlement: ENTITLEMENT, lifetimeMs: 600_000, exchanges: 0 };
    const { kit, fetch } = embedded((call) =>
      call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({}, call.authorization === 'Bearer tok-1' ? 401 : 200),
    );
    await kit.started;
    const response = await kit.fetch('/api/save', { method: 'POST', body: '{"title":"Q3"}', headers: { 'content-type': 'application/json' } });
    expect(response.status).to.equal(200);
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/save')).map((c) => [c.authorization, c.body])).to.deep.equal([
      ['Bearer tok-1', '{"title":"Q3"}'],
      ['Bearer tok-2', '{"title":"Q3"}'],
    ]);
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

  it('keeps one timer for the entitlement\'s end however often the kit changes, and none after destroy()', async () => {
    const hour = 3_600_000;
    const ending = { ...ENTITLEMENT, expires_at: new Date(Date.now() + hour).toISOString() };
    const pending = new Map<number, number>();
    const setTimer = window.setTimeout;
    const clearTimer = window.clearTimeout;
    window.setTimeout = ((handler: TimerHandler, ms?: number, ...args: unknown[]) => {
      const id = setTimer(handler, ms, ...args);
      if (ms && ms > hour / 2) pending.set(id, ms);
      return id;
    }) as typeof window.setTimeout;
    window.clearTimeout = ((id?: number) => {
      if (id !== undefined) pending.delete(id);
      clearTimer(id);
    }) as typeof window.clearTimeout;
    let entitlement = ending;
    const env = fakeEnvironment(`${APP_ORIGIN}/`);
    const counts: number[] = [];
    try {
      const kit = start(env, scriptedFetch(() => jsonResponse(sessionBody('tok', 600_000, entitlement))));
      await kit.started;
      counts.push(pending.size);
      env.changePreferences({ defaultTheme: 'dark' });
      entitlement = { ...ending, features: ['reports', 'export'] };
      await kit.refresh();
      await kit.refresh();
      counts.push(pending.size);
      kit.destroy();
      counts.push(pending.size);
    } finally {
      window.setTimeout = setTimer;
      window.clearTimeout = clearTimer;
    }
    expect(counts).to.deep.equal([1, 1, 0]);
  });
});
