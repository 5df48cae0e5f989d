/**
 * Ready HTTP handlers for an app backend (docs/decisions.md#session-exchange, docs/decisions.md#webhooks): a Web-standard
 * `(request: Request) => Promise<Response>` serving the session exchange, the OAuth sign-in and
 * the webhook receiver under one base path, plus `requireSession` / `requireEntitlement` for the
 * app's own routes. Adapters for node:http and Express are in `adapters.ts`.
 */
import { hkdfSync } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import * as z from 'zod/mini';
import type { AccessRequirement } from '../shared/access.js';
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import { exactOrigin } from '../shared/origin.js';
import { SIGN_IN_ERROR_CODE, SIGN_IN_ERROR_PARAM, type Entitlement, type Profile, type SessionResponse, type WebhookDelivery } from '../shared/schemas.js';
import { assertAccess } from './access.js';
import { MarketplaceApiError } from './api-error.js';
import { apiKeyKind, assertCredential, createMarketplaceClient, siteRoot, type MarketplaceClient } from './client.js';
import { contextTokenKey, verifyContextToken } from './context-token.js';
import { createErrorLog } from './error-log.js';
import { readBodyBytes } from './lib/body.js';
import { systemClock, type Clock } from './lib/clock.js';
import { readCookie, readCookies, serializeCookie } from './lib/cookies.js';
import { ExpiringMap, ExpiringSet } from './lib/expiring-set.js';
import { functionOption, methodsOption, numberOption } from '../shared/options.js';
import { isLoopbackOrigin } from './lib/origin.js';
import { safeReturnTo } from './lib/return-to.js';
import { safeEqual } from './lib/safe-equal.js';
import { wholeSecondsOption } from './lib/time-options.js';
import { DEFAULT_SCOPE, buildAuthorizationUrl, trimSlash } from './oauth.js';
import { createMemoryReplayStore, type ReplayStore } from './replay-store.js';
import { jsonResponse, toErrorResponse } from './responses.js';
import {
  MAX_SESSION_TTL_SECONDS,
  MIN_SESSION_SECRET_LENGTH,
  MAKE_SESSION_SECRET,
  assertSessionSecret,
  sessionError,
  sessionTokens,
  type AppSession,
} from './session.js';
import { receiveWebhook, SIGNATURE_HEADER } from './webhooks.js';

/** Where `createAppBackend` serves its routes unless given another `basePath`. */
export const DEFAULT_BASE_PATH = '/api/marketplace';
/** Cookie holding the app session after the OAuth sign-in (the off-dashboard flow); `__Host-mp_session` on https. */
export const SESSION_COOKIE = 'mp_session';
/** Cookie holding `state`, the PKCE verifier and `return_to` between start and callback; `__Host-mp_oauth_state` on https. */
export const OAUTH_STATE_COOKIE = 'mp_oauth_state';
/** Query parameter added to `return_to` when the sign-in did not complete (the runtime reads it). */
export const OAUTH_ERROR_PARAM = SIGN_IN_ERROR_PARAM;

const OAUTH_STATE_TYPE = 'mp-oauth-state+jwt';
const OAUTH_STATE_TTL_SECONDS = 600;
/** Bad gateway, unavailable, gateway timeout: the marketplace may well answer a moment later. */
const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);
const SESSION_BODY_LIMIT = 16 * 1024;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/**
 * `GET /session?refresh=1` reloads a user's entitlement at most once in this time. A refresh asked
 * for sooner, while the entitlement is cached, waits for the end of the interval and then shares
 * one reload with everybody who asked meanwhile (see `reload`). Every reload spends the app's
 * API-key rate limit, which one user must not be able to exhaust. A webhook drops the cached
 * entitlement, so the first read after it reloads in any case.
 */
export const REFRESH_MIN_INTERVAL_MS = 5_000;
const MAX_TRACKED_REFRESHES = 10_000;
/** How long a webhook copy waits for the same delivery's handling in this process (then 503). */
export const WEBHOOK_COPY_WAIT_MS = 10_000;
/**
 * Context tokens are counted per user over this window, their longest life (docs/decisions.md#session-exchange): each one
 * exchanged holds its `jti` in the replay store that long.
 */
