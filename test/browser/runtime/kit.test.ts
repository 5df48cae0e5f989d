// The kit as a whole (src/runtime/kit.ts, the facade over its parts): start-up's typed errors,
// registration on the page, destroy(), and work that a sign-out or destroy() overtakes.
import { expect } from '@open-wc/testing';
import { createKit, getKit, KIT_CREATED_EVENT, KIT_DESTROYED_EVENT, type Kit } from '../../../src/runtime/index.js';
import { onKitsChanged } from '../../../src/runtime/registry.js';
import { EARLY_LAUNCH_KEY, type EarlyLaunch } from '../../../src/shared/early-launch.js';
import { APP_ORIGIN, HOST_ORIGIN, USER, consoleCalls, fakeEnvironment, gate, jsonResponse, rejection, scriptedFetch, sessionBody, settled, until, windowPair } from '../../support/runtime-fakes.js';
import { BACKEND, LAUNCH, backend, carriesCookie, cleanUp, cookieSession, dashboardEnd, embedded, freshState, spyListeners, start } from '../../support/runtime-kit.js';

describe('start-up', () => {
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
      expect([kit.state, kit.error?.code, kit.error?.status], code).to.deep.equal(['error', code, status]);
    }
  });

  it('names the backend URL and the likely mistake in its messages: a wrong path, a backend on another origin', async () => {
    const failing = async (answer: () => Promise<Response>, backendUrl: string) => {
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(answer), { backend: backendUrl });
      await kit.started;
      return kit.error?.message;
    };
    expect(await failing(async () => new Response('<h1>Not Found</h1>', { status: 404 }), '/api/marketplce')).to.equal(
      `The app backend answered 404 at ${APP_ORIGIN}/api/marketplce/session: is createAppBackend's handler mounted there (createKit's backend, its basePath)?`,
    );
    expect(await failing(async () => new Response('<h1>Bad gateway</h1>', { status: 502 }), '/api/marketplace')).to.equal(`The app backend answered 502 at ${BACKEND}/session`, 'the mounting hint is for a 404 only');
    // A dev server with no proxy to the backend answers with its own index.html.
    const page = () => new Response('<!doctype html><title>App</title>', { headers: { 'content-type': 'text/html; charset=utf-8' } });
    expect(await failing(async () => page(), '/api/marketplace')).to.equal(
      `The app backend answered 200 at ${BACKEND}/session with text/html, not JSON: is that the app backend (does the dev server forward it)?`,
    );
    expect(await failing(async () => new Response('{"session":', { headers: { 'content-type': 'application/json; charset=utf-8' } }), '/api/marketplace')).to.equal(
      `The app backend answered 200 at ${BACKEND}/session with a body that is not valid JSON`,
    );
    expect(await failing(async () => new Response(new TextEncoder().encode('hello').buffer), '/api/marketplace')).to.match(/ with no content type, not JSON: /);
    expect(await failing(async () => new Response('{"session":{}}', { headers: { 'content-type': 'application/json' } }), '/api/marketplace')).to.match(
      new RegExp(`^Invalid session response from ${BACKEND}/session at `),
    );
    expect(await failing(() => Promise.reject(new TypeError('Failed to fetch')), '/api/marketplace')).to.equal(`The app backend at ${APP_ORIGIN}/api/marketplace could not be reached`);
    expect(await failing(() => Promise.reject(new TypeError('Failed to fetch')), 'https://api.example/api/marketplace')).to.match(
      /^The app backend at https:\/\/api\.example\/api\/marketplace could not be reached: .*another origin .*corsOrigins/,
    );
  });

  it('times out a backend that never answers, also when a custom fetch ignores the abort signal', async () => {
    const deaf: typeof globalThis.fetch = () => new Promise(() => undefined);
    // Answers only by rejecting when the kit's timeout aborts the request.
    const hanging: typeof globalThis.fetch = (_input, init) => new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
    for (const fetch of [deaf, hanging]) {
      const env = fakeEnvironment(`${APP_ORIGIN}/`);
      const kit = start(env, fetch, { timeoutMs: 50 });
      env.advance(50);
      await kit.started;
      expect([kit.state, kit.error?.code, kit.error?.message]).to.deep.equal(['error', 'ERR_TIMEOUT', 'The app backend did not answer within 50 ms']);
    }
  });

  it('times out a body that stalls after its headers, even when a custom fetch ignores the abort signal; refresh() works again after', async () => {
    // A proxy stuck mid-answer: the headers arrive, then a few bytes, then nothing.
    const stalled = () =>
      new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('{"session":{"tok')) }), { headers: { 'content-type': 'application/json' } });
    let stalledBody: Response | undefined;
    const stalling = () => (stalledBody = stalled());
    const answers = [stalling, () => cookieSession(), stalling, () => cookieSession()];
    const env = fakeEnvironment(`${APP_ORIGIN}/`);
    const runOutOnceStalled = async () => {
      await until(() => stalledBody?.bodyUsed === true);
      stalledBody = undefined;
      env.advance(50);
    };
    const kit = start(env, async () => answers.shift()!(), { timeoutMs: 50 });
    await runOutOnceStalled();
    await kit.started;
    expect([kit.state, kit.error?.code, kit.error?.message]).to.deep.equal(['error', 'ERR_TIMEOUT', 'The app backend did not answer within 50 ms']);
    await kit.refresh();
    expect(kit.state).to.equal('ready');
    const failed = rejection(kit.refresh());
    await runOutOnceStalled();
    expect((await failed).code).to.equal('ERR_TIMEOUT');
    await kit.refresh();
    expect([kit.state, answers.length]).to.deep.equal(['ready', 0]);
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
});

