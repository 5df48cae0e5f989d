/**
 * The session inside the dashboard (docs/runtime.md, "Inside the dashboard (embedded app)"): the
 * launch's context token (or the dashboard's `getContext`, after a reload in the frame) exchanged at
 * `POST {backend}/session` for a short bearer token, kept in memory only and renewed through a
 * fresh context before it expires.
 */
import { DEV } from '../shared/dev.js';
import type { ResultOf } from '../shared/bridge.js';
import type { EarlyLaunch } from '../shared/early-launch.js';
import { MarketplaceKitError } from '../shared/errors.js';
import { prepareSessionSchema } from '../shared/schemas.js';
import type { ServedSession } from './backend.js';
import { BRIDGE_OPEN_AT_LATEST_MS, type HostConnection } from './host-connection.js';
import { normalizeLocale, type Launch } from './launch.js';
import { SessionManager, type SessionContext } from './session.js';
import type { Upkeep } from './upkeep.js';

type EmbeddedLaunch = Extract<Launch, { kind: 'embedded' }>;

export class EmbeddedSession extends SessionManager {
  readonly embedded = true;

  readonly #launch: EmbeddedLaunch;
  /** The early exchange's request, sent before the kit existed. */
  readonly #adopted: EarlyLaunch | undefined;

  constructor(
    ctx: SessionContext,
    readonly connection: HostConnection,
    launch: EmbeddedLaunch,
    adopted: EarlyLaunch | undefined,
  ) {
    super(ctx);
    this.#launch = launch;
    this.#adopted = adopted;
  }

  /** The bearer goes to the backend's origin and to `bearerOrigins`, never to others. */
  get origins(): readonly string[] {
    return this.ctx.options.bearerOrigins;
  }

  async start(): Promise<void> {
    const { backend, destroyed, store } = this.ctx;
    const { connection } = this;
    const launch = this.#launch;
    const generation = this.generation;
    let request = launch.context ? (this.#adopted ? backend.adopt(this.#adopted).then(withToken) : this.exchange(launch.context)) : null;
    // Nothing was awaited so far, so the request above left inside the kit's constructor.
    await null;
    // Destroyed already (say by an mp-kit-created listener): open nothing, drop the answer.
    if (destroyed()) return void request?.catch(() => undefined);
    this.watchWake();
    // The answer's schema is built while the request is on its way, not before it leaves.
    prepareSessionSchema();
    try {
      // A slow start-up must not keep the dashboard's calls (a theme change, say) waiting for the
      // handshake past their timeout: the bridge opens after a while in any case.
      connection.openIn(BRIDGE_OPEN_AT_LATEST_MS);
      connection.applyTheme(launch.theme ?? store.fields.theme);
      if (launch.locale) connection.applyLocale(launch.locale);
      request ??= this.exchange(this.fromHost(await connection.call('getContext', {})));
      this.accept(await this.unlessForgotten(generation, request));
    } catch (error) {
      // Signed out or destroyed meanwhile: how start-up ended no longer matters.
      if (generation === this.generation) this.failed(error);
    } finally {
      // The bridge is not needed to get ready when the launch carried a context: it opens (and
      // auto-resize starts) in a task of its own, after the app's code that waited for start-up,
      // unless a host call opened it before. If its code fails to load, the next call tries again.
      if (connection.host) connection.openIn(0);
      this.prefetch();
    }
  }

  /** The margin before expiry, but never more than half the lifetime (short sessions). A session that looks expired on arrival is renewed on a 401 only. */
  protected usable(lifetime: number): { renewAt: number; expiresAt: number } {
    const now = this.ctx.env.now();
    if (!(lifetime > 0)) return { renewAt: Infinity, expiresAt: Infinity };
    return { renewAt: now + Math.max(lifetime - this.ctx.options.marginMs, lifetime / 2), expiresAt: now + lifetime };
  }

  protected tokenOf(response: ServedSession): string {
    return response.session.token!;
  }

  protected loadUpkeep(): Promise<Upkeep> {
    return import('./upkeep-embedded.js').then(({ EmbeddedUpkeep }) => new EmbeddedUpkeep(this));
  }

  /**
   * Applies the theme and locale the dashboard sent with a context, and returns the context. They
   * matter after a reload inside the frame, which has no `mp_theme` / `mp_locale` to read; a
   * locale that is no language tag is left out, as in the URL.
   */
  fromHost({ context, theme, locale }: ResultOf<'getContext'>): string {
    if (theme === 'light' || theme === 'dark') this.connection.applyTheme(theme);
    const tag = locale == null ? null : normalizeLocale(locale, null);
    if (tag) this.connection.applyLocale(tag);
    return context;
  }

  exchange(context: string): Promise<ServedSession> {
    const body = JSON.stringify({ context, host: this.connection.origin });
    return this.ctx.backend.session({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body }).then(withToken);
  }
}

/** An answer for a bearer session must carry its token (a cookie session's answers carry none). */
export function withToken(response: ServedSession): ServedSession {
  if (!response.session.token) throw new MarketplaceKitError('ERR_RESPONSE_INVALID', DEV ? 'The app backend answered a session without a token: inside the dashboard the session is a bearer token' : '', { status: 200 });
  return response;
}
