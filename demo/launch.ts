/**
 * Starts the whole demo on loopback: the marketplace simulator, the sample app's backend and the
 * Vite dev server for `demo/`. `npm start` (demo/start.ts) and the end-to-end tests both call
 * `startDemo`, so the tests run the servers exactly as a new user does.
 *
 * The three servers point at each other (the simulator embeds the app page and posts webhooks to
 * the backend; the backend needs the simulator's credentials; Vite proxies to the backend), so the
 * listeners are opened first, each on its port, and wired up once every address is known. That
 * also lets the tests use port 0.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createRedisStores } from 'marketplace-app-kit/redis';
import { applyEmbedPageHeaders, toNodeHandler } from 'marketplace-app-kit/server';
import { startSimulator, type Simulator } from 'marketplace-app-kit/simulator';
import { createServer as createViteServer, type Plugin, type ViteDevServer } from 'vite';
import { createClient } from 'redis';
import { createSampleBackend, createSampleData, MARKETPLACE_BASE, type SampleBackend } from './backend.js';
import { roundRobinProxy } from './proxy.js';

export type DemoService = 'simulator' | 'backend' | 'vite';
export type DemoPorts = Record<DemoService, number>;

export const DEFAULT_PORTS: DemoPorts = { simulator: 4010, backend: 4020, vite: 4030 };
/** Environment variables that override the default ports (read by demo/start.ts). */
export const PORT_ENV: Record<DemoService, string> = {
  simulator: 'DEMO_SIMULATOR_PORT',
  backend: 'DEMO_BACKEND_PORT',
  vite: 'DEMO_VITE_PORT',
};
const SERVICE_NAMES: Record<DemoService, string> = {
  simulator: 'marketplace simulator',
  backend: 'sample app backend',
  vite: 'Vite dev server',
};

const REFERERS_KEPT = 1000;

/** Only loopback: the demo's secrets and test users are never reachable from the network. */
export const DEMO_HOST = '127.0.0.1';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const demoRoot = fileURLToPath(new URL('.', import.meta.url));
const cdnDir = fileURLToPath(new URL('../dist/cdn/', import.meta.url));

/** The pages of the demo, relative to the Vite server's origin. */
export const DEMO_PAGES = { app: '/app.html', gallery: '/gallery.html', site: '/site.html', home: '/' } as const;

export interface StartDemoOptions {
  /** Ports to listen on; 0 picks a free one. Defaults to `DEFAULT_PORTS`. */
  ports?: Partial<DemoPorts>;
  /** Lifetime of the sample backend's app sessions (default: the server module's default). */
  sessionTtlSeconds?: number;
  /**
   * Runs the sample backend as two instances sharing the kit's state on this Redis
   * (`createRedisStores`), behind a round-robin proxy on the backend's port (DEMO_REDIS_URL).
   */
  redisUrl?: string;
  /** Where the servers log (webhooks received, Vite warnings). Default: console.log. */
  log?: (line: string) => void;
  /** Vite's own log level. Default `warn`. */
  viteLogLevel?: 'info' | 'warn' | 'error' | 'silent';
}

export interface DemoUrls {
  /** The simulator's dashboard with the sample app inside. */
  dashboard: string;
  /** The simulator's `{site_url}` (authorize page, API, `/_simulator/...` controls). */
  simulator: string;
  /** The sample app page itself (normally opened by the dashboard, with `mp_*` parameters). */
  app: string;
  gallery: string;
  /** The developer-site page: script-tag bundle, sign-in through the simulator. */
  site: string;
  /** The start page, linking the three above. */
  home: string;
  /** Origin of the Vite server (app, gallery, site, and `/api` proxied to the backend). */
  vite: string;
  /** The backend's own origin (webhooks are posted here directly, server to server). */
  backend: string;
}

export interface Demo {
  urls: DemoUrls;
  simulator: Simulator;
  /** The sample backend (with `redisUrl`, the first of its instances). */
  backend: SampleBackend;
  /** Every instance of the sample backend: one, or two with `redisUrl`. */
  instances: SampleBackend[];
  vite: ViteDevServer;
  /**
   * The `Referer` headers the Vite server and the backend received, oldest first (the last
   * 1,000; the tests check that no context token leaks through them).
   */
  referers: readonly string[];
  /** Stops all three servers. Safe to call more than once. */
  close(): Promise<void>;
}

/** A port is taken: says which service, which port, and the variable that moves it. */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
  constructor(
    readonly service: DemoService,
    readonly port: number,
    options?: { cause?: unknown },
  ) {
    super(
      `Port ${port} (${SERVICE_NAMES[service]}) is already in use. Stop whatever is using it, ` +
        `or pick another port: ${PORT_ENV[service]}=<port> npm start`,
      options,
    );
  }
}

