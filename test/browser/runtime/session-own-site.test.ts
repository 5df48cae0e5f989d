// The session on the developer's own site (src/runtime/session-own-site.ts): the backend's HttpOnly
// cookie is the credential. The kit reads GET {backend}/session (no token in it), kit.fetch sends
// the cookie to the backend's origin and never a bearer, and a 401 re-reads the session once.
import { expect } from '@open-wc/testing';
import { MarketplaceKitError } from '../../../src/shared/errors.js';
import { APP_ORIGIN, ENTITLEMENT, USER, consoleCalls, fakeEnvironment, gate, jsonResponse, rejection, scriptedFetch, sessionBody, settled, type FetchCall } from '../../support/runtime-fakes.js';
import { BACKEND, LAUNCH, PRO, carriesCookie, cookieSession, noSessionAnswer, start } from '../../support/runtime-kit.js';

/**
 * A backend and an app API behind one cookie: `cookie.valid` says whether the browser holds a
 * session cookie; the API answers 401 to a request without it, or when `cookie.apiRefuses`.
 */
function cookieSite(cookie = { valid: true, apiRefuses: false }) {
  const fetch = scriptedFetch((call) => {
    if (call.url.startsWith(`${BACKEND}/session`)) {
      if (call.method === 'DELETE') return (cookie.valid = false), new Response(null, { status: 204 });
      return carriesCookie(call) && cookie.valid ? cookieSession() : noSessionAnswer();
    }
    return carriesCookie(call) && cookie.valid && !cookie.apiRefuses ? jsonResponse({ ok: true }) : jsonResponse({}, 401);
  });
  return { fetch, cookie };
}

const sent = (calls: FetchCall[]) => calls.map((c) => [c.method, c.url.replace(APP_ORIGIN, ''), c.authorization]);

