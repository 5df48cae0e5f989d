/**
 * The session's lifecycle, shared by both ways the kit gets one (docs/runtime.md): inside the
 * dashboard a context token exchanged for a bearer token (`session-embedded.ts`), on the
 * developer's own site the backend's HttpOnly cookie (`session-own-site.ts`). The kit picks one
 * strategy at start-up; this base keeps the session, renews it once for all concurrent callers,
 * pauses when the backend asks for a wait, and queues refreshes.
 */
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import { unlessAborted, type BackendClient, type ServedSession } from './backend.js';
import type { KitEnvironment } from './environment.js';
import type { ResolvedOptions } from './options.js';
import type { KitStore } from './store.js';

/**
 * After an early renewal failed, how long the still valid token is used before the next attempt;
 * after a 429 without `Retry-After`, how long renewals pause.
 */
export const RENEW_RETRY_MS = 5_000;
/** A browser clock further than this from the backend's (`Date`) is not trusted for session lifetimes. */
const CLOCK_SKEW_MS = 2_000;
/** The longest pause a backend's `Retry-After` puts on renewals (its own exchange limit counts 5 min). */
const MAX_RENEW_PAUSE_MS = 300_000;

export const noSession = () =>
  new MarketplaceKitError('ERR_SESSION_MISSING', 'There is no session: the user is not signed in, signed out, or the kit was destroyed');
const renewalFailed = (cause: unknown) =>
  new MarketplaceKitError('ERR_SESSION_REFRESH_FAILED', `The session could not be renewed: ${cause instanceof Error ? cause.message : String(cause)}`, {
    cause,
    ...(isKitError(cause) ? { status: cause.status, retryAfterMs: cause.retryAfterMs } : {}),
  });

/** A session as the kit holds it. Own-site sessions have no token: the cookie is the credential. */
export interface Session {
  token: string | null;
  /** From when `kit.fetch` renews the session, alongside its request (see `accept`). */
  renewAt: number;
  /** Until when the token may still be used if that renewal fails. */
  expiresAt: number;
  /** The backend's `expires_at`, as a time: of two sessions, the one that ends later is the newer. */
  ends: number;
}

/** What a session strategy works with. */
export interface SessionContext {
  env: KitEnvironment;
  store: KitStore;
  backend: BackendClient;
  options: ResolvedOptions;
  destroyed(): boolean;
}

export abstract class SessionManager {
  /** True inside the dashboard. */
  abstract readonly embedded: boolean;
  protected session: Session | null = null;
  /**
   * Counts the times the session was forgotten (sign-out, destroy, a lost session). Work that
   * started before (start-up, a renewal, a refresh) must not bring it back when it ends.
   */
  protected generation = 0;
  /** How far the backend's clock is ahead of the browser's, when they disagree (see `accept`). */
  #skew = 0;
  #renewal: Promise<Session> | null = null;
  /** The backend asked for a wait (a 429, a 503 with `Retry-After`): no renewal is asked for until `until`. */
  #renewPause: { until: number; error: MarketplaceKitError } | null = null;
  #refreshRunning: Promise<void> | null = null;
  #refreshQueued: Promise<void> | null = null;
  /** Settles when start-up is over, whatever its outcome. */
  started: Promise<void> = Promise.resolve();
  /** `signOut()`'s last request to the backend, settled or not: a refresh waits for it. */
  protected signingOut: Promise<unknown> | null = null;
  #stopWake: (() => void) | undefined;

  constructor(protected readonly ctx: SessionContext) {}

  /** The origins `kit.fetch` gives the session's credential to. */
  abstract readonly origins: readonly string[];
  /** Start-up: called in the kit's constructor, so that its one request leaves in that task. */
  abstract start(): Promise<void>;
  /** Asks for a new session: a fresh context exchanged, or the cookie session read again. */
  protected abstract renewal(): Promise<ServedSession>;
  /** Whether a session may be obtained now. */
  protected abstract mayRenew(): boolean;
  /** After a renewal failed with `error` (`ERR_SESSION_REFRESH_FAILED`): signed out, or state `error`. */
  protected abstract lost(error: MarketplaceKitError): void;
  /** How long a session of `lifetime` ms from now is used, and renewed from when. */
  protected abstract usable(lifetime: number): { renewAt: number; expiresAt: number };
  /** The token of an answer, as kept (none on the developer's own site). */
  protected abstract tokenOf(response: ServedSession): string | null;
  /** The request of `kit.refresh()` (`?refresh=1`), and what its failure means. */
  protected abstract reload(): Promise<void>;
  /** `request` with the session's credential, for `kit.fetch`. */
  abstract attach(request: Request, token: string | null): Request;
  abstract signIn(url: string): Promise<void>;
  /** The `DELETE {backend}/session` of `signOut()`, with the session's credential. */
  protected abstract signOutInit(token: string | null): RequestInit;

