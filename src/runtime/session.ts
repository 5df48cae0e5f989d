/**
 * The session, shared by both ways the kit gets one (docs/runtime.md): inside the dashboard a
 * context token exchanged for a bearer token (`session-embedded.ts`), on the developer's own site
 * the backend's HttpOnly cookie (`session-own-site.ts`). The kit picks one strategy at start-up.
 * This part is what start-up needs: keeping the session it gets, by the backend's clock, and
 * signing out. What keeps the session afterwards (`kit.fetch`'s renewals, `refresh()`) is its
 * upkeep (`upkeep.ts`), a chunk of its own loaded in the task after start-up: it is not on the
 * path to ready.
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import type { BackendClient, ServedSession } from './backend.js';
import type { KitEnvironment } from './environment.js';
import type { ResolvedOptions } from './options.js';
import type { KitStore } from './store.js';
import type { Upkeep } from './upkeep.js';

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
  new MarketplaceKitError('ERR_SESSION_MISSING', DEV ? 'There is no session: the user is not signed in, signed out, or the kit was destroyed' : '');

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
  /** The origins `kit.fetch` gives the session's credential to. */
  abstract readonly origins: readonly string[];
  /** The session; the upkeep replaces it as it renews. */
  session: Session | null = null;
  /**
   * Counts the times the session was forgotten (sign-out, destroy, a lost session). Work that
   * started before (start-up, a renewal, a refresh) must not bring it back when it ends.
   */
  generation = 0;
  /** The backend asked for a wait (a 429, a 503 with `Retry-After`): no renewal is asked for until `until`. */
  pause: { until: number; error: MarketplaceKitError } | null = null;
  /** Settles when start-up is over, whatever its outcome. */
  started: Promise<void> = Promise.resolve();
  /** `signOut()`'s last request to the backend, settled or not: a refresh waits for it. */
  signingOut: Promise<unknown> | null = null;
  /** How far the backend's clock is ahead of the browser's, when they disagree (see `accept`). */
  #skew = 0;
  #stopWake: (() => void) | undefined;
  #upkeep: Promise<Upkeep> | null = null;

  constructor(readonly ctx: SessionContext) {}

  /** Start-up: called in the kit's constructor, so that its one request leaves in that task. */
  abstract start(): Promise<void>;
  /** How long a session of `lifetime` ms from now is used, and renewed from when. */
  protected abstract usable(lifetime: number): { renewAt: number; expiresAt: number };
  /** The token of an answer, as kept (none on the developer's own site). */
  protected abstract tokenOf(response: ServedSession): string | null;
  /** Loads this strategy's upkeep (a chunk: see the top of this file). */
  protected abstract loadUpkeep(): Promise<Upkeep>;

  /**
   * The upkeep, loaded once: after start-up, or by the first call that needs it. A chunk that
   * fails to load fails that call with `ERR_NETWORK`, and the next call asks for it again.
   */
  upkeep(): Promise<Upkeep> {
    this.#upkeep ??= this.loadUpkeep().catch((cause: unknown) => {
      this.#upkeep = null;
      throw new MarketplaceKitError('ERR_NETWORK', DEV ? `The kit's session code could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}` : '', { cause });
    });
    return this.#upkeep;
  }

  refresh(): Promise<void> {
    return this.upkeep().then((upkeep) => upkeep.refresh());
  }

  /** Once start-up is over: the upkeep is loaded in the next task, so the first `kit.fetch` finds it there. */
  prefetch(): void {
    this.ctx.env.setTimeout(() => void this.upkeep().catch(() => undefined), 0);
  }

  /**
   * The entitlement's end is timed by setTimeout, which does not count a device's sleep and is held
   * back in a hidden tab: on waking, whether it has ended is looked at again.
   */
  watchWake(): void {
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
    this.pause = null;
    this.ctx.store.set({ state: 'ready', user: response.user, entitlement: response.entitlement, error: null });
  }

  /** Forgets the session and the user: this page is signed out (`error` says why, if it failed). */
  signedOut(error: MarketplaceKitError | null = null): void {
    this.forget();
    this.ctx.store.set({ state: 'signed-out', user: null, entitlement: null, error });
  }

  /** Start-up failed: state `error`, and renewals wait if the backend asked for a wait. */
  failed(error: unknown): void {
    const kitError = isKitError(error) ? error : new MarketplaceKitError('ERR_NETWORK', String(error), { cause: error });
    this.ctx.store.set({ state: 'error', error: kitError });
    this.refused(error);
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
  unlessForgotten<T>(generation: number, work: Promise<T> | T): Promise<T> {
    return Promise.resolve(work).finally(() => {
      if (generation !== this.generation) throw noSession();
    });
  }

  /**
   * The error a failed renewal (or start-up) leaves. When the backend asked for a wait (a 429, as
   * its per-user limit on exchanges sends, or a 503 with `Retry-After`: the marketplace rate
   * limited), renewals also pause that long: until then every call that needs a session fails at
   * once with this error, rather than each asking the dashboard and the backend again. Any other
   * failure (a 503 page from a proxy, the network) is tried again by the next call.
   */
  refused(cause: unknown): MarketplaceKitError {
    const error = new MarketplaceKitError('ERR_SESSION_REFRESH_FAILED', DEV ? `The session could not be renewed: ${cause instanceof Error ? cause.message : String(cause)}` : '', {
      cause,
      ...(isKitError(cause) ? { status: cause.status, retryAfterMs: cause.retryAfterMs } : {}),
    });
    if (error.status === 429 || (error.status === 503 && error.retryAfterMs !== undefined)) {
      const wait = Math.min(error.retryAfterMs ?? RENEW_RETRY_MS, MAX_RENEW_PAUSE_MS);
      this.pause = { until: this.ctx.env.now() + wait, error };
    }
    return error;
  }

  /** Forgets the session at once, then deletes it at the backend (through the upkeep). */
  signOut(): Promise<void> {
    const token = this.session?.token ?? null;
    // Forget locally first: even if the backend cannot be reached, this page is signed out.
    this.signedOut();
    const deleting = this.upkeep().then((upkeep) => upkeep.deleteSession(token));
    this.signingOut = deleting.catch(() => undefined);
    return deleting;
  }
}