const EXCHANGE_WINDOW_MS = 300_000;
const MAX_TRACKED_EXCHANGERS = 20_000;
/** Each default in-memory replay store: one for webhook deliveries, one for context tokens. */
const REPLAY_STORE_ENTRIES = 10_000;

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
   * Where webhook deliveries and context-token `jti`s are claimed (keys `webhook:…` and `jti:…`).
   * Default: two in memory, 10 000 keys each, so that launches can never crowd out webhooks; pass
   * one shared store when several processes serve the app.
   */
  replayStore?: ReplayStore | undefined;
  /**
   * Context tokens one user may exchange for sessions in five minutes; more answer 429
   * `ERR_RATE_LIMITED` with `Retry-After`, so that one user cannot fill the replay store and stop
   * everybody's launches. Counted in this process. Default: 30 plus room for the session renewals
   * of five tabs, `30 + ceil(3000 / sessionTtlSeconds)` (34 with 900 s sessions). `Infinity`: no
   * cap (a shared `replayStore` that limits users itself).
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
   * of the OAuth sign-in. Throws a `SessionError` (status 401) otherwise, and 403 `ERR_ORIGIN_REFUSED`
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

const SessionRequestBody = z.object({ context: z.string().check(z.minLength(1)), host: z.string().check(z.minLength(1)) });
const OAuthStateClaims = z.object({ state: z.string(), verifier: z.string(), return_to: z.string(), redirect_uri: z.string() });

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
  const clock = options.clock ?? systemClock;
  const client = options.client ?? ownClient(options, config.siteUrl, clock);
  const webhookStore = options.replayStore ?? createMemoryReplayStore({ maxEntries: REPLAY_STORE_ENTRIES });
  const contextStore = options.replayStore ?? createMemoryReplayStore({ maxEntries: REPLAY_STORE_ENTRIES });
  const exchanges = new ExpiringMap<number>(MAX_TRACKED_EXCHANGERS);
  const recentRefreshes = new ExpiringSet(MAX_TRACKED_REFRESHES);
  const trailingReloads = new Map<string, Promise<Entitlement | null>>();
  const sessions = sessionTokens(options.sessionSecret, options.clientId);
  const stateKey = new Uint8Array(hkdfSync('sha256', options.sessionSecret, 'marketplace-app-kit', 'oauth-state-cookie', 32));
  const { basePath } = config;

  /**
   * The app's origin as far as cookies go: publicOrigin, else the request's own on a loopback host.
   * Null elsewhere: the kit sets no cookie there (the sign-in needs publicOrigin), so one that
   * arrives was planted, and is never read.
   */
  const cookieOrigin = (request: Request): string | null => {
    if (config.publicOrigin !== undefined) return config.publicOrigin;
    const origin = new URL(request.url).origin;
    return isLoopbackOrigin(origin) ? origin : null;
  };
  /**
   * The app's origin where security depends on it: as `cookieOrigin`, and `ERR_CONFIG` where that
   * has none. The request's URL is only trusted on a loopback host: elsewhere a Host header or
   * request target may be the attacker's choice.
   */
  const trustedOrigin = (request: Request, purpose: string): string => {
    const origin = cookieOrigin(request);
    if (origin !== null) return origin;
    throw new MarketplaceKitError(
      'ERR_CONFIG',
      `createAppBackend: set publicOrigin (e.g. https://app.example): ${purpose} needs the app's public origin, which is derived from the request only on loopback hosts`,
    );
  };
  /**
   * The kit's cookies are HttpOnly, SameSite=Lax, Path=/. On https they are Secure and `__Host-`
   * prefixed, so that no sibling subdomain can set one (a cookie tossed from there would sign the
   * user in as someone else); on http (loopback development) browsers refuse the prefix.
   */
  const cookieName = (name: string, origin: string) => (origin.startsWith('https:') ? `__Host-${name}` : name);
  const setCookie = (name: string, value: string, origin: string, maxAgeSeconds: number) =>
    serializeCookie(cookieName(name, origin), value, { path: '/', maxAgeSeconds, secure: origin.startsWith('https:') });
  const getCookie = (request: Request, name: string, origin: string | null) =>
    origin === null ? undefined : readCookie(request.headers.get('cookie'), cookieName(name, origin));

  async function requireSession(request: Request): Promise<AppSession> {
    const authorization = request.headers.get('authorization')?.trim() ?? '';
    // Another scheme is no attempt at a session: a staging site behind HTTP Basic auth has the
    // browser send `Basic …` with every request, and its cookie session must still work.
    if (/^bearer(\s|$)/i.test(authorization)) {
      const match = /^Bearer +([^\s]+)$/i.exec(authorization);
      if (!match) throw sessionError('ERR_SESSION_INVALID', 'The Authorization header must be "Bearer <session token>"');
      return sessions.verify(match[1]!, clock.now());
    }
    const cookie = getCookie(request, SESSION_COOKIE, cookieOrigin(request));
    if (!cookie) throw sessionError('ERR_SESSION_MISSING', 'No session: send "Authorization: Bearer <session token>" or sign in');
    assertCookieOrigin(request);
    return sessions.verify(cookie, clock.now());
  }

  /**
   * A cookie rides along on requests other sites make; for anything that changes state, the
   * browser's Origin header must name this app or a CORS origin (SameSite=Lax alone still trusts
   * sibling sites).
   */
  function assertCookieOrigin(request: Request): void {
    const origin = request.headers.get('origin');
    if (
      !SAFE_METHODS.has(request.method) &&
      !(origin !== null && config.corsOrigins.has(origin)) &&
      origin !== trustedOrigin(request, 'a state-changing request with a session cookie')
    ) {
      throw new MarketplaceKitError(
        'ERR_ORIGIN_REFUSED',
        `A cookie session accepts state-changing requests only from the app’s own origin (or corsOrigins); this one came from ${origin === null ? 'no Origin header' : JSON.stringify(origin.slice(0, 100))}`,
        { status: 403 },
      );
    }
  }

  async function requireEntitlement(request: Request, requirement: AccessRequirement = {}) {
    const session = await requireSession(request);
    const entitlement = await client.entitlements({ userId: session.userId });
    assertAccess(entitlement, requirement, clock.now());
    return { session, entitlement };
  }

  /** The session answer; without `session.token` for a request the session cookie authenticated (see `getSession`). */
  function sessionAnswer(session: { token?: string; expiresAt: number }, user: Profile, entitlement: Entitlement | null, host: string | null): Response {
    const expires = new Date(session.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const body: SessionResponse = {
      session: session.token === undefined ? { expires_at: expires } : { token: session.token, expires_at: expires },
      user,
      entitlement,
      host,
    };
    return jsonResponse(body);
  }

  async function mint(user: Profile, appId: string | null, host: string | null) {
    return sessions.sign({
      user,
      appId,
      host,
      now: clock.now(),
      ...(options.sessionTtlSeconds === undefined ? {} : { ttlSeconds: options.sessionTtlSeconds }),
    });
  }

  /** POST /session: context token → app session (docs/decisions.md#session-exchange). */
  async function postSession(request: Request): Promise<Response> {
    const bytes = await readBodyBytes(request, SESSION_BODY_LIMIT, false);
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder().decode(bytes));
    } catch (error) {
      throw new MarketplaceKitError('ERR_INVALID_INPUT', 'Expected a JSON body {"context": "<mp_context>", "host": "<mp_host>"}', { status: 400, cause: error });
    }
    const parsed = SessionRequestBody.safeParse(value);
    if (!parsed.success) {
      throw new MarketplaceKitError('ERR_INVALID_INPUT', 'Expected a JSON body {"context": "<mp_context>", "host": "<mp_host>"}', { status: 400 });
    }
    const { context, host } = parsed.data;
    if (!config.hostOrigins.has(host)) {
      throw new MarketplaceKitError('ERR_CONTEXT_TOKEN_HOST', 'mp_host is not one of the dashboard origins this backend accepts', { status: 401 });
    }
    const claims = await verifyContextToken(context, {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      issuer: config.siteUrl,
      host,
      now: clock.now(),
      replayStore: contextStore,
    });
    // Freed when the token makes no session, so that a retry can still use it.
    const release = () =>
      Promise.resolve()
        .then(() => contextStore.release(contextTokenKey(claims)))
        .catch((releaseError: unknown) => report(releaseError, request));
    const wait = countExchange(claims.sub);
    if (wait !== undefined) {
      await release();
      const message = `Too many sessions started for this user: retry in ${Math.ceil(wait / 1000)} s`;
      return toErrorResponse(new MarketplaceKitError('ERR_RATE_LIMITED', message, { status: 429, retryAfterMs: wait }));
    }
    const user: Profile = { id: claims.sub, email: claims.email, name: claims.name, avatar_url: claims.avatar_url };
    try {
      const entitlement = await client.entitlements({ userId: user.id });
      const session = await mint(user, claims.app_id, claims.host);
      return sessionAnswer(session, user, entitlement, claims.host);
    } catch (error) {
      // The marketplace was rate limited or down: the retry that the answer's Retry-After asks for
      // can still use the token, and it is not counted against the user.
      uncountExchange(claims.sub);
      await release();
      throw error;
    }
  }

  /**
   * GET /session: the current session, with the cached (or, with ?refresh=1, reloaded) entitlement.
   * To the session cookie alone it answers no token: on the developer's own site the HttpOnly
   * cookie is the credential, and a token in the body would let script on the page carry the
   * session away (docs/security.md, "Tokens").
   */
  async function getSession(request: Request, url: URL): Promise<Response> {
    const session = await requireSession(request);
    const entitlement = url.searchParams.get('refresh') === '1' ? await reload(session.userId) : await client.entitlements({ userId: session.userId });
    const bearer = /^bearer(\s|$)/i.test(request.headers.get('authorization')?.trim() ?? '');
    return sessionAnswer(bearer ? session : { expiresAt: session.expiresAt }, session.user, entitlement, session.host);
  }

  /**
   * Counts a context token exchanged by `userId`; answers how long (ms) to wait instead when the
   * user has had `maxExchangesPerUser` in the window. Under a flood of users the oldest counts are
   * forgotten (the replay store itself stays bounded and fails closed).
   */
  function countExchange(userId: string): number | undefined {
    const now = clock.now();
    const count = exchanges.get(userId, now) ?? 0;
    const until = exchanges.expiresAt(userId, now) ?? now + EXCHANGE_WINDOW_MS;
    if (count >= config.maxExchangesPerUser) return until - now;
    exchanges.set(userId, count + 1, until);
    return undefined;
  }

  /** Takes back the count of an exchange that made no session. */
  function uncountExchange(userId: string): void {
    const now = clock.now();
    const count = exchanges.get(userId, now);
    const until = exchanges.expiresAt(userId, now);
    if (count !== undefined && until !== undefined && count > 0) exchanges.set(userId, count - 1, until);
  }

  /**
   * The user's entitlement from the marketplace, at most once every `REFRESH_MIN_INTERVAL_MS`
   * while it is cached. A refresh asked for sooner waits for the end of that interval and then
   * reloads, once for everybody who asked meanwhile: what changed since the last reload is never
   * answered from the cache (a change that sent no webhook, say through the simulator's control
   * API). A webhook empties the cache, so the refresh after it reloads at once.
   */
  function reload(userId: string): Promise<Entitlement | null> {
    const now = clock.now();
    const until = recentRefreshes.expiresAt(userId, now);
    if (until === undefined) {
      recentRefreshes.add(userId, now + REFRESH_MIN_INTERVAL_MS);
      return client.entitlements({ userId, fresh: true });
    }
    // Not cached (a webhook emptied it, or a load is on its way): load, or join the load under way.
    if (!client.isCached(userId)) return client.entitlements({ userId });
    const waiting = trailingReloads.get(userId);
    if (waiting) return waiting;
    const pending: Promise<Entitlement | null> = clock.sleep(until - now).then(() => {
      // Those who ask from now on wait for the next interval.
      trailingReloads.delete(userId);
      return reload(userId);
    });
    trailingReloads.set(userId, pending);
    return pending;
  }

  function deleteSession(request: Request): Response {
    // Another site must not sign the user out (logout CSRF): a request that carries the cookie
    // counts only from the app's own origin (or a CORS origin), as every state-changing request.
    const origin = cookieOrigin(request);
    if (getCookie(request, SESSION_COOKIE, origin)) assertCookieOrigin(request);
    const response = new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
    if (origin !== null) response.headers.append('set-cookie', setCookie(SESSION_COOKIE, '', origin, 0));
    return response;
  }

  /** GET /oauth/start: state + PKCE in a signed cookie, then off to the authorization page. */
  async function oauthStart(request: Request, url: URL): Promise<Response> {
    const origin = trustedOrigin(request, 'the OAuth sign-in');
    const returnTo = safeReturnTo(url.searchParams.get('return_to'), origin, config.corsOrigins);
    const redirectUri = options.redirectUri ?? `${origin}${basePath}/oauth/callback`;
    // On loopback the origin is the request's: http://localhost:3000 is not http://127.0.0.1:3000.
    const callbackOrigin = new URL(redirectUri).origin;
    if (callbackOrigin !== origin) {
      throw new MarketplaceKitError(
        'ERR_CONFIG',
        `createAppBackend: this sign-in started on ${origin} but redirectUri is on ${callbackOrigin}, where the sign-in's state cookie never arrives: open the app on ${callbackOrigin}`,
      );
    }
    const authorization = buildAuthorizationUrl({ siteUrl: config.siteUrl, clientId: options.clientId, redirectUri, scope: options.scope ?? DEFAULT_SCOPE });
    const iat = Math.floor(clock.now() / 1000);
    const cookie = await new SignJWT({
      state: authorization.state,
      verifier: authorization.codeVerifier,
      return_to: returnTo,
      redirect_uri: redirectUri,
    })
      .setProtectedHeader({ alg: 'HS256', typ: OAUTH_STATE_TYPE })
      .setAudience(options.clientId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + OAUTH_STATE_TTL_SECONDS)
      .sign(stateKey);
    const response = redirect(authorization.url);
    response.headers.append('set-cookie', setCookie(OAUTH_STATE_COOKIE, cookie, origin, OAUTH_STATE_TTL_SECONDS));
    return response;
  }

  /** GET /oauth/callback: check state, exchange the code, sign the user in with a cookie. */
  async function oauthCallback(request: Request, url: URL): Promise<Response> {
    const origin = trustedOrigin(request, 'the OAuth sign-in');
    const flow = await readStateCookie(request, origin, url.searchParams.get('state') ?? '');
    const clearState = setCookie(OAUTH_STATE_COOKIE, '', origin, 0);
    const back = (error?: string) => {
      // Checked again although the cookie is signed: the redirect never leaves the app's origin
      // and its corsOrigins.
      const target = new URL(safeReturnTo(flow.return_to, origin, config.corsOrigins), origin);
      if (error) target.searchParams.set(OAUTH_ERROR_PARAM, error);
      const place = `${target.pathname}${target.search}${target.hash}`;
      const response = redirect(target.origin === origin ? place : `${target.origin}${place}`);
      response.headers.append('set-cookie', clearState);
      return response;
    };
    const denied = url.searchParams.get('error');
    if (denied !== null) return back(SIGN_IN_ERROR_CODE.test(denied) ? denied : 'access_denied');
    const code = url.searchParams.get('code');
    if (!code) return back('invalid_request');

    let user: Profile;
    let entitlement: Entitlement | null;
    try {
      const tokens = await client.exchangeCode({ code, redirectUri: flow.redirect_uri, codeVerifier: flow.verifier });
      user = await client.whoami({ accessToken: tokens.accessToken });
      entitlement = await client.entitlements({ accessToken: tokens.accessToken });
    } catch (error) {
      report(error, request);
      return back(signInErrorCode(error));
    }
    const session = await mint(user, entitlement?.app_id ?? null, null);
    const response = back();
    const maxAge = Math.floor((session.expiresAt - clock.now()) / 1000);
    response.headers.append('set-cookie', setCookie(SESSION_COOKIE, session.token, origin, maxAge));
    return response;
  }

  /**
   * The RFC 6749 code a failed exchange sends back in `mp_oauth_error`: the marketplace's own
   * (`invalid_grant`), `temporarily_unavailable` when it could not be reached in time, was busy,
   * or it (or a gateway in front of it) answered 502, 503 or 504, `server_error` otherwise. The
   * details go to `onError`, never to the page.
   */
  function signInErrorCode(error: unknown): string {
    if (error instanceof MarketplaceApiError) {
      if (error.code === 'ERR_OAUTH' && error.upstreamCode !== undefined && SIGN_IN_ERROR_CODE.test(error.upstreamCode)) return error.upstreamCode;
      if (error.code === 'ERR_TIMEOUT' || error.code === 'ERR_NETWORK' || error.code === 'ERR_RATE_LIMITED') return 'temporarily_unavailable';
      if (error.status !== undefined && UNAVAILABLE_STATUSES.has(error.status)) return 'temporarily_unavailable';
    }
    return 'server_error';
  }

  /**
   * The sign-in whose `state` came back. Every state cookie the browser sent is tried: one left
   * over with another Path (an older version's `{basePath}/oauth`) comes first and must not hide
   * the current one.
   */
  async function readStateCookie(request: Request, origin: string, state: string): Promise<z.infer<typeof OAuthStateClaims>> {
    const cookies = readCookies(request.headers.get('cookie'), cookieName(OAUTH_STATE_COOKIE, origin));
    const stateError = (message: string, cause?: unknown) => new MarketplaceKitError('ERR_OAUTH_STATE', message, { status: 400, cause });
    if (cookies.length === 0) throw stateError('The OAuth state cookie is missing (expired, blocked, or the sign-in started elsewhere); start again');
    let verified = false;
    let failure: unknown;
    for (const cookie of cookies) {
      try {
        const { payload } = await jwtVerify(cookie, stateKey, {
          algorithms: ['HS256'],
          typ: OAUTH_STATE_TYPE,
          audience: options.clientId,
          currentDate: new Date(clock.now()),
        });
        const flow = parseState(payload);
        if (safeEqual(state, flow.state)) return flow;
        verified = true;
      } catch (error) {
        failure = error;
      }
    }
    if (verified) throw stateError('The OAuth state does not match this browser’s sign-in; start again');
    throw stateError('The OAuth state cookie is invalid or expired; start again', failure);
  }

  // Replay keys claimed by deliveries this process is still handling, each with a promise that
  // settles once its delivery is handled or released.
  const handling = new Map<string, Promise<void>>();

  /**
   * `webhookStore` for one delivery: a claim of a key that another delivery in this process is
   * still handling waits for that one first, up to `WEBHOOK_COPY_WAIT_MS` in all (for all its keys,
   * and for each delivery that held one of them in turn). A copy sent again while
   * the first is handled is then a duplicate only if the first succeeded; if it failed (and was
   * released), the copy is handled. If the first takes longer, the copy is refused with 503
   * `ERR_WEBHOOK_IN_PROGRESS`, so that its sender retries later instead of holding a request open.
   */
  function claimsFor(settlers: Array<() => void>): ReplayStore {
    const waitUntil = clock.now() + WEBHOOK_COPY_WAIT_MS;
    return {
      async claim(key, expiresAt, now) {
        for (let pending = handling.get(key); pending; pending = handling.get(key)) {
          if (!(await settlesWithin(pending, Math.max(0, waitUntil - clock.now())))) {
            throw new MarketplaceKitError('ERR_WEBHOOK_IN_PROGRESS', 'The same delivery is still being handled: retry later', { status: 503 });
          }
        }
        // Marked before the store answers, so that a copy arriving meanwhile waits too.
        let settle!: () => void;
        handling.set(key, new Promise<void>((resolve) => (settle = resolve)));
        const done = () => {
          handling.delete(key);
          settle();
        };
        let claimed = false;
        try {
          claimed = await webhookStore.claim(key, expiresAt, now);
        } finally {
          if (claimed) settlers.push(done);
          else done();
        }
        return claimed;
      },
      release: (key) => webhookStore.release(key),
    };
  }

  async function settlesWithin(pending: Promise<void>, ms: number): Promise<boolean> {
    const stop = new AbortController();
    try {
      return await Promise.race([pending.then(() => true), clock.sleep(ms, stop.signal).then(() => false, () => false)]);
    } finally {
      stop.abort();
    }
  }

  /** POST /webhooks: verify and claim, invalidate the user's entitlement, hand to onEvent (released if it throws). */
  async function postWebhook(request: Request, secrets: readonly string[]): Promise<Response> {
    const bytes = await readBodyBytes(request, WEBHOOK_BODY_LIMIT, true);
    const settlers: Array<() => void> = [];
    try {
      let received;
      try {
        received = await receiveWebhook(bytes, request.headers.get(SIGNATURE_HEADER), {
          secrets,
          now: clock.now(),
          replayStore: claimsFor(settlers),
          ...(options.webhookToleranceSeconds === undefined ? {} : { toleranceSeconds: options.webhookToleranceSeconds }),
        });
      } catch (error) {
        if (isKitError(error, 'ERR_WEBHOOK_DUPLICATE')) return jsonResponse({ received: true, duplicate: true });
        if (isKitError(error, 'ERR_WEBHOOK_IN_PROGRESS')) {
          return jsonResponse(error.toJSON(), { status: 503, headers: { 'retry-after': String(WEBHOOK_COPY_WAIT_MS / 1000) } });
        }
        throw error;
      }
      const { delivery } = received;
      const userId = delivery.data.user_id;
      if (typeof userId === 'string') client.invalidate(userId);
      try {
        await options.onEvent?.(delivery);
      } catch (error) {
        // Released: the marketplace retries, and the retry is handled. The answer is 500 either way,
        // and onError hears of it once, from the handler's catch-all, as ERR_WEBHOOK_HANDLER_FAILED
        // with the app's error as `cause`.
        await received.release().catch((releaseError: unknown) => report(releaseError, request));
        throw new MarketplaceKitError('ERR_WEBHOOK_HANDLER_FAILED', `The app failed to handle the ${delivery.event} delivery`, { status: 500, cause: error });
      }
      return jsonResponse({ received: true, event: delivery.event });
    } finally {
      for (const settle of settlers) settle();
    }
  }

  // Quiet under attack: one line per expected rejection, repeats counted (docs/server.md).
  const log = createErrorLog({ context: 'app backend', clock: options.clock });
  function report(error: unknown, request: Request): void {
    try {
      if (options.onError) options.onError(error, request);
      else log(error, request);
    } catch {
      // A failing logger must not change the answer.
    }
  }

  type Route = (request: Request, url: URL) => Promise<Response> | Response;
  const { webhookSecrets } = config;
  const routes: Record<string, Partial<Record<string, Route>>> = {
    // HEAD where GET only reads (RFC 9110); the OAuth routes' GET acts (a state, a spent code).
    '/session': { POST: postSession, GET: getSession, HEAD: getSession, DELETE: deleteSession },
    '/oauth/start': { GET: oauthStart },
    '/oauth/callback': { GET: oauthCallback },
    ...(webhookSecrets === null ? {} : { '/webhooks': { POST: (request: Request) => postWebhook(request, webhookSecrets) } }),
  };

  const backend = async function handle(request: Request): Promise<Response> {
    let response: Response;
    try {
      response = await route(request);
    } catch (error) {
      response = toErrorResponse(error);
      // Every 5xx answer, the marketplace's failures included (their upstream text is not in the
      // answer), and signatures that match no secret: mostly a wrong or rotated secret, which
      // would otherwise fail in silence (the marketplace retries, the browser shows an error).
      if (response.status >= 500 || isKitError(error, 'ERR_WEBHOOK_SIGNATURE_MISMATCH') || isKitError(error, 'ERR_CONTEXT_TOKEN_SIGNATURE')) {
        report(error, request);
      }
    }
    // An answer to HEAD has no body, errors included (node:http drops it; a fetch runtime may not).
    return withCors(request, request.method === 'HEAD' ? new Response(null, response) : response, config.corsOrigins);
  } as AppBackend;

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname === basePath ? '/' : url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length) : null;
    if (path === null) throw new MarketplaceKitError('ERR_NOT_FOUND', `${url.pathname} is outside ${basePath || '/'}`, { status: 404 });
    const methods = ownValue(routes, path.replace(/\/+$/, '') || '/');
    if (!methods) throw new MarketplaceKitError('ERR_NOT_FOUND', `No route ${request.method} ${url.pathname}`, { status: 404 });
    if (request.method === 'OPTIONS' && config.corsOrigins.size > 0) return new Response(null, { status: 204 });
    // Own keys only: a runtime that passes any method name on (Deno, Bun, Workers) must not find
    // `constructor` or `toString` among the routes.
    const handler = ownValue(methods, request.method);
    if (!handler) {
      const response = toErrorResponse(
        new MarketplaceKitError('ERR_METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${url.pathname}`, { status: 405 }),
      );
      response.headers.set('allow', Object.keys(methods).join(', '));
      return response;
    }
    return handler(request, url);
  }

  Object.defineProperties(backend, {
    requireSession: { value: requireSession, enumerable: true },
    requireEntitlement: { value: requireEntitlement, enumerable: true },
    client: { value: client, enumerable: true },
    basePath: { value: basePath, enumerable: true },
  });
  return backend;
}

