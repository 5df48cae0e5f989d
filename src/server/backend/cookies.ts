/**
 * The backend's cookies (the session after an OAuth sign-in, the sign-in's state) and the origin
 * rules around them: which origin the app is on, and which requests a cookie may authorise.
 */
import { MarketplaceKitError } from '../../shared/errors.js';
import { readCookie, serializeCookie } from '../lib/cookies.js';
import { isLoopbackOrigin } from '../lib/origin.js';
import type { BackendConfig } from './config.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface AppCookies {
  /**
   * The app's origin as far as cookies go: publicOrigin, else the request's own on a loopback host.
   * Null elsewhere: the kit sets no cookie there (the sign-in needs publicOrigin), so one that
   * arrives was planted, and is never read.
   */
  origin(request: Request): string | null;
  /**
   * The app's origin where security depends on it: as `origin`, and `ERR_CONFIG` where that has
   * none. The request's URL is only trusted on a loopback host: elsewhere a Host header or request
   * target may be the attacker's choice.
   */
  trustedOrigin(request: Request, purpose: string): string;
  /** The cookie's name on `origin`: `__Host-` prefixed on https. */
  name(name: string, origin: string): string;
  /** A `Set-Cookie` value: HttpOnly, SameSite=Lax, Path=/; Secure on https. */
  set(name: string, value: string, origin: string, maxAgeSeconds: number): string;
  get(request: Request, name: string, origin: string | null): string | undefined;
  /**
   * A cookie rides along on requests other sites make; for anything that changes state, the
   * browser's Origin header must name this app or a CORS origin (SameSite=Lax alone still trusts
   * sibling sites).
   */
  assertSameOrigin(request: Request): void;
}

export function appCookies(config: BackendConfig): AppCookies {
  const origin = (request: Request): string | null => {
    if (config.publicOrigin !== undefined) return config.publicOrigin;
    const own = new URL(request.url).origin;
    return isLoopbackOrigin(own) ? own : null;
  };
  const trustedOrigin = (request: Request, purpose: string): string => {
    const found = origin(request);
    if (found !== null) return found;
    throw new MarketplaceKitError(
      'ERR_CONFIG',
      `createAppBackend: set publicOrigin (e.g. https://app.example): ${purpose} needs the app's public origin, which is derived from the request only on loopback hosts`,
    );
  };
  // On https the cookies are Secure and `__Host-` prefixed, so that no sibling subdomain can set
  // one (a cookie tossed from there would sign the user in as someone else); on http (loopback
  // development) browsers refuse the prefix.
  const name = (cookie: string, on: string) => (on.startsWith('https:') ? `__Host-${cookie}` : cookie);
  return {
    origin,
    trustedOrigin,
    name,
    set: (cookie, value, on, maxAgeSeconds) => serializeCookie(name(cookie, on), value, { path: '/', maxAgeSeconds, secure: on.startsWith('https:') }),
    get: (request, cookie, on) => (on === null ? undefined : readCookie(request.headers.get('cookie'), name(cookie, on))),
    assertSameOrigin(request) {
      const sent = request.headers.get('origin');
      if (
        !SAFE_METHODS.has(request.method) &&
        !(sent !== null && config.corsOrigins.has(sent)) &&
        sent !== trustedOrigin(request, 'a state-changing request with a session cookie')
      ) {
        throw new MarketplaceKitError(
          'ERR_ORIGIN_REFUSED',
          `A cookie session accepts state-changing requests only from the app’s own origin (or corsOrigins); this one came from ${sent === null ? 'no Origin header' : JSON.stringify(sent.slice(0, 100))}`,
          { status: 403 },
        );
      }
    },
  };
}
