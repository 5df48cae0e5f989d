/**
 * The session's upkeep outside the dashboard (upkeep.ts): a renewal reads the cookie session
 * again, and `kit.fetch` sends the cookie. A chunk loaded after start-up; a page inside the
 * dashboard never loads it.
 */
import { isKitError, type MarketplaceKitError } from '../shared/errors.js';
import type { ServedSession } from './backend.js';
import { noSession } from './session.js';
import type { OwnSiteSession } from './session-own-site.js';
import { Upkeep } from './upkeep.js';

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
