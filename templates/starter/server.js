// The app's server: node:http, with marketplace-app-kit/server for everything the marketplace
// needs (session exchange, OAuth sign-in, webhooks) and your own routes beside it.
//
//   npm start        production: reads .env (see .env.example), serves the page built by `npm run build`
//   npm run dev      development: dev.js starts the simulator and this server with Vite
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyEmbedPageHeaders, createAppBackend, isKnownEvent, jsonResponse, toErrorResponse, toNodeHandler } from 'marketplace-app-kit/server';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The settings the server runs on. In production they come from the environment (.env); in
 * development and in tests, from the simulator (see `simulatorSettings`).
 */
export function envSettings(env = process.env) {
  const missing = ['MP_SITE_URL', 'MP_CLIENT_ID', 'MP_CLIENT_SECRET', 'MP_API_KEY', 'MP_WEBHOOK_SECRET', 'MP_DASHBOARD_ORIGIN', 'SESSION_SECRET'].filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`Missing in the environment: ${missing.join(', ')}. Copy .env.example to .env and fill it in.`);
  return {
    siteUrl: env.MP_SITE_URL,
    clientId: env.MP_CLIENT_ID,
    clientSecret: env.MP_CLIENT_SECRET,
    apiKey: env.MP_API_KEY,
    webhookSecret: env.MP_WEBHOOK_SECRET,
    sessionSecret: env.SESSION_SECRET,
    hostOrigins: env.MP_DASHBOARD_ORIGIN.split(/[\s,]+/).filter(Boolean),
    publicOrigin: env.PUBLIC_ORIGIN || undefined,
    planNames: planNamesFromConfig(),
  };
}

/** The settings for a simulator (`npm run dev`, the tests): its credentials, its dashboard, its plans' names. */
export function simulatorSettings(sim, sessionSecret = process.env.SESSION_SECRET) {
  return {
    siteUrl: sim.siteUrl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    apiKey: sim.testApiKey,
    webhookSecret: sim.webhookSecret,
    // A session secret of your own in .env keeps sessions across restarts; otherwise one per run.
    sessionSecret: sessionSecret || crypto.randomUUID() + crypto.randomUUID(),
    hostOrigins: [new URL(sim.dashboardUrl).origin],
    publicOrigin: undefined,
    planNames: sim.planNames,
  };
}

/**
 * The display names of your plans, from mpkit.config.json: keep its plans as the Developer
 * Console's Pricing tab has them, and the elements say "Pro", not "pro_monthly".
 */
function planNamesFromConfig() {
  const file = join(root, 'mpkit.config.json');
  if (!existsSync(file)) return {};
  const { plans = [] } = JSON.parse(readFileSync(file, 'utf8'));
  return Object.fromEntries(plans.map((plan) => [plan.id, plan.name]));
}

/**
 * The app, as a Web-standard handler: `(request: Request) => Promise<Response>`.
 * `page(url)` answers the page's HTML (Vite's in development, the build's in production).
 */
