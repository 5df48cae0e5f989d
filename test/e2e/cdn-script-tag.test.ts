// The script-tag bundle in plain HTML pages, with no build step on the page's side: built from
// the sources with the project's Vite config, served next to a real createAppBackend (backed by a
// fake marketplace that does the OAuth flow), opened in Chromium. One browser for the whole file.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { build } from 'vite';
import { createAppBackend, signContextToken, toNodeHandler } from '../../src/server/index.js';
import type { Kit } from '../../src/runtime/types.js';
import {
  API_KEY,
  CLIENT_ID,
  CLIENT_SECRET,
  DASHBOARD,
  ENTITLEMENT,
  SESSION_SECRET,
  USER,
  WEBHOOK_SECRET,
  startFakeMarketplace,
  startHttpServer,
  type FakeMarketplace,
  type TestServer,
} from '../support/server-http.js';
import { launchChromium } from '../support/browser.js';
import { HANG_MS } from '../support/waiting.js';

/** What the pages see: the bundle's global, plus the counters the test pages keep. */
interface PageWindow {
  MarketplaceKit: {
    createKit(options: { backend: string; hostOrigins: string[] }): Promise<Kit>;
    getKit(): Kit | null;
    hasAccess: unknown;
    checkAccess: unknown;
    defineElements: unknown;
    MpGate: CustomElementConstructor;
    MpSignInButton: CustomElementConstructor;
    MpUpgradeButton: CustomElementConstructor;
    MpUsageMeter: CustomElementConstructor;
    MpUserBadge: CustomElementConstructor;
    MpPlanBadge: CustomElementConstructor;
  };
  kitsCreated: number;
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const BACKEND = '/api/marketplace';
const ELEMENTS = `
  <mp-sign-in-button></mp-sign-in-button>
  <mp-user-badge></mp-user-badge>
  <mp-plan-badge></mp-plan-badge>
  <mp-usage-meter></mp-usage-meter>
  <mp-gate feature="export"><p id="export">Export is ready</p></mp-gate>
  <mp-gate feature="sso" plan="business"><p id="sso">SSO settings</p></mp-gate>`;

/** The rule docs/elements/mp-gate.md tells every page to add. */
const GATE_CLOAK = 'mp-gate:not(:defined) { display: none; }';

const page = (head: string, body = ELEMENTS) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Script tag</title>
  <script>window.kitsCreated = 0; addEventListener('mp-kit-created', () => window.kitsCreated++);</script>
  ${head}</head><body>${body}</body></html>`;

let bundleDir: string;
let marketplace: FakeMarketplace;
let dashboard: TestServer;
let app: { url: string; server: Server; requests: string[]; pages: Map<string, string> };
let browser: Browser;
const contexts: BrowserContext[] = [];

before(async () => {
  bundleDir = mkdtempSync(join(tmpdir(), 'mpkit-cdn-'));
  await build({ root, configFile: join(root, 'vite.config.ts'), mode: 'production', logLevel: 'silent', build: { outDir: bundleDir, emptyOutDir: true } });
  await build({ root, configFile: join(root, 'vite.config.ts'), mode: 'cdn-dev', logLevel: 'silent', build: { outDir: bundleDir, emptyOutDir: false } });
  await build({ root, configFile: join(root, 'vite.config.ts'), mode: 'host', logLevel: 'silent', build: { outDir: bundleDir, emptyOutDir: false } });
  const hostBundle = readFileSync(join(bundleDir, 'marketplace-host.js'));
  // The scripts and, beside each, its host bridge file.
  const files = new Map(['marketplace-app-kit.js', 'marketplace-app-kit.dev.js', 'marketplace-app-kit-bridge.js', 'marketplace-app-kit-bridge.dev.js'].map((name) => [`/${name}`, readFileSync(join(bundleDir, name))]));

  marketplace = await startFakeMarketplace();
  marketplace.entitlements.set(USER.id, { ...ENTITLEMENT, expires_at: null });
  // A dashboard page framing `?app=`; with `&bridge=1` it also answers the bridge (the host bundle),
  // giving the launch's context and keeping the toasts it is asked for in `window.toasts`.
  dashboard = await startHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', dashboard.url);
    if (url.pathname === '/host.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(hostBundle);
    const src = url.searchParams.get('app') ?? '';
    const host = url.searchParams.has('bridge')
      ? `<script src="/host.js"></script><script>window.toasts = [];
          MarketplaceHost.connectApp(document.querySelector('iframe'), { appOrigin: new URL(${JSON.stringify(src)}).origin, handlers: {
            getContext: () => ({ context: new URL(${JSON.stringify(src)}).searchParams.get('mp_context') }),
            toast: (params) => { window.toasts.push(params.message); } } });</script>`
      : '';
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Dashboard</title><iframe src="${src}" title="App"></iframe>${host}`);
  });

  const backend = toNodeHandler(
    createAppBackend({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      siteUrl: marketplace.siteUrl,
      apiKey: API_KEY,
      sessionSecret: SESSION_SECRET,
      webhookSecret: WEBHOOK_SECRET,
      hostOrigins: [DASHBOARD, dashboard.url],
    }),
  );
  const requests: string[] = [];
  const pages = new Map<string, string>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://app').pathname;
    requests.push(`${req.method} ${path}`);
    if (path.startsWith(`${BACKEND}/`)) return backend(req, res);
    // Also under a path of its own, with its locale packs and bridge file beside it: where a
    // developer serves dist/cdn/ as it is.
    const file = files.get(path.replace(/^\/static\/mpkit\//, '/'));
    if (file) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(file);
    const pack = /^\/static\/mpkit\/locales\/([\w-]+\.js)$/.exec(path)?.[1];
    if (pack && existsSync(join(bundleDir, 'locales', pack))) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(join(bundleDir, 'locales', pack)));
    const html = pages.get(path);
    if (html) return void res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  app = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests, pages };

  browser = await launchChromium();
});

