/**
 * The session's upkeep once the kit is ready (docs/runtime.md#the-kit): `kit.fetch` with the
 * session's credential, one renewal for all concurrent callers, the pause a backend asked for, and
 * refreshes queued behind each other. A chunk of its own (`upkeep-embedded.ts`,
 * `upkeep-own-site.ts` add each strategy's part), loaded after start-up: not on the path to ready.
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import { unlessAborted, type ServedSession } from './backend.js';
import { RENEW_RETRY_MS, noSession, type Session, type SessionManager } from './session.js';

export abstract class Upkeep<S extends SessionManager = SessionManager> {
  #renewal: Promise<Session> | null = null;
  #refreshRunning: Promise<void> | null = null;
  #refreshQueued: Promise<void> | null = null;

  constructor(protected readonly manager: S) {}

  /** Asks for a new session: a fresh context exchanged, or the cookie session read again. */
  protected abstract renewal(): Promise<ServedSession>;
  /** Whether a session may be obtained now. */
  protected abstract mayRenew(): boolean;
  /** After a renewal failed with `error` (`ERR_SESSION_REFRESH_FAILED`): signed out, or state `error`. */
  protected abstract lost(error: MarketplaceKitError): void;
  /** The request of `kit.refresh()` (`?refresh=1`), and what its failure means. */
  protected abstract reload(): Promise<void>;
  /** `request` with the session's credential, for `kit.fetch`. */
  abstract attach(request: Request, token: string | null): Request;
  /** Goes to the backend's OAuth start `url`. */
  protected abstract goTo(url: string): Promise<void>;
  /** The `DELETE {backend}/session` of `signOut()`, with the session's credential. */
  protected abstract signOutInit(token: string | null): RequestInit;

  /**
   * `kit.signIn()`: to `{backend}/oauth/start`, returning to `returnTo` as an absolute URL: relative
   * to this page, not to the backend, which may be on another origin. What is no URL goes as it
   * is, for the backend to refuse.
   */
  signIn(returnTo: string | undefined): Promise<void> {
    const { backend, env } = this.manager.ctx;
    const url = new URL(`${backend.base}/oauth/start`);
    const page = env.href();
    let back: string;
    try {
      back = new URL(returnTo ?? page, page).href;
    } catch {
      back = String(returnTo);
    }
    url.searchParams.set('return_to', back);
    return this.goTo(url.href);
  }

  /** `signOut()`'s request, once the session is forgotten here: a 401 (already gone) is fine. */
  async deleteSession(token: string | null): Promise<void> {
    const { backend } = this.manager.ctx;
    const response = await backend.send(`${backend.base}/session`, this.signOutInit(token));
    if (!response.ok && response.status !== 401) {
      throw new MarketplaceKitError('ERR_HTTP', DEV ? `Sign-out answered ${response.status}` : '', { status: response.status });
    }
  }

  /**
   * Sends with the session's credential; on a 401 renews once and sends again, unless the session
   * was new. Only a missing or expired session is waited for: before expiry the renewal runs
   * alongside, and if it fails the token stays in use and the renewal is tried again later.
   */
  async authorized(send: (token: string | null) => Promise<Response>, signal?: AbortSignal | null): Promise<Response> {
    const { manager } = this;
    const { env } = manager.ctx;
    await unlessAborted(manager.started, signal ?? undefined);
    const generation = manager.generation;
    // The caller's signal also ends its wait for a renewal (which goes on for other callers).
    const renewed = (stale: Session | null) =>
      unlessAborted(
        this.#renew(stale).catch((error: unknown) => Promise.reject(this.#lost(error))),
        signal ?? undefined,
      );
    const attempt = async (session: Session) => send((await manager.unlessForgotten(generation, session)).token);
    const session = manager.session;
    const now = env.now();
    if (!session || now >= session.expiresAt) return attempt(await renewed(session));
    if (now >= session.renewAt) {
      this.#renew(session).catch(() => {
        session.renewAt = Math.min(env.now() + RENEW_RETRY_MS, session.expiresAt);
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
    const { env } = this.manager.ctx;
    const current = this.manager.session;
    // Replaced meanwhile: another token (inside the dashboard), or another reading of the cookie.
    const replaced = current !== null && current !== stale && (current.token === null || current.token !== stale?.token);
    if (replaced && env.now() < current.renewAt) return Promise.resolve(current);
    const pause = this.manager.pause;
    if (pause && env.now() < pause.until) return Promise.reject(pause.error);
    this.#renewal ??= this.#runRenewal().finally(() => (this.#renewal = null));
    return this.#renewal;
  }

  async #runRenewal(): Promise<Session> {
    const { manager } = this;
    const generation = manager.generation;
    if (manager.ctx.destroyed() || !this.mayRenew()) throw noSession();
    const refused = (cause: unknown) => Promise.reject(manager.refused(cause));
    const response = await manager.unlessForgotten(generation, this.renewal().catch(refused));
    manager.accept(response, true);
    return manager.session!;
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
    const { manager } = this;
    const run = (async () => {
      await manager.started;
      await manager.signingOut;
      // A destroyed kit keeps no session: nothing is read for it.
      if (manager.ctx.destroyed()) throw noSession();
      await this.reload();
    })();
    this.#refreshRunning = run;
    const settled = () => {
      if (this.#refreshRunning === run) this.#refreshRunning = null;
    };
    run.then(settled, settled);
    return run;
  }
}