export function createApp(settings, page) {
  const { planNames, ...options } = settings;
  const marketplace = createAppBackend({
    ...options,
    onEvent: (delivery) => {
      // Verified (signature, timestamp, replays) before it gets here. Keep it quick and idempotent.
      if (isKnownEvent(delivery)) console.log(`[webhook] ${delivery.event} for ${delivery.data.user_id}`);
    },
  });

  return async (request) => {
    const url = new URL(request.url);
    const path = url.pathname;
    // The kit's routes: session exchange, OAuth sign-in, webhooks.
    if (path === marketplace.basePath || path.startsWith(`${marketplace.basePath}/`)) return marketplace(request);
    try {
      // For every signed-in user.
      if (path === '/api/hello') {
        const { user } = await marketplace.requireSession(request);
        return jsonResponse({ message: `Hello, ${user.name}!` });
      }
      // A paid feature. The page's <mp-gate> only hides the button: this is what protects it.
      if (path === '/api/export.csv') {
        const { session } = await marketplace.requireEntitlement(request, { feature: 'export' });
        return new Response(`user,exported_at\n${session.userId},${new Date().toISOString()}\n`, {
          headers: { 'content-type': 'text/csv; charset=utf-8', 'cache-control': 'no-store' },
        });
      }
    } catch (error) {
      return toErrorResponse(error); // 401 without a session, 403 without the feature
    }
    // The page the dashboard embeds. Only the dashboard may frame it (frame-ancestors), and it is
    // sent with Referrer-Policy: no-referrer, as its address holds the context token.
    if (path === '/' || path === '/index.html') {
      const html = (await page(path))
        .replace('%MP_HOST_ORIGINS%', escapeAttribute(settings.hostOrigins.join(' ')))
        .replace('%MP_PLAN_NAMES%', escapeAttribute(JSON.stringify(planNames ?? {})));
      const headers = new Headers({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      applyEmbedPageHeaders(headers, settings.hostOrigins);
      return new Response(html, { headers });
    }
    if (path.startsWith('/assets/')) return asset(path);
    return new Response('Not found', { status: 404 });
  };
}

function escapeAttribute(text) {
  return text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}

const TYPES = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.map': 'application/json' };

/** A file of the build (`dist/assets/`), named with its hash by Vite: cached for good. */
async function asset(path) {
  const file = normalize(join(root, 'dist', path));
  if (!file.startsWith(join(root, 'dist', 'assets'))) return new Response('Not found', { status: 404 });
  try {
    const body = await readFile(file);
    return new Response(body, { headers: { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'public, max-age=31536000, immutable' } });
  } catch {
    return new Response('Not found', { status: 404 });
  }
}

/** The built page, `dist/index.html` (`npm run build`). */
async function builtPage() {
  try {
    return await readFile(join(root, 'dist', 'index.html'), 'utf8');
  } catch {
    throw new Error('dist/index.html is missing: run npm run build first (or npm run dev)');
  }
}

/**
 * Starts the server on `host` (127.0.0.1: this machine only). With `vite` (development: a function
 * that makes Vite's dev server in middleware mode for this HTTP server), Vite serves the page's
 * modules and reloads the page on edits; this server answers the rest.
 */
export async function startServer({ port = 3000, host = '127.0.0.1', settings, vite: makeVite } = {}) {
  let vite;
  const page = async (path) => (vite ? vite.transformIndexHtml(path, await readFile(join(root, 'index.html'), 'utf8')) : builtPage());
  const app = toNodeHandler(createApp(settings, page));
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const ours = path === '/' || path === '/index.html' || path.startsWith('/api/') || (!vite && path.startsWith('/assets/'));
    if (ours || !vite) return app(req, res);
    vite.middlewares(req, res, () => app(req, res));
  });
  await new Promise((resolve, reject) => {
    server.once('error', (error) => reject(error.code === 'EADDRINUSE' ? new Error(`Port ${port} is in use: set PORT to another one`) : error));
    server.listen(port, host, resolve);
  });
  if (makeVite) vite = await makeVite(server);
  // On every interface (0.0.0.0, ::), this machine still reaches it on 127.0.0.1.
  const url = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${server.address().port}`;
  return {
    url,
    close: async () => {
      await vite?.close();
      await new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      });
    },
  };
}

// `node server.js` (npm start): production, on the values of .env. HOST is 127.0.0.1 unless set:
// behind a reverse proxy on the same machine that is right; HOST=0.0.0.0 listens on every interface.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (existsSync(join(root, '.env'))) process.loadEnvFile(join(root, '.env'));
  try {
    const server = await startServer({ port: Number(process.env.PORT || 3000), host: process.env.HOST || '127.0.0.1', settings: envSettings() });
    console.log(`App listening on ${server.url}`);
  } catch (error) {
    console.error(`npm start: ${error.message}`);
    process.exit(1);
  }
}
