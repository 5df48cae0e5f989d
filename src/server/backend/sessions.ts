/**
 * App sessions as the backend checks and mints them: a Bearer session token or the session cookie
 * of the OAuth sign-in, refused when issued before the user's latest `user.revoked` (the shared
 * revocation cut-off), and the entitlement the app's own routes are gated by.
 */
import type { AccessRequirement } from '../../shared/access.js';
import type { Entitlement, Profile, SessionResponse } from '../../shared/schemas.js';
import { assertAccess } from '../access.js';
import { jsonResponse } from '../responses.js';
import { sessionError, sessionTokens, type AppSession } from '../session.js';
import { SESSION_COOKIE } from './constants.js';
import type { BackendContext } from './context.js';

export interface SessionChecks {
  requireSession(request: Request): Promise<AppSession>;
  requireEntitlement(request: Request, requirement?: AccessRequirement): Promise<{ session: AppSession; entitlement: Entitlement | null }>;
  /** The session and, at the same time, the user's entitlement (one round trip to shared stores). */
  sessionWithEntitlement(request: Request, load: (session: AppSession) => Promise<Entitlement | null>): Promise<{ session: AppSession; entitlement: Entitlement | null }>;
  mint(user: Profile, appId: string | null, host: string | null): Promise<{ token: string; expiresAt: number }>;
}

export function sessionChecks(ctx: BackendContext): SessionChecks {
  const { options, clock, cookies, stores } = ctx;
  // The session key is checked and imported once (docs/server.md, "Speed").
  const tokens = sessionTokens(options.sessionSecret, options.clientId);

  /** The session token of a request, verified, revocation not yet checked. */
  async function verifiedSession(request: Request): Promise<AppSession> {
    const authorization = request.headers.get('authorization')?.trim() ?? '';
    // Another scheme is no attempt at a session: a staging site behind HTTP Basic auth has the
    // browser send `Basic …` with every request, and its cookie session must still work.
    if (/^bearer(\s|$)/i.test(authorization)) {
      const match = /^Bearer +([^\s]+)$/i.exec(authorization);
      if (!match) throw sessionError('ERR_SESSION_INVALID', 'The Authorization header must be "Bearer <session token>"');
      return tokens.verify(match[1]!, clock.now());
    }
    const cookie = cookies.get(request, SESSION_COOKIE, cookies.origin(request));
    if (!cookie) throw sessionError('ERR_SESSION_MISSING', 'No session: send "Authorization: Bearer <session token>" or sign in');
    cookies.assertSameOrigin(request);
    return tokens.verify(cookie, clock.now());
  }

  /**
   * Sessions are not stored: `user.revoked` leaves a cut-off, and every session of the user issued
   * before it is refused. Issue times are whole seconds: a session from the revoke's own second is
   * kept, so that the new session of a launch right after the revoke is not refused with it.
   */
  async function assertNotRevoked(session: AppSession): Promise<void> {
    const cutoff = await stores.revocations.revokedAt(session.userId, clock.now());
    if (cutoff !== null && session.issuedAt < Math.floor(cutoff / 1000) * 1000) {
      throw sessionError('ERR_SESSION_REVOKED', 'The user revoked access to this app after this session began; start a new one');
    }
  }

  async function sessionWithEntitlement(request: Request, load: (session: AppSession) => Promise<Entitlement | null>) {
    const session = await verifiedSession(request);
    // Both at once; a revoked session is refused as such, whatever becomes of the lookup.
    const loading = load(session);
    loading.catch(() => undefined);
    await assertNotRevoked(session);
    return { session, entitlement: await loading };
  }

  return {
    async requireSession(request) {
      const session = await verifiedSession(request);
      await assertNotRevoked(session);
      return session;
    },
    async requireEntitlement(request, requirement = {}) {
      const found = await sessionWithEntitlement(request, (session) => ctx.client.entitlements({ userId: session.userId }));
      assertAccess(found.entitlement, requirement, clock.now());
      return found;
    },
    sessionWithEntitlement,
    mint: async (user, appId, host) =>
      tokens.sign({
        user,
        appId,
        host,
        now: clock.now(),
        ...(options.sessionTtlSeconds === undefined ? {} : { ttlSeconds: options.sessionTtlSeconds }),
      }),
  };
}

/** The answer of `POST /session` and `GET /session`; without `session.token` for a request the session cookie authenticated (see `getSession`). */
export function sessionAnswer(session: { token?: string; expiresAt: number }, user: Profile, entitlement: Entitlement | null, host: string | null): Response {
  const expires = new Date(session.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const body: SessionResponse = {
    session: session.token === undefined ? { expires_at: expires } : { token: session.token, expires_at: expires },
    user,
    entitlement,
    host,
  };
  return jsonResponse(body);
}
