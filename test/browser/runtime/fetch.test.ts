// kit.fetch (src/runtime/fetch.ts) inside the dashboard: the bearer goes to the backend's origin
// and bearerOrigins only; your API's answers come back as they are; a signal ends the wait.
import { expect } from '@open-wc/testing';
import { APP_ORIGIN, fakeEnvironment, gate, jsonResponse, rejection, scriptedFetch, sessionBody, type FetchCall } from '../../support/runtime-fakes.js';
import { BACKEND, backend, embedded, freshState, start, type BackendState } from '../../support/runtime-kit.js';

/** The session routes as `backend()` answers them, and `{ok: true}` from your API. */
const route = (state: BackendState) => (call: FetchCall) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({ ok: true }));

describe('kit.fetch inside the dashboard', () => {
  it('adds the bearer for the backend\'s origin only', async () => {
    const { kit, fetch } = embedded(route(freshState()));
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

  it('sends no bearer to an origin that only starts like the backend\'s', async () => {
    const { kit, fetch } = embedded(route(freshState()));
    await kit.started;
    await kit.fetch(`${APP_ORIGIN}.evil.example/steal`);
    await kit.fetch(`${APP_ORIGIN}:8443/other-port`);
    expect(fetch.calls.slice(1).map((c) => c.authorization)).to.deep.equal([null, null]);
  });

  it('keeps the bearer from the page\'s origin when the backend is elsewhere, unless bearerOrigins lists it', async () => {
    const api = 'https://api.example';
    const apart = embedded(route(freshState()), {}, { backend: `${api}/api/marketplace` });
    await apart.kit.started;
    await apart.kit.fetch('/api/data');
    await apart.kit.fetch(`${api}/api/reports`);
    expect(apart.fetch.calls.slice(1).map((c) => [c.url, c.authorization])).to.deep.equal([
      [`${APP_ORIGIN}/api/data`, null],
      [`${api}/api/reports`, 'Bearer tok-1'],
    ]);

    const listed = embedded(route(freshState()), {}, { backend: `${api}/api/marketplace`, bearerOrigins: [APP_ORIGIN] });
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

  it('gives your API\'s answers as they are: an error status resolves, a network failure is fetch\'s TypeError', async () => {
    const state = freshState();
    const offline = new TypeError('Failed to fetch');
    const { kit } = embedded((call) =>
      call.url.endsWith('/session') ? backend(state)(call) : call.url.endsWith('/down') ? Promise.reject(offline) : new Response('<h1>Oops</h1>', { status: 500 }),
    );
    await kit.started;
    expect((await kit.fetch('/api/broken')).status).to.equal(500);
    expect(await kit.fetch('/api/down').then(() => 'resolved', (error: unknown) => error)).to.equal(offline);
    expect(kit.state).to.equal('ready');
  });

  it('hands back 403, 429 and 5xx answers as they are: no renewal, no retry', async () => {
    const state = freshState();
    const { kit, fetch, contexts } = embedded((call) =>
      call.url.endsWith('/session') ? backend(state)(call) : new Response('<h1>no</h1>', { status: Number(new URL(call.url).searchParams.get('status')) }),
    );
    await kit.started;
    for (const status of [403, 429, 500, 503]) expect((await kit.fetch(`/api/data?status=${status}`)).status).to.equal(status);
    expect(contexts()).to.equal(0);
    expect(fetch.calls.filter((c) => c.url.includes('/api/data'))).to.have.length(4);
    expect(kit.state).to.equal('ready');
  });

  it('sends a request\'s body again when it retries after a 401', async () => {
    const state = freshState();
    const { kit, fetch } = embedded((call) => (call.url.endsWith('/session') ? backend(state)(call) : jsonResponse({}, call.authorization === 'Bearer tok-1' ? 401 : 200)));
    await kit.started;
    const response = await kit.fetch('/api/save', { method: 'POST', body: '{"title":"Q3"}', headers: { 'content-type': 'application/json' } });
    expect(response.status).to.equal(200);
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/save')).map((c) => [c.authorization, c.body])).to.deep.equal([
      ['Bearer tok-1', '{"title":"Q3"}'],
      ['Bearer tok-2', '{"title":"Q3"}'],
    ]);
  });

  it('gives up waiting for a renewal when its signal aborts, without waiting for the dashboard', async () => {
    const never = new Promise<{ context: string }>(() => undefined);
    const { kit, env } = embedded(backend(freshState()), { getContext: () => never });
    await kit.started;
    env.advance(700_000); // the session has expired: kit.fetch must renew first
    const controller = new AbortController();
    const pending = kit.fetch('/api/data', { signal: controller.signal }).then(() => null, (reason: unknown) => reason);
    controller.abort();
    const error = await pending;
    expect(error).to.be.instanceOf(DOMException);
    expect((error as DOMException).name).to.equal('AbortError');
  });

  it('a signal that aborts while start-up runs, or was aborted already, ends kit.fetch at once and sends nothing', async () => {
    const answer = gate();
    const fetch = scriptedFetch(async (call) => (call.url.endsWith('/session') ? (await answer.promise, jsonResponse(sessionBody('tok', 600_000))) : jsonResponse({ ok: true })));
    const kit = start(fakeEnvironment(`${APP_ORIGIN}/`), fetch);
    const controller = new AbortController();
    const pending = kit.fetch('/api/during', { signal: controller.signal }).then(() => 'sent', (error: unknown) => (error as DOMException).name);
    controller.abort();
    expect(await pending).to.equal('AbortError');
    answer.open();
    await kit.started;
    const aborted = await kit.fetch('/api/after', { signal: AbortSignal.abort() }).then(() => 'sent', (error: unknown) => (error as DOMException).name);
    expect(aborted).to.equal('AbortError');
    expect(fetch.calls.map((c) => c.url)).to.deep.equal([`${BACKEND}/session`]);
  });

  it('refuses with ERR_SESSION_MISSING once the kit is destroyed, and sends nothing', async () => {
    const { kit, fetch } = embedded(route(freshState()));
    await kit.started;
    kit.destroy();
    expect((await rejection(kit.fetch('/api/data'))).code).to.equal('ERR_SESSION_MISSING');
    expect(fetch.calls.filter((c) => c.url.endsWith('/api/data'))).to.deep.equal([]);
  });
});