describe('the session on your own site', () => {
  it('reads the cookie session with one request and becomes ready, with no token anywhere', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account`);
    const { fetch } = cookieSite();
    const kit = start(env, fetch);
    expect(kit.state).to.equal('loading');
    await kit.started;
    expect([kit.state, kit.embedded, kit.host]).to.deep.equal(['ready', false, null]);
    expect(kit.user).to.deep.equal(USER);
    expect(kit.entitlement).to.deep.equal(ENTITLEMENT);
    expect(fetch.calls).to.have.length(1);
    expect(fetch.calls[0]).to.include({ method: 'GET', url: `${BACKEND}/session`, credentials: 'include', authorization: null });
    expect(env.replaced).to.deep.equal([], 'a URL without mp_* is left alone');
  });

  it('never keeps or sends a token an older backend still answers the cookie with', async () => {
    const fetch = scriptedFetch((call) => (call.url.includes('/session') ? jsonResponse(sessionBody('tok-leaked', 600_000)) : jsonResponse({ ok: true })));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    await kit.fetch('/api/notes');
    await kit.refresh();
    await kit.signOut();
    expect(fetch.calls.map((c) => c.authorization)).to.deep.equal([null, null, null, null]);
  });

  it('kit.fetch sends the cookie to the backend\'s origin, and a request elsewhere as fetch would', async () => {
    const { fetch } = cookieSite();
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch, { bearerOrigins: ['https://api.example'] });
    await kit.started;
    expect((await kit.fetch('/api/notes', { method: 'POST', body: 'x' })).status).to.equal(200);
    await kit.fetch('https://api.example/reports');
    await kit.fetch('https://third-party.example/pixel');
    expect(fetch.calls.slice(1).map((c) => [c.url, c.authorization, c.credentials, c.body])).to.deep.equal([
      [`${APP_ORIGIN}/api/notes`, null, 'same-origin', 'x'],
      // The cookie belongs to the backend's origin: bearerOrigins name where a bearer goes inside the dashboard.
      ['https://api.example/reports', null, 'same-origin', null],
      ['https://third-party.example/pixel', null, 'same-origin', null],
    ]);
  });

  it('kit.fetch to a backend on another origin of the site sends the cookie with credentials: include', async () => {
    const api = 'https://api.app.example';
    const fetch = scriptedFetch((call) => (call.url.endsWith('/session') ? cookieSession() : jsonResponse({ ok: true })));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch, { backend: `${api}/api/marketplace` });
    await kit.started;
    await kit.fetch(`${api}/api/notes`);
    await kit.fetch('/api/local');
    expect(fetch.calls.map((c) => [c.url, c.credentials])).to.deep.equal([
      [`${api}/api/marketplace/session`, 'include'],
      [`${api}/api/notes`, 'include'],
      [`${APP_ORIGIN}/api/local`, 'same-origin'],
    ]);
  });

  it('follows the browser\'s color scheme and language live, and stops with destroy()', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account`);
    const kit = start(env, cookieSite().fetch);
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

  it('has the browser\'s color scheme and language from the start', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/`);
    Object.assign(env, { defaultTheme: 'dark', defaultLocale: 'fr-FR' });
    const kit = start(env, cookieSite().fetch);
    expect([kit.state, kit.theme, kit.locale]).to.deep.equal(['loading', 'dark', 'fr-FR']);
    await kit.started;
    expect([kit.state, kit.theme, kit.locale]).to.deep.equal(['ready', 'dark', 'fr-FR']);
  });

  it('is signed out on a 401 whatever its body, and kit.fetch then refuses with ERR_SESSION_MISSING; a 403 is an error', async () => {
    const html401 = new Response('<h1>401 Authorization Required</h1>', { status: 401, headers: { 'content-type': 'text/html' } });
    for (const answer of [noSessionAnswer(), html401]) {
      const fetch = scriptedFetch(() => answer.clone());
      const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
      await kit.started;
      expect([kit.state, kit.error]).to.deep.equal(['signed-out', null]);
      expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
      expect(fetch.calls).to.have.length(1);
    }
    const forbidden = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch(() => jsonResponse({ error: { code: 'ERR_FORBIDDEN', message: 'not for you' } }, 403)));
    await forbidden.started;
    expect([forbidden.state, forbidden.error?.code]).to.deep.equal(['error', 'ERR_FORBIDDEN']);
  });

  it('is signed out with ERR_OAUTH after a denied sign-in, and removes mp_oauth_error from the URL', async () => {
    const fetch = scriptedFetch(() => noSessionAnswer());
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

  it('on a 401 from your API reads the session once more: a valid cookie retries, a gone one signs out', async () => {
    const { fetch, cookie } = cookieSite();
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    expect((await kit.fetch('/api/a')).status).to.equal(200);
    // The API refuses the cookie although the backend still reads it: the session is read once
    // more, the request sent once more, and its second 401 returned as it is.
    cookie.apiRefuses = true;
    expect((await kit.fetch('/api/b')).status).to.equal(401);
    cookie.apiRefuses = false;
    expect(sent(fetch.calls.slice(2))).to.deep.equal([
      ['GET', '/api/b', null],
      ['GET', '/api/marketplace/session', null],
      ['GET', '/api/b', null],
    ]);
    cookie.valid = false; // signed out elsewhere
    const error = await rejection(kit.fetch('/api/c'));
    expect([error.code, error.status, kit.state]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 401, 'signed-out']);
    expect(sent(fetch.calls.slice(5))).to.deep.equal([
      ['GET', '/api/c', null],
      ['GET', '/api/marketplace/session', null],
    ]);
  });

  it('a network error while reading the session again after a 401 is state error, and the next call tries again', async () => {
    let online = true;
    let refusals = 1;
    const fetch = scriptedFetch((call) => {
      if (call.url.endsWith('/session')) return online ? cookieSession() : Promise.reject(new TypeError('Failed to fetch'));
      return jsonResponse({}, refusals-- > 0 ? 401 : 200);
    });
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    online = false;
    const error = await rejection(kit.fetch('/api/a'));
    expect(error.code).to.equal('ERR_SESSION_REFRESH_FAILED');
    expect((error.cause as MarketplaceKitError).code).to.equal('ERR_NETWORK');
    expect([kit.state, kit.error]).to.deep.equal(['error', error]);
    online = true;
    refusals = 1;
    expect((await kit.fetch('/api/b')).status).to.equal(200);
    expect([kit.state, kit.error]).to.deep.equal(['ready', null]);
    expect(sent(fetch.calls.slice(-3))).to.deep.equal([
      ['GET', '/api/b', null],
      ['GET', '/api/marketplace/session', null],
      ['GET', '/api/b', null],
    ]);
  });

  it('kit.fetch after a failed start-up reads the cookie session again', async () => {
    let reads = 0;
    const fetch = scriptedFetch((call) => {
      if (call.url.endsWith('/session')) return ++reads === 1 ? new Response('<html>Bad gateway</html>', { status: 503, headers: { 'content-type': 'text/html' } }) : cookieSession();
      return jsonResponse({ ok: carriesCookie(call) });
    });
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    expect([kit.state, kit.error?.code]).to.deep.equal(['error', 'ERR_HTTP']);
    expect(await (await kit.fetch('/api/data')).json()).to.deep.equal({ ok: true });
    expect([kit.state, reads]).to.deep.equal(['ready', 2]);
  });

  it('an error that changes only its message notifies too, and a failed reading says why in its message', async () => {
    const answers = [
      () => new Response('<h1>Service unavailable</h1>', { status: 503 }),
      () => Promise.reject(new TypeError('Failed to fetch')),
      () => new Response('<h1>Bad gateway</h1>', { status: 502 }),
    ];
    let reads = 0;
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), scriptedFetch((call) => (call.url.endsWith('/session') ? answers[reads++]!() : jsonResponse({ ok: true }))));
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

  it('refresh() reads GET /session?refresh=1 with the cookie alone; a 401 then signs out', async () => {
    const { fetch, cookie } = cookieSite();
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    await kit.refresh();
    expect(fetch.calls.at(-1)).to.include({ method: 'GET', url: `${BACKEND}/session?refresh=1`, credentials: 'include', authorization: null });
    cookie.valid = false;
    await kit.refresh();
    expect([kit.state, kit.user]).to.deep.equal(['signed-out', null]);
  });

  it('concurrent refreshes share requests: one running, at most one more queued', async () => {
    const { fetch } = cookieSite();
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    await Promise.all([kit.refresh(), kit.refresh(), kit.refresh(), kit.refresh()]);
    expect(fetch.calls.filter((c) => c.url.endsWith('?refresh=1'))).to.have.length(2);
  });

  it('a refresh queued behind one that fails still runs, and one asked for after the queue emptied sends again', async () => {
    let entitlement = ENTITLEMENT;
    let reloads = 0;
    const held = gate();
    const fetch = scriptedFetch(async (call) => {
      if (call.url.endsWith('?refresh=1') && ++reloads === 1) {
        await held.promise;
        return new Response('<h1>Bad gateway</h1>', { status: 502 });
      }
      return cookieSession(600_000, entitlement);
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

  it('a 429 with Retry-After pauses readings; a refresh() that reads the session again ends the pause', async () => {
    let busy = false;
    let refusals = 0;
    const reads: string[] = [];
    const fetch = scriptedFetch((call) => {
      if (call.url.includes('/api/marketplace/session')) {
        reads.push(call.url.slice(call.url.indexOf('/session')));
        if (busy) return new Response(JSON.stringify({ error: { code: 'ERR_RATE_LIMITED', message: 'busy' } }), { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '60' } });
        return cookieSession();
      }
      return jsonResponse({}, refusals-- > 0 ? 401 : 200);
    });
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    busy = true;
    refusals = 1;
    const refused = await rejection(kit.fetch('/api/a'));
    expect([refused.code, refused.status, refused.retryAfterMs]).to.deep.equal(['ERR_SESSION_REFRESH_FAILED', 429, 60_000]);
    refusals = 1;
    expect(await rejection(kit.fetch('/api/a2'))).to.equal(refused, 'paused: the same error, without reading again');
    busy = false;
    await kit.refresh();
    expect([kit.state, kit.error]).to.deep.equal(['ready', null]);
    refusals = 1;
    expect((await kit.fetch('/api/b')).status).to.equal(200, 'read again at once: the backend has answered a session since the 429');
    expect(reads).to.deep.equal(['/session', '/session', '/session?refresh=1', '/session']);
  });

  it('signIn navigates to the backend\'s OAuth start with a return address; signOut forgets and deletes with the cookie', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account?tab=2`);
    const { fetch } = cookieSite();
    const kit = start(env, fetch);
    await kit.started;
    await kit.signIn();
    await kit.signIn('/welcome');
    expect(env.navigated).to.deep.equal([
      `${BACKEND}/oauth/start?return_to=${encodeURIComponent(`${APP_ORIGIN}/account?tab=2`)}`,
      `${BACKEND}/oauth/start?return_to=${encodeURIComponent(`${APP_ORIGIN}/welcome`)}`,
    ]);
    await kit.signOut();
    expect([kit.state, kit.user, kit.entitlement]).to.deep.equal(['signed-out', null, null]);
    expect(fetch.calls.at(-1)).to.include({ method: 'DELETE', url: `${BACKEND}/session`, credentials: 'include', authorization: null });
    expect((await rejection(kit.upgrade())).code).to.equal('ERR_NOT_EMBEDDED');
  });

  it('signIn resolves a relative return address against the page, not the backend on another origin', async () => {
    const env = fakeEnvironment('https://site.example/account?tab=1');
    const kit = start(env, scriptedFetch(() => noSessionAnswer()), { backend: 'https://api.example/api/marketplace' });
    await kit.started;
    await kit.signIn('/reports');
    await kit.signIn('../up?x=1');
    // No URL at all: sent as it is, for the backend to refuse (it returns to "/").
    await kit.signIn('http://[');
    expect(env.navigated.map((href) => new URL(href).searchParams.get('return_to'))).to.deep.equal(['https://site.example/reports', 'https://site.example/up?x=1', 'http://[']);
  });

  it('refresh() right after signOut() waits for the cookie to be deleted, and stays signed out', async () => {
    const deleted = gate();
    const { fetch, cookie } = cookieSite();
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), async (input, init) => {
      if (new Request(input, init).method === 'DELETE') await deleted.promise;
      return fetch(input, init);
    });
    await kit.started;
    const signingOut = kit.signOut();
    const refreshing = kit.refresh();
    await settled();
    expect(fetch.calls.map((c) => c.method)).to.deep.equal(['GET'], 'the refresh waits for the DELETE');
    deleted.open();
    await signingOut;
    await refreshing;
    expect([kit.state, kit.user, cookie.valid]).to.deep.equal(['signed-out', null, false]);
  });

  it('a sign-out the backend answers 401 (the session was already gone) succeeds', async () => {
    const fetch = scriptedFetch((call) => (call.method === 'DELETE' ? noSessionAnswer() : cookieSession()));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    await kit.started;
    await kit.signOut();
    expect(kit.state).to.equal('signed-out');
  });

  it('signOut() refused by the backend (not 401) rejects with ERR_HTTP and its status, and is signed out all the same', async () => {
    const fetch = scriptedFetch((call) => (call.method === 'DELETE' ? new Response('<h1>Forbidden</h1>', { status: 403 }) : cookieSession()));
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

  it('never loads the host bridge\'s code', async () => {
    const env = fakeEnvironment(`${APP_ORIGIN}/account`);
    const kit = start(env, cookieSite().fetch);
    await kit.started;
    await kit.fetch('/api/data');
    await kit.refresh();
    await settled();
    expect([kit.state, kit.host, env.hostLinkLoads]).to.deep.equal(['ready', null, 0]);
  });
});

describe('a launch the kit refuses', () => {
  it('launch parameters on a page that is not framed: no request, URL scrubbed, state error', async () => {
    const env = fakeEnvironment(LAUNCH);
    const fetch = scriptedFetch(() => cookieSession());
    let kit!: ReturnType<typeof start>;
    const logged = await consoleCalls('error', async () => {
      kit = start(env, fetch);
      await kit.started;
    });
    expect([kit.state, kit.error?.code, kit.embedded, fetch.calls.length]).to.deep.equal(['error', 'ERR_HOST_NOT_ALLOWED', false, 0]);
    expect(String(logged[0]?.[0])).to.match(/^\[marketplace-app-kit\] ERR_HOST_NOT_ALLOWED: /);
    expect(env.replaced).to.deep.equal(['https://app.example/embed?view=1']);
    // A retry (the gate's "Try again") stays refused: no cookie session is read in that frame.
    expect((await rejection(kit.refresh())).code).to.equal('ERR_HOST_NOT_ALLOWED');
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect(fetch.calls).to.have.length(0);
  });
});
