// The runtime and the host bridge under attack and failure, with real origins: refused launches,
// messages from other origins and other windows, malformed and oversized messages, a dashboard
// that never answers, and backends that fail. One browser for the whole file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { BRIDGE_SERVICE_ID } from '../../src/shared/bridge.js';
import {
  BASIC,
  clockPast,
  openDashboard,
  startRuntimeHarness,
  type AppWindow,
  type Dashboard,
  type HostWindow,
  type RuntimeHarness,
  tokenExpiry,
} from '../support/runtime-harness.js';
import { HANG_MS } from '../support/waiting.js';

let harness: RuntimeHarness;
const closers: Array<() => Promise<void>> = [];

before(async () => {
  harness = await startRuntimeHarness();
});
after(async () => {
  for (const close of closers) await close();
  await harness.close();
});

async function dashboard(options: Parameters<RuntimeHarness['launchUrl']>[0] = {}, behaviour: Parameters<typeof openDashboard>[2] = {}) {
  harness.entitlement = BASIC;
  const opened = await openDashboard(harness, await harness.launchUrl(options), behaviour);
  closers.push(opened.close);
  const state = await opened.app.evaluate(() => (window as unknown as AppWindow).kitDone);
  return { ...opened, state };
}

async function topLevel(url: string): Promise<Page> {
  const context = await harness.browser.newContext();
  closers.push(() => context.close());
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

const kitSummary = () => {
  const { kit } = window as unknown as AppWindow;
  return { state: kit.state, code: kit.error?.code ?? null, status: kit.error?.status ?? null, search: location.search, embedded: kit.embedded };
};

/** A well-formed bridge packet, as the RPC library writes it. */
const packet = (id: number, method: string, params: unknown) =>
  JSON.stringify({ type: 'method', serviceID: BRIDGE_SERVICE_ID, id, method, params, counter: 0, discard: false });

/** Adds an iframe to the dashboard page and returns its frame once loaded. */
let added = 0;
async function addFrame(page: Page, src: string): Promise<Frame> {
  const id = `added-${++added}`;
  await page.evaluate(
    ([url, name]) =>
      new Promise<void>((resolve) => {
        const iframe = document.createElement('iframe');
        iframe.id = name;
        iframe.src = url;
        iframe.addEventListener('load', () => resolve(), { once: true });
        document.body.append(iframe);
      }),
    [src, id] as const,
  );
  const frame = await (await page.$(`#${id}`))?.contentFrame();
  assert.ok(frame, `frame ${src} did not load`);
  return frame;
}

const theme = (opened: Dashboard) => opened.app.evaluate(() => (window as unknown as AppWindow).kit.theme);

/**
 * Positive barriers, sent after the hostile messages: a genuine message to each side, whose effect
 * shows that what was posted before it has been handled. The host's locale change reaches the app;
 * the app's setTitle reaches the host (its call resolves on the host's answer).
 */
async function barrier(opened: Dashboard, locale: string): Promise<void> {
  await opened.page.evaluate((value) => (window as unknown as HostWindow).connection.localeChanged(value), locale);
  assert.equal(await opened.app.evaluate(() => (window as unknown as AppWindow).kit.locale), locale);
  await opened.app.evaluate((value) => (window as unknown as AppWindow).kit.host!.setTitle(value), `barrier ${locale}`);
  assert.ok((await opened.calls()).some((call) => call.params?.['title'] === `barrier ${locale}`));
}

describe('refused launches never send the context token', () => {
  // Each refusal holds with the early exchange script on the page too: it makes the same checks.
  for (const [label, path] of [['', '/app'], [' (early exchange script)', '/app?early=1']] as const) {
    it(`mp_host outside the allowlist: error, no request, URL scrubbed${label}`, async () => {
      const before = harness.sessionRequests().length;
      const opened = await dashboard({ host: harness.evilOrigin, path });
      assert.equal(opened.state, 'error');
      const summary = await opened.app.evaluate(kitSummary);
      assert.equal(summary.code, 'ERR_HOST_NOT_ALLOWED');
      assert.doesNotMatch(summary.search, /mp_/);
      assert.equal(harness.sessionRequests().length, before);
    });

    it(`launch parameters on a page that is not framed: error, no request, URL scrubbed${label}`, async () => {
      const before = harness.sessionRequests().length;
      const page = await topLevel(await harness.launchUrl({ path }));
      assert.equal(await page.evaluate(() => (window as unknown as AppWindow).kitDone), 'error');
      const summary = await page.evaluate(kitSummary);
      assert.equal(summary.code, 'ERR_HOST_NOT_ALLOWED');
      assert.equal(summary.search, path === '/app' ? '' : '?early=1');
      assert.equal(harness.sessionRequests().length, before);
    });

    it(`framed by another origin than mp_host claims: error, no request${label}`, async () => {
      const before = harness.sessionRequests().length;
      const page = await topLevel(`${harness.evilOrigin}/`);
      const frame = await addFrame(page, await harness.launchUrl({ path }));
      assert.equal(await frame.evaluate(() => (window as unknown as AppWindow).kitDone), 'error');
      assert.equal((await frame.evaluate(kitSummary)).code, 'ERR_HOST_NOT_ALLOWED');
      assert.equal(harness.sessionRequests().length, before);
    });
  }

  it('a page without mp_* parameters reads the cookie session once and is signed out', async () => {
    const before = harness.sessionRequests().length;
    const page = await topLevel(`${harness.appOrigin}/app`);
    assert.equal(await page.evaluate(() => (window as unknown as AppWindow).kitDone), 'signed-out');
    const summary = await page.evaluate(kitSummary);
    assert.deepEqual(summary, { state: 'signed-out', code: null, status: null, search: '', embedded: false });
    const requests = harness.sessionRequests().slice(before);
    assert.deepEqual(
      requests.map((r) => [r.method, r.path, r.authorization]),
      [['GET', '/api/marketplace/session', undefined]],
    );
    assert.equal(await page.evaluate(() => (window as unknown as AppWindow).kit.host), null);
    const upgrade = await page.evaluate(() => (window as unknown as AppWindow).kit.upgrade().catch((e: { code: string }) => e.code));
    assert.equal(upgrade, 'ERR_NOT_EMBEDDED');
    const fetched = await page.evaluate(() => (window as unknown as AppWindow).kit.fetch('/api/data').catch((e: { code: string }) => e.code));
    assert.equal(fetched, 'ERR_SESSION_MISSING');
  });
});

describe('the bridge ignores what it must not trust', () => {
  it('messages from another origin reach neither side', async () => {
    const opened = await dashboard();
    const evil = await addFrame(opened.page, `${harness.evilOrigin}/frame`);
    await evil.evaluate(
      ([theme, resize, origins]) => {
        // The evil frame can reach both windows; it tries each origin, and '*' too.
        for (const target of [origins.app, '*']) parent.frames[0]!.postMessage(theme, target);
        for (const target of [origins.host, '*']) parent.postMessage(resize, target);
      },
      [packet(900, 'themeChanged', { theme: 'light' }), packet(901, 'resize', { height: 999 }), { app: harness.appOrigin, host: harness.hostOrigin }] as const,
    );
    await barrier(opened, 'fr-CA');
    assert.equal(await theme(opened), 'dark');
    assert.ok(!(await opened.calls()).some((call) => call.params?.['height'] === 999));
    await opened.page.evaluate(() => (window as unknown as HostWindow).connection.themeChanged('light'));
    assert.equal(await theme(opened), 'light', 'the genuine dashboard still gets through');
  });

  it('messages from the right origin but another window are ignored', async () => {
    const opened = await dashboard();
    const sibling = await addFrame(opened.page, `${harness.hostOrigin}/other`);
    await sibling.evaluate(([message, origin]) => parent.frames[0]!.postMessage(message, origin), [packet(902, 'themeChanged', { theme: 'light' }), harness.appOrigin] as const);
    const appTwin = await addFrame(opened.page, `${harness.appOrigin}/blank`);
    await appTwin.evaluate(([message, origin]) => parent.postMessage(message, origin), [packet(903, 'resize', { height: 777 }), harness.hostOrigin] as const);
    await barrier(opened, 'fr-CA');
    assert.equal(await theme(opened), 'dark');
    assert.ok(!(await opened.calls()).some((call) => call.params?.['height'] === 777));
  });

  it('malformed, invalid and oversized messages are dropped or refused, and the channel keeps working', async () => {
    const opened = await dashboard();
    const replies = await opened.page.evaluate(
      async ([origin, invalid, oversized, wrongService, valid]) => {
        const target = (document.getElementById('app') as HTMLIFrameElement).contentWindow!;
        const seen: string[] = [];
        let answered!: () => void;
        const barrier = new Promise<void>((resolve) => (answered = resolve));
        addEventListener('message', (event) => {
          if (typeof event.data !== 'string') return;
          if (event.data.includes('"id":904')) seen.push(event.data);
          if (event.data.includes('"id":909')) answered();
        });
        for (const message of ['not json', '{"type":"method"}', '{"type":"method","serviceID":"marketplace-app-bridge","id":"x","counter":0}', wrongService]) {
          target.postMessage(message, origin);
        }
        target.postMessage({ type: 'method', method: 'themeChanged', params: { theme: 'light' } }, origin);
        target.postMessage(invalid, origin);
        target.postMessage(oversized, origin);
        // A valid call after them: once it is answered, everything before it has been handled.
        target.postMessage(valid, origin);
        await barrier;
        return seen;
      },
      [
        harness.appOrigin,
        packet(904, 'themeChanged', { theme: 'purple' }),
        packet(905, 'themeChanged', { theme: 'light', padding: 'x'.repeat(70 * 1024) }),
        packet(906, 'themeChanged', { theme: 'light' }).replace(BRIDGE_SERVICE_ID, 'other-service'),
        packet(909, 'localeChanged', { locale: 'fr-CA' }),
      ] as const,
    );
    assert.equal(replies.length, 1, 'the invalid call is answered with an error');
    const reply = JSON.parse(replies[0]!) as { error?: { message: string } };
    assert.match(reply.error?.message ?? '', /^Invalid themeChanged params at theme/);
    assert.equal(await theme(opened), 'dark', 'nothing got through');
    await opened.page.evaluate(() => (window as unknown as HostWindow).connection.themeChanged('light'));
    assert.equal(await theme(opened), 'light', 'the channel is not stalled by the dropped messages');
  });

  it('the dashboard validates params from the app before calling a handler', async () => {
    const opened = await dashboard();
    const replies = await opened.app.evaluate(
      async ([navigate, external, valid, origin]) => {
        const seen: string[] = [];
        let answered!: () => void;
        const barrier = new Promise<void>((resolve) => (answered = resolve));
        addEventListener('message', (event) => {
          if (typeof event.data !== 'string') return;
          if (/"id":90[78]/.test(event.data)) seen.push(event.data);
          if (event.data.includes('"id":910')) answered();
        });
        parent.postMessage(navigate, origin);
        parent.postMessage(external, origin);
        // A valid call after them: once it is answered, both replies before it have arrived.
        parent.postMessage(valid, origin);
        await barrier;
        const direct = await (window as unknown as AppWindow).kit.host!.openExternal('javascript:alert(1)').catch((e: { code: string }) => e.code);
        return { seen: seen.sort(), direct };
      },
      [
        packet(907, 'navigate', { path: '//evil.example/x' }),
        packet(908, 'openExternal', { url: 'javascript:alert(1)' }),
        packet(910, 'setTitle', { title: 'barrier' }),
        harness.hostOrigin,
      ] as const,
    );
    assert.equal(replies.direct, 'ERR_INVALID_INPUT');
    assert.equal(replies.seen.length, 2);
    assert.match(replies.seen[0]!, /Invalid navigate params at path/);
    assert.match(replies.seen[1]!, /Invalid openExternal params at url: expected an absolute http\(s\) URL/);
    assert.ok(!(await opened.calls()).some((call) => call.method === 'navigate' || call.method === 'openExternal'));
  });

  it('a failing dashboard handler is a remote error carrying the message, not the stack', async () => {
    const opened = await dashboard({}, { upgrade: 'throw' });
    const error = await opened.app.evaluate(() =>
      (window as unknown as AppWindow).kit.upgrade({ plan: 'pro' }).catch((e: { code: string; message: string }) => ({ code: e.code, message: e.message })),
    );
    assert.equal(typeof error, 'object');
    const { code, message } = error as { code: string; message: string };
    assert.equal(code, 'ERR_BRIDGE_REMOTE');
    assert.match(message, /the plan chooser is broken/);
    assert.doesNotMatch(message, /\n\s+at /, 'no stack crosses the boundary');
  });
});

describe('a dashboard that never answers', () => {
  it('bridge calls time out with ERR_BRIDGE_TIMEOUT; the kit still started from the launch token', async () => {
    const opened = await dashboard({ kit: { bridgeTimeoutMs: 300 } }, { connect: false });
    assert.equal(opened.state, 'ready');
    const result = await opened.app.evaluate(async () => {
      const started = performance.now();
      const [code, message] = await (window as unknown as AppWindow).kit.host!.toast('hello').then(
        (): [string, string] => ['answered', ''],
        (e: { code: string; message: string }): [string, string] => [e.code, e.message],
      );
      return { code, message, elapsed: performance.now() - started };
    });
    assert.equal(result.code, 'ERR_BRIDGE_TIMEOUT');
    assert.match(result.message, /within 300 ms/, 'the kit\'s bridgeTimeoutMs, not the default');
    assert.ok(result.elapsed >= 290, `timed out after ${result.elapsed} ms`);
  });

  it('a renewal whose getContext never comes back fails with ERR_SESSION_REFRESH_FAILED once the session expired', async () => {
    const opened = await dashboard({ kit: { backend: '/short/api/marketplace', bridgeTimeoutMs: 300 } }, { context: 'never' });
    assert.equal(await opened.app.evaluate(() => (window as unknown as AppWindow).kit.fetch('/api/data?short=1').then((r) => r.status)), 200);
    await clockPast(tokenExpiry(harness.appRequests.filter((r) => r.path === '/api/data?short=1').at(-1)!.authorization!.slice(7)));
    const outcome = await opened.app.evaluate(async () => {
      const { kit } = window as unknown as AppWindow;
      const error = await kit.fetch('/api/data?short=1').then(
        () => null,
        (e: { code: string; cause?: { code?: string } }) => [e.code, e.cause?.code],
      );
      return { error, state: kit.state };
    });
    assert.deepEqual(outcome, { error: ['ERR_SESSION_REFRESH_FAILED', 'ERR_BRIDGE_TIMEOUT'], state: 'error' });
  });
});

describe('a backend on another origin (CORS)', () => {
  it('starts the kit and lets it read its clock; when it refuses a launch with 429, the kit reads its Retry-After and renews no sooner', async () => {
    const backend = `${harness.crossOrigin}/api/marketplace`;
    const first = await dashboard({ kit: { backend } });
    assert.equal(first.state, 'ready', 'the one exchange this backend allows the user');
    // Its clock is readable from the app's origin: the kit counts session lifetimes by it.
    const date = await first.app.evaluate((api) => fetch(`${api}/api/marketplace/session`).then((r) => r.headers.get('date')), harness.crossOrigin);
    assert.ok(date && Math.abs(Date.parse(date) - Date.now()) < 5_000, `Date ${date}`);
    const second = await dashboard({ kit: { backend } });
    const sent = harness.crossRequests.length;
    const outcome = await second.app.evaluate(async (api) => {
      const { kit } = window as unknown as AppWindow;
      const started = { code: kit.error?.code, status: kit.error?.status, retryAfterMs: kit.error?.retryAfterMs };
      // The bearer goes to the backend's origin only: this call needs a session.
      const renewal = await kit.fetch(`${api}/api/data`).then(
        () => null,
        (e: { code: string; retryAfterMs?: number }) => [e.code, e.retryAfterMs],
      );
      return { started, renewal };
    }, harness.crossOrigin);
    // Readable only because the backend exposes Retry-After to the app's origin.
    assert.deepEqual(outcome.started, { code: 'ERR_RATE_LIMITED', status: 429, retryAfterMs: outcome.started.retryAfterMs });
    assert.ok(outcome.started.retryAfterMs! > 290_000 && outcome.started.retryAfterMs! <= 300_000, `retryAfterMs ${outcome.started.retryAfterMs}`);
    assert.deepEqual(outcome.renewal, ['ERR_SESSION_REFRESH_FAILED', outcome.started.retryAfterMs], 'refused at once, with the wait');
    assert.equal(harness.crossRequests.length, sent, 'no request during the pause');
  });
});

describe('a failing backend gives a typed error state, with the URL scrubbed all the same', () => {
  const cases = [
    { name: 'answers 500', backend: '/broken/500', code: 'ERR_HTTP', status: 500 },
    { name: 'answers HTML', backend: '/broken/html', code: 'ERR_RESPONSE_INVALID', status: 200 },
    { name: 'never answers', backend: '/broken/slow', code: 'ERR_TIMEOUT', status: null },
  ];
  for (const c of cases) {
    it(`the backend ${c.name}: ${c.code}`, async () => {
      // Only the silent backend waits out the timeout: a short one for it, generous for the others.
      const opened = await dashboard({ kit: { backend: c.backend, timeoutMs: c.status === null ? 1_500 : HANG_MS } });
      assert.equal(opened.state, 'error');
      const summary = await opened.app.evaluate(kitSummary);
      assert.equal(summary.code, c.code);
      assert.equal(summary.status, c.status);
      assert.doesNotMatch(summary.search, /mp_/);
      assert.equal(harness.appRequests.filter((r) => r.path === `${c.backend}/session`).length, 1);
    });
  }
});