after(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await new Promise<void>((resolve) => {
    app?.server.closeAllConnections();
    app?.server.close(() => resolve());
  });
  await dashboard?.close();
  await marketplace?.close();
  rmSync(bundleDir, { recursive: true, force: true });
});

/** Opens `html` at `path` in a fresh browser context; collects page errors and console warnings. */
async function open(path: string, html: string) {
  app.pages.set(path, html);
  const context = await browser.newContext();
  contexts.push(context);
  const tab = await context.newPage();
  const errors: string[] = [];
  const warnings: string[] = [];
  tab.on('pageerror', (error) => errors.push(error.message));
  tab.on('console', (message) => {
    // Network failures are expected here (401 from GET /session, an unreachable avatar host).
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
    if (message.type() === 'warning') warnings.push(message.text());
  });
  app.requests.length = 0;
  await tab.goto(`${app.url}${path}`);
  return { tab, errors, warnings };
}

const kitState = (target: Page | Frame) => target.evaluate(() => (window as unknown as PageWindow).MarketplaceKit.getKit()?.state ?? null);
const waitForState = (target: Page | Frame, state: string) =>
  target.waitForFunction((expected) => (window as unknown as PageWindow).MarketplaceKit?.getKit()?.state === expected, state);
/** The paywall card heading of the gate for `feature`, once it says `text`. */
const cardHeading = (target: Page | Frame, feature: string, text: string) =>
  target.locator(`mp-gate[feature="${feature}"] [part~="heading"]`, { hasText: text }).waitFor();
const sessionRequests = () => app.requests.filter((line) => line.endsWith(`${BACKEND}/session`));

const scriptTag = (attributes = `data-backend="${BACKEND}" data-host-origins="${DASHBOARD}"`, src = '/marketplace-app-kit.js') =>
  `<script src="${src}" ${attributes}></script>`;
/** The development build's tag: the long explanations. */
const devScriptTag = (attributes?: string) => scriptTag(attributes, '/marketplace-app-kit.dev.js');

