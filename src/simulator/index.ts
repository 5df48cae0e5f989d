/**
 * The local marketplace simulator (DESIGN G, seed §1.7): a node:http server on 127.0.0.1 that
 * plays the marketplace for an app under development — the authorization page, both token paths,
 * `/whoami`, `/entitlements`, API keys with their rate limits, signed webhook deliveries with
 * retries, a dashboard that embeds the app and plays the host side of the bridge, and a control
 * API. Nothing in it touches a real service.
 *
 * @example
 * const sim = await startSimulator({ appUrl: 'http://127.0.0.1:3000/' });
 * const client = createMarketplaceClient({ siteUrl: sim.siteUrl, clientId: sim.clientId, clientSecret: sim.clientSecret, apiKey: sim.testApiKey });
 * await client.entitlements({ userId: 'usr_grace' });
 * await sim.close();
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MarketplaceKitError } from '../shared/errors.js';
import { AppId, Entitlement, parseOrThrow, type Profile } from '../shared/schemas.js';
import { apiRequest } from './api.js';
import { assertServable, avatarSvg } from './catalog.js';
import type { RateLimits, SimulatorContext, SimulatorCredentials } from './context.js';
import {
  applyConfig,
  deleteEntitlement,
  getConfig,
  mintContext,
  postContext,
  postEvent,
  putConfig,
  putEntitlement,
  sendEvent,
  stateSnapshot,
  stream,
  type EventOutcome,
} from './control.js';
import { dashboard } from './dashboard.js';
import { ApiError, redirect, sendApiError, sendJson } from './http.js';
import { authorizeGet, authorizePost, tokenEndpoint } from './oauth.js';
import { RateLimiter } from './rate-limit.js';
import { randomToken } from '../server/oauth.js';
import { SimulatorState, type SimulatorEvent } from './state.js';
import { WebhookSender, exponentialBackoff } from './webhooks.js';

export { PLANS, USER_SEEDS, type SimulatedPlan, type PlanKind } from './catalog.js';
export type { EventOutcome } from './control.js';
export type { RateLimits } from './context.js';
export type { ApiCallRecord, DeliveryAttempt, DeliveryRecord, SimulatorEvent } from './state.js';

export interface SimulatorOptions {
  /** TCP port on 127.0.0.1; `0` (the default) picks a free one. */
  port?: number | undefined;
  /** The app's embed URL, loaded in the dashboard's iframe. */
  appUrl?: string | undefined;
  /**
   * Registered Redirect URIs, matched exactly. Default: `{app origin}/api/marketplace/oauth/callback`
   * when `appUrl` is given (the callback of `createAppBackend`), else none.
   */
  redirectUris?: string[] | undefined;
  /** Where deliveries go. Default: `{app origin}/api/marketplace/webhooks` when `appUrl` is given. */
  webhookUrl?: string | undefined;
  /** `app_<id>` of the simulated app. Default `app_simulated`. */
  appId?: string | undefined;
  /** Shown on the authorization page and the dashboard. Default `Your app`. */
  appName?: string | undefined;
  /** Fixed credentials (tests, demos); each one left out is made up at random, a blank one is `ERR_CONFIG`. */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** Must start with `test_`. */
  testApiKey?: string | undefined;
  /** Must start with `live_`. */
  liveApiKey?: string | undefined;
  webhookSecret?: string | undefined;
  /** Clock in ms since the epoch, for tests of expiry. Default `Date.now`. */
  clock?: (() => number) | undefined;
  /** Lifetime of authorization codes in seconds. Default 60. */
  codeTtlSeconds?: number | undefined;
  /** `expires_in` of access tokens, in seconds. Default 3600. */
  accessTokenTtlSeconds?: number | undefined;
  /** Requests per window per caller. Default: test 100, live 1,000, bearer 1,000 per 60 s. */
  rateLimits?: Partial<RateLimits> | undefined;
  /** Delivery attempts per event (first try included). Default 5. */
  webhookMaxAttempts?: number | undefined;
  /** Wait after the first failed attempt, doubled after each further one. Default 1000 ms. */
  webhookBackoffMs?: number | undefined;
  /** Timeout of one delivery attempt. Default 10,000 ms. */
  webhookTimeoutMs?: number | undefined;
  /** The host bridge bundle the dashboard serves. Default: this package's `dist/cdn/marketplace-host.js`. */
  hostBundle?: string | URL | undefined;
}

export type SimulatorSnapshot = ReturnType<typeof stateSnapshot>;

