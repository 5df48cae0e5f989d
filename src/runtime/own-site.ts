/**
 * The rest of the session outside the dashboard (session-own-site.ts): what start-up does with
 * the answer, and the upkeep (upkeep.ts): a renewal reads the cookie session again, and `kit.fetch`
 * sends the cookie. A chunk of its own, loaded while the start-up request is on its way; a page
 * inside the dashboard never loads it.
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import { prepareSessionSchema } from '../shared/schemas.js';
import type { ServedSession } from './backend.js';
import { noSession } from './session.js';
import type { OwnSiteSession } from './session-own-site.js';
import { Upkeep } from './upkeep.js';

/**
 * Start-up once the request left: `request` is the reading of the cookie session (null: refused
 * launch); `generation`, the session's when it left (a sign-out meanwhile drops its outcome).
 */
export async function startOwnSite(session: OwnSiteSession, request: Promise<ServedSession | null> | null, generation: number): Promise<void> {
  const { env, store } = session.ctx;
  const { launch } = session;
  if (launch.kind === 'rejected' || !request) {
    // A configuration mistake as often as an attack (hostOrigins not matching the dashboard):
    // said in the console too, where the developer looks first.
    const { error } = launch as Extract<typeof launch, { kind: 'rejected' }>;
    console.error(`[marketplace-app-kit] ${error.code}: ${error.message}`);
    return store.set({ state: 'error', error });
  }
  // On the developer's own site the browser's preferences are the theme and locale, live.
  session.stopPreferences = env.observePreferences(() => store.set({ theme: env.defaultTheme, locale: env.defaultLocale }));
  session.watchWake();
  prepareSessionSchema();
  try {
    const response = await session.unlessForgotten(generation, request);
    if (response) session.accept(response);
    else if (launch.signInError) {
      session.signedOut(new MarketplaceKitError('ERR_OAUTH', DEV ? `Sign-in did not complete (${launch.signInError})` : '', { upstreamCode: launch.signInError }));
    } else session.signedOut();
  } catch (error) {
    if (generation === session.generation) session.failed(error);
  }
  session.prefetch();
}

export class OwnSiteUpkeep extends Upkeep<OwnSiteSession> {
  protected renewal(): Promise<ServedSession> {
    return this.manager.read();
  }

  /**
   * On the developer's own site the cookie is read again while there is a session, or after a
   * failed start-up (state `error`), never after a sign-out; inside a frame the kit refused, never.
   */
  protected mayRenew(): boolean {
    return this.manager.launch.kind === 'standalone' && (!!this.manager.session || this.manager.ctx.store.fields.state === 'error');
  }

  /**
   * A 401 means the cookie session ended: the user is signed out. A network or server error says
   * nothing about the cookie: the next call tries it again.
   */
  protected lost(error: MarketplaceKitError): void {
    if (error.status === 401) this.manager.signedOut();
    else this.manager.ctx.store.set({ state: 'error', error });
  }

  /** A refused launch stays refused: no cookie session is read inside a frame the kit did not accept. */
  protected async reload(): Promise<void> {
    const { manager } = this;
    if (manager.launch.kind === 'rejected') throw manager.ctx.store.fields.error ?? noSession();
    const generation = manager.generation;
    try {
      // Only the answer is dropped if the session was forgotten meanwhile: a failure changes
      // nothing here, except that a 401 signs out, which is right whenever it arrives.
      manager.accept(await manager.unlessForgotten(generation, manager.read('?refresh=1')));
    } catch (error) {
      if (!(isKitError(error) && error.status === 401)) throw error;
      manager.signedOut();
    }
  }

  /**
   * The cookie goes along: `credentials: 'include'` when the backend is on another origin (of the
   * same site), as a same-origin request carries it anyway.
   */
  attach(request: Request): Request {
    const cross = new URL(request.url).origin !== new URL(this.manager.ctx.env.href()).origin;
    return cross ? new Request(request.clone(), { credentials: 'include' }) : request.clone();
  }

  protected async goTo(url: string): Promise<void> {
    this.manager.ctx.env.navigate(url);
  }

  protected signOutInit(): RequestInit {
    return { method: 'DELETE', credentials: 'include' };
  }
}