  /**
   * The entitlement's end is timed by setTimeout, which does not count a device's sleep and is held
   * back in a hidden tab: on waking, whether it has ended is looked at again.
   */
  protected watchWake(): void {
    this.#stopWake = this.ctx.env.observeWake(() => this.ctx.store.set({}));
  }

  /** The kit is destroyed: the session is forgotten and nothing is observed any more. */
  close(): void {
    this.#stopWake?.();
    this.forget();
  }

  /** The backend's time as the browser can tell it: an entitlement ends by that clock. */
  now(): number {
    return this.ctx.env.now() + this.#skew;
  }

  /**
   * Keeps the session with the time to renew it (`usable`). The lifetime is counted from the
   * backend's clock (its `Date` header) when the browser's is off by more than `CLOCK_SKEW_MS`, so
   * that a wrong browser clock neither renews all the time nor never. An answer for an older token
   * (a refresh that left before a renewal and came back after it) brings its user and
   * entitlement, but the newer token stays. A `renewed` one is the newest whenever it ends (the
   * backend may have been given a shorter session lifetime meanwhile).
   */
  accept(response: ServedSession, renewed = false): void {
    const now = this.ctx.env.now();
    const ends = Date.parse(response.session.expires_at);
    const token = this.tokenOf(response);
    const current = this.session;
    if (renewed || !current || current.token === token || current.ends <= ends) {
      const served = response.servedAt ?? now;
      this.#skew = Math.abs(now - served) > CLOCK_SKEW_MS ? served - now : 0;
      this.session = { token, ends, ...this.usable(ends - now - this.#skew) };
    }
    this.#renewPause = null;
    this.ctx.store.set({ state: 'ready', user: response.user, entitlement: response.entitlement, error: null });
  }

  /** Forgets the session and the user: this page is signed out (`error` says why, if it failed). */
  signedOut(error: MarketplaceKitError | null = null): void {
    this.forget();
    this.ctx.store.set({ state: 'signed-out', user: null, entitlement: null, error });
  }

  protected fail(error: unknown): void {
    const kitError = isKitError(error) ? error : new MarketplaceKitError('ERR_NETWORK', String(error), { cause: error });
    this.ctx.store.set({ state: 'error', error: kitError });
  }

  /** Forgets the session token; what was under way for it is dropped when it ends. */
  forget(): void {
    this.session = null;
    this.generation++;
  }

  /**
   * Settles as `work` does, unless the session was forgotten since `generation` was read: then its
   * outcome is dropped and this rejects with `ERR_SESSION_MISSING`.
   */
  protected unlessForgotten<T>(generation: number, work: Promise<T> | T): Promise<T> {
    return Promise.resolve(work).finally(() => {
      if (generation !== this.generation) throw noSession();
    });
  }

  /**
   * Sends with the session's credential; on a 401 renews once and sends again, unless the session
   * was new. Only a missing or expired session is waited for: before expiry the renewal runs
   * alongside, and if it fails the token stays in use and the renewal is tried again later.
   */
  async authorized(send: (token: string | null) => Promise<Response>, signal?: AbortSignal | null): Promise<Response> {
    await unlessAborted(this.started, signal ?? undefined);
    const generation = this.generation;
    // The caller's signal also ends its wait for a renewal (which goes on for other callers).
    const renewed = (stale: Session | null) =>
      unlessAborted(
        this.#renew(stale).catch((error: unknown) => Promise.reject(this.#lost(error))),
        signal ?? undefined,
      );
    const attempt = async (session: Session) => send((await this.unlessForgotten(generation, session)).token);
    const session = this.session;
    const now = this.ctx.env.now();
    if (!session || now >= session.expiresAt) return attempt(await renewed(session));
    if (now >= session.renewAt) {
      this.#renew(session).catch(() => {
        session.renewAt = Math.min(this.ctx.env.now() + RENEW_RETRY_MS, session.expiresAt);
      });
    }
    const response = await attempt(session);
    if (response.status !== 401) return response;
    return attempt(await renewed(session));
  }