export interface Simulator {
  /** `{site_url}`: the authorization page and the token endpoint live here. */
  siteUrl: string;
  /** `{base_url}` = `{site_url}/api/v1`. */
  baseUrl: string;
  dashboardUrl: string;
  appId: string;
  clientId: string;
  clientSecret: string;
  testApiKey: string;
  liveApiKey: string;
  webhookSecret: string;
  users: Profile[];
  /** The current entitlement of a user (`null`: none). */
  entitlement(userId: string): Entitlement | null;
  /** Replaces a user's entitlement (`null` removes it) and tells the dashboard. */
  setEntitlement(userId: string, entitlement: Entitlement | null): void;
  /** Same as `POST /_simulator/events`: applies the event and delivers it. */
  sendEvent(event: string, data: Record<string, unknown>): Promise<EventOutcome>;
  /** Same as `PUT /_simulator/config`. */
  configure(patch: { app_url?: string | null | undefined; webhook_url?: string | null | undefined; redirect_uris?: string[] | undefined }): void;
  /** The same snapshot as `GET /_simulator/state`. */
  state(): SimulatorSnapshot;
  /** Hears every change: entitlements, deliveries, API calls, configuration. Returns an unsubscribe function. */
  subscribe(listener: (event: SimulatorEvent) => void): () => void;
  /** A fresh context token for a user, as the dashboard hands to the app. */
  contextToken(userId: string): Promise<string>;
  close(): Promise<void>;
}

const DEFAULT_BACKEND_PATH = '/api/marketplace';

function credential(given: string | undefined, prefix: string): string {
  if (given === undefined) return randomToken(prefix);
  if (typeof given !== 'string' || !given.startsWith(prefix) || given.length <= prefix.length) {
    throw configError(`the API key ${String(given)} must start with ${prefix}`);
  }
  return given;
}

/** A fixed client id or secret: any text but a blank one, which no app could send. */
function fixed(given: string | undefined, name: string, make: () => string): string {
  if (given === undefined) return make();
  if (typeof given !== 'string' || !given.trim()) throw configError(`${name} must be a non-empty string`);
  return given;
}

