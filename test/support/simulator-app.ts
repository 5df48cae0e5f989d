/**
 * A tiny embedded app for the dashboard tests, on its own loopback origin: a page that starts
 * the real browser runtime (built here as an IIFE with Vite) and a real `createAppBackend` behind
 * it, which receives the simulator's webhooks. `/api/protected` needs the app session and can be
 * told to refuse the next call with 401, which makes the kit ask the dashboard for a fresh
 * context token (`getContext`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAppBackend, toNodeHandler, type AppBackend, type AppBackendOptions } from '../../src/server/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { buildRuntimeBundle } from './runtime-harness.js';
import { closeServer, listenOnLoopback } from './loopback.js';

/** Builds `src/runtime/index.ts` as an IIFE (the runtime imports a CommonJS package: it needs bundling). */
export async function buildRuntime(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mpkit-sim-runtime-'));
  try {
    return await buildRuntimeBundle(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface TestApp {
  origin: string;
  /** Sessions exchanged at `POST /api/marketplace/session` (launch and every getContext). */
  sessionExchanges: number;
  /** The next `/api/protected` call answers 401. */
  refuseNext: boolean;
  /** Webhook events the backend accepted. */
  events: string[];
  close(): Promise<void>;
}

function page(hostOrigin: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test app</title></head>
<body style="margin:0;font-family:sans-serif">
<h1>Test app</h1><p id="state">loading</p>
<script src="/runtime.js"></script>
<script>
window.seen = [];
window.kitReady = MarketplaceRuntime.createKit({ backend: '/api/marketplace', hostOrigins: [${JSON.stringify(hostOrigin)}], autoResize: false }).then((kit) => {
  window.kit = kit;
  const note = () => {
    document.getElementById('state').textContent = kit.state + ' ' + (kit.user ? kit.user.id : '');
    window.seen.push({ state: kit.state, plan: kit.entitlement && kit.entitlement.plan, status: kit.entitlement && kit.entitlement.status, theme: kit.theme, locale: kit.locale });
  };
  kit.subscribe(note);
  note();
  return kit.state;
});
</script>
</body></html>`;
}

/** An app backend with `sim`'s credentials, launched from `sim`'s dashboard. */
export function createSimulatedAppBackend(sim: Simulator, extra: Partial<AppBackendOptions> = {}): AppBackend {
  return createAppBackend({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    siteUrl: sim.siteUrl,
    apiKey: sim.testApiKey,
    sessionSecret: 'a-test-session-secret-of-at-least-32-characters',
    webhookSecret: sim.webhookSecret,
    hostOrigins: [sim.siteUrl],
    ...extra,
  });
}

/** Starts the test app for `sim`, and points the simulator's app URL and webhook URL at it. */
export async function startTestApp(sim: Simulator, runtime: string): Promise<TestApp> {
  let server!: Server;
  const app: TestApp = {
    origin: '',
    sessionExchanges: 0,
    refuseNext: false,
    events: [],
    close: () => closeServer(server),
  };
  const backend = createSimulatedAppBackend(sim, { onEvent: (delivery) => void app.events.push(delivery.event) });
  server = createServer(
    toNodeHandler(async (request) => {
      const { pathname } = new URL(request.url);
      if (pathname.startsWith('/api/marketplace/')) {
        if (pathname === '/api/marketplace/session' && request.method === 'POST') app.sessionExchanges += 1;
        return backend(request);
      }
      if (pathname === '/api/protected') {
        if (app.refuseNext) {
          app.refuseNext = false;
          return Response.json({ error: { code: 'ERR_SESSION_EXPIRED', message: 'expired' } }, { status: 401 });
        }
        const session = await backend.requireSession(request);
        return Response.json({ user_id: session.userId });
      }
      if (pathname === '/runtime.js') return new Response(runtime, { headers: { 'content-type': 'text/javascript' } });
      if (pathname === '/favicon.ico') return new Response(null, { status: 204 });
      return new Response(page(sim.siteUrl), { headers: { 'content-type': 'text/html; charset=utf-8' } });
    }),
  );
  app.origin = await listenOnLoopback(server);
  sim.configure({ app_url: `${app.origin}/embed`, webhook_url: `${app.origin}/api/marketplace/webhooks` });
  return app;
}
