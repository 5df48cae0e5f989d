/**
 * The app's connection to the dashboard inside it (docs/host.md): `kit.host` is there at once, the
 * bridge's code is loaded on first use (a chunk of its own, host-link.ts), the bridge opens, and
 * the document's height is reported as it changes. The dashboard's theme and locale are applied
 * here too, wherever they come from (the launch, `getContext`, `themeChanged`).
 */
import type { Bridge, HandlerTable, HostMethod, ParamsOf, ResultOf } from '../shared/bridge.js';
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import type { Theme } from '../shared/schemas.js';
import type { KitEnvironment, TimerId } from './environment.js';
import { normalizeLocale } from './launch.js';
import type { ResolvedOptions } from './options.js';
import type { KitStore } from './store.js';
import type { HostBridge, ToastTone } from './types.js';

/**
 * Inside the dashboard the bridge opens when start-up ends, or this long after the start-up
 * request left if start-up takes longer.
 */
export const BRIDGE_OPEN_AT_LATEST_MS = 1_000;

const bridgeClosed = () => new MarketplaceKitError('ERR_BRIDGE_CLOSED', 'The host bridge is closed: the kit was destroyed');

export interface HostConnectionContext {
  env: KitEnvironment;
  store: KitStore;
  options: ResolvedOptions;
  /** The dashboard's origin, from the launch. */
  origin: string;
  /** Reloads the entitlement (the dashboard's `entitlementsChanged`). */
  refresh(): Promise<void>;
}

export class HostConnection {
  /** `kit.host`; null once closed. */
  host: HostBridge | null;
  /** The reload the dashboard's last `entitlementsChanged` started; a new object for each one. */
  announced: { reload: Promise<void> } = { reload: Promise.resolve() };
  /** The bridge, loading or open; null before the first use and after its code failed to load. */
  #bridge: Promise<Bridge<'app'>> | null = null;
  #opened: Bridge<'app'> | null = null;
  /** Ends a load of the bridge code under way (set while one runs): `close()` calls it. */
  #stopLoading: (() => void) | undefined;
  #openTimer: TimerId | undefined;
  #stopResize: (() => void) | null = null;
  #closed = false;

  constructor(private readonly ctx: HostConnectionContext) {
    this.host = this.#facade();
  }

  /** The dashboard's origin. */
  get origin(): string {
    return this.ctx.origin;
  }

