// The runtime inside a real dashboard: a host page on one loopback origin embeds the app page of
// another, with a real createAppBackend behind the app. One browser for the whole file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  BASIC,
  PRO,
  USER,
  clockPast,
  openDashboard,
  startRuntimeHarness,
  type AppWindow,
  type Dashboard,
  type HostWindow,
  type RuntimeHarness,
  tokenExpiry,
} from '../support/runtime-harness.js';

let harness: RuntimeHarness;
const open: Dashboard[] = [];

before(async () => {
  harness = await startRuntimeHarness();
});
after(async () => {
  for (const dashboard of open) await dashboard.close();
  await harness.close();
});

async function launch(options: Parameters<RuntimeHarness['launchUrl']>[0] = {}, behaviour: Parameters<typeof openDashboard>[2] = {}) {
  harness.entitlement = BASIC;
  harness.revokedTokens.clear();
  const dashboard = await openDashboard(harness, await harness.launchUrl(options), behaviour);
  open.push(dashboard);
  const state = await dashboard.app.evaluate(() => (window as unknown as AppWindow).kitDone);
  return { ...dashboard, state };
}

/** Polls `check` in the app frame until it returns true (a hang guard fails it otherwise). */
async function until(dashboard: Dashboard, check: () => boolean, what: string) {
  await dashboard.app.waitForFunction(check).catch(() => assert.fail(`timed out waiting for ${what}`));
}

