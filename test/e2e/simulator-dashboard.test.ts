// The simulator's dashboard in Chromium, embedding a test app that runs the real browser runtime
// and a real createAppBackend on another loopback origin. Needs `npm run build` first (the
// dashboard serves dist/cdn/marketplace-host.js).
import assert from 'node:assert/strict';
import { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import type { Simulator } from '../../src/simulator/index.js';
import { launchChromium, PHONE_320 } from '../support/browser.js';
import { buildRuntime, startTestApp, type TestApp } from '../support/simulator-app.js';
import { startTestSimulator } from '../support/simulator-harness.js';

interface AppWindow {
  kitReady: Promise<string>;
  kit: {
    state: string;
    theme: string;
    locale: string;
    user: { id: string } | null;
    entitlement: { plan: string; status: string } | null;
    has(feature: string): boolean;
    upgrade(options?: { plan?: string; feature?: string }): Promise<string>;
    fetch(input: string): Promise<Response>;
    host: {
      resize(height: number): Promise<void>;
      navigate(path: string): Promise<void>;
      toast(message: string, tone?: string): Promise<void>;
      setTitle(title: string): Promise<void>;
      openExternal(url: string): Promise<void>;
    };
  };
}

let browser: Browser;
let sim: Simulator;
let app: TestApp;

before(async () => {
  const runtime = await buildRuntime();
  sim = await startTestSimulator({ appName: 'Test app' });
  app = await startTestApp(sim, runtime);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
  await sim?.close();
});

async function openDashboard(query = ''): Promise<{ page: Page; frame: Frame }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${sim.dashboardUrl}${query}`);
  const frame = await appFrame(page);
  assert.deepEqual(errors, []);
  return { page, frame };
}

async function appFrame(page: Page): Promise<Frame> {
  await page.waitForFunction(() => document.body.dataset.appReady === 'true' && document.body.dataset.stream === 'open');
  const handle = (await page.$('#app-frame'))!;
  const frame = (await handle.contentFrame())!;
  const state = await frame.evaluate(() => (window as unknown as AppWindow).kitReady);
  assert.equal(state, 'ready');
  return frame;
}

/** Ada on the free plan, through the control API, as the dashboard's own controls would set it. */
const adaOnTheFreePlan = () =>
  fetch(`${sim.siteUrl}/_simulator/users/usr_ada/entitlement`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'free', status: 'active', features: [], expires_at: null }),
  });

const kit = <T>(frame: Frame, read: (kit: AppWindow['kit']) => T) =>
  frame.evaluate(`(${read.toString()})(window.kit)`) as Promise<T>;

describe('simulator dashboard', () => {
  it('embeds the app with fresh mp_* parameters, in a sandbox without popups', async () => {
    const { page, frame } = await openDashboard('?user=usr_grace&theme=dark&locale=de-DE');
    assert.deepEqual(await kit(frame, (k) => [k.user?.id, k.entitlement?.plan, k.theme, k.locale]), ['usr_grace', 'pro_monthly', 'dark', 'de-DE']);
    const sandbox = await page.getAttribute('#app-frame', 'sandbox');
    assert.ok(sandbox?.includes('allow-scripts'));
    assert.ok(!sandbox?.includes('allow-popups'));
    assert.ok(!sandbox?.includes('allow-top-navigation'));
    const src = new URL((await page.getAttribute('#app-frame', 'src'))!);
    assert.equal(src.searchParams.get('mp_host'), sim.siteUrl);
    assert.match(src.searchParams.get('mp_context') ?? '', /^ey[\w-]+\.[\w-]+\.[\w-]+$/);
    // The kit removed the parameters from the app's own address.
    assert.doesNotMatch(frame.url(), /mp_context/);
    await page.close();
  });

  it('keeps the app on its own origin whatever ?path= says, and sends the context token nowhere else', async () => {
    for (const path of ['https://evil.example/steal', '//evil.example/steal']) {
      const page = await browser.newPage();
      await page.goto(`${sim.dashboardUrl}?user=usr_ada&path=${encodeURIComponent(path)}`);
      await page.waitForSelector('#app-frame[src]', { state: 'attached' });
      const src = new URL((await page.getAttribute('#app-frame', 'src'))!);
      assert.equal(src.origin, app.origin, path);
      await page.close();
    }
  });

  it('answers resize, navigate, toast and setTitle, and getContext with a fresh token', async () => {
    const { page, frame } = await openDashboard('?user=usr_ada');
    await frame.evaluate(() => (window as unknown as AppWindow).kit.host.resize(777));
    assert.equal(await page.$eval('#app-frame', (el) => (el as HTMLIFrameElement).style.height), '777px');
    // The app cannot collapse the frame or stretch the dashboard without bound.
    await frame.evaluate(() => (window as unknown as AppWindow).kit.host.resize(10));
    assert.equal(await page.$eval('#app-frame', (el) => (el as HTMLIFrameElement).style.height), '120px');
    await frame.evaluate(() => (window as unknown as AppWindow).kit.host.resize(500_000));
    assert.equal(await page.$eval('#app-frame', (el) => (el as HTMLIFrameElement).style.height), '20000px');
    await frame.evaluate(() => (window as unknown as AppWindow).kit.host.resize(777));

    await frame.evaluate(() => (window as unknown as AppWindow).kit.host.navigate('/reports?tab=2'));
    assert.equal(new URL(page.url()).searchParams.get('path'), '/reports?tab=2');
    assert.equal(await page.textContent('#app-path'), '/reports?tab=2');

    await frame.evaluate(() => (window as unknown as AppWindow).kit.host.toast('Report saved', 'success'));
    const toast = await page.waitForSelector('.toast[data-tone="success"]');
    assert.equal(await toast.textContent(), 'Report saved');

    await frame.evaluate(() => (window as unknown as AppWindow).kit.host.setTitle('Reports'));
    assert.equal(await page.textContent('#app-title'), 'Reports');
    assert.match(await page.title(), /^Reports · Test app/);
    await frame.evaluate(() => (window as unknown as AppWindow).kit.host.setTitle('Test app'));
    assert.equal(await page.title(), 'Test app · Marketplace', 'the app name is not said twice');

    const exchanges = app.sessionExchanges;
    app.refuseNext = true;
    const answer = await frame.evaluate(async () => (await (window as unknown as AppWindow).kit.fetch('/api/protected')).json());
    assert.deepEqual(answer, { user_id: 'usr_ada' });
    assert.equal(app.sessionExchanges, exchanges + 1, 'a 401 made the kit ask getContext and exchange the new token');

    // On reload the app opens at the mirrored path.
    await page.reload();
    const reloaded = await appFrame(page);
    const url = new URL(reloaded.url());
    assert.equal(url.pathname, '/reports');
    assert.equal(url.searchParams.get('tab'), '2');
    await page.close();
  });

  it("keeps a long path, title and toast from the app on a 320 px phone's screen", async () => {
    const context = await browser.newContext(PHONE_320);
    try {
      const page = await context.newPage();
      await page.goto(`${sim.dashboardUrl}?user=usr_ada`);
      const frame = await appFrame(page);
      // Words without a place to break: an id in a path, a title, a 66-character e-mail address.
      const email = 'maximiliane.wolfeschlegelsteinhausen-the-third@example-company.com';
      await frame.evaluate(`window.kit.host.navigate('/reports/8f14e45fceea167a5a36dedd4bea2543c0ffee42?tab=history')`);
      await frame.evaluate(`window.kit.host.setTitle('Quarterlyreportsforthewholeorganisation')`);
      await frame.evaluate(`window.kit.host.toast('Invitation sent to ${email}', 'success')`);
      await page.waitForSelector('.toast[data-tone="success"]');
      const fits = await page.evaluate(() => {
        const width = document.documentElement.clientWidth;
        const main = document.querySelector('main.app')!;
        return [
          document.scrollingElement!.scrollWidth > width ? `the page scrolls sideways (${document.scrollingElement!.scrollWidth} px)` : null,
          main.scrollWidth > main.clientWidth ? `the app's column scrolls sideways (${main.scrollWidth} > ${main.clientWidth} px)` : null,
          ...['#reload', '.toast'].map((selector) => {
            const box = document.querySelector(selector)!.getBoundingClientRect();
            return box.left < 0 || box.right > width ? `${selector} spans ${Math.round(box.left)} to ${Math.round(box.right)} px of ${width}` : null;
          }),
        ].filter(Boolean);
      });
      assert.deepEqual(fits, []);
    } finally {
      await context.close();
    }
  });

  it("shows the whole choice in the user menu and each of the control panel's menus on a 320 px phone", async () => {
    const context = await browser.newContext(PHONE_320);
    try {
      const page = await context.newPage();
      // The user with the longest name and id: "Katherine Johnson (usr_katherine)".
      await page.goto(`${sim.dashboardUrl}?user=usr_katherine`);
      await appFrame(page);
      assert.ok((await page.locator('#event-kind option').count()) >= 4, 'the event menu is filled in');
      // A menu as wide as it wants to be (its longest option, the arrow, the padding), set beside the real one:
      // "subscription.created" and "subscription.cancelled" must not both show as "subscription.c".
      const clipped = await page.evaluate(() =>
        [...document.querySelectorAll<HTMLSelectElement>('#user, aside.controls select')].flatMap((select) => {
          const natural = select.cloneNode(true) as HTMLSelectElement;
          natural.style.cssText = 'width: auto; min-width: 0; max-width: none; position: absolute';
          select.after(natural);
          const [need, has] = [natural.offsetWidth, select.offsetWidth];
          natural.remove();
          return has < need ? [`${select.name || select.id}: ${has} px of the ${need} px its options need`] : [];
        }),
      );
      assert.deepEqual(clipped, []);
    } finally {
      await context.close();
    }
  });

  it('openUpgrade shows the plan chooser; confirming upgrades, sends subscription.created, and the app sees it', async () => {
    await adaOnTheFreePlan();
    const { page, frame } = await openDashboard('?user=usr_ada');
    assert.equal(await kit(frame, (k) => k.has('export')), false);
    const outcome = frame.evaluate(() => (window as unknown as AppWindow).kit.upgrade({ feature: 'export' }));
    await page.waitForSelector('dialog#upgrade[open]');
    const plans = await page.$$eval('#plan-list .plan', (labels) => labels.map((l) => (l as HTMLElement).dataset.plan));
    assert.deepEqual(plans, ['free', 'pro_monthly', 'pro_annual', 'lifetime']);
    assert.equal(await page.isDisabled('input[value="free"]'), true, 'the current plan cannot be chosen');
    assert.equal(await page.isChecked('input[value="pro_monthly"]'), true, 'the first plan with the feature is preselected');
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value), 'pro_monthly', 'the chosen plan has the focus');
    assert.match((await page.textContent('#plan-list .plan[data-plan="lifetime"]')) ?? '', /Lifetime[\s\S]*\$299 once[\s\S]*Paid once/);
    await page.check('input[value="lifetime"]');
    await page.click('#upgrade-confirm');
    assert.equal(await outcome, 'upgraded');
    await frame.waitForFunction(() => (window as unknown as AppWindow).kit.entitlement?.plan === 'lifetime');
    assert.equal(await kit(frame, (k) => k.has('export')), true);
    assert.equal(sim.entitlement('usr_ada')?.plan, 'lifetime');
    assert.equal(sim.entitlement('usr_ada')?.expires_at, null);
    const delivery = sim.state().deliveries.find((d) => d.event === 'subscription.created');
    assert.equal(delivery?.outcome, 'delivered');
    assert.ok(app.events.includes('subscription.created'), 'the app backend verified the webhook');

    const dismissed = frame.evaluate(() => (window as unknown as AppWindow).kit.upgrade({ plan: 'pro_annual' }));
    await page.waitForSelector('dialog#upgrade[open]');
    assert.equal(await page.isChecked('input[value="pro_annual"]'), true);
    await page.click('#upgrade-cancel');
    assert.equal(await dismissed, 'dismissed');
    assert.equal(sim.entitlement('usr_ada')?.plan, 'lifetime');
    await page.close();
  });

  it('once a plan is confirmed, only the purchase settles the chooser: not Escape, nor a second openUpgrade', async () => {
    await adaOnTheFreePlan();
    const { page, frame } = await openDashboard('?user=usr_ada');
    // The purchase (its webhook delivery) takes a while, as when the app backend's answer is slow.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let bought!: () => void;
    const buying = new Promise<void>((resolve) => (bought = resolve));
    await page.route('**/_simulator/events', async (route) => {
      bought();
      await held;
      await route.continue();
    });
    const first = frame.evaluate(() => (window as unknown as AppWindow).kit.upgrade({ plan: 'pro_monthly' }));
    await page.waitForSelector('dialog#upgrade[open]');
    await page.click('#upgrade-confirm');
    await buying;
    assert.equal(await page.isDisabled('#upgrade-cancel'), true, 'Cancel waits for the purchase');
    await page.keyboard.press('Escape');
    const second = await frame.evaluate(() => (window as unknown as AppWindow).kit.upgrade({ feature: 'sso' }));
    assert.equal(second, 'dismissed', 'a request made during the purchase is answered at once, and chose nothing');
    assert.equal(await page.isVisible('dialog#upgrade[open]'), true, 'Escape did not close the chooser');
    release();
    assert.equal(await first, 'upgraded');
    assert.equal(sim.entitlement('usr_ada')?.plan, 'pro_monthly');
    assert.equal(await page.isVisible('dialog#upgrade[open]'), false);
    await page.unroute('**/_simulator/events');
    await page.close();
  });

  it('shows the app of the user picked last, however the context tokens come back, and none of the last page\'s title', async () => {
    const { page, frame } = await openDashboard('?user=usr_ada');
    await frame.evaluate(() => (window as unknown as AppWindow).kit.host.setTitle('Ada’s invoices'));
    assert.equal(await page.textContent('#app-title'), 'Ada’s invoices');
    // Grace's token comes back after Alan's, picked after her: it is held until Alan's app shows.
    let releaseGrace!: () => void;
    const graceHeld = new Promise<void>((resolve) => (releaseGrace = resolve));
    await page.route('**/_simulator/context', async (route) => {
      if (route.request().postData()?.includes('usr_grace')) await graceHeld;
      await route.continue();
    });
    const graceAnswer = page.waitForResponse((response) => response.url().endsWith('/_simulator/context') && !!response.request().postData()?.includes('usr_grace'));
    await page.selectOption('#user', 'usr_grace');
    await page.selectOption('#user', 'usr_alan');
    const shown = await appFrame(page);
    assert.equal(await kit(shown, (k) => k.user?.id), 'usr_alan');
    releaseGrace();
    await (await graceAnswer).finished();
    // The dashboard reads the late answer in the tasks that follow: two frames later it has.
    for (let frame = 0; frame < 2; frame++) await page.evaluate(() => new Promise(requestAnimationFrame));
    const frames = await page.$$('#app-frame');
    assert.equal(frames.length, 1);
    assert.equal(await kit((await frames[0]!.contentFrame())!, (k) => k.user?.id), 'usr_alan');
    assert.equal(await page.textContent('#app-title'), 'Test app');
    assert.equal(await page.title(), 'Test app · Marketplace');
    await page.unroute('**/_simulator/context');
    await page.close();
  });

  it('tells the app entitlementsChanged when the control API or an event changes the selected user', async () => {
    const { page, frame } = await openDashboard('?user=usr_alan');
    assert.equal(await kit(frame, (k) => k.entitlement?.status), 'active');
    const put = await fetch(`${sim.siteUrl}/_simulator/users/usr_alan/entitlement`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'past_due' }),
    });
    assert.equal(put.status, 200);
    await frame.waitForFunction(() => (window as unknown as AppWindow).kit.entitlement?.status === 'past_due');
    assert.equal(await kit(frame, (k) => k.has('export')), false);
    await sim.sendEvent('user.revoked', { user_id: 'usr_alan' });
    await frame.waitForFunction(() => (window as unknown as AppWindow).kit.entitlement === null);
    // The panel follows too.
    await page.waitForSelector('#entitlement-note:has-text("holds no entitlement")');
    await page.close();
  });

  it('catches up after its event stream reconnects: a change made while it was down reaches the panel and the app', async (t) => {
    // The simulator's end of each event stream: the response that wrote the opening `retry:` line.
    const streams: ServerResponse[] = [];
    const write = ServerResponse.prototype.write;
    t.mock.method(ServerResponse.prototype, 'write', function (this: ServerResponse, ...args: Parameters<ServerResponse['write']>) {
      if (String(args[0]).startsWith('retry:')) streams.push(this);
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    });
    const { page, frame } = await openDashboard('?user=usr_linus');
    assert.equal(await kit(frame, (k) => k.entitlement), null);
    assert.equal(streams.length, 1);
    // Cut as the simulator cuts a stream whose reader fell behind; the change below sends no event to it.
    streams[0]!.destroy();
    const put = await fetch(`${sim.siteUrl}/_simulator/users/usr_linus/entitlement`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'pro_monthly' }),
    });
    assert.equal(put.status, 200);
    await page.waitForFunction(() => (document.getElementById('entitlement-form') as HTMLFormElement & { elements: { plan: HTMLInputElement } }).elements.plan.value === 'pro_monthly');
    await frame.waitForFunction(() => (window as unknown as AppWindow).kit.entitlement?.plan === 'pro_monthly');
    assert.equal(streams.length, 2, 'the dashboard reconnected once');
    await page.close();
  });

  it('sends theme and locale switches to the app live, and reloads the app for another user', async () => {
    const { page, frame } = await openDashboard('?user=usr_katherine');
    await page.selectOption('#theme', 'dark');
    await frame.waitForFunction(() => (window as unknown as AppWindow).kit.theme === 'dark');
    await page.selectOption('#locale', 'fr-FR');
    await frame.waitForFunction(() => (window as unknown as AppWindow).kit.locale === 'fr-FR');
    assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
    const url = new URL(page.url());
    assert.deepEqual([url.searchParams.get('theme'), url.searchParams.get('locale')], ['dark', 'fr-FR']);

    // A reload inside the frame has no mp_* parameters: getContext's answer carries theme and locale.
    await Promise.all([frame.waitForNavigation(), frame.evaluate(() => void setTimeout(() => location.reload(), 0))]);
    await frame.waitForFunction(() => (window as unknown as AppWindow).kit?.state === 'ready');
    assert.equal(new URL(frame.url()).searchParams.has('mp_context'), false, 'the reload carried no launch parameters');
    assert.deepEqual(await kit(frame, (k) => [k.theme, k.locale]), ['dark', 'fr-FR']);

    await page.selectOption('#user', 'usr_grace');
    const other = await appFrame(page);
    assert.equal(await kit(other, (k) => k.user?.id), 'usr_grace');
    assert.equal(new URL(page.url()).searchParams.get('user'), 'usr_grace');
    await page.close();
  });

  it('drives the simulator from the control panel and lists the app\'s API calls', async () => {
    const { page, frame } = await openDashboard('?user=usr_grace');
    await page.fill('#entitlement-form input[name="limit"]', '50');
    await page.fill('#entitlement-form input[name="api_calls"]', '50');
    await page.click('#entitlement-form button[type="submit"]');
    await page.waitForSelector('#entitlement-result:has-text("Saved")');
    assert.deepEqual(sim.entitlement('usr_grace')?.usage, { api_calls: 50, limit: 50 });
    await frame.waitForFunction(() => (window as unknown as AppWindow).kit.entitlement !== null);

    assert.equal(await page.isEnabled('#event-plan'), false, 'the initial event is user.authorized: no plan');
    await page.selectOption('#event-kind', 'subscription.created');
    assert.equal(await page.isEnabled('#event-plan'), true);
    await page.selectOption('#event-kind', 'subscription.cancelled');
    assert.equal(await page.isEnabled('#event-plan'), false, "a cancellation cancels the user's own plan: the field does not offer another");
    await page.click('#event-form button[type="submit"]');
    await page.waitForSelector('#event-result:has-text("delivered")');
    assert.equal(sim.entitlement('usr_grace')?.status, 'cancelled');
    await frame.waitForFunction(() => (window as unknown as AppWindow).kit.entitlement?.status === 'cancelled');
    await page.waitForSelector('#calls li summary:has-text("/api/v1/entitlements?user_id=usr_grace")');
    await page.close();
  });

  it('opens external URLs at top level', async () => {
    const { page, frame } = await openDashboard('?user=usr_ada');
    const target = `${app.origin}/outside`;
    // The call's answer may never arrive: the navigation unloads the app with the dashboard.
    void frame.evaluate((url) => (window as unknown as AppWindow).kit.host.openExternal(url), target).catch(() => undefined);
    await page.waitForURL(target);
    assert.equal(page.url(), target);
    await page.close();
  });
});
