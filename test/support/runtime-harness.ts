/**
 * Two real origins for the runtime's end-to-end tests and benchmark: a dashboard ("host") page on
 * one loopback port that embeds the app page of another port, a real `createAppBackend` on the
 * app's origin, a fake marketplace API behind it, and a third origin for hostile frames.
 *
 * The runtime and the host bridge are built with Vite into a temporary directory (the runtime as
 * an IIFE with the global `MarketplaceRuntime`, the host with the project's `--mode host` config),
 * so the tests never run against a stale `dist/`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { build } from 'vite';
import { createAppBackend, earlyLaunchScript, toNodeHandler, type AppBackend } from '../../src/server/index.js';
import { signContextToken } from '../../src/server/signers.js';
import type { Entitlement, Profile } from '../../src/shared/schemas.js';
import { closeServer, listenOnLoopback } from './loopback.js';
import { launchChromium } from './browser.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLIENT_ID = 'cli_runtime_e2e';
export const CLIENT_SECRET = 'client-secret-for-the-runtime-e2e-tests-0123456789';
const SESSION_SECRET = 'session-secret-for-the-runtime-e2e-tests-0123456789';
const WEBHOOK_SECRET = 'webhook-secret-for-the-runtime-e2e-tests-0123456789';
export const APP_ID = 'app_runtime';
export const USER: Profile = { id: 'usr_ada', email: 'ada@example.com', name: 'Ada Lovelace', avatar_url: 'https://example.com/ada.png' };
export const BASIC: Entitlement = {
  user_id: USER.id,
  app_id: APP_ID,
  plan: 'basic',
  status: 'active',
  features: ['reports'],
  usage: { api_calls: 3, limit: 100 },
  expires_at: null,
};
export const PRO: Entitlement = { ...BASIC, plan: 'pro', features: ['reports', 'export'] };

export interface LoggedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  /** The Referer header as it arrived (absent: undefined). */
  referer: string | undefined;
  body: string;
}

