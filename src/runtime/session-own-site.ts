/**
 * The session on the developer's own site (docs/guides/own-site-sign-in.md): the HttpOnly cookie
 * the backend's OAuth callback set is the credential. The kit reads `GET {backend}/session` (the
 * profile, the entitlement and the expiry: no token, so that no script on the page can carry the
 * session away) and `kit.fetch` sends the cookie to the backend's origin. Also a launch the kit
 * refused (`RefusedLaunch`): no session at all.
 */
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import { prepareSessionSchema } from '../shared/schemas.js';
import type { ServedSession } from './backend.js';
import type { Launch } from './launch.js';
import { SessionManager, noSession, type SessionContext } from './session.js';

const FOREVER = { renewAt: Infinity, expiresAt: Infinity };
const unauthorized = (error: unknown) => isKitError(error) && error.status === 401;

/** Outside the dashboard: neither renews early nor keeps a token, and navigates the page itself. */
abstract class OutsideDashboard extends SessionManager {
  readonly embedded = false;

  /** Only a 401 renews: reading the session again early gives the same cookie. */
  protected usable(): { renewAt: number; expiresAt: number } {
    return FOREVER;
  }

  protected tokenOf(): null {
    return null;
  }

  async signIn(url: string): Promise<void> {
    this.ctx.env.navigate(url);
  }

  protected signOutInit(): RequestInit {
    return { method: 'DELETE', credentials: 'include' };
  }
}

export class OwnSiteSession extends OutsideDashboard {
  #stopPreferences: (() => void) | undefined;

  /** `signInError`: the OAuth error the backend's callback sent back (`access_denied`), if any. */
  constructor(
    ctx: SessionContext,
    private readonly signInError: string | null,
  ) {
    super(ctx);
  }

  /** The cookie belongs to the backend's origin: only requests there carry it. */
  get origins(): readonly string[] {
    return this.ctx.options.bearerOrigins.slice(0, 1);
  }

  async start(): Promise<void> {
    const { env, store, destroyed } = this.ctx;
    const generation = this.generation;
    const request = this.#read().catch((error: unknown) => {
      if (unauthorized(error)) return null;
      throw error;
    });
    await null;
    if (destroyed()) return void request.catch(() => undefined);
    // On the developer's own site the browser's preferences are the theme and locale, live.
    this.#stopPreferences = env.observePreferences(() => store.set({ theme: env.defaultTheme, locale: env.defaultLocale }));
    this.watchWake();
    prepareSessionSchema();
    try {
      const response = await this.unlessForgotten(generation, request);
      if (response) this.accept(response);
      else if (this.signInError) {
        this.signedOut(new MarketplaceKitError('ERR_OAUTH', `Sign-in did not complete (${this.signInError})`, { upstreamCode: this.signInError }));
      } else this.signedOut();
    } catch (error) {
      if (generation === this.generation) {
        this.fail(error);
        this.refused(error);
      }
    }
  }

  override close(): void {
    this.#stopPreferences?.();
    super.close();
  }

  protected renewal(): Promise<ServedSession> {
    return this.#read();
  }

  /** The cookie is read again while there is a session, or after a failed start-up (state `error`), never after a sign-out. */
  protected mayRenew(): boolean {
    return !!this.session || this.ctx.store.fields.state === 'error';
  }

  /**
   * A 401 means the cookie session ended: the user is signed out. A network or server error says
   * nothing about the cookie: the next call tries it again.
   */
  protected lost(error: MarketplaceKitError): void {
    if (error.status === 401) this.signedOut();
    else this.ctx.store.set({ state: 'error', error });
  }

  protected async reload(): Promise<void> {
    const generation = this.generation;
    try {
      // Only the answer is dropped if the session was forgotten meanwhile: a failure changes
      // nothing here, except that a 401 signs out, which is right whenever it arrives.
      this.accept(await this.unlessForgotten(generation, this.#read('?refresh=1')));
    } catch (error) {
      if (!unauthorized(error)) throw error;
      this.signedOut();
    }
  }

  /**
   * The cookie goes along: `credentials: 'include'` when the backend is on another origin (of the
   * same site), as a same-origin request carries it anyway.
   */
  attach(request: Request): Request {
    const cross = new URL(request.url).origin !== new URL(this.ctx.env.href()).origin;
    return cross ? new Request(request.clone(), { credentials: 'include' }) : request.clone();
  }

  /** `GET {backend}/session`, authenticated by the cookie alone. */
  #read(query = ''): Promise<ServedSession> {
    return this.ctx.backend.session({ credentials: 'include' }, query);
  }
}

/**
 * A launch the kit refused (a dashboard origin outside `hostOrigins`, a page that is not framed):
 * state `error`, no session is ever read, and nothing is sent.
 */
export class RefusedLaunch extends OutsideDashboard {
  /** `kit.fetch` to these fails with `ERR_SESSION_MISSING`: there is no session to send. */
  get origins(): readonly string[] {
    return this.ctx.options.bearerOrigins;
  }

  constructor(
    ctx: SessionContext,
    private readonly launch: Extract<Launch, { kind: 'rejected' }>,
  ) {
    super(ctx);
  }

  async start(): Promise<void> {
    await null;
    if (this.ctx.destroyed()) return;
    // A configuration mistake as often as an attack (hostOrigins not matching the dashboard):
    // said in the console too, where the developer looks first.
    console.error(`[marketplace-app-kit] ${this.launch.error.code}: ${this.launch.error.message}`);
    this.ctx.store.set({ state: 'error', error: this.launch.error });
  }

  protected renewal(): Promise<ServedSession> {
    return Promise.reject(noSession());
  }

  protected mayRenew(): boolean {
    return false;
  }

  protected lost(error: MarketplaceKitError): void {
    this.ctx.store.set({ state: 'error', error });
  }

  /** A refused launch stays refused: no cookie session is read inside a frame the kit did not accept. */
  protected async reload(): Promise<void> {
    throw this.ctx.store.fields.error ?? noSession();
  }

  attach(request: Request): Request {
    return request;
  }
}
