// The demo as a new user meets it after `npm start`: the sample app inside the simulator's
// dashboard, upgrades and webhooks, the developer-site sign-in, session renewal, the component
// gallery. One start of the real servers (startDemo, as npm start) and one Chromium for the file.
import assert from 'node:assert/strict';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page, Request } from 'playwright-core';
import { callApi, openDashboard, startDemoHarness, type DemoHarness } from '../support/demo-browser.js';

/** Short enough for the renewal test to wait it out; the kit renews at half the lifetime. */
const SESSION_TTL_SECONDS = 3;
/** The simulator's default users (src/simulator/catalog.ts): Ada starts on the free plan, Alan on Pro annual. */
const ADA = 'usr_ada';
const KATHERINE = 'usr_katherine';
const resultsDir = fileURLToPath(new URL('../../test-results/', import.meta.url));
const readmePicture = fileURLToPath(new URL('../../demo/screenshot-dashboard.png', import.meta.url));
const README_PICTURE_MAX_BYTES = 200 * 1024;

let harness: DemoHarness;

before(async () => {
  harness = await startDemoHarness({ sessionTtlSeconds: SESSION_TTL_SECONDS });
});
after(async () => {
  await harness?.close();
});

/** Back to the free plan through a webhook, so the backend's entitlement cache is dropped too. */
async function resetToFree(userId: string) {
  const result = await harness.sendEvent('subscription.created', { user_id: userId, plan: 'free' });
  assert.equal(result.outcome, 'delivered', `the reset webhook was not delivered: ${harness.logs.join('\n')}`);
}

