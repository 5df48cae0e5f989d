/** The constants of `createAppBackend` that its parts share; `backend.ts` exports the public ones. */
import { SIGN_IN_ERROR_PARAM } from '../../shared/schemas.js';

/** Where `createAppBackend` serves its routes unless given another `basePath`. */
export const DEFAULT_BASE_PATH = '/api/marketplace';
/** Cookie holding the app session after the OAuth sign-in (the off-dashboard flow); `__Host-mp_session` on https. */
export const SESSION_COOKIE = 'mp_session';
/** Cookie holding `state`, the PKCE verifier and `return_to` between start and callback; `__Host-mp_oauth_state` on https. */
export const OAUTH_STATE_COOKIE = 'mp_oauth_state';
/** Query parameter added to `return_to` when the sign-in did not complete (the runtime reads it). */
export const OAUTH_ERROR_PARAM = SIGN_IN_ERROR_PARAM;
/**
 * `GET /session?refresh=1` reloads a user's entitlement at most once in this time. A refresh asked
 * for sooner, while the entitlement is cached, waits for the end of the interval and then shares
 * one reload with everybody who asked meanwhile (see `reload`). Every reload spends the app's
 * API-key rate limit, which one user must not be able to exhaust. A webhook drops the cached
 * entitlement, so the first read after it reloads in any case.
 */
export const REFRESH_MIN_INTERVAL_MS = 5_000;
/** How long a webhook copy waits for the same delivery's handling, here or on another instance (then 503). */
export const WEBHOOK_COPY_WAIT_MS = 10_000;
/**
 * A webhook delivery's lease: renewed while its handler runs, so that only a holder that died
 * lets it run out, and a retry then takes over within this time.
 */
export const WEBHOOK_LEASE_MS = 10_000;
/**
 * Context tokens are counted per user over this window, their longest life: each one exchanged
 * holds its `jti` in the replay store that long.
 */
export const EXCHANGE_WINDOW_MS = 300_000;
