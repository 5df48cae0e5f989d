/**
 * Ready HTTP handlers for an app backend (docs/server.md): a Web-standard
 * `(request: Request) => Promise<Response>` serving the session exchange, the OAuth sign-in and
 * the webhook receiver under one base path, plus `requireSession` / `requireEntitlement` for the
 * app's own routes. Adapters for node:http and Express are in `adapters.ts`.
 *
 * A facade over its parts in `backend/`: configuration, router, cookies, session checks, session
 * routes, OAuth routes and the webhook route, each working through the stores of `stores.ts`.
 */
import type { AccessRequirement } from '../shared/access.js';
import type { Entitlement, WebhookDelivery } from '../shared/schemas.js';
import { appCookies } from './backend/cookies.js';
import { ownClient, readBackendStores, readConfig } from './backend/config.js';
import { reporter, type BackendContext } from './backend/context.js';
import { oauthRoutes } from './backend/oauth-routes.js';
import { router, type RouteTable } from './backend/router.js';
import { sessionRoutes } from './backend/session-routes.js';
import { sessionChecks } from './backend/sessions.js';
import { webhookRoute } from './backend/webhook-route.js';
import type { MarketplaceClient } from './client.js';
import { systemClock, type Clock } from './lib/clock.js';
import type { ReplayStore } from './replay-store.js';
import type { AppSession } from './session.js';
import type { MarketplaceStores } from './stores.js';

export {
  DEFAULT_BASE_PATH,
  SESSION_COOKIE,
  OAUTH_STATE_COOKIE,
  OAUTH_ERROR_PARAM,
  REFRESH_MIN_INTERVAL_MS,
  WEBHOOK_COPY_WAIT_MS,
} from './backend/constants.js';

/** Options of `createAppBackend`. */
export interface AppBackendOptions {
  /** The app's Client ID and Client Secret (Developer Console). */
  clientId: string;
  clientSecret: string;
  /** The marketplace's `{site_url}`; also the expected `iss` of context tokens. */
  siteUrl: string;
  /** `{base_url}`; default `${siteUrl}/api/v1`. */
  apiBaseUrl?: string | undefined;
  /** Token endpoint path (default `/api/oauth/token`) or absolute URL. */
  tokenPath?: string | undefined;
  /** A `test_` or `live_` key: entitlements are loaded by `user_id` with it. */
  apiKey: string;
  /** Signs the app's session tokens and OAuth state cookie; ≥ 32 characters, not the Client Secret. */
  sessionSecret: string;
  /** Lifetime of app sessions, at most (and by default) 900 s. */
  sessionTtlSeconds?: number | undefined;
  /** Webhook secret; or `webhookSecrets` with several during a rotation. One of them is required unless `webhooks: false`. */
  webhookSecret?: string | undefined;
  webhookSecrets?: readonly string[] | undefined;
  /** `false` for an app that receives no webhooks: no secret is needed and `POST /webhooks` answers 404. */
  webhooks?: false | undefined;
  /** Default 300 s. */
  webhookToleranceSeconds?: number | undefined;
  /** Dashboard origins allowed to embed the app (checked against `mp_host` and the token's `host`). */
  hostOrigins: readonly string[];
  /** Default `/api/marketplace`. */
  basePath?: string | undefined;
  /**
   * The app's public origin, exactly, e.g. `https://app.example`. Needed for the OAuth sign-in and
   * for cookie sessions: it checks the `Origin` of state-changing cookie requests, builds the
   * default `redirectUri` and makes cookies `Secure` when https. Without it those routes answer
   * 500 `ERR_CONFIG`, except on a loopback host (localhost, 127.0.0.1, [::1]: development), where
   * the request's own origin is used. Embedded apps that only use Bearer sessions may omit it.
   */
  publicOrigin?: string | undefined;
  /**
   * Default `${publicOrigin}${basePath}/oauth/callback`; must be registered in the Developer Console.
   * One outside loopback needs `publicOrigin` too (`ERR_CONFIG` otherwise).
   */
  redirectUri?: string | undefined;
  /** Default `identity:read`. */
  scope?: string | undefined;
  /** Called for every verified, non-duplicate webhook delivery; throw to have it retried. */
  onEvent?: ((delivery: WebhookDelivery) => void | Promise<void>) | undefined;
  /**
   * Told of unexpected errors (5xx answers) and of signatures that match no secret, so you can log
   * them; every one, also under attack. Default: `createErrorLog`'s quiet log on `console.error`:
   * unexpected errors with their stacks, expected rejections in one line each, their repeats counted.
   */
  onError?: ((error: unknown, request: Request) => void) | undefined;
  /** Extra origins allowed to call these routes from the browser (CORS); none by default. */
  corsOrigins?: readonly string[] | undefined;
  fetch?: typeof fetch | undefined;
  /** Marketplace request timeout (default 10 000 ms). */
  timeoutMs?: number | undefined;
  /** Entitlement cache lifetime (default 30 000 ms). */
  entitlementTtlMs?: number | undefined;
  /**
   * Where the state that several instances must share is kept: context-token claims, webhook
   * processing, launches per user, revocation cut-offs, and (for the client it creates) the
   * entitlement cache, API-key pacing and refresh single flight. Default: in memory, one process
   * (`createMemoryStores`). With several instances pass `createRedisStores({ client })` from
   * `marketplace-app-kit/redis` (docs/guides/several-instances.md); a port left out keeps its default.
   */
  stores?: Partial<MarketplaceStores> | undefined;
  /**
   * Live context-token claims the default memory replay store holds (default 200 000: 500 launches
   * a second for a token's whole life; about 14 MB per 100 000, docs/redis.md "Memory stores").
   * Full, it refuses launches with 503 `ERR_REPLAY_STORE_FULL` until its earliest claim expires,
   * and logs one line when it fills and one when it has room again.
   */
  replayStoreSize?: number | undefined;
  /**
   * One `ReplayStore` for context-token `jti`s and webhook deliveries (keys `jti:…` and
   * `webhook:…`), as before `stores`: prefer `stores`, whose webhook port tells a delivery being
   * handled from one handled, so that a copy on another instance waits for the outcome.
   */
  replayStore?: ReplayStore | undefined;
  /**
   * Context tokens one user may exchange for sessions in five minutes; more answer 429
   * `ERR_RATE_LIMITED` with `Retry-After`, so that one user cannot take more than a small share of
   * the replay store and stop everybody's launches. Counted in `stores.launches` (shared by every
   * instance on shared stores). Default: 30 plus room for the session renewals of five tabs,
   * `30 + ceil(3000 / sessionTtlSeconds)` (34 with 900 s sessions). `Infinity`: no cap.
   */
  maxExchangesPerUser?: number | undefined;
  /** Use this client instead of creating one. */
  client?: MarketplaceClient | undefined;
  /** Injected clock (tests). */
  clock?: Clock | undefined;
}