describe('the script-tag bundle', () => {
  it('exposes MarketplaceKit, registers every element and starts the kit from its tag', async () => {
    const { tab, errors } = await open('/own-site.html', page(scriptTag()));
    await waitForState(tab, 'signed-out');
    const api = await tab.evaluate(() => {
      const kit = (window as unknown as PageWindow).MarketplaceKit;
      const tags = ['mp-sign-in-button', 'mp-gate', 'mp-upgrade-button', 'mp-usage-meter', 'mp-user-badge', 'mp-plan-badge'];
      return {
        functions: (['createKit', 'getKit', 'hasAccess', 'checkAccess', 'defineElements'] as const).every((name) => typeof kit[name] === 'function'),
        registered: tags.every((tag) => customElements.get(tag) !== undefined),
        classes: customElements.get('mp-gate') === kit.MpGate && customElements.get('mp-usage-meter') === kit.MpUsageMeter,
        embedded: kit.getKit()?.embedded,
        kitsCreated: (window as unknown as PageWindow).kitsCreated,
      };
    });
    assert.deepEqual(api, { functions: true, registered: true, classes: true, embedded: false, kitsCreated: 1 });
    assert.deepEqual(sessionRequests(), [`GET ${BACKEND}/session`]);
    await cardHeading(tab, 'export', 'Sign in to use export');
    assert.equal(await tab.locator('mp-sign-in-button').getByRole('button').innerText(), 'Sign in with Marketplace');
    assert.equal(await tab.locator('mp-user-badge').textContent(), '');
    assert.match((await tab.locator('mp-user-badge').evaluate((el) => el.shadowRoot!.textContent)) ?? '', /Not signed in/);
    assert.deepEqual(errors, []);
  });

  it('on the own site, follows the browser\'s color scheme as it changes', async () => {
    const { tab, errors } = await open('/own-site.html', page(scriptTag()));
    await waitForState(tab, 'signed-out');
    const looks = () => tab.evaluate(() => [(window as unknown as PageWindow).MarketplaceKit.getKit()?.theme, document.querySelector('mp-gate[feature="export"]')?.getAttribute('theme')]);
    assert.deepEqual(await looks(), ['light', 'light']);
    await tab.emulateMedia({ colorScheme: 'dark' });
    await tab.locator('mp-gate[feature="export"][theme="dark"]').waitFor({ state: 'attached' });
    assert.deepEqual(await looks(), ['dark', 'dark']);
    await tab.emulateMedia({ colorScheme: 'light' });
    await tab.locator('mp-gate[feature="export"][theme="light"]').waitFor({ state: 'attached' });
    assert.deepEqual(errors, []);
  });

  it('signs in through the backend and the marketplace, then shows the user, plan (by data-plan-names), usage and unlocked content', async () => {
    const names = `data-plan-names='${JSON.stringify({ [ENTITLEMENT.plan]: 'Gold', business: 'Business' })}'`;
    const { tab, errors } = await open('/own-site.html', page(scriptTag(`data-backend="${BACKEND}" data-host-origins="${DASHBOARD}" ${names}`)));
    await waitForState(tab, 'signed-out');
    const callback = tab.waitForResponse((response) => response.url().includes(`${BACKEND}/oauth/callback`));
    await tab.locator('mp-sign-in-button').getByRole('button').click();
    assert.equal(Math.floor((await callback).status() / 100), 3);
    await waitForState(tab, 'ready');
    assert.equal(new URL(tab.url()).pathname, '/own-site.html');
    await tab.locator('#export').waitFor({ state: 'visible' });
    assert.equal(await tab.locator('#sso').isVisible(), false);
    await cardHeading(tab, 'sso', 'Unlock sso');
    await tab.locator('mp-gate[feature="sso"] [part~="text"]', { hasText: 'Included in the Business plan.' }).waitFor();
    await tab.locator('mp-user-badge').getByText(USER.name).waitFor();
    await tab.locator('mp-plan-badge').getByText('Active').waitFor();
    assert.equal(await tab.locator('mp-plan-badge [part~="plan"]').textContent(), 'Gold');
    await tab.locator('mp-usage-meter').getByText('10 of 1,000').waitFor();
    assert.deepEqual(errors, []);
  });

  it('with the documented cloak, a deferred bundle that is slow to arrive shows no gated content before the gate is defined', async () => {
    app.pages.set('/deferred.html', page(`<style>${GATE_CLOAK}</style>${scriptTag(`defer data-backend="${BACKEND}" data-host-origins="${DASHBOARD}"`)}`));
    const context = await browser.newContext();
    contexts.push(context);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let requested!: () => void;
    const bundleRequested = new Promise<void>((resolve) => (requested = resolve));
    await context.route('**/marketplace-app-kit.js', async (route) => {
      requested();
      await released;
      await route.continue();
    });
    try {
      const tab = await context.newPage();
      // Not waiting for DOMContentLoaded: it waits for the deferred script we are holding.
      await tab.goto(`${app.url}/deferred.html`, { waitUntil: 'commit' });
      await bundleRequested;
      await tab.locator('#export').waitFor({ state: 'attached' });
      assert.equal(await tab.evaluate(() => customElements.get('mp-gate')), undefined);
      assert.equal(await tab.locator('#export').isVisible(), false, 'gated content shows before <mp-gate> is defined');
      assert.equal(await tab.locator('#sso').isVisible(), false);
      // Only the gates are hidden: the undefined elements around them render as usual.
      assert.equal(await tab.locator('mp-user-badge').evaluate((el) => getComputedStyle(el).display), 'inline');
      release();
      await waitForState(tab, 'signed-out');
      await cardHeading(tab, 'export', 'Sign in to use export');
      assert.equal(await tab.locator('mp-gate[feature="export"]').isVisible(), true);
      assert.equal(await tab.locator('#export').isVisible(), false);
    } finally {
      release();
    }
  });

  it('can be loaded twice without an error or a second kit', async () => {
    const between = '<script>window.firstCopy = window.MarketplaceKit;</script>';
    const { tab, errors } = await open('/twice.html', page(scriptTag() + between + scriptTag()));
    await waitForState(tab, 'signed-out');
    const copies = await tab.evaluate(() => {
      const w = window as unknown as PageWindow & { firstCopy: PageWindow['MarketplaceKit'] };
      return {
        secondRan: w.firstCopy !== w.MarketplaceKit,
        firstRegistrationKept: customElements.get('mp-gate') === w.firstCopy.MpGate,
        sameKit: w.firstCopy.getKit() === w.MarketplaceKit.getKit(),
        kitsCreated: w.kitsCreated,
      };
    });
    assert.deepEqual(copies, { secondRan: true, firstRegistrationKept: true, sameKit: true, kitsCreated: 1 });
    assert.deepEqual(sessionRequests(), [`GET ${BACKEND}/session`]);
    await cardHeading(tab, 'export', 'Sign in to use export');
    assert.deepEqual(errors, []);
  });

  it('refuses data-plan-names that are not JSON of texts, with ERR_CONFIG in the console (its explanation in the development build)', async () => {
    const attributes = `data-backend="${BACKEND}" data-host-origins="${DASHBOARD}" data-plan-names="pro: Pro"`;
    for (const [tag, message] of [
      [scriptTag(attributes), /could not start from the script tag: MarketplaceKitError: ERR_CONFIG \(docs\/errors\.md of marketplace-app-kit; the development build says more\)/],
      [devScriptTag(attributes), /could not start from the script tag.*planNames must be an object of texts/s],
    ] as const) {
      const { tab, errors } = await open('/own-site.html', page(tag));
      for (const deadline = Date.now() + HANG_MS; errors.length === 0 && Date.now() < deadline; ) await new Promise((done) => setTimeout(done, 50));
      assert.equal(errors.length, 1);
      assert.match(errors[0]!, message);
      assert.equal(await kitState(tab), null);
    }
  });

  it('takes an empty data-plan-names as absent, as a template that has no names writes it', async () => {
    const { tab, errors } = await open('/empty-names.html', page(scriptTag(`data-backend="${BACKEND}" data-host-origins="${DASHBOARD}" data-plan-names=" "`)));
    await cardHeading(tab, 'export', 'Sign in to use export');
    assert.equal(await kitState(tab), 'signed-out');
    assert.deepEqual(errors, []);
  });

  it('starts nothing without data-backend: elements say "not connected" until the page creates a kit', async () => {
    const { tab, errors, warnings } = await open('/no-backend.html', page(scriptTag('')));
    await tab.locator('mp-gate[feature="export"] [part~="loading"]', { hasText: 'Not connected to Marketplace' }).waitFor();
    assert.equal(await kitState(tab), null);
    assert.deepEqual(sessionRequests(), []);
    assert.equal(warnings.filter((text) => text.includes('ERR_KIT_NOT_FOUND')).length, 1);
    await tab.evaluate((backend) => (window as unknown as PageWindow).MarketplaceKit.createKit({ backend, hostOrigins: [] }), BACKEND);
    await cardHeading(tab, 'export', 'Sign in to use export');
    assert.deepEqual(errors, []);
  });

  it('names a data- attribute it does not read (a typo of data-backend) in a console warning', async () => {
    const attributes = `data-backend-url="${BACKEND}" data-host-origins="${DASHBOARD}"`;
    for (const [tag, warning] of [
      [scriptTag(attributes), '[marketplace-app-kit] The script tag does not read data-backend-url (docs/script-tag.md).'],
      [devScriptTag(attributes), '[marketplace-app-kit] The script tag does not read data-backend-url: it reads data-backend, data-host-origins and data-plan-names.'],
    ] as const) {
      const { tab, warnings } = await open('/typo.html', page(tag));
      await tab.locator('mp-gate[feature="export"] [part~="loading"]', { hasText: 'Not connected to Marketplace' }).waitFor();
      assert.deepEqual(
        warnings.filter((text) => text.includes('does not read')),
        [warning],
      );
    }
  });

  it('loaded as a module script: says so in the console and starts no kit', async () => {
    for (const [tag, message] of [
      [scriptTag(), /No <script> element of its own, so no kit: load it as a classic script \(docs\/script-tag\.md\)/],
      [devScriptTag(), /could not find its own <script> element.*without type="module"/],
    ] as const) {
      const { tab, errors } = await open('/as-module.html', page(tag.replace('<script ', '<script type="module" ')));
      await tab.locator('mp-gate[feature="export"] [part~="loading"]', { hasText: 'Not connected to Marketplace' }).waitFor();
      assert.equal(await tab.evaluate(() => 'MarketplaceKit' in window), false);
      assert.deepEqual(sessionRequests(), []);
      assert.equal(errors.length, 1);
      assert.match(errors[0]!, message);
    }
  });

  it('inside the dashboard: takes host origins separated by commas and spaces, and the launch theme and locale, loading that locale\'s texts from next to itself', async () => {
    const context = await signContextToken({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: marketplace.siteUrl, host: dashboard.url, appId: 'app_1', user: USER });
    const launch = new URLSearchParams({ mp_context: context, mp_host: dashboard.url, mp_theme: 'dark', mp_locale: 'de-DE' });
    const src = '/static/mpkit/marketplace-app-kit.js';
    app.pages.set('/embedded.html', page(scriptTag(`data-backend="${BACKEND}" data-host-origins="https://other.example,  ${dashboard.url} "`, src)));
    const browserContext = await browser.newContext();
    contexts.push(browserContext);
    const tab = await browserContext.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    app.requests.length = 0;
    await tab.goto(`${dashboard.url}/?app=${encodeURIComponent(`${app.url}/embedded.html?${launch}`)}`);
    const frame = tab.frameLocator('iframe');
    const appFrame = tab.frames().find((candidate) => candidate.url().startsWith(app.url))!;
    await waitForState(appFrame, 'ready');
    assert.deepEqual(sessionRequests(), [`POST ${BACKEND}/session`]);
    assert.equal(await appFrame.evaluate(() => (window as unknown as PageWindow).MarketplaceKit.getKit()?.embedded), true);
    assert.equal(await frame.locator('mp-gate[feature="export"]').getAttribute('theme'), 'dark');
    await frame.locator('mp-usage-meter').getByText('10 von 1.000').waitFor();
    await frame.locator('mp-usage-meter').getByText('API-Aufrufe').waitFor();
    await frame.locator('#export').waitFor({ state: 'visible' });
    // The German pack, from locales/ beside the script, and no other.
    assert.deepEqual(app.requests.filter((request) => request.includes('/locales/')), ['GET /static/mpkit/locales/de.js']);
    assert.deepEqual(errors, []);
  });

  it('inside the dashboard: loads its bridge file from beside the script once started, and a call goes through it; the own site never loads it', async () => {
    for (const [tag, file] of [
      [scriptTag, '/marketplace-app-kit-bridge.js'],
      [devScriptTag, '/marketplace-app-kit-bridge.dev.js'],
    ] as const) {
      // A context token is good for one exchange.
      const context = await signContextToken({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: marketplace.siteUrl, host: dashboard.url, appId: 'app_1', user: USER });
      const launch = new URLSearchParams({ mp_context: context, mp_host: dashboard.url });
      app.pages.set('/bridge.html', page(tag(`data-backend="${BACKEND}" data-host-origins="${dashboard.url}"`)));
      const browserContext = await browser.newContext();
      contexts.push(browserContext);
      const tab = await browserContext.newPage();
      const errors: string[] = [];
      tab.on('pageerror', (error) => errors.push(error.message));
      app.requests.length = 0;
      await tab.goto(`${dashboard.url}/?bridge=1&app=${encodeURIComponent(`${app.url}/bridge.html?${launch}`)}`);
      const appFrame = tab.frames().find((candidate) => candidate.url().startsWith(app.url))!;
      await waitForState(appFrame, 'ready');
      await appFrame.evaluate(() => (window as unknown as PageWindow).MarketplaceKit.getKit()!.host!.toast('Saved'));
      assert.deepEqual(await tab.evaluate(() => (window as unknown as { toasts: string[] }).toasts), ['Saved']);
      assert.deepEqual(app.requests.filter((line) => line.includes('-bridge')), [`GET ${file}`]);
      assert.deepEqual(errors, []);
    }
    // The own site: signed out, and no bridge file asked for.
    const { tab } = await open('/own-site.html', page(scriptTag()));
    await waitForState(tab, 'signed-out');
    assert.deepEqual(app.requests.filter((line) => line.includes('-bridge')), []);
  });
});