  /** After a failed renewal: signs out or records the error (state `error`); returns the error to throw. */
  #lost(error: unknown): unknown {
    if (isKitError(error, 'ERR_SESSION_REFRESH_FAILED')) this.lost(error);
    return error;
  }

  /** A new session, unless `stale` was replaced meanwhile; concurrent callers share one renewal. */
  #renew(stale: Session | null): Promise<Session> {
    const current = this.session;
    // Replaced meanwhile: another token (inside the dashboard), or another reading of the cookie.
    const replaced = current !== null && current !== stale && (current.token === null || current.token !== stale?.token);
    if (replaced && this.ctx.env.now() < current.renewAt) return Promise.resolve(current);
    const pause = this.#renewPause;
    if (pause && this.ctx.env.now() < pause.until) return Promise.reject(pause.error);
    this.#renewal ??= this.#runRenewal().finally(() => (this.#renewal = null));
    return this.#renewal;
  }

  async #runRenewal(): Promise<Session> {
    const generation = this.generation;
    if (this.ctx.destroyed() || !this.mayRenew()) throw noSession();
    const refused = (cause: unknown) => Promise.reject(this.refused(cause));
    const response = await this.unlessForgotten(generation, this.renewal().catch(refused));
    this.accept(response, true);
    return this.session!;
  }

  /**
   * The error a failed renewal (or start-up) leaves. When the backend asked for a wait (a 429, as
   * its per-user limit on exchanges sends, or a 503 with `Retry-After`: the marketplace rate
   * limited), renewals also pause that long: until then every call that needs a session fails at
   * once with this error, rather than each asking the dashboard and the backend again. Any other
   * failure (a 503 page from a proxy, the network) is tried again by the next call.
   */
  protected refused(cause: unknown): MarketplaceKitError {
    const error = renewalFailed(cause);
    const asked = error.status === 429 || (error.status === 503 && error.retryAfterMs !== undefined);
    if (asked) {
      const wait = Math.min(error.retryAfterMs ?? RENEW_RETRY_MS, MAX_RENEW_PAUSE_MS);
      this.#renewPause = { until: this.ctx.env.now() + wait, error };
    }
    return error;
  }

  /**
   * Reloads session and entitlement. A refresh asked for while one runs may carry news the
   * running one missed (an entitlement changed after its request left), so one more runs after
   * it; later asks share that one.
   */
  refresh(): Promise<void> {
    if (this.#refreshQueued) return this.#refreshQueued;
    if (this.#refreshRunning) {
      const queued = this.#refreshRunning.catch(() => undefined).then(() => {
        this.#refreshQueued = null;
        return this.#runRefresh();
      });
      this.#refreshQueued = queued;
      return queued;
    }
    return this.#runRefresh();
  }

  #runRefresh(): Promise<void> {
    const run = (async () => {
      await this.started;
      await this.signingOut;
      // A destroyed kit keeps no session: nothing is read for it.
      if (this.ctx.destroyed()) throw noSession();
      await this.reload();
    })();
    this.#refreshRunning = run;
    const settled = () => {
      if (this.#refreshRunning === run) this.#refreshRunning = null;
    };
    run.then(settled, settled);
    return run;
  }

  /** Forgets the session at once, then deletes it at the backend. */
  async signOut(): Promise<void> {
    const token = this.session?.token ?? null;
    // Forget locally first: even if the backend cannot be reached, this page is signed out.
    this.signedOut();
    const deleting = this.ctx.backend.send(`${this.ctx.backend.base}/session`, this.signOutInit(token));
    this.signingOut = deleting.catch(() => undefined);
    const response = await deleting;
    if (!response.ok && response.status !== 401) {
      throw new MarketplaceKitError('ERR_HTTP', `Sign-out answered ${response.status}`, { status: response.status });
    }
  }
}
