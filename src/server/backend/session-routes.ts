/**
 * `POST /session` (a context token becomes an app session), `GET /session` (the current session,
 * with the entitlement) and `DELETE /session` (sign out of the cookie session).
 */
import { decodeJwt } from 'jose';
import * as z from 'zod/mini';
import { MarketplaceKitError } from '../../shared/errors.js';
import type { Entitlement, Profile } from '../../shared/schemas.js';
import { contextTokenKey, verifyContextToken } from '../context-token.js';
import { readBodyBytes } from '../lib/body.js';
import { ExpiringMap } from '../lib/expiring-map.js';
import type { LaunchDecision } from '../launch-limiter.js';
import type { ReplayStore } from '../replay-store.js';
import { toErrorResponse } from '../responses.js';
import { EXCHANGE_WINDOW_MS, REFRESH_MIN_INTERVAL_MS, SESSION_COOKIE } from './constants.js';
import type { BackendContext, Route } from './context.js';
import { sessionAnswer, type SessionChecks } from './sessions.js';

const SESSION_BODY_LIMIT = 16 * 1024;
const MAX_TRACKED_REFRESHES = 10_000;
const SessionRequestBody = z.object({ context: z.string().check(z.minLength(1)), host: z.string().check(z.minLength(1)) });

export function sessionRoutes(ctx: BackendContext, sessions: SessionChecks): { post: Route; get: Route; delete: Route } {
  const { options, config, clock, client, stores, cookies, report } = ctx;
  const recentRefreshes = new ExpiringMap<true>(MAX_TRACKED_REFRESHES);
  const trailingReloads = new Map<string, Promise<Entitlement | null>>();

  /**
   * The replay store as `verifyContextToken` sees it for one launch: its claim of the token's `jti`
   * (made once the token has verified, so `sub` is the token's true user) also counts the launch,
   * at the same time, so that a launch costs one round trip to shared stores before the entitlement.
   */
  function countingReplayStore(userId: string | undefined, counted: { decision?: Promise<LaunchDecision> }): ReplayStore {
    return {
      claim(key, expiresAt, now, issuedAt) {
        if (userId !== undefined) {
          counted.decision = Promise.resolve(stores.launches.take(userId, config.maxExchangesPerUser, EXCHANGE_WINDOW_MS, now));
          counted.decision.catch(() => undefined); // awaited below, or given back if the claim fails
        }
        return stores.replay.claim(key, expiresAt, now, issuedAt);
      },
      release: (key) => stores.replay.release(key),
    };
  }

  /** POST /session: context token → app session. */
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
    const counted: { decision?: Promise<LaunchDecision> } = {};
    const subject = unverifiedUser(context);
    let claims;
    try {
      claims = await verifyContextToken(context, {
        clientId: options.clientId,
        clientSecret: options.clientSecret,
        issuer: config.siteUrl,
        host,
        now: clock.now(),
        replayStore: countingReplayStore(subject, counted),
      });
    } catch (error) {
      // A replay or a store failure made no session: the launch it counted is given back.
      if (counted.decision && subject !== undefined) await giveBackIfCounted(counted.decision, subject, request);
      throw error;
    }
    // Freed when the token makes no session, so that a retry can still use it.
    const release = () =>
      Promise.resolve()
        .then(() => stores.replay.release(contextTokenKey(claims)))
        .catch((releaseError: unknown) => report(releaseError, request));
    let decision: LaunchDecision;
    try {
      decision = await (counted.decision ?? stores.launches.take(claims.sub, config.maxExchangesPerUser, EXCHANGE_WINDOW_MS, clock.now()));
    } catch (error) {
      await release();
      throw error;
    }
    if (!decision.counted) {
      await release();
      const message = `Too many sessions started for this user: retry in ${Math.ceil(decision.retryAfterMs / 1000)} s`;
      return toErrorResponse(new MarketplaceKitError('ERR_RATE_LIMITED', message, { status: 429, retryAfterMs: decision.retryAfterMs }));
    }
    const user: Profile = { id: claims.sub, email: claims.email, name: claims.name, avatar_url: claims.avatar_url };
    try {
      const entitlement = await client.entitlements({ userId: user.id });
      const session = await sessions.mint(user, claims.app_id, claims.host);
      return sessionAnswer(session, user, entitlement, claims.host);
    } catch (error) {
      // The marketplace was rate limited or down: the retry that the answer's Retry-After asks for
      // can still use the token, and it is not counted against the user.
      await giveBackIfCounted(Promise.resolve(decision), claims.sub, request);
      await release();
      throw error;
    }
  }

  /** Takes back a launch that `decision` counted for `userId`: its token made no session. */
  async function giveBackIfCounted(decision: Promise<LaunchDecision>, userId: string, request: Request): Promise<void> {
    const settled = await decision.catch(() => null);
    if (!settled?.counted) return;
    await Promise.resolve()
      .then(() => stores.launches.giveBack(userId, clock.now()))
      .catch((error: unknown) => report(error, request));
  }

  /**
   * GET /session: the current session, with the cached (or, with ?refresh=1, reloaded) entitlement.
   * To the session cookie alone it answers no token: on the developer's own site the HttpOnly
   * cookie is the credential, and a token in the body would let script on the page carry the
   * session away (docs/security.md, "Tokens").
   */
  async function getSession(request: Request, url: URL): Promise<Response> {
    const { session, entitlement } = await sessions.sessionWithEntitlement(request, (found) =>
      url.searchParams.get('refresh') === '1' ? reload(found.userId) : client.entitlements({ userId: found.userId }),
    );
    const bearer = /^bearer(\s|$)/i.test(request.headers.get('authorization')?.trim() ?? '');
    return sessionAnswer(bearer ? session : { expiresAt: session.expiresAt }, session.user, entitlement, session.host);
  }

  /**
   * The user's entitlement from the marketplace, at most once every `REFRESH_MIN_INTERVAL_MS`
   * (in this process) while it is cached. A refresh asked for sooner waits for the end of that
   * interval and then reloads, once for everybody who asked meanwhile: what changed since the last
   * reload is never answered from the cache (a change that sent no webhook, say through the
   * simulator's control API). A webhook empties the cache, so the refresh after it reloads at once.
   */
  function reload(userId: string): Promise<Entitlement | null> {
    const now = clock.now();
    const until = recentRefreshes.expiresAt(userId, now);
    if (until === undefined) {
      recentRefreshes.set(userId, true, now + REFRESH_MIN_INTERVAL_MS);
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
    const origin = cookies.origin(request);
    if (cookies.get(request, SESSION_COOKIE, origin)) cookies.assertSameOrigin(request);
    const response = new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
    if (origin !== null) response.headers.append('set-cookie', cookies.set(SESSION_COOKIE, '', origin, 0));
    return response;
  }

  return { post: postSession, get: getSession, delete: deleteSession };
}

/** The `sub` of a context token, read before it is verified: used only once it has verified. */
function unverifiedUser(token: string): string | undefined {
  try {
    const { sub } = decodeJwt(token);
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}
