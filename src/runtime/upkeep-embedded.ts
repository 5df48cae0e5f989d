/**
 * The session's upkeep inside the dashboard (upkeep.ts): a renewal is a fresh context from the
 * dashboard exchanged again, and `kit.fetch` sends the bearer token.
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKitError } from '../shared/errors.js';
import type { ServedSession } from './backend.js';
import { withToken, type EmbeddedSession } from './session-embedded.js';
import { Upkeep } from './upkeep.js';

export class EmbeddedUpkeep extends Upkeep<EmbeddedSession> {
  protected renewal(): Promise<ServedSession> {
    const session = this.manager;
    return session.connection.call('getContext', {}).then((answer) => session.exchange(session.fromHost(answer)));
  }

  /** `signed-out` comes only from signOut(), which lasts until the app is launched again: no fresh context is asked for behind the user's back. */
  protected mayRenew(): boolean {
    return !!this.manager.connection.host && this.manager.ctx.store.fields.state !== 'signed-out';
  }

  /** The token is spent (expired or refused). */
  protected lost(error: MarketplaceKitError): void {
    this.manager.forget();
    this.manager.ctx.store.set({ state: 'error', error });
  }

  protected async reload(): Promise<void> {
    const { manager } = this;
    const { backend } = manager.ctx;
    const generation = manager.generation;
    const response = await this.authorized((token) => backend.send(`${backend.base}/session?refresh=1`, { headers: { Authorization: `Bearer ${token}` } }));
    // Only the answer is dropped if the session was forgotten meanwhile.
    manager.accept(await manager.unlessForgotten(generation, backend.read(response).then(withToken)));
  }

  attach(request: Request, token: string | null): Request {
    const attempt = request.clone();
    attempt.headers.set('Authorization', `Bearer ${token}`);
    return attempt;
  }

  /** OAuth pages refuse to be framed: the dashboard opens them at top level. */
  protected async goTo(url: string): Promise<void> {
    const host = this.manager.connection.host;
    if (!host) throw new MarketplaceKitError('ERR_NOT_EMBEDDED', DEV ? 'This needs the marketplace dashboard; the app is not embedded in it' : '');
    await host.openExternal(url);
  }

  protected signOutInit(token: string | null): RequestInit {
    return { method: 'DELETE', credentials: 'include', headers: token ? { Authorization: `Bearer ${token}` } : {} };
  }
}