interface BackendConfig {
  siteUrl: string;
  basePath: string;
  publicOrigin: string | undefined;
  hostOrigins: ReadonlySet<string>;
  corsOrigins: ReadonlySet<string>;
  /** null with `webhooks: false`. */
  webhookSecrets: readonly string[] | null;
  maxExchangesPerUser: number;
}

function readConfig(options: AppBackendOptions): BackendConfig {
  const configError = (message: string) => new MarketplaceKitError('ERR_CONFIG', `createAppBackend: ${message}`);
  if (typeof options !== 'object' || options === null) throw configError('pass the options object (clientId, clientSecret, siteUrl, …)');
  for (const name of ['clientId', 'clientSecret', 'siteUrl', 'apiKey'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '') throw configError(`${name} is required`);
  }
  assertCredential(options.clientId, 'clientId', configError);
  assertCredential(options.clientSecret, 'clientSecret', configError);
  functionOption(options.onEvent, 'createAppBackend: onEvent');
  functionOption(options.onError, 'createAppBackend: onError');
  methodsOption(options.replayStore, 'createAppBackend: replayStore', ['claim', 'release']);
  methodsOption(options.clock, 'createAppBackend: clock', ['now', 'sleep']);
  if (options.sessionSecret === undefined || options.sessionSecret === '') {
    throw configError(`sessionSecret is required: at least ${MIN_SESSION_SECRET_LENGTH} random characters of your own (not the Client Secret); ${MAKE_SESSION_SECRET}`);
  }
  try {
    assertSessionSecret(options.sessionSecret);
  } catch (error) {
    throw configError((error as Error).message);
  }
  if (options.sessionSecret === options.clientSecret) {
    throw configError('sessionSecret must differ from clientSecret, so that session and context tokens never cross');
  }
  const ttl = wholeSecondsOption(options.sessionTtlSeconds, 'createAppBackend: sessionTtlSeconds', MAX_SESSION_TTL_SECONDS);
  const origins = (list: readonly string[] | undefined, name: string) => {
    const set = new Set<string>();
    if (list !== undefined && !Array.isArray(list)) throw configError(`${name} must be an array of origins, got ${JSON.stringify(list)}`);
    for (const value of list ?? []) {
      const origin = exactOrigin(value);
      if (origin === null) throw configError(`${name} must list exact http(s) origins such as https://dashboard.example (no path, no trailing slash, lower case), got ${JSON.stringify(value)}`);
      set.add(origin);
    }
    return set;
  };
  numberOption(options.webhookToleranceSeconds, 0, 'createAppBackend: webhookToleranceSeconds');
  const maxExchangesPerUser = numberOption(
    options.maxExchangesPerUser,
    30 + Math.ceil(3000 / ttl),
    'createAppBackend: maxExchangesPerUser',
    { min: 1, unlimited: true },
  );
  const hostOrigins = origins(options.hostOrigins, 'hostOrigins');
  if (hostOrigins.size === 0) throw configError('hostOrigins must list at least one dashboard origin');
  let publicOrigin: string | undefined;
  if (options.publicOrigin !== undefined) {
    const origin = exactOrigin(options.publicOrigin);
    if (origin === null) throw configError(`publicOrigin must be an exact http(s) origin such as https://app.example (no path, no trailing slash, lower case), got ${JSON.stringify(options.publicOrigin)}`);
    // Over http the session cookie, and the session tokens the kit sends, travel in the clear.
    if (origin.startsWith('http:') && !isLoopbackOrigin(origin)) {
      throw configError(`publicOrigin must use https, got ${JSON.stringify(origin)}: over http sessions travel in the clear (http is for localhost, 127.0.0.1 and [::1])`);
    }
    publicOrigin = origin;
  }
  if (options.redirectUri !== undefined) {
    const redirect = URL.canParse(options.redirectUri) ? new URL(options.redirectUri) : null;
    if (redirect === null || !/^https?:$/.test(redirect.protocol)) throw configError(`redirectUri must be an http(s) URL, got ${JSON.stringify(options.redirectUri)}`);
    // No marketplace may register one with a fragment (the simulator refuses it too): every sign-in would fail on its authorization page.
    if (options.redirectUri.includes('#')) throw configError(`redirectUri must not include a fragment (RFC 6749 §3.1.2), got ${JSON.stringify(options.redirectUri)}`);
    // A public redirectUri says the app runs in public. Without publicOrigin the backend would then
    // take each request's Host for loopback (a proxy that sends Host: 127.0.0.1 does), and set
    // cookies without Secure or __Host- there.
    if (publicOrigin === undefined && !isLoopbackOrigin(redirect.origin)) {
      throw configError(`redirectUri is on ${redirect.origin}: set publicOrigin too (the origin the browser sees, e.g. ${redirect.origin}), so that no request's Host header decides whether the backend runs on loopback`);
    }
    // The sign-in's state cookie belongs to publicOrigin alone (host-only, `__Host-` on https):
    // a callback on any other origin (www. or not) never receives it, so no sign-in could end.
    if (publicOrigin !== undefined && redirect.origin !== publicOrigin) {
      throw configError(`redirectUri must be on publicOrigin ${publicOrigin}, got ${redirect.origin}: the sign-in's state cookie is set there and reaches no other origin`);
    }
  }
  const basePath = trimSlash(options.basePath ?? DEFAULT_BASE_PATH);
  if (basePath !== '' && !/^\/[\w\-./~]*$/.test(basePath)) throw configError('basePath must be a path like /api/marketplace');
  // The host root (`{site_url}` in docs/marketplace.md), which context tokens name exactly as their issuer.
  const siteUrl = siteRoot(options.siteUrl, configError);
  if (options.client !== undefined) readGivenClient(options, siteUrl, configError);
  return {
    siteUrl,
    maxExchangesPerUser,
    basePath,
    publicOrigin,
    hostOrigins,
    corsOrigins: origins(options.corsOrigins, 'corsOrigins'),
    webhookSecrets: readWebhookSecrets(options, configError),
  };
}

