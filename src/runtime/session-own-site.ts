/**
 * The session outside the dashboard (docs/guides/own-site-sign-in.md). On the developer's own site
 * the HttpOnly cookie the backend's OAuth callback set is the credential: the kit reads
 * `GET {backend}/session` (the profile, the entitlement and the expiry: no token, so that no script
 * on the page can carry the session away) and `kit.fetch` sends the cookie to the backend's
 * origin. A launch the kit refused (a dashboard origin outside `hostOrigins`, a page that is not
 * framed) has no session at all. Only what must happen in the kit's constructor is here: the
 * start-up request leaves, and the rest of this mode's code (own-site.ts) loads meanwhile, so
 * that a page inside the dashboard never loads it.
 */
import { isKitError } from '../shared/errors.js';
import type { ServedSession } from './backend.js';
import type { Launch } from './launch.js';
import { SessionManager, type SessionContext } from './session.js';
import type { Upkeep } from './upkeep.js';

/** A launch outside the dashboard: on the developer's own site, or refused. */
export type OutsideLaunch = Extract<Launch, { kind: 'standalone' | 'rejected' }>;

const FOREVER = { renewAt: Infinity, expiresAt: Infinity };

export class OwnSiteSession extends SessionManager {
  readonly embedded = false;
  /** Set by own-site.ts while the browser's preferences are followed. */
  stopPreferences: (() => void) | undefined;

  constructor(
    ctx: SessionContext,
    readonly launch: OutsideLaunch,
  ) {
    super(ctx);
  }

  /**
   * The cookie belongs to the backend's origin: only requests there carry it. Inside a frame the
   * kit refused, `kit.fetch` to the backend's and `bearerOrigins` fails with `ERR_SESSION_MISSING`.
   */
  get origins(): readonly string[] {
    const { bearerOrigins } = this.ctx.options;
    return this.launch.kind === 'standalone' ? bearerOrigins.slice(0, 1) : bearerOrigins;
  }

  async start(): Promise<void> {
    const generation = this.generation;
    // A 401 is no session: signed out.
    const request = this.launch.kind === 'standalone' ? this.read().catch((error: unknown) => (isKitError(error) && error.status === 401 ? null : Promise.reject(error))) : null;
    const rest = import('./own-site.js');
    await null;
    if (this.ctx.destroyed()) return void request?.catch(() => undefined);
    await (await rest).startOwnSite(this, request, generation);
  }

  /** `GET {backend}/session`, authenticated by the cookie alone. */
  read(query = ''): Promise<ServedSession> {
    return this.ctx.backend.session({ credentials: 'include' }, query);
  }

  /** Only a 401 renews: reading the session again early gives the same cookie. */
  protected usable(): { renewAt: number; expiresAt: number } {
    return FOREVER;
  }

  protected tokenOf(): null {
    return null;
  }

  protected loadUpkeep(): Promise<Upkeep> {
    return import('./upkeep-own-site.js').then(({ OwnSiteUpkeep }) => new OwnSiteUpkeep(this));
  }

  override close(): void {
    this.stopPreferences?.();
    super.close();
  }
}
