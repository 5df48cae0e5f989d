/**
 * The local marketplace simulator (docs/decisions.md#simulator, docs/marketplace.md#integration-simulator): a node:http server on 127.0.0.1 that
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
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '../server/adapters.js';
import { MarketplaceKitError } from '../shared/errors.js';
import { Entitlement, parseOrThrow, type Profile } from '../shared/schemas.js';
import { assertServable, type SimulatedPlan } from './catalog.js';
import type { SimulatorContext } from './context.js';
import { applyConfig, mintContext, sendEvent, stateSnapshot, type EventOutcome } from './control.js';
import { ApiError, loopbackOrigin } from './http.js';
import { RateLimiter } from './rate-limit.js';
import { configError, resolveOptions, type ResolvedOptions, type SimulatorOptions } from './options.js';
import { createRouter } from './router.js';
import { SimulatorState, type SimulatorEvent } from './state.js';
import { WebhookSender, exponentialBackoff } from './webhooks.js';

export { PLANS, USER_SEEDS, type SimulatedPlan, type PlanKind, type SimulatedUserSeed } from './catalog.js';
export { CONFIG_FILE, loadSimulatorConfig, type PlanDefinition, type SimulatorConfigFile, type UserDefinition } from './config.js';
export { MarketplaceKitError, isKitError, type ErrorCode } from '../shared/errors.js';
export type { Entitlement, EntitlementStatus, Profile } from '../shared/schemas.js';
export type { EventOutcome } from './control.js';
export type { RateLimits } from './context.js';
export type { SimulatorClock, SimulatorOptions } from './options.js';
export type { ApiCallRecord, DeliveryAttempt, DeliveryRecord, SimulatorEvent } from './state.js';

/** The simulator's state as `sim.state()` (and `GET /_simulator/state`) gives it. */
export type SimulatorSnapshot = ReturnType<typeof stateSnapshot>;

/** A running simulator, as `startSimulator` resolves it: its URLs, credentials, and what drives it from code. */
export interface Simulator {
  /** `{site_url}`: the authorization page and the token endpoint live here. */
  readonly siteUrl: string;
  /** `{base_url}` = `{site_url}/api/v1`. */
  readonly baseUrl: string;
  readonly dashboardUrl: string;
  readonly appId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly testApiKey: string;
  readonly liveApiKey: string;
  readonly webhookSecret: string;
  /** The app's display name (`appName`), shown on the dashboard and the authorization page. */
  readonly appName: string;
  /** The plans the simulator sells: the config file's, or the built-in `PLANS`. */
  readonly plans: readonly SimulatedPlan[];
  /** The plans' display names by id (`{ pro_monthly: 'Pro' }`): give them to `createKit({ planNames })`. */
  readonly planNames: Readonly<Record<string, string>>;
  users: Profile[];
  /** The current entitlement of a user (`null`: none); `ERR_INVALID_INPUT` for a user the simulator lacks. */
  entitlement(userId: string): Entitlement | null;
  /** Replaces a user's entitlement (`null` removes it) and tells the dashboard. */
  setEntitlement(userId: string, entitlement: Entitlement | null): void;
  /** Same as `POST /_simulator/events`: applies the event and delivers it. */
  sendEvent(event: string, data: Record<string, unknown>): Promise<EventOutcome>;
  /** Same as `PUT /_simulator/config`. */
  configure(patch: { app_url?: string | null | undefined; webhook_url?: string | null | undefined; redirect_uris?: readonly string[] | undefined }): void;
  /** The same snapshot as `GET /_simulator/state`. */
  state(): SimulatorSnapshot;
  /** Hears every change: entitlements, deliveries, API calls, configuration. Returns an unsubscribe function. */
  subscribe(listener: (event: SimulatorEvent) => void): () => void;
  /** A fresh context token for a user, as the dashboard hands to the app. */
  contextToken(userId: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts the simulator on 127.0.0.1 and resolves once it listens.
 *
 * @example
 * const sim = await startSimulator({ port: 4010, appUrl: 'http://127.0.0.1:5173/', clientId: 'client_demo', clientSecret: 'secret_demo' });
 * console.log(sim.dashboardUrl);
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const resolved = resolveOptions(options);
  const server = createServer();
  // Idle keep-alive sockets are the client's to close. A server that times them out races a
  // client reusing one (an app backend's fetch pool): on a busy machine the request meets the
  // closing socket and fails with ECONNRESET. close() ends every socket still open.
  server.keepAliveTimeout = 0;
  await listen(server, resolved.port);
  try {
    return serve(server, resolved);
  } catch (error) {
    // Nothing may stay listening after a failed start: the process would never exit.
    await new Promise((resolve) => server.close(resolve));
    throw error;
  }
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, port));
    server.once('error', failed);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/** The port is the developer's choice, so a port that cannot be had is a configuration mistake. */
