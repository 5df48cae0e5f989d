/**
 * The session on the developer's own site (docs/guides/own-site-sign-in.md): the HttpOnly cookie
 * the backend's OAuth callback set is the credential. The kit reads `GET {backend}/session` (the
 * profile, the entitlement and the expiry: no token, so that no script on the page can carry the
 * session away) and `kit.fetch` sends the cookie to the backend's origin. Also a launch the kit
 * refused (`RefusedLaunch`): no session at all.
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import { prepareSessionSchema } from '../shared/schemas.js';
import type { ServedSession } from './backend.js';
import type { Launch } from './launch.js';
import { SessionManager, type SessionContext } from './session.js';
import type { Upkeep } from './upkeep.js';

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
    const request = this.read().catch((error: unknown) => {
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
        this.signedOut(new MarketplaceKitError('ERR_OAUTH', DEV ? `Sign-in did not complete (${this.signInError})` : '', { upstreamCode: this.signInError }));
      } else this.signedOut();
    } catch (error) {
      if (generation === this.generation) this.failed(error);
    }
    this.prefetch();
  }

  override close(): void {
    this.#stopPreferences?.();
    super.close();
  }

  protected loadUpkeep(): Promise<Upkeep> {
    return import('./upkeep-own-site.js').then(({ OwnSiteUpkeep }) => new OwnSiteUpkeep(this));
  }

  /** `GET {backend}/session`, authenticated by the cookie alone. */
  read(query = ''): Promise<ServedSession> {
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

  protected loadUpkeep(): Promise<Upkeep> {
    return import('./upkeep-own-site.js').then(({ RefusedUpkeep }) => new RefusedUpkeep(this));
  }
}