  /** Opens the bridge in `ms` (replacing an earlier time), unless a host call opened it before. */
  openIn(ms: number): void {
    const { env } = this.ctx;
    env.clearTimeout(this.#openTimer);
    this.#openTimer = env.setTimeout(() => void (this.host && this.#connect().catch(() => undefined)), ms);
  }

  applyTheme(theme: Theme): void {
    if (this.ctx.env.root) this.ctx.env.root.dataset['mpTheme'] = theme;
    this.ctx.store.set({ theme });
  }

  applyLocale(locale: string): void {
    // Not `lang`: the user's locale says nothing of the language the app's texts are in.
    if (this.ctx.env.root) this.ctx.env.root.dataset['mpLocale'] = locale;
    this.ctx.store.set({ locale });
  }

  /** A call to the dashboard; the first one opens the bridge if it is not open yet. */
  async call<M extends HostMethod>(method: M, params: ParamsOf<M>, options?: { timeoutMs?: number | undefined }): Promise<ResultOf<M>> {
    return (await this.#connect()).call(method, params, options);
  }

  /** Stops the observer and the bridge; a bridge still loading is never opened. */
  close(): void {
    this.#closed = true;
    this.host = null;
    this.ctx.env.clearTimeout(this.#openTimer);
    this.#stopResize?.();
    this.#stopLoading?.();
    this.#opened?.destroy();
  }

  #facade(): HostBridge {
    const done = () => undefined;
    const { env, options } = this.ctx;
    return {
      resize: (height?: number) => this.call('resize', { height: height ?? env.measureHeight() }).then(done),
      navigate: (path: string) => this.call('navigate', { path }).then(done),
      openExternal: (url: string) => this.call('openExternal', { url }).then(done),
      openUpgrade: (params = {}) => this.call('openUpgrade', params, { timeoutMs: options.upgradeMs }),
      toast: (message: string, tone?: ToastTone) => this.call('toast', tone ? { message, tone } : { message }).then(done),
      setTitle: (title: string) => this.call('setTitle', { title }).then(done),
    };
  }

  /**
   * The bridge to the dashboard: its code is loaded, then it opens, on first use. Loading has the
   * kit's request timeout; if it fails the next call tries again. Once closed it rejects with
   * `ERR_BRIDGE_CLOSED`.
   */
  #connect(): Promise<Bridge<'app'>> {
    if (this.#bridge) return this.#bridge;
    if (this.#closed) return Promise.reject(bridgeClosed());
    const { env } = this.ctx;
    const timeoutMs = this.ctx.options.requestMs;
    let timer: TimerId | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = env.setTimeout(() => reject(new MarketplaceKitError('ERR_TIMEOUT', `The host bridge's code did not load within ${timeoutMs} ms`)), timeoutMs);
    });
    // close() ends the wait at once: whatever waits for the bridge hears ERR_BRIDGE_CLOSED now.
    const stopped = new Promise<never>((_, reject) => (this.#stopLoading = () => reject(bridgeClosed())));
    const load = Promise.resolve().then(() => env.loadHostLink());
    const bridge = Promise.race([load, timeout, stopped])
      .finally(() => {
        env.clearTimeout(timer);
        this.#stopLoading = undefined;
      })
      .then(({ openHostLink }) => {
        // Closed while loading: no bridge is opened, so nothing is posted to the dashboard.
        if (this.#closed) throw bridgeClosed();
        return this.#open(openHostLink);
      })
      .catch((cause: unknown) => {
        if (this.#bridge === bridge) this.#bridge = null;
        if (this.#closed) throw bridgeClosed();
        if (isKitError(cause)) throw cause;
        throw new MarketplaceKitError('ERR_NETWORK', `The host bridge's code could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`, {
          cause,
        });
      });
    this.#bridge = bridge;
    return bridge;
  }

  #open(openHostLink: (typeof import('./host-link.js'))['openHostLink']): Bridge<'app'> {
    const { env } = this.ctx;
    const handlers: HandlerTable<'app'> = {
      themeChanged: ({ theme }) => this.applyTheme(theme),
      localeChanged: ({ locale }) => {
        const tag = normalizeLocale(locale, null);
        // Refused, so the dashboard hears that its value was not used.
        if (!tag) throw new Error(`locale ${JSON.stringify(locale.slice(0, 40))} is not a BCP 47 language tag`);
        this.applyLocale(tag);
      },
      // Answer at once; the reload runs on its own (a failure leaves the last known entitlement).
      entitlementsChanged: () => {
        const reload = this.ctx.refresh();
        reload.catch(() => undefined);
        this.announced = { reload };
      },
    };
    // What the dashboard must be told again when it starts its end over (set below).
    let restated = () => {};
    const bridge = openHostLink({
      self: env.self,
      peer: () => env.parent,
      origin: this.ctx.origin,
      handlers,
      timeoutMs: this.ctx.options.bridgeMs,
      timers: env,
      onPeerRestart: () => restated(),
    });
    this.#opened = bridge;
    if (this.ctx.options.autoResize) restated = this.#autoResize(bridge);
    return bridge;
  }

  /** Reports the document's height as it changes; returns what tells a restarted dashboard again. */
  #autoResize(bridge: Bridge<'app'>): () => void {
    const { env } = this.ctx;
    // The height sent last, or -1 once the last call failed; how many were sent.
    let last = -1;
    let sent = 0;
    const report = (height: number) => {
      if (height === last) return;
      last = height;
      const call = ++sent;
      // Resizing is best effort: a dashboard that does not answer must not break the app. Only
      // the last call's failure counts: an older one (to an end since gone) says nothing of it.
      this.host?.resize(height).catch(() => {
        if (sent === call) last = -1;
      });
    };
    try {
      this.#stopResize = env.observeHeight(report);
    } catch {
      // No ResizeObserver here: no automatic resizing, but the bridge and `host.resize()` work.
      return () => {};
    }
    // A dashboard that connects late lets the first heights time out: once it has answered the
    // handshake, the height goes again (the observer says nothing until it changes).
    bridge.ready.then(() => last === -1 && !this.#closed && report(env.measureHeight()), () => undefined);
    // A dashboard that started over on this frame knows no height at all.
    return () => {
      last = -1;
      report(env.measureHeight());
    };
  }
}