export async function startDemo(options: StartDemoOptions = {}): Promise<Demo> {
  const ports: DemoPorts = { ...DEFAULT_PORTS, ...options.ports };
  const log = options.log ?? ((line: string) => console.log(line));
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    const pending = closers.splice(0).reverse();
    for (const closer of pending) await closer();
  };

  try {
    // 1. The backend's listener. Requests wait for the wiring below (it takes milliseconds and
    //    nothing calls the backend before the simulator exists). With Redis, two instances each
    //    listen on a port of their own, and the backend's port is a round-robin proxy to them.
    const referers: string[] = [];
    const recordReferer = (referer: string) => {
      referers.push(referer);
      if (referers.length > REFERERS_KEPT) referers.splice(0, referers.length - REFERERS_KEPT);
    };
    const wires: Array<(backend: SampleBackend) => void> = [];
    const instanceServer = () => {
      const wired = new Promise<SampleBackend>((resolve) => wires.push(resolve));
      return createHttpServer(
        toNodeHandler(async (request: Request) => {
          const referer = request.headers.get('referer');
          if (referer !== null) recordReferer(referer);
          return (await wired).handle(request);
        }),
      );
    };
    let backendServer: Server;
    if (options.redisUrl === undefined) {
      backendServer = instanceServer();
    } else {
      const targets: Array<{ name: string; url: string }> = [];
      for (const name of ['instance A', 'instance B']) {
        const server = instanceServer();
        const port = await listen(server, 'backend', 0);
        closers.push(() => closeHttp(server));
        targets.push({ name, url: `http://${DEMO_HOST}:${port}` });
      }
      backendServer = roundRobinProxy(targets, log);
    }
    const backendPort = await listen(backendServer, 'backend', ports.backend);
    closers.push(() => closeHttp(backendServer));
    const backendUrl = `http://${DEMO_HOST}:${backendPort}`;

    // 2. Vite. The dashboard origin is only known once the simulator runs; the plugin reads it
    //    per request.
    const wiring: Wiring = { hostOrigins: [], dashboardUrl: '', planNames: {}, recordReferer };
    const vite = await startVite(ports.vite, backendUrl, wiring, options.viteLogLevel ?? 'warn');
    closers.push(() => vite.close());
    const viteUrl = `http://${DEMO_HOST}:${(vite.httpServer!.address() as AddressInfo).port}`;

    // 3. The simulator, pointed at the app page, the backend's webhook route and its callback.
    const simulator = await startSimulator({
      port: ports.simulator,
      appName: 'Field Notes',
      appUrl: `${viteUrl}${DEMO_PAGES.app}`,
      webhookUrl: `${backendUrl}${MARKETPLACE_BASE}/webhooks`,
      redirectUris: [`${viteUrl}${MARKETPLACE_BASE}/oauth/callback`],
    }).catch((error: unknown) => {
      throw isAddressInUse(error) ? new PortInUseError('simulator', ports.simulator, { cause: error }) : error;
    });
    closers.push(() => simulator.close());
    const dashboardOrigin = new URL(simulator.dashboardUrl).origin;
    wiring.hostOrigins = [dashboardOrigin];
    wiring.dashboardUrl = simulator.dashboardUrl;
    wiring.planNames = simulator.planNames;

    // 4. The backend itself, with the simulator's credentials: one instance, or with Redis two,
    //    each on a connection of its own. They share one session secret (a session one mints,
    //    the other accepts) and the app's own notes (as instances share the app's database).
    const sessionSecret = randomBytes(32).toString('base64url');
    const data = createSampleData();
    const instances: SampleBackend[] = [];
    for (const wire of wires) {
      let stores;
      if (options.redisUrl !== undefined) {
        const client = await createClient({ url: options.redisUrl })
          .on('error', () => undefined)
          .connect();
        closers.push(async () => void (await client.quit().catch(() => undefined)));
        stores = createRedisStores({ client, prefix: 'mpkit-demo:', log });
      }
      const backend = createSampleBackend({
        siteUrl: simulator.siteUrl,
        clientId: simulator.clientId,
        clientSecret: simulator.clientSecret,
        apiKey: simulator.testApiKey,
        webhookSecret: simulator.webhookSecret,
        hostOrigins: wiring.hostOrigins,
        publicOrigin: viteUrl,
        sessionSecret,
        data,
        ...(stores === undefined ? {} : { stores }),
        ...(options.sessionTtlSeconds === undefined ? {} : { sessionTtlSeconds: options.sessionTtlSeconds }),
        log,
      });
      wire(backend);
      instances.push(backend);
    }
    const backend = instances[0]!;

    return {
      urls: {
        dashboard: simulator.dashboardUrl,
        simulator: simulator.siteUrl,
        app: `${viteUrl}${DEMO_PAGES.app}`,
        gallery: `${viteUrl}${DEMO_PAGES.gallery}`,
        site: `${viteUrl}${DEMO_PAGES.site}`,
        home: `${viteUrl}${DEMO_PAGES.home}`,
        vite: viteUrl,
        backend: backendUrl,
      },
      simulator,
      backend,
      instances,
      vite,
      referers,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** What the pages learn of the simulator once it runs. */
interface Wiring {
  hostOrigins: string[];
  dashboardUrl: string;
  /** The simulator's plans' display names, for `createKit({ planNames })` (docs/runtime.md). */
  planNames: Readonly<Record<string, string>>;
  recordReferer(referer: string): void;
}

async function startVite(
  port: number,
  backendUrl: string,
  wiring: Wiring,
  logLevel: NonNullable<StartDemoOptions['viteLogLevel']>,
): Promise<ViteDevServer> {
  const vite = await createViteServer({
    configFile: false,
    root: demoRoot,
    // Its own cache, so that the demo and the browser test runner never rebuild each other's.
    cacheDir: `${repoRoot}node_modules/.vite/demo`,
    logLevel,
    clearScreen: false,
    appType: 'mpa',
    resolve: {
      // The pages import the package by name, as an app would; in the demo that is the source,
      // so edits to src/ show up without a build.
      alias: [
        { find: /^marketplace-app-kit\/elements$/, replacement: `${repoRoot}src/elements/index.ts` },
        { find: /^marketplace-app-kit$/, replacement: `${repoRoot}src/runtime/index.ts` },
      ],
    },
    server: {
      host: DEMO_HOST,
      port,
      strictPort: true,
      // Same origin for the page and its backend: no CORS, and the OAuth session cookie is
      // first-party on the developer-site page.
      proxy: { '/api': { target: backendUrl } },
      fs: { allow: [repoRoot] },
    },
    optimizeDeps: {
      // Crawl every page up front so that dependencies are pre-bundled before the first page
      // load (a late discovery would reload the page under the user's, or a test's, feet).
      entries: ['app.html', 'gallery.html', 'site.html', 'index.html'],
      include: ['@mixer/postmessage-rpc'],
    },
    plugins: [demoPages(wiring)],
  });
  try {
    await vite.listen();
  } catch (error) {
    await vite.close();
    throw isAddressInUse(error) ? new PortInUseError('vite', port, { cause: error }) : error;
  }
  return vite;
}

/** The file a request path names as a static server reads it: decoded, slashes and dot segments resolved. */
function servedPath(path: string): string {
  try {
    return new URL(decodeURIComponent(path).replace(/\/{2,}/g, '/'), 'http://demo').pathname;
  } catch {
    return path; // not decodable: no file is served for it either
  }
}

/**
 * - the embed page's headers on the app page (`applyEmbedPageHeaders`): only the dashboard may
 *   frame it, and nothing it loads is sent its address, which holds the context token;
 * - every `Referer` is recorded (`Demo.referers`);
 * - `%MP_HOST_ORIGINS%`, `%MP_DASHBOARD_URL%` and `%MP_PLAN_NAMES%` in the pages become the
 *   dashboard's origin and address and the plans' names (JSON), known only at start-up;
 * - `/cdn/*` serves the script-tag bundle built into dist/cdn by `npm run build`, and its locale packs.
 */
function demoPages(wiring: Wiring): Plugin {
  return {
    name: 'marketplace-app-kit-demo',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const path = (req.url ?? '/').split('?')[0]!;
        if (req.headers.referer !== undefined) wiring.recordReferer(req.headers.referer);
        // Vite serves the page under other spellings too (//app.html, /%61pp.html): each gets the headers.
        if (servedPath(path) === DEMO_PAGES.app) applyEmbedPageHeaders(res, wiring.hostOrigins);
        if (!path.startsWith('/cdn/')) return next();
        const file = `${cdnDir}${path.slice('/cdn/'.length)}`;
        // The bundle, and its locale packs in locales/ beside it.
        if (!/^\/cdn\/(locales\/)?[\w.-]+\.js$/.test(path) || !existsSync(file)) {
          res.statusCode = 404;
          res.end(`Not found: ${path} (run npm run build)`);
          return;
        }
        res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
        res.setHeader('Cache-Control', 'no-cache');
        createReadStream(file).pipe(res);
      });
    },
    transformIndexHtml(html) {
      return html
        .replaceAll('%MP_HOST_ORIGINS%', wiring.hostOrigins.join(' '))
        .replaceAll('%MP_DASHBOARD_URL%', wiring.dashboardUrl)
        // In an attribute: its quotes and ampersands escaped.
        .replaceAll('%MP_PLAN_NAMES%', JSON.stringify(wiring.planNames).replaceAll('&', '&amp;').replaceAll('"', '&quot;'));
    },
  };
}

async function listen(server: Server, service: DemoService, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(service, port, { cause: error }) : error);
    };
    server.once('error', onError);
    server.listen(port, DEMO_HOST, () => {
      server.off('error', onError);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

function closeHttp(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function isAddressInUse(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EADDRINUSE' || /EADDRINUSE|already in use/i.test(error.message) || isAddressInUse(error.cause);
}