/**
 * Starts the simulator on 127.0.0.1 and resolves once it listens.
 *
 * @example
 * const sim = await startSimulator({ port: 4010, appUrl: 'http://127.0.0.1:5173/', clientId: 'client_demo', clientSecret: 'secret_demo' });
 * console.log(sim.dashboardUrl);
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const clock = options.clock ?? Date.now;
  const appId = options.appId ?? 'app_simulated';
  if (!AppId.safeParse(appId).success) throw configError(`appId must look like app_<id>, not ${appId}`);
  const settings = {
    codeTtlMs: wholeOption(options.codeTtlSeconds, 60, 'codeTtlSeconds', 1) * 1000,
    accessTokenTtlSeconds: wholeOption(options.accessTokenTtlSeconds, 3600, 'accessTokenTtlSeconds', 1),
    maxAttempts: wholeOption(options.webhookMaxAttempts, 5, 'webhookMaxAttempts', 1),
    backoffMs: wholeOption(options.webhookBackoffMs, 1000, 'webhookBackoffMs', 0),
    timeoutMs: wholeOption(options.webhookTimeoutMs, 10_000, 'webhookTimeoutMs', 1),
  };
  const given = options.rateLimits ?? {};
  const rateLimits: RateLimits = {
    test: wholeOption(given.test, 100, 'rateLimits.test', 1),
    live: wholeOption(given.live, 1000, 'rateLimits.live', 1),
    bearer: wholeOption(given.bearer, 1000, 'rateLimits.bearer', 1),
    windowMs: wholeOption(given.windowMs, 60_000, 'rateLimits.windowMs', 1),
  };
  const appOrigin = options.appUrl && URL.canParse(options.appUrl) ? new URL(options.appUrl).origin : null;
  const credentials: SimulatorCredentials = {
    clientId: fixed(options.clientId, 'clientId', () => randomToken('client_', 12)),
    clientSecret: fixed(options.clientSecret, 'clientSecret', () => randomToken('secret_', 32)),
    testApiKey: credential(options.testApiKey, 'test_'),
    liveApiKey: credential(options.liveApiKey, 'live_'),
    webhookSecret: fixed(options.webhookSecret, 'webhookSecret', () => randomToken('whsec_', 24)),
  };
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const state = new SimulatorState(
    {
      appUrl: null,
      webhookUrl: null,
      redirectUris: [],
    },
    origin,
    appId,
    clock(),
  );
  const ctx: SimulatorContext = {
    state,
    clock,
    siteUrl: origin,
    origin,
    baseUrl: `${origin}/api/v1`,
    dashboardUrl: `${origin}/dashboard`,
    appId,
    appName: options.appName ?? 'Your app',
    credentials,
    codeTtlMs: settings.codeTtlMs,
    accessTokenTtlSeconds: settings.accessTokenTtlSeconds,
    rateLimits,
    limiter: new RateLimiter(rateLimits.windowMs, clock),
    webhooks: new WebhookSender(
      state,
      credentials.webhookSecret,
      {
        maxAttempts: settings.maxAttempts,
        backoffMs: exponentialBackoff(settings.backoffMs),
        timeoutMs: settings.timeoutMs,
      },
      clock,
    ),
    hostBundle: hostBundleUrl(options.hostBundle),
  };
  try {
    applyConfig(ctx, {
      app_url: options.appUrl ?? null,
      webhook_url: options.webhookUrl ?? (appOrigin ? `${appOrigin}${DEFAULT_BACKEND_PATH}/webhooks` : null),
      redirect_uris: options.redirectUris ?? (appOrigin ? [`${appOrigin}${DEFAULT_BACKEND_PATH}/oauth/callback`] : []),
    });
  } catch (error) {
    server.close();
    throw asConfigError(error);
  }

  const streams = new Set<ServerResponse>();
  const allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const sweep = setInterval(() => state.sweep(clock()), 60_000);
  sweep.unref();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(ctx, req, res, allowedHosts, streams).catch((error: unknown) => {
      if (error instanceof ApiError) return sendApiError(res, error);
      console.error('[mpkit simulate] internal error:', error);
      sendJson(res, 500, { error: { code: 'internal_error', message: 'The simulator failed to answer this request.' } });
    });
  });
  // Malformed HTTP never reaches the handler; answer it and keep serving.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const body = JSON.stringify({
      error: tooLarge
        ? { code: 'invalid_request', message: 'The request headers are too large.' }
        : { code: 'invalid_request', message: 'The request is not valid HTTP.' },
    });
    const head = `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    if (socket.writable) socket.end(head + body);
    else socket.destroy();
  });

  return {
    siteUrl: ctx.siteUrl,
    baseUrl: ctx.baseUrl,
    dashboardUrl: ctx.dashboardUrl,
    appId: ctx.appId,
    ...credentials,
    users: state.profiles(),
    entitlement: (userId) => state.entitlements.get(userId) ?? null,
    setEntitlement: (userId, entitlement) => {
      if (!state.users.has(userId)) throw unknownUser(userId);
      const parsed = entitlement && assertServable(parseOrThrow(Entitlement, entitlement, 'entitlement'));
      // What /entitlements answers for this user must be this user's, of this app (seed §2.2).
      if (parsed && (parsed.user_id !== userId || parsed.app_id !== appId)) {
        throw new MarketplaceKitError('ERR_INVALID_INPUT', `An entitlement of ${userId} must have user_id ${userId} and app_id ${appId}`);
      }
      state.setEntitlement(userId, parsed);
    },
    sendEvent: (event, data) => sendEvent(ctx, event, data),
    configure: (patch) => {
      try {
        applyConfig(ctx, patch);
      } catch (error) {
        throw asConfigError(error);
      }
    },
    state: () => stateSnapshot(ctx),
    subscribe: (listener) => state.subscribe(listener),
    contextToken: async (userId) => {
      if (!state.users.has(userId)) throw unknownUser(userId);
      return (await mintContext(ctx, userId)).context;
    },
    close: async () => {
      clearInterval(sweep);
      ctx.webhooks.close();
      for (const res of streams) res.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function hostBundleUrl(given: string | URL | undefined): URL {
  // Resolves the same from src/simulator (tsx) and dist/simulator (tsc).
  if (given === undefined) return new URL('../../dist/cdn/marketplace-host.js', import.meta.url);
  return typeof given === 'string' ? pathToFileURL(resolve(given)) : given;
}

/** An option mistake: `ERR_CONFIG`, as in `createAppBackend`. */
function configError(message: string): MarketplaceKitError {
  return new MarketplaceKitError('ERR_CONFIG', `startSimulator: ${message}`);
}

/** A configuration refused by the control API's own checks, as `ERR_CONFIG`. */
function asConfigError(error: unknown): unknown {
  return error instanceof ApiError ? configError(error.message) : error;
}

function unknownUser(userId: string): MarketplaceKitError {
  return new MarketplaceKitError('ERR_INVALID_INPUT', `The simulator has no user ${userId}; its users are listed in sim.users`);
}

/** A whole-number option of at least `min` (a NaN or fractional attempt count would never end or never start). */
function wholeOption(value: unknown, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw configError(`${name} must be a whole number of at least ${min}, got ${String(value)}`);
  }
  return value;
}