/**
 * A client of your own carries its own settings: the backend's options that only build a client
 * would be ignored without a word, so they are refused, as is a client for another marketplace.
 */
function readGivenClient(options: AppBackendOptions, siteUrl: string, configError: (message: string) => MarketplaceKitError): void {
  const ignored = CLIENT_OPTIONS.filter((name) => options[name] !== undefined);
  if (ignored.length > 0) {
    throw configError(`${ignored.join(', ')} would be ignored with your own client: pass ${ignored.length === 1 ? 'it' : 'them'} to createMarketplaceClient instead`);
  }
  const client = options.client!;
  const clientSite = URL.canParse(client.siteUrl) ? new URL(client.siteUrl).origin : client.siteUrl;
  if (clientSite !== siteUrl) {
    throw configError(`the client is for ${JSON.stringify(client.siteUrl)}, not for siteUrl ${JSON.stringify(siteUrl)}`);
  }
  let kind;
  try {
    kind = apiKeyKind(options.apiKey);
  } catch (error) {
    throw configError((error as Error).message);
  }
  // Every launch loads the entitlement by user id, with the client's API key.
  if (client.keyKind !== kind) {
    throw configError(`the client has ${client.keyKind === null ? 'no API key' : `a ${client.keyKind} API key`}, but apiKey is a ${kind} key: create it with the same apiKey`);
  }
  // The sign-in sends options.clientId to the authorization page and has the client exchange the
  // code: with other credentials, every sign-in would fail only at its callback.
  if (client.clientId !== options.clientId) {
    throw configError(
      `${client.clientId === null ? 'the client has no clientId and clientSecret' : `the client's clientId is ${JSON.stringify(client.clientId)}`}, ` +
        `not ${JSON.stringify(options.clientId)}: create it with the same clientId and clientSecret`,
    );
  }
}