function listenError(error: NodeJS.ErrnoException, port: number): MarketplaceKitError {
  switch (error.code) {
    case 'EADDRINUSE':
      return configError(`port ${port} is in use (is another simulator running?): pick another, or port 0 for a free one`, error);
    case 'EACCES':
      return configError(`port ${port} needs privileges this process lacks (below 1024, it usually does): pick a port from 1024 up, or port 0 for a free one`, error);
    default:
      return configError(`cannot listen on 127.0.0.1:${port}: ${error.message}`, error);
  }
}

/** The simulator on a listening server. */
function serve(server: Server, resolved: ResolvedOptions): Simulator {
  const { clock, appId, credentials, rateLimits } = resolved;
  const { port } = server.address() as AddressInfo;
  const { origin, hosts: allowedHosts } = loopbackOrigin(port);
  const state = new SimulatorState(
    {
      appUrl: null,
      webhookUrl: null,
      redirectUris: [],
    },
    origin,
    appId,
    clock.now(),
    resolved.catalog,
  );
  const ctx: SimulatorContext = {
    state,
    clock: clock.now,
    sleep: clock.sleep,
    siteUrl: origin,
    origin,
    baseUrl: `${origin}/api/v1`,
    dashboardUrl: `${origin}/dashboard`,
    appId,
    appName: resolved.appName,
    credentials,
    codeTtlMs: resolved.codeTtlMs,
    accessTokenTtlSeconds: resolved.accessTokenTtlSeconds,
    rateLimits,
    limiter: new RateLimiter(rateLimits.windowMs, clock.now),
    webhooks: new WebhookSender(
      state,
      credentials.webhookSecret,
      {
        maxAttempts: resolved.maxAttempts,
        backoffMs: exponentialBackoff(resolved.backoffMs),
        timeoutMs: resolved.timeoutMs,
      },
      clock,
    ),
    hostBundle: resolved.hostBundle,
    hostBundleGiven: resolved.hostBundleGiven,
  };
  applyConfig(ctx, resolved.config);

  const streams = new Set<() => void>();
  const sweep = setInterval(() => state.sweep(clock.now()), 60_000);
  sweep.unref();

  // The router answers everything itself; the adapter's onError hears only what went wrong in it.
  server.on('request', toNodeHandler(createRouter(ctx, { hosts: allowedHosts, streams }), { origin, onError: (error) => console.error('[mpkit simulate] internal error:', error) }));
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
    appName: ctx.appName,
    plans: structuredClone(resolved.catalog.plans),
    planNames: resolved.catalog.planNames(),
    ...credentials,
    // Copies, as everything it hands out (events, outcomes, the state): what a test does with them
    // must not change the simulator behind its checks.
    users: structuredClone(state.profiles()),
    entitlement: (userId) => {
      // A mistyped id is said, not taken for a user without a plan.
      if (!state.users.has(userId)) throw unknownUser(userId);
      return structuredClone(state.entitlements.get(userId) ?? null);
    },
    setEntitlement: (userId, entitlement) => {
      if (!state.users.has(userId)) throw unknownUser(userId);
      const parsed = entitlement && assertServable(parseOrThrow(Entitlement, entitlement, 'entitlement'));
      // What /entitlements answers for this user must be this user's, of this app (docs/marketplace.md#entitlement).
      if (parsed && (parsed.user_id !== userId || parsed.app_id !== appId)) {
        throw new MarketplaceKitError('ERR_INVALID_INPUT', `An entitlement of ${userId} must have user_id ${userId} and app_id ${appId}`);
      }
      state.setEntitlement(userId, parsed);
    },
    sendEvent: (event, data) =>
      sendEvent(ctx, event, data).then((outcome) => structuredClone(outcome), (error: unknown) => {
        throw asInputError(error);
      }),
    configure: (patch) => {
      try {
        applyConfig(ctx, patch);
      } catch (error) {
        throw asConfigError(error);
      }
    },
    state: () => structuredClone(stateSnapshot(ctx)),
    subscribe: (listener) => {
      // Kept, a non-function would fail every later API request of the app with a 500.
      if (typeof listener !== 'function') throw new MarketplaceKitError('ERR_CONFIG', 'sim.subscribe needs a listener function');
      return state.subscribe((event) => listener(structuredClone(event)));
    },
    contextToken: async (userId) => {
      if (!state.users.has(userId)) throw unknownUser(userId);
      return (await mintContext(ctx, userId)).context;
    },
    close: async () => {
      clearInterval(sweep);
      ctx.webhooks.close();
      for (const end of streams) end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** A configuration refused by the control API's own checks, as `ERR_CONFIG`. */
function asConfigError(error: unknown): unknown {
  return error instanceof ApiError ? configError(error.message, undefined, 'sim.configure') : error;
}

/** An event refused by the control API's own checks (an unknown user, data that fails the schema), as `ERR_INVALID_INPUT`. */
function asInputError(error: unknown): unknown {
  return error instanceof ApiError ? new MarketplaceKitError('ERR_INVALID_INPUT', error.message) : error;
}

function unknownUser(userId: string): MarketplaceKitError {
  return new MarketplaceKitError('ERR_INVALID_INPUT', `The simulator has no user ${userId}; its users are listed in sim.users`);
}

