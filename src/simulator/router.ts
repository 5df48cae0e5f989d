/**
 * The simulator's routes as one Web-standard handler, `(request: Request) => Promise<Response>`,
 * written as the server module's are; `startSimulator` serves it with the server module's
 * node:http adapter (`toNodeHandler`), and tests may call it with a `Request` alone.
 */
import { apiRequest } from './api.js';
import { avatarSvg } from './catalog.js';
import type { SimulatorContext } from './context.js';
import { deleteEntitlement, getConfig, postContext, postEvent, putConfig, putEntitlement, stateSnapshot, stream } from './control.js';
import { DASHBOARD_BUNDLE, dashboard } from './dashboard.js';
import { ApiError, json, redirect } from './http.js';
import { authorizeGet, authorizePost, tokenEndpoint } from './oauth.js';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export interface RouterOptions {
  /** The Host headers the simulator answers (its loopback names); any other is a 421. */
  hosts: ReadonlySet<string>;
  /** What ends each event stream under way (`close()` calls them). */
  streams: Set<() => void>;
}

/** What every route may refuse with: an unexpected failure is logged and answered 500. */
export function createRouter(ctx: SimulatorContext, options: RouterOptions): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      return await route(ctx, request, options);
    } catch (error) {
      if (error instanceof ApiError) return error.toResponse();
      // A client that left mid-body: nobody to answer, and no fault of the simulator's.
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') return new Response(null, { status: 400 });
      console.error('[mpkit simulate] internal error:', error);
      return json(500, { error: { code: 'internal_error', message: 'The simulator failed to answer this request.' } });
    }
  };
}

async function route(ctx: SimulatorContext, request: Request, { hosts, streams }: RouterOptions): Promise<Response> {
  const host = request.headers.get('host') ?? '';
  // A foreign Host means DNS rebinding or a misdirected request: never serve it.
  if (!hosts.has(host)) throw new ApiError(421, 'misdirected_request', `Use ${ctx.siteUrl}.`);
  const url = new URL(request.url);
  if (url.origin !== ctx.origin) throw new ApiError(400, 'invalid_request', 'Malformed request target.');
  const path = url.pathname;
  // HEAD is answered as GET is (node:http leaves the body out), as any web server does.
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  // Pages live on one origin, so that context tokens' `host` and the pages' Origin checks agree.
  if (host !== url.host && method === 'GET' && !path.startsWith('/api/') && !path.startsWith('/_simulator/')) {
    return redirect(`${ctx.origin}${path}${url.search}`, 302);
  }
  const only = (...methods: string[]) => {
    if (methods.includes(method)) return;
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    throw new ApiError(405, 'method_not_allowed', `Use ${methods.join(' or ')} ${path}.`, { allow: allow.join(', ') });
  };

  if (path === '/api/oauth/token' || path === '/api/v1/oauth/token') return tokenEndpoint(ctx, request, path);
  if (path === '/api/v1/whoami') return apiRequest(ctx, request, url, 'whoami');
  if (path === '/api/v1/entitlements') return apiRequest(ctx, request, url, 'entitlements');
  if (path === '/oauth/authorize') {
    only('GET', 'POST');
    return method === 'GET' ? authorizeGet(ctx, url) : authorizePost(ctx, request);
  }
  if (path === '/' || path === '/dashboard' || path === '/dashboard/') {
    only('GET');
    return path === '/dashboard' ? dashboard(ctx) : redirect(`/dashboard${url.search}`, 302);
  }
  if (path === '/favicon.ico') return new Response(null, { status: 204 });
  const avatar = path.match(/^\/avatars\/(usr_[A-Za-z0-9_-]+)\.svg$/);
  if (avatar) {
    only('GET');
    const user = ctx.state.users.get(avatar[1]!);
    if (!user) throw new ApiError(404, 'not_found', 'No such avatar.');
    const headers = { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=3600', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" };
    return new Response(avatarSvg(user.seed), { headers });
  }
  if (!path.startsWith('/_simulator/')) throw new ApiError(404, 'not_found', `No route ${method} ${path}.`);

  // The control API. Only the simulator's own pages and local tools (no Origin) may drive it; with
  // the JSON content type required for writes, no other web page can reach it without a CORS preflight.
  const origin = request.headers.get('origin');
  if (origin !== null && origin !== ctx.origin) throw new ApiError(403, 'forbidden', 'The control API is not available to other origins.');
  switch (path.slice('/_simulator'.length)) {
    case '/state':
      only('GET');
      return json(200, stateSnapshot(ctx));
    case '/config':
      only('GET', 'PUT');
      return method === 'GET' ? getConfig(ctx) : putConfig(ctx, request);
    case '/events':
      only('POST');
      return postEvent(ctx, request);
    case '/context':
      only('POST');
      return postContext(ctx, request);
    case '/stream':
      only('GET');
      return stream(ctx, request, streams);
    case '/host.js': {
      only('GET');
      const missing = ctx.hostBundleGiven ? `${fileURLToPath(ctx.hostBundle)} (the hostBundle option) is missing.` : 'dist/cdn/marketplace-host.js is missing: run npm run build.';
      return script(ctx.hostBundle, 'host_bundle_missing', missing);
    }
    case '/dashboard.js':
      only('GET');
      return script(DASHBOARD_BUNDLE, 'dashboard_script_missing', 'dist/cdn/marketplace-dashboard.js is missing: run npm run build.');
  }
  const entitlement = path.match(/^\/_simulator\/users\/([^/]+)\/entitlement$/);
  if (!entitlement) throw new ApiError(404, 'not_found', `No control route ${method} ${path}.`);
  only('PUT', 'DELETE');
  let userId: string;
  try {
    userId = decodeURIComponent(entitlement[1]!);
  } catch {
    throw new ApiError(400, 'invalid_request', 'Malformed percent-encoding in the user id.');
  }
  return method === 'PUT' ? putEntitlement(ctx, request, userId) : deleteEntitlement(ctx, userId);
}

/** A script file of the build (or the developer's `hostBundle`), or a 404 that says what to do. */
async function script(file: URL, code: string, missing: string): Promise<Response> {
  let text: Buffer;
  try {
    text = await readFile(file);
  } catch {
    throw new ApiError(404, code, missing);
  }
  return new Response(new Uint8Array(text), { headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' } });
}