describe('runtime launch inside the dashboard', () => {
  it('reads the context, scrubs the URL, exchanges it once and exposes user and entitlement', async () => {
    const before = harness.sessionRequests().length;
    const { app, state, calls } = await launch({ kit: { probe: 1 } });
    assert.equal(state, 'ready');
    const seen = await app.evaluate(() => {
      const { kit } = window as unknown as AppWindow;
      return {
        search: location.search,
        user: kit.user,
        plan: kit.entitlement?.plan,
        embedded: kit.embedded,
        theme: kit.theme,
        locale: kit.locale,
        dataset: document.documentElement.dataset['mpTheme'],
        localeAttribute: document.documentElement.dataset['mpLocale'],
        lang: document.documentElement.lang,
        reports: kit.has('reports'),
        exportFeature: kit.has('export'),
        basic: kit.hasPlan('basic'),
        access: kit.access({ feature: 'export' }),
        storage: localStorage.length + sessionStorage.length,
        cookie: document.cookie,
      };
    });
    assert.doesNotMatch(seen.search, /mp_/, 'every mp_* parameter is removed');
    assert.match(seen.search, /kit=/, 'other parameters stay');
    assert.deepEqual(seen.user, USER);
    assert.equal(seen.plan, 'basic');
    assert.equal(seen.embedded, true);
    assert.equal(seen.theme, 'dark');
    assert.equal(seen.locale, 'de-DE');
    assert.equal(seen.dataset, 'dark');
    assert.equal(seen.localeAttribute, 'de-DE');
    assert.equal(seen.lang, '', 'lang is the app\'s to set');
    assert.equal(seen.reports, true);
    assert.equal(seen.exportFeature, false);
    assert.equal(seen.basic, true);
    assert.deepEqual(seen.access, { granted: false, reason: 'feature' });
    assert.equal(seen.storage, 0, 'nothing in web storage');
    assert.equal(seen.cookie, '', 'no cookie');

    const exchanges = harness.sessionRequests().slice(before);
    assert.equal(exchanges.length, 1, 'start-up costs one request');
    assert.equal(exchanges[0]!.method, 'POST');
    assert.equal(exchanges[0]!.authorization, undefined);
    assert.ok((await calls()).every((call) => call.method !== 'getContext'), 'the launch token is used, not a new one');
  });

  it('with the early exchange script, the page sends the one start-up request and the kit adopts it', async () => {
    const before = harness.appRequests.length;
    const { app, state, calls } = await launch({ path: '/app?early=1&q=a%20b&flag' });
    assert.equal(state, 'ready');
    const seen = await app.evaluate(() => {
      const { kit } = window as unknown as AppWindow;
      return { search: location.search, user: kit.user, plan: kit.entitlement?.plan, theme: kit.theme, locale: kit.locale };
    });
    // The app's own parameters as written: not re-encoded (q=a+b&flag=).
    assert.deepEqual(seen, { search: '?early=1&q=a%20b&flag', user: USER, plan: 'basic', theme: 'dark', locale: 'de-DE' });
    const requests = harness.appRequests.slice(before).filter((request) => /\/session(\?|$)/.test(request.path));
    assert.deepEqual(
      requests.map((request) => [request.method, request.referer]),
      [['POST', undefined]],
      'one request, with no Referer',
    );
    assert.ok((await calls()).every((call) => call.method !== 'getContext'), 'the launch token is used, not a new one');
    const data = await app.evaluate(async () => (await (window as unknown as AppWindow).kit.fetch('/api/data')).status);
    assert.equal(data, 200, 'the adopted session works');
  });

  it('never lets the context token out as a Referer: the kit\'s backend requests carry none', async () => {
    const from = harness.appRequests.length;
    const { app, state } = await launch();
    assert.equal(state, 'ready');
    await app.evaluate(async () => {
      const { kit } = window as unknown as AppWindow;
      await kit.fetch('/api/data');
      await kit.refresh();
    });
    const requests = harness.appRequests.slice(from).filter((r) => r.path.startsWith('/api/'));
    assert.deepEqual(
      requests.map((r) => `${r.method} ${r.path}`),
      ['POST /api/marketplace/session', 'GET /api/data', 'GET /api/marketplace/session?refresh=1'],
    );
    for (const request of requests) assert.doesNotMatch(request.referer ?? '', /mp_/, `${request.method} ${request.path}`);
    assert.deepEqual(
      requests.filter((r) => r.path.startsWith('/api/marketplace/')).map((r) => r.referer),
      [undefined, undefined],
      'no-referrer on the kit\'s own requests',
    );
  });

  it('kit.fetch sends the bearer token to the app', async () => {
    const { app } = await launch();
    const answer = await app.evaluate(async () => {
      const response = await (window as unknown as AppWindow).kit.fetch('/api/data');
      return { status: response.status, body: (await response.json()) as unknown };
    });
    assert.deepEqual(answer, { status: 200, body: { user: USER.id } });
    const sent = harness.appRequests.filter((r) => r.path === '/api/data').at(-1)!;
    assert.match(sent.authorization ?? '', /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('reports the document height and follows it as it changes', async () => {
    const dashboard = await launch();
    const resizes = async () => (await dashboard.calls()).filter((call) => call.method === 'resize').map((call) => call.params?.['height']);
    await dashboard.page.waitForFunction(() => (window as unknown as HostWindow).calls.some((call) => call.method === 'resize'));
    assert.deepEqual(await resizes(), [120]);
    await dashboard.app.evaluate(() => {
      document.getElementById('content')!.style.height = '300px';
    });
    await dashboard.page.waitForFunction(() => (window as unknown as HostWindow).calls.filter((call) => call.method === 'resize').length === 2);
    assert.deepEqual(await resizes(), [120, 300]);
    const frameHeight = await dashboard.page.evaluate(() => document.getElementById('app')!.getBoundingClientRect().height);
    assert.equal(frameHeight, 300);
  });

  it('applies theme and locale changes from the dashboard live, notifying once per change', async () => {
    const dashboard = await launch();
    await dashboard.app.evaluate(() => {
      const w = window as unknown as AppWindow & { changes: string[] };
      w.changes = [];
      w.kit.subscribe((kit) => w.changes.push(`${kit.theme}/${kit.locale}`));
      w.kit.addEventListener('change', () => w.changes.push('event'));
    });
    await dashboard.page.evaluate(async () => {
      const { connection } = window as unknown as HostWindow;
      await connection.themeChanged('light');
      await connection.themeChanged('light');
      await connection.localeChanged('fr-CA');
    });
    const seen = await dashboard.app.evaluate(() => {
      const w = window as unknown as AppWindow & { changes: string[] };
      return { changes: w.changes, dataset: document.documentElement.dataset['mpTheme'], locale: document.documentElement.dataset['mpLocale'] };
    });
    assert.deepEqual(seen.changes, ['light/de-DE', 'event', 'light/fr-CA', 'event'], 'the repeated theme notifies nobody');
    assert.equal(seen.dataset, 'light');
    assert.equal(seen.locale, 'fr-CA');
  });

  it('kit.upgrade opens the plan chooser, then the entitlement reloads; entitlementsChanged reloads it too', async () => {
    const dashboard = await launch();
    const outcome = await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.upgrade({ plan: 'pro', feature: 'export' }));
    assert.equal(outcome, 'upgraded');
    assert.deepEqual((await dashboard.calls()).find((call) => call.method === 'openUpgrade')?.params, { plan: 'pro', feature: 'export' });
    assert.equal(await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.has('export')), true);
    assert.ok(harness.sessionRequests().at(-1)!.path.endsWith('/session?refresh=1'));

    // The marketplace downgrades; the dashboard says so; the gate closes without a reload.
    harness.entitlement = { ...PRO, plan: 'basic', features: ['reports'] };
    await dashboard.app.evaluate(() => {
      const w = window as unknown as AppWindow & { notified: number };
      w.notified = 0;
      w.kit.subscribe(() => w.notified++);
    });
    await dashboard.page.evaluate(() => (window as unknown as HostWindow).connection.entitlementsChanged());
    await until(dashboard, () => !(window as unknown as AppWindow).kit.has('export'), 'the downgrade');
    assert.equal(await dashboard.app.evaluate(() => (window as unknown as AppWindow & { notified: number }).notified), 1);

    // A change that changes nothing notifies nobody. The host's call is answered once its reload
    // has started; a refresh asked for now runs after that reload and settles after it.
    const requests = harness.sessionRequests().length;
    await dashboard.page.evaluate(() => (window as unknown as HostWindow).connection.entitlementsChanged());
    await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.refresh());
    assert.equal(harness.sessionRequests().length, requests + 2, 'the reload, then the barrier');
    assert.equal(await dashboard.app.evaluate(() => (window as unknown as AppWindow & { notified: number }).notified), 1);
  });

  it('a dismissed upgrade leaves the entitlement alone', async () => {
    const dashboard = await launch({}, { upgrade: 'dismissed' });
    const requests = harness.sessionRequests().length;
    const outcome = await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.upgrade({ plan: 'pro' }));
    assert.equal(outcome, 'dismissed');
    assert.equal(harness.sessionRequests().length, requests, 'no reload');
    assert.equal(await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.has('export')), false);
  });

  it('host bridge calls reach the dashboard handlers', async () => {
    const dashboard = await launch();
    await dashboard.app.evaluate(async () => {
      const host = (window as unknown as AppWindow).kit.host!;
      await host.navigate('/reports/7?tab=a');
      await host.setTitle('Reports');
      await host.toast('Saved', 'success');
      await host.openExternal('https://checkout.example/pay');
    });
    const calls = (await dashboard.calls()).filter((call) => call.method !== 'resize');
    assert.deepEqual(calls, [
      { method: 'navigate', params: { path: '/reports/7?tab=a' } },
      { method: 'setTitle', params: { title: 'Reports' } },
      { method: 'toast', params: { message: 'Saved', tone: 'success' } },
      { method: 'openExternal', params: { url: 'https://checkout.example/pay' } },
    ]);
  });

  it('signIn inside the dashboard goes through openExternal to the backend', async () => {
    const dashboard = await launch();
    await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.signIn('/after'));
    const call = (await dashboard.calls()).find((c) => c.method === 'openExternal');
    assert.equal(call?.params?.['url'], `${harness.appOrigin}/api/marketplace/oauth/start?return_to=${encodeURIComponent(`${harness.appOrigin}/after`)}`);
  });
});

