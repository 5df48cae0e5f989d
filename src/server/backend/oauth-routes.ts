/**
 * The OAuth sign-in outside the dashboard: `GET /oauth/start` keeps `state`, the PKCE verifier and
 * `return_to` in a signed HttpOnly cookie and sends the browser to the authorization page;
 * `GET /oauth/callback` checks the state, exchanges the code and signs the user in with the
 * session cookie. No store is needed: the state travels in the cookie.
 */
import { hkdfSync } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import * as z from 'zod/mini';
import { MarketplaceKitError } from '../../shared/errors.js';
import { SIGN_IN_ERROR_CODE, type Entitlement, type Profile } from '../../shared/schemas.js';
import { MarketplaceApiError } from '../api-error.js';
import { readCookies } from '../lib/cookies.js';
import { safeReturnTo } from '../lib/return-to.js';
import { safeEqual } from '../lib/safe-equal.js';
import { DEFAULT_SCOPE, buildAuthorizationUrl } from '../oauth.js';
import { OAUTH_ERROR_PARAM, OAUTH_STATE_COOKIE, SESSION_COOKIE } from './constants.js';
import type { BackendContext, Route } from './context.js';
import type { SessionChecks } from './sessions.js';

const OAUTH_STATE_TYPE = 'mp-oauth-state+jwt';
const OAUTH_STATE_TTL_SECONDS = 600;
/** Bad gateway, unavailable, gateway timeout: the marketplace may well answer a moment later. */
const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);
const OAuthStateClaims = z.object({ state: z.string(), verifier: z.string(), return_to: z.string(), redirect_uri: z.string() });

export function oauthRoutes(ctx: BackendContext, sessions: SessionChecks): { start: Route; callback: Route } {
  const { options, config, clock, client, cookies, report } = ctx;
  const { basePath } = config;
  const stateKey = new Uint8Array(hkdfSync('sha256', options.sessionSecret, 'marketplace-app-kit', 'oauth-state-cookie', 32));

  /** GET /oauth/start: state + PKCE in a signed cookie, then off to the authorization page. */
  async function oauthStart(request: Request, url: URL): Promise<Response> {
    const origin = cookies.trustedOrigin(request, 'the OAuth sign-in');
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
    response.headers.append('set-cookie', cookies.set(OAUTH_STATE_COOKIE, cookie, origin, OAUTH_STATE_TTL_SECONDS));
    return response;
  }

  /** GET /oauth/callback: check state, exchange the code, sign the user in with a cookie. */
  async function oauthCallback(request: Request, url: URL): Promise<Response> {
    const origin = cookies.trustedOrigin(request, 'the OAuth sign-in');
    const flow = await readStateCookie(request, origin, url.searchParams.get('state') ?? '');
    const clearState = cookies.set(OAUTH_STATE_COOKIE, '', origin, 0);
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
    const session = await sessions.mint(user, entitlement?.app_id ?? null, null);
    const response = back();
    const maxAge = Math.floor((session.expiresAt - clock.now()) / 1000);
    response.headers.append('set-cookie', cookies.set(SESSION_COOKIE, session.token, origin, maxAge));
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
    const sent = readCookies(request.headers.get('cookie'), cookies.name(OAUTH_STATE_COOKIE, origin));
    const stateError = (message: string, cause?: unknown) => new MarketplaceKitError('ERR_OAUTH_STATE', message, { status: 400, cause });
    if (sent.length === 0) throw stateError('The OAuth state cookie is missing (expired, blocked, or the sign-in started elsewhere); start again');
    let verified = false;
    let failure: unknown;
    for (const cookie of sent) {
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

  return { start: oauthStart, callback: oauthCallback };
}

function redirect(location: string): Response {
  return new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } });
}

function parseState(payload: unknown): z.infer<typeof OAuthStateClaims> {
  const parsed = OAuthStateClaims.safeParse(payload);
  if (!parsed.success) throw parsed.error;
  return parsed.data;
}