async function handle(
  ctx: SimulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  allowedHosts: Set<string>,
  streams: Set<ServerResponse>,
): Promise<void> {
  // A foreign Host means DNS rebinding or a misdirected request: never serve it.
  if (!allowedHosts.has(req.headers.host ?? '')) throw new ApiError(421, 'misdirected_request', `Use ${ctx.siteUrl}.`);
  let url: URL;
  try {
    url = new URL(req.url ?? '/', ctx.siteUrl);
  } catch {
    throw new ApiError(400, 'invalid_request', 'Malformed request target.');
  }
  if (url.origin !== ctx.origin) throw new ApiError(400, 'invalid_request', 'Malformed request target.');
  const path = url.pathname;
  // HEAD is answered as GET is (node:http leaves the body out), as any web server does.
  const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
  // Pages live on one origin, so that context tokens' `host` and the pages' Origin checks agree.
  if (req.headers.host !== url.host && method === 'GET' && !path.startsWith('/api/') && !path.startsWith('/_simulator/')) {
    return redirect(res, `${ctx.origin}${path}${url.search}`, 302);
  }
  const only = (...methods: string[]) => {
    if (methods.includes(method)) return;
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    throw new ApiError(405, 'method_not_allowed', `Use ${methods.join(' or ')} ${path}.`, { allow: allow.join(', ') });
  };

  if (path === '/api/oauth/token' || path === '/api/v1/oauth/token') return tokenEndpoint(ctx, req, res, path);
  if (path === '/api/v1/whoami') return apiRequest(ctx, req, res, url, 'whoami');
  if (path === '/api/v1/entitlements') return apiRequest(ctx, req, res, url, 'entitlements');
  if (path === '/oauth/authorize') {
    only('GET', 'POST');
    return method === 'GET' ? authorizeGet(ctx, res, url) : authorizePost(ctx, req, res);
  }
  if (path === '/' || path === '/dashboard' || path === '/dashboard/') {
    only('GET');
    return path === '/dashboard' ? dashboard(ctx, res) : redirect(res, `/dashboard${url.search}`, 302);
  }
  if (path === '/favicon.ico') return void res.writeHead(204).end();
  const avatar = path.match(/^\/avatars\/(usr_[A-Za-z0-9_-]+)\.svg$/);
  if (avatar) {
    only('GET');
    const user = ctx.state.users.get(avatar[1]!);
    if (!user) throw new ApiError(404, 'not_found', 'No such avatar.');
    const svg = avatarSvg(user.seed);
    res.writeHead(200, { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=3600', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'", 'content-length': Buffer.byteLength(svg) });
    return void res.end(svg);
  }
  if (path.startsWith('/_simulator/')) return control(ctx, req, res, url, method, only, streams);
  throw new ApiError(404, 'not_found', `No route ${method} ${path}.`);
}

async function control(
  ctx: SimulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  method: string,
  only: (...methods: string[]) => void,
  streams: Set<ServerResponse>,
): Promise<void> {
  // Only the simulator's own pages and local tools (no Origin) may drive it; with the JSON
  // content type required for writes, no other web page can reach it without a CORS preflight.
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== ctx.origin) throw new ApiError(403, 'forbidden', 'The control API is not available to other origins.');
  const path = url.pathname.slice('/_simulator'.length);
  switch (path) {
    case '/state':
      only('GET');
      return sendJson(res, 200, stateSnapshot(ctx));
    case '/config':
      only('GET', 'PUT');
      return method === 'GET' ? getConfig(ctx, res) : putConfig(ctx, req, res);
    case '/events':
      only('POST');
      return postEvent(ctx, req, res);
    case '/context':
      only('POST');
      return postContext(ctx, req, res);
    case '/stream':
      only('GET');
      return stream(ctx, req, res, streams);
    case '/host.js':
      only('GET');
      return hostBundle(ctx, res);
  }
  const entitlement = path.match(/^\/users\/([^/]+)\/entitlement$/);
  if (entitlement) {
    only('PUT', 'DELETE');
    let userId: string;
    try {
      userId = decodeURIComponent(entitlement[1]!);
    } catch {
      throw new ApiError(400, 'invalid_request', 'Malformed percent-encoding in the user id.');
    }
    return method === 'PUT' ? putEntitlement(ctx, req, res, userId) : deleteEntitlement(ctx, res, userId);
  }
  throw new ApiError(404, 'not_found', `No control route ${method} ${url.pathname}.`);
}

async function hostBundle(ctx: SimulatorContext, res: ServerResponse): Promise<void> {
  let script: Buffer;
  try {
    script = await readFile(ctx.hostBundle);
  } catch {
    throw new ApiError(404, 'host_bundle_missing', 'dist/cdn/marketplace-host.js is missing: run npm run build.');
  }
  res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', 'content-length': script.length });
  res.end(script);
}