describe('registration on the page', () => {
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
    const fetch = scriptedFetch(() => cookieSession());
    const options = { backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch };
    getKit()?.destroy(); // a kit left over by another test would count as running
    const warnings = await consoleCalls('warn', async () => {
      const first = await createKit(options);
      const second = await createKit(options);
      cleanUp(first);
      cleanUp(second);
      expect(getKit() === second).to.equal(true);
      second.destroy();
      first.destroy();
      cleanUp(await createKit(options));
    });
    expect(warnings).to.have.length(1);
    expect(String(warnings[0]?.[0])).to.contain('ERR_KIT_REPLACED: createKit() replaced a running kit');
  });

  it('destroying a kit that a newer one replaced leaves the newer one registered', async () => {
    const options = { backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch: scriptedFetch(() => cookieSession()) };
    await consoleCalls('warn', async () => {
      const first = await createKit(options);
      const second = await createKit(options);
      cleanUp(first);
      cleanUp(second);
      first.destroy();
      expect(getKit() === second).to.equal(true);
    });
  });

  it('onKitsChanged hears of created and destroyed kits until its stop function is called', async () => {
    getKit()?.destroy(); // one left by an earlier test is not this test's to hear of
    let heard = 0;
    const stop = onKitsChanged(() => heard++);
    const fetch = scriptedFetch(() => cookieSession());
    const kit = await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch });
    kit.destroy();
    expect(heard).to.equal(2);
    stop();
    const later = await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch });
    later.destroy();
    expect(heard).to.equal(2);
  });

  it('createKit takes the early exchange\'s hand-over off the window', async () => {
    const key = Symbol.for(EARLY_LAUNCH_KEY);
    const handed: EarlyLaunch = { href: location.href, backend: 'https://elsewhere.example/api', response: Promise.resolve(new Response(null, { status: 204 })) };
    Object.defineProperty(window, key, { value: handed, configurable: true });
    try {
      cleanUp(await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch: scriptedFetch(() => cookieSession()) }));
      expect(key in window).to.equal(false);
    } finally {
      // Left there by a regression, it would be taken by the next test's kit.
      delete (window as unknown as Record<symbol, unknown>)[key];
    }
  });
});