/** When a session token (a JWT) expires, in ms since the epoch. */
export function tokenExpiry(token: string): number {
  return (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp * 1000;
}

/** Resolves once the wall clock has passed `time` (ms since the epoch). */
export async function clockPast(time: number): Promise<void> {
  while (Date.now() <= time) await new Promise((resolve) => setTimeout(resolve, Math.max(10, time - Date.now() + 1)));
}

export interface RuntimeHarness {
  browser: Browser;
  hostOrigin: string;
  appOrigin: string;
  evilOrigin: string;
  /**
   * An app backend on an origin of its own, which lists the app's origin in `corsOrigins` and lets
   * each user exchange one context token (`maxExchangesPerUser: 1`); its routes are at `/api/marketplace`.
   */
  crossOrigin: string;
  /** Every request that reached `crossOrigin`. */
  crossRequests: LoggedRequest[];
  /** Every request that reached the app's origin (pages, backend routes, broken backends). */
  appRequests: LoggedRequest[];
  /** Requests to the session routes only. */
  sessionRequests(): LoggedRequest[];
  /**
   * The entitlement the fake marketplace answers for USER; null answers 404. Setting it also drops
   * the backends' cached entitlement, as the marketplace's webhook for the change would.
   */
  entitlement: Entitlement | null;
  /** Tokens `/api/data` refuses with 401 although they are valid (a revoked session); `*` refuses all. */
  revokedTokens: Set<string>;
  /** A fresh context token as the marketplace signs it. */
  contextToken(options?: { host?: string; ttlSeconds?: number }): Promise<string>;
  /** The app's embed URL with `mp_*` parameters, plus `kit` options for the page when given. */
  launchUrl(options?: { host?: string; theme?: string; locale?: string; kit?: Record<string, unknown>; path?: string }): Promise<string>;
  close(): Promise<void>;
}

interface Listening {
  server: Server;
  origin: string;
}

export async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listening> {
  const server = createServer(handler);
  return { server, origin: await listenOnLoopback(server) };
}

export const stop = closeServer;

/** Builds the runtime alone as an IIFE with the global `MarketplaceRuntime` into `dir`; returns its code. */
export async function buildRuntimeBundle(dir: string): Promise<string> {
  await build({
    configFile: false,
    root: ROOT,
    logLevel: 'silent',
    build: {
      outDir: dir,
      emptyOutDir: false,
      minify: true,
      lib: { entry: join(ROOT, 'src/runtime/index.ts'), name: 'MarketplaceRuntime', formats: ['iife'], fileName: () => 'runtime.js' },
    },
  });
  return readFileSync(join(dir, 'runtime.js'), 'utf8');
}

/** Builds the runtime (IIFE, global `MarketplaceRuntime`) and the host bundle into `dir`. */
export async function buildBundles(dir: string): Promise<{ runtime: string; host: string }> {
  const runtime = await buildRuntimeBundle(dir);
  await build({ configFile: join(ROOT, 'vite.config.ts'), root: ROOT, mode: 'host', logLevel: 'silent', build: { outDir: dir, emptyOutDir: false } });
  return { runtime, host: readFileSync(join(dir, 'marketplace-host.js'), 'utf8') };
}

export const html = (res: ServerResponse, body: string) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body style="margin:0">${body}</body></html>`);
};
export const script = (res: ServerResponse, code: string) => {
  res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' });
  res.end(code);
};
const json = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * The dashboard page: `window.embed(src, behaviour)` adds the app iframe and connects to it. Every
 * handler call lands in `window.calls`; `getContext` asks Node for a fresh token through the
 * exposed `mintContext` (or never answers, or fails, as `behaviour.context` says).
 */
function hostPage(appOrigin: string): string {
  return `<script src="/marketplace-host.js"></script><script>
window.calls = [];
window.embed = (src, behaviour = {}) => {
  const iframe = document.createElement('iframe');
  iframe.id = 'app';
  iframe.style.cssText = 'width:600px;height:150px;border:0';
  const record = (method) => (params) => { window.calls.push({ method, params }); };
  const handlers = {
    getContext: () => {
      window.calls.push({ method: 'getContext' });
      if (behaviour.context === 'never') return new Promise(() => {});
      if (behaviour.context === 'fail') throw new Error('no context for you');
      return window.mintContext().then((context) => ({ context }));
    },
    resize: ({ height }) => { window.calls.push({ method: 'resize', params: { height } }); iframe.style.height = height + 'px'; },
    navigate: record('navigate'),
    openExternal: record('openExternal'),
    toast: record('toast'),
    setTitle: record('setTitle'),
    openUpgrade: async (params) => {
      window.calls.push({ method: 'openUpgrade', params });
      return { outcome: await window.upgrade(params) };
    },
  };
  if (behaviour.connect !== false) {
    window.connection = MarketplaceHost.connectApp(iframe, { appOrigin: ${json(appOrigin)}, handlers, timeoutMs: 2000 });
  }
  iframe.src = src;
  document.body.append(iframe);
  return new Promise((resolve) => iframe.addEventListener('load', () => resolve(), { once: true }));
};
</script>`;
}

/**
 * The app page: loads the runtime from `runtimeSrc` and starts the kit at once (options from the
 * server, overridable with the `kit` query parameter, which is not an mp_* parameter and stays).
 * `window.kitDone` is the start-up promise; `window.kitCalledAt` and `window.kitReadyAt` the page's
 * clock when createKit was called and when it resolved.
 */
export function appPage(hostOrigin: string, kit: Record<string, unknown>, runtimeSrc = '/runtime.js', early = false): string {
  const options = { backend: '/api/marketplace', hostOrigins: [hostOrigin], ...kit };
  // The early exchange goes first, as docs/runtime.md shows it: an inline script before the app's own.
  const earlyScript = early ? `<script>${earlyLaunchScript(options as { backend: string; hostOrigins: string[] })}</script>` : '';
  return `${earlyScript}<div id="content" style="height:120px">app</div><script src="${runtimeSrc}"></script><script>
window.kitCalledAt = performance.now();
window.kitDone = MarketplaceRuntime.createKit(${json(options)}).then((kit) => {
  window.kitReadyAt = performance.now();
  window.kit = kit;
  return kit.state;
}, (error) => 'rejected:' + error.code);
</script>`;
}

export async function startRuntimeHarness(): Promise<RuntimeHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'mp-runtime-e2e-'));
  const bundles = await buildBundles(dir);
  const appRequests: LoggedRequest[] = [];
  const revokedTokens = new Set<string>();
  const state = { entitlement: BASIC as Entitlement | null };
  let appOrigin = '';

  const marketplace = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/api/v1/entitlements' && url.searchParams.get('user_id') === USER.id && state.entitlement) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(state.entitlement));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'not_found', message: 'No entitlement' } }));
  });

  // Hosts are filled in once the host server listens; the backends are created after that.
  const host = await listen((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/marketplace-host.js') return script(res, bundles.host);
    if (path === '/host') return html(res, hostPage(appOrigin));
    if (path === '/other') return html(res, '<p>another dashboard window</p>');
    res.writeHead(404).end();
  });
  const evil = await listen((_req, res) => html(res, '<p>evil</p>'));

  const backendOptions = {
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    siteUrl: marketplace.origin,
    apiKey: 'live_runtime_e2e',
    sessionSecret: SESSION_SECRET,
    webhookSecret: WEBHOOK_SECRET,
    hostOrigins: [host.origin],
    entitlementTtlMs: 60_000,
  };
  const backend: AppBackend = createAppBackend(backendOptions);
  // Sessions of two seconds, for the renewal tests.
  const shortBackend: AppBackend = createAppBackend({ ...backendOptions, basePath: '/short/api/marketplace', sessionTtlSeconds: 2 });
  const serveBackend = toNodeHandler(backend);
  const serveShort = toNodeHandler(shortBackend);

  const app = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const log = (body: string) =>
      appRequests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, authorization: req.headers.authorization, referer: req.headers.referer, body });
    if (url.pathname.startsWith('/api/marketplace/')) {
      // The backend reads the body itself; the log keeps only whether the request had one.
      log(req.headers['content-length'] ?? '');
      return serveBackend(req, res);
    }
    if (url.pathname.startsWith('/short/api/marketplace/')) {
      log(req.headers['content-length'] ?? '');
      return serveShort(req, res);
    }
    log('');
    if (url.pathname === '/runtime.js') return script(res, bundles.runtime);
    if (url.pathname === '/app' || url.pathname === '/app/other') {
      const kit = url.searchParams.get('kit');
      return html(res, appPage(host.origin, kit ? (JSON.parse(kit) as Record<string, unknown>) : {}, '/runtime.js', url.searchParams.has('early')));
    }
    if (url.pathname === '/blank') return html(res, '<p>blank</p>');
    if (url.pathname === '/api/data') {
      const request = new Request(`${appOrigin}${url.pathname}`, { headers: { authorization: req.headers.authorization ?? '' } });
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const base = url.searchParams.get('short') ? shortBackend : backend;
      void base.requireSession(request).then(
        (session) => {
          const ok = !(token && (revokedTokens.has(token) || revokedTokens.has('*')));
          res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
          res.end(JSON.stringify(ok ? { user: session.userId } : { error: { code: 'ERR_SESSION_INVALID', message: 'revoked' } }));
        },
        () => {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'ERR_SESSION_INVALID', message: 'no session' } }));
        },
      );
      return;
    }
    // Broken backends: /broken/<kind>/session.
    if (url.pathname === '/broken/500/session') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
    if (url.pathname === '/broken/html/session') return html(res, '<h1>Welcome to nginx</h1>');
    if (url.pathname === '/broken/slow/session') return; // never answers; closed with the server
    res.writeHead(404).end();
  });
  appOrigin = app.origin;
  const crossRequests: LoggedRequest[] = [];
  const serveCross = toNodeHandler(createAppBackend({ ...backendOptions, corsOrigins: [app.origin], maxExchangesPerUser: 1 }));
  const cross = await listen((req, res) => {
    crossRequests.push({ method: req.method ?? 'GET', path: req.url ?? '/', authorization: req.headers.authorization, referer: req.headers.referer, body: '' });
    return serveCross(req, res);
  });

  const browser = await launchChromium();

  const contextToken = (options: { host?: string; ttlSeconds?: number } = {}) =>
    signContextToken({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      issuer: marketplace.origin,
      host: options.host ?? host.origin,
      appId: APP_ID,
      user: USER,
      ...(options.ttlSeconds === undefined ? {} : { ttlSeconds: options.ttlSeconds }),
    });

  return {
    browser,
    hostOrigin: host.origin,
    appOrigin: app.origin,
    evilOrigin: evil.origin,
    crossOrigin: cross.origin,
    crossRequests,
    appRequests,
    sessionRequests: () => appRequests.filter((r) => /\/session(\?|$)/.test(r.path)),
    get entitlement() {
      return state.entitlement;
    },
    set entitlement(value) {
      state.entitlement = value;
      backend.client.invalidate(USER.id);
      shortBackend.client.invalidate(USER.id);
    },
    revokedTokens,
    contextToken,
    async launchUrl(options = {}) {
      const url = new URL(`${app.origin}${options.path ?? '/app'}`);
      // Appended to the path's query as written, as a dashboard appends to the embed URL's.
      const added = new URLSearchParams();
      if (options.kit) added.set('kit', JSON.stringify(options.kit));
      added.set('mp_context', await contextToken());
      added.set('mp_host', options.host ?? host.origin);
      added.set('mp_locale', options.locale ?? 'de-DE');
      added.set('mp_theme', options.theme ?? 'dark');
      url.search = url.search ? `${url.search}&${added}` : `${added}`;
      return url.href;
    },
    async close() {
      await browser.close();
      await Promise.all([stop(app.server), stop(host.server), stop(evil.server), stop(marketplace.server), stop(cross.server)]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Dashboard {
  context: BrowserContext;
  page: Page;
  /** The app's frame inside the dashboard page. */
  app: Frame;
  /** Handler calls the dashboard received, in order. */
  calls(): Promise<Array<{ method: string; params?: Record<string, unknown> }>>;
  close(): Promise<void>;
}

export interface DashboardBehaviour {
  /** What the dashboard's getContext does (default: a fresh token). */
  context?: 'mint' | 'never' | 'fail';
  /** False: no connectApp at all (a dashboard that never answers). */
  connect?: boolean;
  /** What openUpgrade answers; `upgraded` also switches the marketplace to PRO. `throw` fails. */
  upgrade?: 'upgraded' | 'dismissed' | 'throw';
}

/** Opens the dashboard page in a fresh browser context and embeds `src` in it. */
export async function openDashboard(harness: RuntimeHarness, src: string, behaviour: DashboardBehaviour = {}): Promise<Dashboard> {
  const context = await harness.browser.newContext();
  const page = await context.newPage();
  await page.exposeFunction('mintContext', () => harness.contextToken());
  await page.exposeFunction('upgrade', () => {
    if (behaviour.upgrade === 'throw') throw new Error('the plan chooser is broken');
    if ((behaviour.upgrade ?? 'upgraded') === 'upgraded') harness.entitlement = PRO;
    return behaviour.upgrade ?? 'upgraded';
  });
  await page.goto(`${harness.hostOrigin}/host`);
  await page.evaluate(([url, how]) => (window as unknown as HostWindow).embed(url, how), [src, behaviour] as const);
  const app = await (await page.$('#app'))!.contentFrame();
  if (!app) throw new Error('the app frame did not load');
  return {
    context,
    page,
    app,
    calls: () => page.evaluate(() => (window as unknown as HostWindow).calls),
    close: () => context.close(),
  };
}

/** The globals the test pages define. */
export interface HostWindow {
  embed(src: string, behaviour: DashboardBehaviour): Promise<void>;
  calls: Array<{ method: string; params?: Record<string, unknown> }>;
  connection: import('../../src/host/index.js').HostConnection;
}
export interface AppWindow {
  kitDone: Promise<string>;
  kitCalledAt: number;
  kitReadyAt: number;
  kit: import('../../src/runtime/types.js').Kit;
}
