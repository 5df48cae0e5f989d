// The kit under a strict Content-Security-Policy with Trusted Types enforced, in Chromium:
//   1. the script-tag bundle (dist/cdn/marketplace-app-kit.js) on a developer's own site page,
//      signed out and signed in through the simulator's authorization page;
//   2. the ES module runtime and elements (bundled with Vite, the host bridge as its own chunk)
//      inside the simulator's dashboard iframe, with earlyLaunchScript inline under a nonce;
//   3. an element moved into a same-origin iframe's document, where the kit adopts copies of its
//      styles built by that document (constructed sheets, which style-src does not govern).
// Every page records `securitypolicyviolation` events (in every document) and console errors.
// A real createAppBackend serves the session routes next to the pages, on 127.0.0.1.
// Needs `npm run build` first (the script-tag bundle and the dashboard's host bundle from dist/).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { build } from 'vite';
import { earlyLaunchScript, toNodeHandler } from '../../src/server/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { launchChromium } from '../support/browser.js';
import { createSimulatedAppBackend } from '../support/simulator-app.js';
import { startTestSimulator } from '../support/simulator-harness.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const BACKEND = '/api/marketplace';
const NONCE = 'cspNonce0123456789abcdef';

interface Violation {
  doc: string;
  directive: string;
  violated: string;
  blocked: string;
  sample: string;
  source: string;
  line: number;
  disposition: string;
}

/** The policy under test. `frames` allows same-origin frames (case 3 only). */
function policy(sim: Simulator, options: { frames?: boolean; ancestors?: string; trustedTypes?: string } = {}): string {
  return [
    "default-src 'none'",
    `script-src 'self' 'nonce-${NONCE}'`,
    "style-src 'self'",
    `img-src 'self' ${sim.siteUrl}`,
    "connect-src 'self'",
    ...(options.frames ? ["frame-src 'self'"] : []),
    `frame-ancestors ${options.ancestors ?? sim.siteUrl}`,
    "base-uri 'none'",
    "require-trusted-types-for 'script'",
    `trusted-types ${options.trustedTypes ?? 'lit-html'}`,
  ].join('; ');
}

/**
 * First thing in <head>: records every violation of this document's policy (also those of a
 * same-origin child document, into its parent's list).
 */
const COLLECTOR = `<script nonce="${NONCE}">
var shared;
try { shared = window.parent !== window && window.parent.violations; } catch (e) { /* a cross-origin parent: the dashboard */ }
window.violations = shared || [];
window.recordViolations = function (doc, name) {
  doc.addEventListener('securitypolicyviolation', function (e) {
    window.violations.push({ doc: name, directive: e.effectiveDirective, violated: e.violatedDirective, blocked: e.blockedURI,
      sample: e.sample, source: e.sourceFile, line: e.lineNumber, disposition: e.disposition });
  });
};
window.recordViolations(document, location.pathname);
</script>`;

/** The cloak docs/elements/mp-gate.md asks for, as a file: an inline <style> would itself need a nonce. */
const SITE_CSS = 'mp-gate:not(:defined) { display: none; }\nbody { font-family: serif; }\n';

const ELEMENTS = `
<mp-sign-in-button></mp-sign-in-button>
<mp-user-badge></mp-user-badge>
<mp-plan-badge></mp-plan-badge>
<mp-usage-meter></mp-usage-meter>
<mp-upgrade-button plan="pro_annual" feature="export"></mp-upgrade-button>
<mp-gate feature="export" plan="pro_monthly pro_annual lifetime"><p id="export">Export is ready</p></mp-gate>
<mp-gate feature="sso" plan="business"><p id="sso">SSO settings</p></mp-gate>`;