/** The client `createAppBackend` creates; a mistake in the options it passes on is the backend's. */
function ownClient(options: AppBackendOptions, siteUrl: string, clock: Clock): MarketplaceClient {
  try {
    return createMarketplaceClient({
      siteUrl,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      apiKey: options.apiKey,
      clock,
      ...(options.apiBaseUrl === undefined ? {} : { apiBaseUrl: options.apiBaseUrl }),
      ...(options.tokenPath === undefined ? {} : { tokenPath: options.tokenPath }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.entitlementTtlMs === undefined ? {} : { entitlementTtlMs: options.entitlementTtlMs }),
    });
  } catch (error) {
    if (!isKitError(error, 'ERR_CONFIG')) throw error;
    throw new MarketplaceKitError('ERR_CONFIG', `createAppBackend: ${error.message.replace(/^createMarketplaceClient: /, '')}`);
  }
}

/** The options of `createAppBackend` that only go into the client it creates. */
const CLIENT_OPTIONS = ['apiBaseUrl', 'tokenPath', 'fetch', 'timeoutMs', 'entitlementTtlMs'] as const;

/** Fails closed at start-up: without a secret every delivery would be refused at run time. */
function readWebhookSecrets(options: AppBackendOptions, configError: (message: string) => MarketplaceKitError): readonly string[] | null {
  if (options.webhookSecret !== undefined && options.webhookSecrets !== undefined) {
    throw configError('pass webhookSecret or webhookSecrets, not both: during a rotation, list every secret in webhookSecrets');
  }
  const given = options.webhookSecrets ?? (options.webhookSecret === undefined ? [] : [options.webhookSecret]);
  if (options.webhooks === false) {
    if (given.length > 0) throw configError('webhooks: false and a webhook secret exclude each other');
    return null;
  }
  if (options.webhooks !== undefined) throw configError('webhooks accepts only false (to turn the webhook route off)');
  if (given.length === 0) {
    throw configError('webhookSecret (or webhookSecrets during a rotation) is required; pass webhooks: false if the app receives no webhooks');
  }
  const empty = given.findIndex((secret) => typeof secret !== 'string' || secret === '');
  if (empty !== -1) {
    const name = options.webhookSecrets === undefined ? 'webhookSecret' : `webhookSecrets[${empty}]`;
    throw configError(`${name} is empty or not a string (an unset environment variable?); pass webhooks: false if the app receives no webhooks`);
  }
  return [...given];
}

/** `record[key]` when it is the record's own: never an inherited `constructor` or `toString`. */
function ownValue<T>(record: Partial<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function redirect(location: string): Response {
  return new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } });
}

function parseState(payload: unknown): z.infer<typeof OAuthStateClaims> {
  const parsed = OAuthStateClaims.safeParse(payload);
  if (!parsed.success) throw parsed.error;
  return parsed.data;
}

function withCors(request: Request, response: Response, allowed: ReadonlySet<string>): Response {
  const origin = request.headers.get('origin');
  if (origin === null || !allowed.has(origin)) return response;
  const headers = new Headers(response.headers);
  headers.set('access-control-allow-origin', origin);
  headers.set('access-control-allow-credentials', 'true');
  headers.append('vary', 'Origin');
  if (request.method === 'OPTIONS') {
    headers.set('access-control-allow-methods', 'GET, POST, DELETE');
    headers.set('access-control-allow-headers', 'authorization, content-type');
    headers.set('access-control-max-age', '600');
  } else {
    // The browser kit reads how long a 429 or 503 asks it to wait before it renews again, and
    // counts session lifetimes by this server's clock when the browser's is wrong.
    headers.set('access-control-expose-headers', 'retry-after, date');
  }
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