describe('demo: the sample app in the dashboard', () => {
  it('saves screenshots of the dashboard with the app, light and dark', async () => {
    await resetToFree(ADA);
    await mkdir(resultsDir, { recursive: true });
    for (const theme of ['light', 'dark'] as const) {
      const { context, page, app } = await openDashboard(harness, { user: ADA, theme, viewport: { width: 1280, height: 800 } });
      try {
        assert.equal(await app.evaluate(() => document.documentElement.dataset.theme), theme);
        await app.locator('mp-gate').getByRole('button', { name: 'Upgrade' }).waitFor();
        await app.locator('#notes li').first().waitFor();
        const path = `${resultsDir}demo-dashboard-${theme}.png`;
        const picture = await page.screenshot({ path });
        assert.ok(picture.length > 10_000, `${path} looks empty`);
        // The README's picture: only when asked for, and only if small enough to commit.
        if (theme === 'light' && process.env.UPDATE_DEMO_SCREENSHOT === '1') {
          assert.ok(picture.length < README_PICTURE_MAX_BYTES, `the README picture is ${picture.length} bytes`);
          await writeFile(readmePicture, picture);
          assert.ok((await stat(readmePicture)).size < README_PICTURE_MAX_BYTES);
        }
      } finally {
        await context.close();
      }
    }
  });

  it('launches with the user and a locked paid feature, and no mp_* parameter left in the address bar', async () => {
    await resetToFree(ADA);
    const { context, app, errors } = await openDashboard(harness, { user: ADA });
    try {
      await app.locator('mp-user-badge').getByText('Ada Lovelace').waitFor();
      await app.locator('mp-plan-badge').getByText('Free', { exact: true }).waitFor();
      await app.locator('mp-usage-meter').getByText(/of 100/).waitFor();
      // Locked: the paywall instead of the export button.
      await app.locator('mp-gate').getByRole('button', { name: 'Upgrade' }).waitFor();
      assert.equal(await app.locator('#export').isVisible(), false, 'the export button shows on the free plan');
      // The free feature works through kit.fetch.
      await app.locator('#notes li').first().waitFor();

      assert.doesNotMatch(app.url(), /[?&]mp_/);
      assert.doesNotMatch(await app.evaluate(() => location.href), /[?&]mp_/);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  it('sends the context token to no server through Referer while the app launches', async () => {
    const from = harness.demo.referers.length;
    const { context, app } = await openDashboard(harness, { user: ADA });
    try {
      await app.locator('#notes li').first().waitFor();
      // The app page loaded its stylesheet, its scripts and the backend through the demo servers…
      const loaded = await app.evaluate(() => performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname));
      for (const path of ['/demo.css', '/app.ts', '/api/marketplace/session', '/api/notes']) assert.ok(loaded.includes(path), `the app did not load ${path}`);
      // …and a page without the embed headers does send a Referer, which the servers record.
      const home = await context.newPage();
      await home.goto(harness.demo.urls.home);
      await home.waitForFunction(() => performance.getEntriesByType('resource').some((entry) => entry.name.endsWith('/demo.css')));
      const seen = harness.demo.referers.slice(from);
      assert.ok(seen.includes(harness.demo.urls.home), `the servers recorded no Referer: ${JSON.stringify(seen)}`);
      assert.deepEqual(
        seen.filter((referer) => /mp_context/.test(referer)),
        [],
        'the app page leaked its context token through Referer',
      );
    } finally {
      await context.close();
    }
  });

  it('hides the gated content until <mp-gate> is defined (demo.css)', async () => {
    const context = await harness.browser.newContext();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The app's module script is held back, as a slow network or a blocked script would.
    await context.route('**/app.ts', async (route) => {
      await released;
      await route.continue();
    });
    try {
      const page = await context.newPage();
      await page.goto(harness.demo.urls.app, { waitUntil: 'commit' });
      await page.locator('#export').waitFor({ state: 'attached' });
      await page.waitForFunction(() => [...document.styleSheets].some((sheet) => sheet.href?.endsWith('/demo.css')));
      assert.equal(await page.evaluate(() => customElements.get('mp-gate')), undefined);
      assert.equal(await page.locator('.app-name').isVisible(), true, 'the page itself did not render');
      assert.equal(await page.locator('#export').isVisible(), false, 'the gated button shows before the gate is defined');
      release();
      // Defined and decided: opened outside the dashboard, the app is signed out and says where to go.
      await page.locator('mp-gate[state="signed-out"][access="locked"]').waitFor({ state: 'attached' });
      await page.locator('#outside').waitFor();
      assert.equal(await page.locator('#export').isVisible(), false);
    } finally {
      release();
      await context.close();
    }
  });

  it('refuses the locked feature on the server too, not only in the page', async () => {
    const { context, app } = await openDashboard(harness, { user: ADA });
    try {
      const answer = await callApi(app, '/notes/export.csv');
      assert.equal(answer.status, 403);
      assert.equal(JSON.parse(answer.body).error.code, 'ERR_ACCESS_DENIED');
    } finally {
      await context.close();
    }
  });

  it('opened outside the dashboard, the app page sends the user to the dashboard, and other origins cannot frame it', async () => {
    const context = await harness.browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(harness.demo.urls.app);
      await page.locator('#outside').getByRole('link', { name: /dashboard/ }).waitFor();
      assert.equal(await page.locator('#outside a').getAttribute('href'), harness.demo.urls.dashboard);
      assert.equal(await page.locator('#note-form').isVisible(), false);

      // Content-Security-Policy: frame-ancestors names the dashboard only: another origin is refused.
      await page.goto(`${harness.demo.urls.backend}/not-a-page`);
      const refused = page.waitForEvent('console', { predicate: (message) => /frame-ancestors/.test(message.text()) });
      await page.evaluate((src) => {
        const frame = document.createElement('iframe');
        frame.src = src;
        document.body.append(frame);
      }, harness.demo.urls.app);
      assert.match((await refused).text(), new RegExp(`frame-ancestors ${harness.demo.urls.simulator}`));
    } finally {
      await context.close();
    }
  });

  it('upgrades from the paywall: plan chooser, confirmation, the gate opens without a reload, the backend serves the export', async () => {
    await resetToFree(ADA);
    const { context, page, app } = await openDashboard(harness, { user: ADA });
    try {
      await app.evaluate(() => Object.assign(window, { __sameDocument: true }));
      await app.locator('#note-form input[name="title"]').fill('Heron, north shore');
      await app.locator('#note-form textarea[name="body"]').fill('=2+2 adults, "fishing", 7am');
      await app.locator('#note-form button[type="submit"]').click();
      await app.locator('#notes').getByText('Heron, north shore').waitFor();
      await app.locator('#note-form input[name="title"]').fill('Tide table');
      await app.locator('#note-form textarea[name="body"]').fill('\t@SUM(A1:A9)');
      await app.locator('#note-form button[type="submit"]').click();
      await app.locator('#notes').getByText('Tide table').waitFor();

      await app.locator('mp-gate').getByRole('button', { name: 'Upgrade' }).click();
      const chooser = page.locator('dialog#upgrade');
      await chooser.waitFor();
      assert.match(await chooser.innerText(), /"export" is needed/);
      await chooser.locator('input[value="pro_annual"]').check();
      await chooser.getByRole('button', { name: 'Confirm' }).click();
      await chooser.waitFor({ state: 'hidden' });

      await app.locator('#export').waitFor();
      await app.locator('mp-plan-badge').getByText('Pro annual').waitFor();
      // Keyboard users are not left on the dashboard's body: the unlocked gate has the focus.
      assert.deepEqual(
        await app.evaluate(() => [document.hasFocus(), document.activeElement?.localName]),
        [true, 'mp-gate'],
      );
      assert.equal(await app.evaluate(() => (window as { __sameDocument?: boolean }).__sameDocument), true, 'the app was reloaded');

      await app.locator('#export').click();
      const preview = app.locator('#csv-preview');
      await preview.waitFor();
      const csv = await preview.innerText();
      assert.match(csv, /^"created_at","title","body"\r\n/);
      assert.match(csv, /Heron, north shore/);
      // Quoted as RFC 4180 wants, and the leading "=" defused so spreadsheets do not run it.
      assert.match(csv, /"'=2\+2 adults, ""fishing"", 7am"/);
      assert.match((await callApi(app, '/notes/export.csv')).body, /,"Tide table","'\t@SUM\(A1:A9\)"\r\n/);
      assert.equal((await callApi(app, '/notes/export.csv')).status, 200);
      await app.locator('#activity [data-event="subscription.created"]').getByText(/pro_annual/).waitFor();
    } finally {
      await context.close();
    }
  });

  // A different plan for each: the marketplace's deliveries carry no id, so two identical bodies within
  // one second would be taken for a replay and the second would not reach the backend's cache.
  for (const [event, plan] of [
    ['subscription.cancelled', 'pro_monthly'],
    ['user.revoked', 'lifetime'],
  ] as const) {
    it(`locks the feature again on a ${event} webhook sent from the simulator's controls, told by the dashboard`, async () => {
      await harness.sendEvent('subscription.created', { user_id: ADA, plan });
      const { context, page, app } = await openDashboard(harness, { user: ADA });
      try {
        await app.locator('#export').waitFor();
        if (event === 'user.revoked') {
          await app.locator('#note-form input[name="title"]').fill('Written before the revoke');
          await app.locator('#note-form').getByRole('button', { name: 'Add note' }).click();
          await app.locator('#notes').getByText('Written before the revoke').waitFor();
        }
        await page.locator('#event-kind').selectOption(event);
        // The lock comes from the dashboard's entitlementsChanged (a refresh of the session), not
        // from a new session the kit would have asked for in time.
        const sessionCalls: string[] = [];
        const record = (request: Request) => {
          const url = new URL(request.url());
          if (url.pathname.endsWith('/session')) sessionCalls.push(`${request.method()} ${url.search}`);
        };
        page.on('request', record);
        await page.locator('#event-form').getByRole('button', { name: 'Send' }).click();
        await app.locator('#export').waitFor({ state: 'hidden' });
        page.off('request', record);
        // The first session call is that refresh. The app reloads its notes on the change at once,
        // and after a user.revoked their 401 makes the kit ask for a new session (POST): that may
        // come before Playwright sees the gate locked, so later calls are not counted.
        assert.equal(sessionCalls[0], 'GET ?refresh=1', `the lock came with the refresh the dashboard asked for: ${sessionCalls.join(', ')}`);
        await page.locator('#event-result').getByText(`${event}: delivered`).waitFor();

        const refused = await callApi(app, '/notes/export.csv');
        assert.equal(refused.status, 403, refused.body);
        await app.locator(`#activity [data-event="${event}"]`).waitFor();
        if (event === 'user.revoked') {
          await app.locator('mp-plan-badge').getByText('No plan').waitFor();
          // The backend deleted the user's notes: the list shows it without a reload.
          await app.locator('#notes').getByText('Written before the revoke').waitFor({ state: 'detached' });
        } else await app.locator('mp-plan-badge').getByText('Cancelled').waitFor();
      } finally {
        await context.close();
      }
    });
  }

  it('writes the notes\' dates in the dashboard\'s locale, also after the locale changes, and the elements switch language live', async () => {
    const { context, page, app } = await openDashboard(harness, { user: KATHERINE });
    try {
      const time = app.locator('#notes time').first();
      await time.waitFor();
      await app.locator('mp-usage-meter [part~="label"]', { hasText: 'API calls' }).waitFor();
      await page.locator('#locale').selectOption('de-DE');
      await app.locator('#notes time', { hasText: /^\d{1,2}\.\d{1,2}\.\d{4}, / }).first().waitFor();
      await app.locator('mp-usage-meter [part~="label"]', { hasText: 'API-Aufrufe' }).waitFor();
      // Right to left in Arabic, with no reload: the same page.
      const loaded = await app.evaluate(() => performance.timeOrigin);
      await page.locator('#locale').selectOption('ar-EG');
      await app.locator('mp-usage-meter [part~="base"][dir="rtl"][lang="ar"]', { hasText: 'استدعاءات API' }).waitFor();
      assert.equal(await app.evaluate(() => performance.timeOrigin), loaded, 'no reload');
    } finally {
      await context.close();
    }
  });

  it('hands every webhook kind to the backend\'s onEvent, unknown kinds included', async () => {
    const result = await harness.sendEvent('invoice.paid', { user_id: KATHERINE });
    assert.equal(result.outcome, 'delivered');
    const entry = harness.demo.backend.activity[0];
    assert.equal(entry?.event, 'invoice.paid');
    assert.equal(entry?.user_id, KATHERINE);
    assert.match(entry?.summary ?? '', /unknown event kind/);
  });

  it('renews an expired session: the next kit.fetch still succeeds, with a new session', async () => {
    const { context, page, app } = await openDashboard(harness, { user: KATHERINE });
    try {
      const bearers: string[] = [];
      page.on('request', (request) => {
        const authorization = request.headers().authorization;
        if (request.url().includes('/api/notes') && authorization) bearers.push(authorization);
      });
      assert.equal((await callApi(app, '/notes')).status, 200);
      const first = bearers.at(-1);
      assert.ok(first, 'kit.fetch sent no bearer token');

      await new Promise((resolve) => setTimeout(resolve, SESSION_TTL_SECONDS * 1000 + 1100));
      // The old session really is over: the backend refuses it.
      const stale = await fetch(`${harness.demo.urls.vite}/api/notes`, { headers: { authorization: first } });
      assert.equal(stale.status, 401);
      assert.equal(((await stale.json()) as { error: { code: string } }).error.code, 'ERR_SESSION_EXPIRED');

      const renewed = await callApi(app, '/notes');
      assert.equal(renewed.status, 200, renewed.body);
      assert.notEqual(bearers.at(-1), first, 'the request went out with the expired session');
      assert.equal(await app.evaluate(() => window.fieldNotes.kit.state), 'ready');
    } finally {
      await context.close();
    }
  });

});

describe('demo: the developer-site page (script-tag bundle)', () => {
  async function openSite() {
    const context = await harness.browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(harness.demo.urls.site);
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${harness.demo.urls.simulator}/oauth/authorize`)),
      page.locator('mp-sign-in-button').getByRole('button', { name: 'Sign in with Marketplace' }).click(),
    ]);
    return { context, page, errors };
  }

  /** Clicks Approve or Deny and waits to be back on the site page (after the callback's redirect). */
  async function decide(page: Page, decision: 'Approve' | 'Deny') {
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(harness.demo.urls.site)),
      page.getByRole('button', { name: decision }).click(),
    ]);
  }

  it('signs in through the simulator’s authorization page, then shows the user badge and the open gate', async () => {
    const { context, page, errors } = await openSite();
    try {
      await page.getByRole('radio', { name: /Alan Turing/ }).check();
      await decide(page, 'Approve');
      assert.equal(page.url(), harness.demo.urls.site);
      assert.ok(
        harness.demo.backend.activity.some((entry) => entry.event === 'user.authorized' && entry.user_id === 'usr_alan'),
        'the backend did not record the user.authorized webhook',
      );
      await page.locator('mp-user-badge').getByText('Alan Turing').waitFor();
      await page.locator('#export-ready').waitFor();
      const cookies = await context.cookies(harness.demo.urls.vite);
      const session = cookies.find((cookie) => cookie.name === 'mp_session');
      assert.ok(session?.httpOnly, 'the session cookie must be HttpOnly');
      // Signed in: sign-out instead of sign-in, and signing out brings sign-in back.
      const signIn = page.locator('mp-sign-in-button').getByRole('button', { name: 'Sign in with Marketplace' });
      assert.equal(await signIn.isVisible(), false, 'a signed-in user is offered sign-in');
      await Promise.all([
        page.waitForResponse((response) => response.request().method() === 'DELETE' && response.url().endsWith('/api/marketplace/session')),
        page.getByRole('button', { name: 'Sign out' }).click(),
      ]);
      await signIn.waitFor();
      assert.equal(await page.getByRole('button', { name: 'Sign out' }).isVisible(), false);
      assert.equal((await context.cookies(harness.demo.urls.vite)).some((cookie) => cookie.name === 'mp_session'), false);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  it('sends an upgrade to the dashboard, where the plan chooser is', async () => {
    const { context, page } = await openSite();
    try {
      await page.getByRole('radio', { name: /Ada Lovelace/ }).check();
      await decide(page, 'Approve');
      await Promise.all([
        page.waitForURL((url) => url.href.startsWith(harness.demo.urls.dashboard)),
        page.locator('mp-gate').getByRole('button', { name: 'Upgrade' }).click(),
      ]);
    } finally {
      await context.close();
    }
  });

  it('stays signed out, and says so, when the user denies', async () => {
    const { context, page } = await openSite();
    try {
      await decide(page, 'Deny');
      await page.locator('#sign-in-error').getByText(/denied/i).waitFor();
      await page.locator('mp-sign-in-button').getByRole('button', { name: 'Sign in with Marketplace' }).waitFor();
      assert.equal(await page.locator('#export-ready').isVisible(), false);
      assert.doesNotMatch(page.url(), /mp_oauth_error/, 'the error parameter stays in the address bar');
      assert.equal((await context.cookies(harness.demo.urls.vite)).some((cookie) => cookie.name === 'mp_session'), false);
    } finally {
      await context.close();
    }
  });
});

describe('demo: the component gallery', () => {
  it('shows every element in every state, light and dark, with its markup, without a server', async () => {
    const context = await harness.browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    const warnings: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') warnings.push(message.text());
    });
    try {
      await page.goto(harness.demo.urls.gallery);
      const tags = ['mp-sign-in-button', 'mp-gate', 'mp-upgrade-button', 'mp-usage-meter', 'mp-user-badge', 'mp-plan-badge'];
      for (const tag of tags) {
        const rows = page.locator(`section#${tag} .case`);
        assert.ok((await rows.count()) >= 4, `${tag} has too few cases`);
        // Each state the base class knows is shown, in both themes.
        for (const state of ['ready', 'loading', 'error', 'not-connected']) {
          for (const theme of ['light', 'dark']) {
            await page.locator(`section#${tag} .preview[data-theme="${theme}"] ${tag}[state="${state}"][theme="${theme}"]`).first().waitFor();
          }
        }
        assert.match(await rows.first().locator('pre.markup').innerText(), new RegExp(`<${tag}`));
      }
      for (const look of ['granted', 'locked', 'expired', 'past-due', 'over-quota']) {
        await page.locator(`mp-gate[access="${look}"]`).first().waitFor();
      }
      for (const level of ['ok', 'warning', 'exceeded']) await page.locator(`mp-usage-meter[level="${level}"]`).first().waitFor();

      // The previews are live: an upgrade on the fake kit opens the gate.
      const row = page.locator('section#mp-gate .case', { hasText: 'click: upgrades' }).locator('.preview[data-theme="light"]');
      await row.getByRole('button', { name: 'Upgrade' }).click();
      await row.locator('mp-gate[access="granted"]').waitFor();

      // So do the renewals of a lapsed plan, on the button and in the paywall.
      const renewals = page.locator('.case', { hasText: /click: (renews|pays)/ });
      assert.equal(await renewals.count(), 5);
      for (const renewal of await renewals.all()) {
        const preview = renewal.locator('.preview[data-theme="light"]');
        await preview.getByRole('button', { name: /^(Renew|Update payment)/ }).click();
        if (await preview.locator('mp-gate').count()) await preview.locator('mp-gate[access="granted"]').waitFor();
        else await preview.getByRole('button', { name: /Current plan/ }).waitFor();
      }
      // The other paywalls play a chooser that the user closes: that changes nothing and is no failure.
      for (const name of ['Locked: needs a plan', 'Locked: no entitlement', 'Over quota (metered)']) {
        const closed = page.locator('section#mp-gate .case', { hasText: name }).locator('.preview[data-theme="light"] mp-gate');
        const outcome = closed.evaluate(
          (gate) =>
            new Promise((resolve) => {
              gate.addEventListener('mp-upgrade', (event) => resolve((event as Event & { outcome: string }).outcome), { once: true });
              gate.addEventListener('mp-error', (event) => resolve((event as Event & { error: { code: string } }).error.code), { once: true });
            }),
        );
        await closed.getByRole('button', { name: 'Upgrade' }).click();
        assert.equal(await outcome, 'dismissed', name);
        assert.notEqual(await closed.getAttribute('access'), 'granted', name);
        assert.doesNotMatch(await closed.evaluate((gate) => gate.shadowRoot?.textContent ?? ''), /did not work/, name);
      }
      assert.deepEqual(errors, []);
      // What the gallery shows on purpose: an avatar that fails to load, elements with no kit.
      const expected = [/^Lit is in dev mode/, /404 \(Not Found\)/, /ERR_KIT_NOT_FOUND/];
      assert.deepEqual(warnings.filter((text) => !expected.some((pattern) => pattern.test(text))), []);
    } finally {
      await context.close();
    }
  });

  it('switches every preview\'s language with its locale picker, right to left in Arabic and Hebrew', async () => {
    const context = await harness.browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await page.goto(harness.demo.urls.gallery);
      const picker = page.getByLabel('Locale of the previews');
      const options = await picker.locator('option').evaluateAll((nodes) => nodes.map((node) => (node as HTMLOptionElement).value));
      assert.deepEqual(options, ['en', 'de', 'fr', 'es', 'it', 'pt-BR', 'nl', 'sv', 'pl', 'ja', 'ko', 'zh-CN', 'zh-TW', 'ar', 'he']);
      const locked = page.locator('section#mp-gate .case', { hasText: 'Locked: no entitlement' }).locator('.preview[data-theme="light"] mp-gate');
      const unconnected = page.locator('section#mp-gate .case', { hasText: 'Not connected' }).locator('.preview[data-theme="light"] mp-gate');
      const card = locked.locator('[part~="card"]');
      await locked.getByRole('heading', { name: 'Unlock export' }).waitFor();
      for (const [locale, heading, notConnected, dir] of [
        ['ar', 'إلغاء قفل export', 'غير متصل بـ Marketplace', 'rtl'],
        ['he', 'פתיחת export', 'אין חיבור ל-Marketplace', 'rtl'],
        ['ja', 'exportのロックを解除', 'Marketplace に接続されていません', 'ltr'],
        ['de', 'Zugriff auf export freischalten', 'Nicht mit Marketplace verbunden', 'ltr'],
      ] as const) {
        await picker.selectOption(locale);
        // In a right-to-left sentence the feature's Latin name is isolated (U+2068 … U+2069).
        await locked.getByRole('heading', { name: new RegExp(`^${heading.replace('export', '\u2068?export\u2069?')}$`) }).waitFor();
        await unconnected.getByText(notConnected).waitFor();
        assert.deepEqual(await card.evaluate((node) => [(node as HTMLElement).lang, getComputedStyle(node).direction]), [locale, dir], locale);
        assert.equal(new URL(page.url()).searchParams.get('locale'), locale);
      }
      // The address opens the gallery in its locale.
      await page.reload();
      await locked.getByRole('heading', { name: 'Zugriff auf export freischalten' }).waitFor();
      assert.equal(await picker.inputValue(), 'de');
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});