describe('session upkeep through the dashboard', () => {
  const short = { kit: { backend: '/short/api/marketplace' } };
  const fetchData = () =>
    Promise.all(
      [1, 2, 3].map(() => (window as unknown as AppWindow).kit.fetch('/api/data?short=1').then((response) => response.status)),
    );

  it('renews a session near expiry with a fresh context from the host, once for concurrent callers', async () => {
    const dashboard = await launch(short);
    const exchanges = () => harness.sessionRequests().filter((r) => r.method === 'POST').length;
    const before = exchanges();
    await new Promise((resolve) => setTimeout(resolve, 1100)); // sessions last 2 s, renewal at half
    assert.deepEqual(await dashboard.app.evaluate(fetchData), [200, 200, 200]);
    assert.equal((await dashboard.calls()).filter((call) => call.method === 'getContext').length, 1);
    assert.equal(exchanges(), before + 1);
    assert.equal(await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.state), 'ready');
  });

  it('renews after a 401, and returns a 401 that follows a fresh exchange instead of looping', async () => {
    const dashboard = await launch();
    await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.fetch('/api/data'));
    const first = harness.appRequests.filter((r) => r.path === '/api/data').at(-1)!.authorization!.slice(7);
    harness.revokedTokens.add(first);
    assert.equal(await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.fetch('/api/data').then((r) => r.status)), 200);
    const second = harness.appRequests.filter((r) => r.path === '/api/data').at(-1)!.authorization!.slice(7);
    assert.notEqual(second, first);

    harness.revokedTokens.add('*');
    const dataRequests = harness.appRequests.filter((r) => r.path === '/api/data').length;
    assert.equal(await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.fetch('/api/data').then((r) => r.status)), 401);
    assert.equal(harness.appRequests.filter((r) => r.path === '/api/data').length, dataRequests + 2, 'one retry, no loop');
    assert.equal((await dashboard.calls()).filter((call) => call.method === 'getContext').length, 2);
  });

  it('a renewal that fails after the session expired is a typed error and puts the kit in error state', async () => {
    const dashboard = await launch(short, { context: 'fail' });
    assert.equal(await dashboard.app.evaluate(() => (window as unknown as AppWindow).kit.fetch('/api/data?short=1').then((r) => r.status)), 200);
    await clockPast(tokenExpiry(harness.appRequests.filter((r) => r.path === '/api/data?short=1').at(-1)!.authorization!.slice(7)));
    const outcome = await dashboard.app.evaluate(async () => {
      const { kit } = window as unknown as AppWindow;
      const error = await kit.fetch('/api/data?short=1').then(
        () => null,
        (e: { code: string; cause?: { code?: string } }) => ({ code: e.code, cause: e.cause?.code }),
      );
      return { error, state: kit.state, kitError: kit.error?.code };
    });
    assert.deepEqual(outcome, { error: { code: 'ERR_SESSION_REFRESH_FAILED', cause: 'ERR_BRIDGE_REMOTE' }, state: 'error', kitError: 'ERR_SESSION_REFRESH_FAILED' });
  });
});