/**
 * The app backend, as `createAppBackend` returns it: a fetch handler (`Request` to `Response`) for
 * the kit's routes, and the checks your own routes call (`requireSession`, `requireEntitlement`).
 */
export interface AppBackend {
  /** Serves the kit's routes under `basePath`. */
  (request: Request): Promise<Response>;
  /**
   * The session of a request: `Authorization: Bearer <session token>`, or the session cookie
   * of the OAuth sign-in. Throws a `SessionError` (status 401) otherwise, `ERR_SESSION_REVOKED`
   * for a session issued before the user's latest `user.revoked`, and 403 `ERR_ORIGIN_REFUSED`
   * for a state-changing cookie request from another origin.
   */
  requireSession(request: Request): Promise<AppSession>;
  /**
   * The session and entitlement of a request, when the entitlement grants `requirement`.
   * Throws 401 without a session and `AccessDeniedError` (403 `ERR_ACCESS_DENIED`) without access.
   */
  requireEntitlement(request: Request, requirement?: AccessRequirement): Promise<{ session: AppSession; entitlement: Entitlement | null }>;
  /** The marketplace client the backend uses. */
  readonly client: MarketplaceClient;
  /** Where the routes are served, without a trailing slash (`/api/marketplace`). */
  readonly basePath: string;
}

/**
 * Creates the app backend. Mount it under `basePath` with `toNodeHandler`, `toExpressMiddleware`
 * or any framework that speaks `Request`/`Response`.
 *
 * @example
 * const backend = createAppBackend({
 *   clientId, clientSecret, siteUrl: 'https://marketplace.example', apiKey: process.env.MP_API_KEY!,
 *   sessionSecret: process.env.SESSION_SECRET!, webhookSecret: process.env.MP_WEBHOOK_SECRET!,
 *   hostOrigins: ['https://dashboard.marketplace.example'], publicOrigin: 'https://app.example',
 *   onEvent: (delivery) => console.log(delivery.event),
 * });
 * http.createServer(toNodeHandler(backend)).listen(3000);
 */
export function createAppBackend(options: AppBackendOptions): AppBackend {
  const config = readConfig(options);
  const stores = readBackendStores(options);
  const clock = options.clock ?? systemClock;
  const client = options.client ?? ownClient(options, config.siteUrl, clock);
  const report = reporter(options);
  const ctx: BackendContext = { options, config, clock, client, stores, cookies: appCookies(config), report };
  const sessions = sessionChecks(ctx);
  const session = sessionRoutes(ctx, sessions);
  const oauth = oauthRoutes(ctx, sessions);
  const routes: RouteTable = {
    // HEAD where GET only reads (RFC 9110); the OAuth routes' GET acts (a state, a spent code).
    '/session': { POST: session.post, GET: session.get, HEAD: session.get, DELETE: session.delete },
    '/oauth/start': { GET: oauth.start },
    '/oauth/callback': { GET: oauth.callback },
    ...(config.webhookSecrets === null ? {} : { '/webhooks': { POST: webhookRoute(ctx, config.webhookSecrets) } }),
  };
  const backend = router(routes, config, report) as AppBackend;
  Object.defineProperties(backend, {
    requireSession: { value: sessions.requireSession, enumerable: true },
    requireEntitlement: { value: sessions.requireEntitlement, enumerable: true },
    client: { value: client, enumerable: true },
    basePath: { value: config.basePath, enumerable: true },
  });
  return backend;
}