describe('destroy', () => {
  it('during start-up opens no bridge, observes nothing, keeps no session and notifies nobody', async () => {
    const [host, app] = windowPair();
    const spied = spyListeners(app);
    const heights: number[] = [];
    const hostSide = dashboardEnd(host, app, { getContext: () => ({ context: 'ctx' }), resize: ({ height }) => void heights.push(height) }, 200);
    const env = fakeEnvironment(LAUNCH, { parent: host, self: spied.window });
    const fetch = scriptedFetch(backend(freshState()));
    const kit = start(env, fetch);
    let changes = 0;
    kit.addEventListener('change', () => changes++);
    kit.destroy(); // as an mp-kit-created listener may, before start-up goes on
    await kit.started;
    env.resizeTo(700);
    expect([spied.added, spied.listening.size]).to.deep.equal([0, 0], 'no message listener ever');
    expect((await rejection(hostSide.call('themeChanged', { theme: 'light' }))).code).to.equal('ERR_BRIDGE_TIMEOUT');
    expect([heights, changes, env.pending()]).to.deep.equal([[], 0, []]);
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect(fetch.calls).to.have.length(1, 'only the exchange that had already left');
  });

  it('after start-up closes the bridge; then host is null, upgrade is ERR_NOT_EMBEDDED and nothing changes', async () => {
    const state = freshState();
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
    const kit = await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch: scriptedFetch(() => cookieSession()) });
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
    const fetch = scriptedFetch(() => cookieSession());
    const kit = await createKit({ backend: '/api/marketplace', hostOrigins: [HOST_ORIGIN], fetch });
    let changes = 0;
    kit.subscribe(() => changes++);
    expect([getKit(), kit.state, kit.user]).to.deep.equal([null, 'loading', null]);
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect(changes).to.equal(0);
    expect(fetch.calls).to.have.length(1);
  });

  it('on your own site: refresh() and kit.fetch read no session afterwards, also after a failed start-up', async () => {
    for (const answer of [() => cookieSession(), () => new Response('<h1>Bad gateway</h1>', { status: 502 })]) {
      const fetch = scriptedFetch(answer);
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
      await kit.started;
      kit.destroy();
      expect((await rejection(kit.refresh())).code).to.equal('ERR_SESSION_MISSING');
      expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
      expect(fetch.calls.map((c) => c.url)).to.deep.equal([`${BACKEND}/session`], 'nothing was sent after destroy()');
    }
  });
});

describe('sign-out and destroy while session work is under way', () => {
  const work = { fetch: (kit: Kit) => kit.fetch('/api/data'), refresh: (kit: Kit) => kit.refresh() };
  const end = { signOut: (kit: Kit) => kit.signOut(), destroy: (kit: Kit) => kit.destroy() };
  const after = { signOut: 'signed-out', destroy: 'ready' }; // a destroyed kit changes no more

  for (const ending of ['signOut', 'destroy'] as const) {
    it(`${ending} on your own site: a reading after a 401, or a refresh, answering later is dropped with ERR_SESSION_MISSING`, async () => {
      for (const doing of ['fetch', 'refresh'] as const) {
        const answer = gate();
        let reads = 0;
        let refused = false;
        const fetch = scriptedFetch(async (call) => {
          if (call.method === 'DELETE') return new Response(null, { status: 204 });
          if (call.url.includes('/session')) {
            if (++reads > 1) await answer.promise;
            return cookieSession();
          }
          // The first request is refused once; whatever is sent after the session was read again succeeds.
          return jsonResponse({}, !refused && carriesCookie(call) ? ((refused = true), 401) : 200);
        });
        const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
        await kit.started;
        const outcome = rejection(work[doing](kit));
        await until(() => reads === 2);
        await end[ending](kit);
        answer.open();
        expect((await outcome).code, doing).to.equal('ERR_SESSION_MISSING');
        expect(kit.state, doing).to.equal(after[ending]);
        expect(fetch.calls.filter((c) => c.url.endsWith('/api/data')).length, doing).to.equal(doing === 'fetch' ? 1 : 0, 'not sent again');
        expect((await rejection(kit.fetch('/api/later'))).code, doing).to.equal('ERR_SESSION_MISSING');
      }
    });

    it(`${ending} inside the dashboard: a renewal or refresh answering later is dropped with ERR_SESSION_MISSING`, async () => {
      for (const doing of ['fetch', 'refresh'] as const) {
        const state = freshState(() => env.now());
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
        await settled();
      }
    });
  }
});