const doc = (head: string, body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>CSP</title>
${COLLECTOR}<link rel="stylesheet" href="/site.css">${head}</head><body>${body}</body></html>`;

const scriptTag = `<script src="/marketplace-app-kit.js" data-backend="${BACKEND}" data-host-origins="SIM"></script>`;

let sim: Simulator;
let browser: Browser;
let server: Server;
let origin: string;
let assetsDir: string;
const contexts: BrowserContext[] = [];
/** path → [html, Content-Security-Policy]. */
const pages = new Map<string, [string, string]>();

before(async () => {
  // The ES module build a bundler would make of `marketplace-app-kit` + `marketplace-app-kit/elements`.
  assetsDir = mkdtempSync(join(tmpdir(), 'mpkit-csp-'));
  await build({
    configFile: false,
    root,
    logLevel: 'silent',
    build: {
      outDir: assetsDir,
      emptyOutDir: false,
      minify: true,
      lib: {
        entry: { runtime: join(root, 'src/runtime/index.ts'), elements: join(root, 'src/elements/index.ts') },
        formats: ['es'],
        fileName: (_format, name) => `${name}.js`,
      },
    },
  });
  writeFileSync(
    join(assetsDir, 'page.js'),
    `import { createKit } from './runtime.js';
import './elements.js';
window.kitReady = createKit({ backend: ${JSON.stringify(BACKEND)}, hostOrigins: [window.SIM_ORIGIN] }).then((kit) => { window.kit = kit; return kit.state; });
`,
  );
  const cdnBundle = readFileSync(join(root, 'dist/cdn/marketplace-app-kit.js'));

  sim = await startTestSimulator({ appName: 'CSP app', redirectUris: [] });
  const backend = toNodeHandler(createSimulatedAppBackend(sim));
  const assets = new Set(readdirSync(assetsDir));
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://app').pathname;
    if (path.startsWith(`${BACKEND}/`)) return backend(req, res);
    const js = (body: string | Buffer) => void res.writeHead(200, { 'content-type': 'text/javascript' }).end(body);
    if (path === '/marketplace-app-kit.js') return js(cdnBundle);
    if (path.startsWith('/assets/') && assets.has(path.slice(8))) return js(readFileSync(join(assetsDir, path.slice(8))));
    if (path === '/site.css') return void res.writeHead(200, { 'content-type': 'text/css' }).end(SITE_CSS);
    const page = pages.get(path);
    if (page) return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': page[1] }).end(page[0]);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sim.configure({
    app_url: `${origin}/embed`,
    webhook_url: `${origin}${BACKEND}/webhooks`,
    redirect_uris: [`${origin}${BACKEND}/oauth/callback`],
  });
  browser = await launchChromium();
});

after(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await new Promise<void>((resolve) => {
    server?.closeAllConnections();
    server ? server.close(() => resolve()) : resolve();
  });
  await sim?.close();
  if (assetsDir) rmSync(assetsDir, { recursive: true, force: true });
});

/** A fresh browser context and tab; collects page errors and console errors of every frame. */
async function newTab(): Promise<{ tab: Page; errors: string[] }> {
  const context = await browser.newContext();
  contexts.push(context);
  const tab = await context.newPage();
  const errors: string[] = [];
  tab.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  tab.on('console', (message) => {
    // The signed-out GET /session answers 401, shown as a failed resource load (docs/runtime.md: expected).
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
  });
  return { tab, errors };
}

/** Two animation frames of `target`'s page: the tasks queued before them (a violation report, say) have run. */
const nextFrames = (target: Page | Frame) =>
  target.evaluate(async () => {
    for (let frame = 0; frame < 2; frame++) await new Promise(requestAnimationFrame);
  });
const violations = (target: Page | Frame) => target.evaluate(() => (window as unknown as { violations: Violation[] }).violations);
const kitState = (target: Page | Frame) =>
  target.evaluate(() => (window as unknown as { MarketplaceKit?: { getKit(): { state: string } | null } }).MarketplaceKit?.getKit()?.state ?? null);

/**
 * What each element rendered and whether its own styles apply: every `[part~="base"]` takes
 * the kit's font (system-ui; the page's is serif), the gate card its 1px border and 4px inline-start
 * border, the sign-in button the accent background.
 */
function looks(target: Page | Frame, scope = 'document') {
  return target.evaluate((scopeExpr) => {
    const within = scopeExpr === 'document' ? document : (document.querySelector('iframe') as HTMLIFrameElement).contentDocument!;
    const out: Record<string, unknown> = {};
    for (const el of Array.from(within.querySelectorAll('mp-sign-in-button, mp-user-badge, mp-plan-badge, mp-usage-meter, mp-upgrade-button, mp-gate'))) {
      const root = el.shadowRoot!;
      const view = el.ownerDocument.defaultView!;
      const base = root.querySelector('[part~="base"]');
      const key = el.tagName.toLowerCase() + (el.localName === 'mp-gate' ? `[${el.getAttribute('feature')}]` : '');
      const card = root.querySelector('[part~="card"]');
      const button = root.querySelector('button');
      out[key] = {
        text: (root.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60),
        styled: base ? view.getComputedStyle(base).fontFamily.includes('system-ui') : null,
        ...(card ? { cardBorder: `${view.getComputedStyle(card).borderTopWidth} ${view.getComputedStyle(card).borderLeftWidth}` } : {}),
        ...(button ? { buttonBackground: view.getComputedStyle(button).backgroundColor } : {}),
      };
    }
    return out;
  }, scope);
}

const ACCENT = 'rgb(67, 56, 202)';

/**
 * Proves the policy is in force in `target`'s document (run last: it adds two violations): a
 * string to innerHTML is refused (Trusted Types), and so is an inline <style> without the nonce.
 */
async function assertEnforced(target: Page | Frame): Promise<void> {
  const outcome = await target.evaluate(async () => {
    let innerHTML = 'allowed';
    try {
      document.createElement('div').innerHTML = '<b>x</b>';
    } catch (error) {
      innerHTML = (error as Error).name;
    }
    const style = document.createElement('style');
    style.textContent = '#enforced-probe { color: rgb(1, 2, 3); }';
    const probe = document.createElement('p');
    probe.id = 'enforced-probe';
    document.body.append(style, probe);
    const color = getComputedStyle(probe).color; // computed at once: the sheet is in force or refused on insertion
    style.remove();
    probe.remove();
    return { innerHTML, inlineStyleApplied: color === 'rgb(1, 2, 3)' };
  });
  assert.deepEqual(outcome, { innerHTML: 'TypeError', inlineStyleApplied: false }, 'the policy is not enforced');
}

describe('strict CSP + Trusted Types: the script-tag bundle on the developer\'s own site', () => {
  it('signed out: every element renders styled, with no violation and no console error', async () => {
    pages.set('/own-site.html', [doc(scriptTag.replace('SIM', sim.siteUrl), ELEMENTS), policy(sim)]);
    const { tab, errors } = await newTab();
    await tab.goto(`${origin}/own-site.html`);
    await tab.waitForFunction(() => (window as unknown as { MarketplaceKit?: { getKit(): { state: string } | null } }).MarketplaceKit?.getKit()?.state === 'signed-out');
    await tab.locator('mp-gate[feature="export"] [part~="heading"]', { hasText: 'Sign in to use export' }).waitFor();
    const seen = (await looks(tab)) as Record<string, { text: string; styled: boolean; cardBorder?: string; buttonBackground?: string }>;
    assert.equal(Object.keys(seen).length, 7);
    for (const [tag, look] of Object.entries(seen)) {
      assert.ok(look.text.length > 0, `${tag} rendered nothing`);
      assert.equal(look.styled, true, `${tag} is not styled: ${JSON.stringify(look)}`);
    }
    assert.equal(seen['mp-gate[export]']!.cardBorder, '1px 4px');
    assert.equal(seen['mp-sign-in-button']!.buttonBackground, ACCENT);
    assert.match(seen['mp-sign-in-button']!.text, /Sign in with Marketplace/);
    assert.match(seen['mp-user-badge']!.text, /Not signed in/);
    assert.equal(await tab.locator('#export').isVisible(), false);
    assert.deepEqual(await violations(tab), []);
    assert.deepEqual(errors, []);
    await assertEnforced(tab);
  });

  it('signs in through the simulator, then every element renders styled (avatar from the simulator), with no violation', async () => {
    pages.set('/own-site.html', [doc(scriptTag.replace('SIM', sim.siteUrl), ELEMENTS), policy(sim)]);
    const { tab, errors } = await newTab();
    await tab.goto(`${origin}/own-site.html`);
    await tab.locator('mp-gate[feature="export"] [part~="heading"]', { hasText: 'Sign in to use export' }).waitFor();
    assert.deepEqual(await violations(tab), [], 'signed out');
    await Promise.all([
      tab.waitForURL((url) => url.href.startsWith(`${sim.siteUrl}/oauth/authorize`)),
      tab.locator('mp-sign-in-button').getByRole('button', { name: 'Sign in with Marketplace' }).click(),
    ]);
    await tab.getByRole('radio', { name: /Grace Hopper/ }).check();
    await Promise.all([tab.waitForURL((url) => url.href.startsWith(`${origin}/own-site.html`)), tab.getByRole('button', { name: 'Approve' }).click()]);
    await tab.waitForFunction(() => (window as unknown as { MarketplaceKit?: { getKit(): { state: string } | null } }).MarketplaceKit?.getKit()?.state === 'ready');
    assert.equal(await kitState(tab), 'ready');
    await tab.locator('#export').waitFor({ state: 'visible' });
    await tab.locator('mp-user-badge').getByText('Grace Hopper').waitFor();
    await tab.locator('mp-gate[feature="sso"] [part~="heading"]', { hasText: 'Unlock sso' }).waitFor();
    const seen = (await looks(tab)) as Record<string, { text: string; styled: boolean | null; cardBorder?: string; buttonBackground?: string }>;
    for (const [tag, look] of Object.entries(seen)) {
      if (tag === 'mp-gate[export]') continue; // granted: shows the page's own slotted content, no base part
      assert.ok(look.text.length > 0, `${tag} rendered nothing`);
      assert.equal(look.styled, true, `${tag} is not styled: ${JSON.stringify(look)}`);
    }
    assert.equal(seen['mp-gate[sso]']!.cardBorder, '1px 4px');
    assert.equal(seen['mp-gate[sso]']!.buttonBackground, ACCENT);
    assert.match(seen['mp-plan-badge']!.text, /pro_monthly/);
    assert.match(seen['mp-usage-meter']!.text, /240/);
    // The meter's fill width is set as a property binding (`.style=`, CSSOM): allowed without 'unsafe-inline'.
    const fill = await tab.locator('mp-usage-meter').evaluate((el) => {
      const indicator = el.shadowRoot!.querySelector('[part~="indicator"]') as HTMLElement;
      return { inline: indicator.style.width, computed: getComputedStyle(indicator).width !== '0px' };
    });
    assert.deepEqual(fill, { inline: '2.4%', computed: true });
    // The avatar, on the simulator's origin (img-src), loaded.
    const avatar = await tab.locator('mp-user-badge').evaluate(async (el) => {
      const img = el.shadowRoot!.querySelector('img')!;
      await img.decode().catch(() => {});
      return { src: img.src, loaded: img.naturalWidth > 0 };
    });
    assert.equal(avatar.loaded, true, JSON.stringify(avatar));
    assert.ok(avatar.src.startsWith(sim.siteUrl));
    assert.deepEqual(await violations(tab), []);
    assert.deepEqual(errors, []);
    await assertEnforced(tab);
  });
});

describe('strict CSP + Trusted Types: the ES module runtime and elements inside the simulator\'s dashboard', () => {
  it('the early exchange (nonce), the kit, the elements and the host bridge chunk work, with no violation', async () => {
    const early = earlyLaunchScript({ backend: BACKEND, hostOrigins: [sim.siteUrl] });
    const head = `<script nonce="${NONCE}">window.SIM_ORIGIN = ${JSON.stringify(sim.siteUrl)};</script>
<script nonce="${NONCE}">${early}</script>
<script type="module" src="/assets/page.js"></script>`;
    pages.set('/embed', [doc(head, ELEMENTS), policy(sim)]);
    const { tab, errors } = await newTab();
    const exchanges: string[] = [];
    const assetsLoaded: string[] = [];
    tab.on('request', (request) => {
      if (request.url() === `${origin}${BACKEND}/session`) exchanges.push(request.method());
      if (request.url().startsWith(`${origin}/assets/`)) assetsLoaded.push(request.url().slice(origin.length + 8));
    });
    await tab.goto(`${sim.dashboardUrl}?user=usr_grace`);
    await tab.waitForFunction(() => document.body.dataset.appReady === 'true');
    const frame = (await (await tab.$('#app-frame'))!.contentFrame())!;
    assert.equal(await frame.evaluate(() => (window as unknown as { kitReady: Promise<string> }).kitReady), 'ready');
    assert.deepEqual(exchanges, ['POST'], 'one exchange, sent by the early script and adopted');
    await frame.locator('#export').waitFor({ state: 'visible' });
    await frame.locator('mp-user-badge').getByText('Grace Hopper').waitFor();
    await frame.locator('mp-gate[feature="sso"] [part~="heading"]', { hasText: 'Unlock sso' }).waitFor();
    const seen = (await looks(frame)) as Record<string, { text: string; styled: boolean | null; cardBorder?: string; buttonBackground?: string }>;
    for (const [tag, look] of Object.entries(seen)) {
      if (tag === 'mp-gate[export]') continue;
      assert.equal(look.styled, true, `${tag} is not styled: ${JSON.stringify(look)}`);
    }
    assert.equal(seen['mp-gate[sso]']!.cardBorder, '1px 4px');
    assert.equal(seen['mp-upgrade-button']!.buttonBackground, ACCENT);
    // The host bridge: its chunk is loaded with import() (script-src 'self'), then a call goes through.
    await frame.evaluate(() => (window as unknown as { kit: { host: { toast(m: string, t: string): Promise<void> } } }).kit.host.toast('CSP ok', 'success'));
    await tab.locator('.toast', { hasText: 'CSP ok' }).waitFor();
    assert.ok(assetsLoaded.some((file) => file.startsWith('host-link')), `the bridge chunk was not loaded on its own: ${assetsLoaded.join(', ')}`);
    assert.deepEqual(await violations(frame), []);
    assert.deepEqual(errors, []);
    await assertEnforced(frame);
  });
});

/**
 * A page with the script-tag bundle and a same-origin iframe; the test moves the export gate and
 * the sign-in button into the iframe's document. `child` is the frame's document: a page served
 * with its own header (`/child.html`), or `about:blank`, which inherits the parent's policy.
 */
async function moveIntoFrame(path: string, child: 'served' | 'blank') {
  const csp = policy(sim, { frames: true, ancestors: `'self' ${sim.siteUrl}` });
  const src = child === 'served' ? '/child.html' : 'about:blank';
  pages.set(path, [doc(scriptTag.replace('SIM', sim.siteUrl), `${ELEMENTS}<iframe src="${src}" title="child"></iframe>`), csp]);
  pages.set('/child.html', [doc('', '<p>child</p>'), csp]);
  const { tab, errors } = await newTab();
  await tab.goto(`${origin}${path}`);
  await tab.locator('mp-gate[feature="export"] [part~="heading"]', { hasText: 'Sign in to use export' }).waitFor();
  await tab.waitForFunction(() => (document.querySelector('iframe') as HTMLIFrameElement).contentDocument?.readyState === 'complete');
  await tab.evaluate(() => {
    const child = (document.querySelector('iframe') as HTMLIFrameElement).contentDocument!;
    const w = window as unknown as { recordViolations(doc: Document, name: string): void };
    if (child.URL === 'about:blank') w.recordViolations(child, 'about:blank');
    child.body.append(document.querySelector('mp-gate[feature="export"]')!, document.querySelector('mp-sign-in-button')!);
  });
  // Lit renders the moved elements in a microtask; a refused style is reported in a task before the frames to come.
  await nextFrames(tab);
  const seen = (await looks(tab, 'iframe')) as Record<string, { text: string; styled: boolean; cardBorder?: string; buttonBackground?: string }>;
  return { errors, seen, violations: await violations(tab) };
}

describe('strict CSP + Trusted Types: an element moved into a same-origin iframe document', () => {
  for (const child of ['served', 'blank'] as const) {
    it(`stays styled under style-src 'self', with no nonce and no violation (${child === 'served' ? '/child.html' : 'about:blank'})`, async () => {
      const { seen, violations: found, errors } = await moveIntoFrame(`/frame-${child}.html`, child);
      assert.deepEqual(Object.keys(seen).sort(), ['mp-gate[export]', 'mp-sign-in-button']);
      assert.equal(seen['mp-gate[export]']!.cardBorder, '1px 4px');
      assert.equal(seen['mp-gate[export]']!.styled, true);
      assert.equal(seen['mp-sign-in-button']!.buttonBackground, ACCENT);
      assert.deepEqual(found, []);
      assert.deepEqual(errors, []);
    });
  }
});

describe('strict CSP + Trusted Types: the Trusted Types policy name', () => {
  it('without lit-html in trusted-types the bundle cannot create Lit\'s policy and does not start (lit-html is required)', async () => {
    pages.set('/no-lit-policy.html', [doc(scriptTag.replace('SIM', sim.siteUrl), ELEMENTS), policy(sim, { trustedTypes: 'other-policy' })]);
    const { tab, errors } = await newTab();
    await tab.goto(`${origin}/no-lit-policy.html`);
    await tab.waitForFunction(() => (window as unknown as { violations: unknown[] }).violations.length > 0);
    await nextFrames(tab); // any further violation is reported by then
    const found = await violations(tab);
    assert.deepEqual(found.map((v) => [v.directive, v.sample]), [['trusted-types', 'lit-html']]);
    assert.match(found[0]!.source, /\/marketplace-app-kit\.js$/);
    // The bundle threw while loading: its top-level `var MarketplaceKit` exists but was never set.
    assert.deepEqual(await tab.evaluate(() => [typeof (window as unknown as { MarketplaceKit: unknown }).MarketplaceKit, customElements.get('mp-gate')]), ['undefined', undefined]);
    // Chromium's own console line for the violation, then the exception that stops the bundle.
    assert.equal(errors.length, 2, errors.join('\n'));
    assert.match(errors[0]!, /Creating a TrustedTypePolicy named 'lit-html' violates/);
    assert.match(errors[1]!, /createPolicy.*Policy "lit-html" disallowed/);
  });

  it('loaded twice, with trusted-types lit-html \'allow-duplicates\': no error, one kit, elements styled', async () => {
    pages.set('/twice-dup.html', [doc(scriptTag.replace('SIM', sim.siteUrl).repeat(2), ELEMENTS), policy(sim, { trustedTypes: "lit-html 'allow-duplicates'" })]);
    const { tab, errors } = await newTab();
    await tab.goto(`${origin}/twice-dup.html`);
    await tab.locator('mp-gate[feature="export"] [part~="heading"]', { hasText: 'Sign in to use export' }).waitFor();
    assert.equal(await kitState(tab), 'signed-out');
    const seen = (await looks(tab)) as Record<string, { styled: boolean; cardBorder?: string }>;
    assert.equal(seen['mp-gate[export]']!.cardBorder, '1px 4px');
    assert.deepEqual(await violations(tab), []);
    assert.deepEqual(errors, []);
  });
});
