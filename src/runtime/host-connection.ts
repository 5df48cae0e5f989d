/**
 * The app's connection to the dashboard inside it (docs/host.md): `kit.host` is there at once, the
 * bridge's code is loaded on first use (a chunk of its own, host-link.ts), the bridge opens, and
 * the document's height is reported as it changes. The dashboard's theme and locale are applied
 * here too, wherever they come from (the launch, `getContext`, `themeChanged`).
 */
import { DEV } from '../shared/dev.js';
import type { Bridge, HostMethod, ParamsOf, ResultOf } from '../shared/bridge.js';
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import type { Theme } from '../shared/schemas.js';
import type { KitEnvironment, TimerId } from './environment.js';
import type { ResolvedOptions } from './options.js';
import type { KitStore } from './store.js';
import type { HostLinkContext } from './host-link.js';
import type { HostBridge, ToastTone, UpgradeOutcome } from './types.js';

type HostLinkModule = typeof import('./host-link.js');

/**
 * Inside the dashboard the bridge opens when start-up ends, or this long after the start-up
 * request left if start-up takes longer.
 */
export const BRIDGE_OPEN_AT_LATEST_MS = 1_000;

const bridgeClosed = () => new MarketplaceKitError('ERR_BRIDGE_CLOSED', DEV ? 'The host bridge is closed: the kit was destroyed' : '');

/** The options the connection uses. */
type ConnectionOptions = Pick<ResolvedOptions, 'requestMs' | 'bridgeMs' | 'upgradeMs' | 'autoResize'>;

/** The connection is also what the open bridge works with (`HostLinkContext`, in the bridge's chunk). */
export class HostConnection implements HostLinkContext {
  /** `kit.host`; null once closed. */
  host: HostBridge | null;
  /** The reload the dashboard's last `entitlementsChanged` started; a new object for each one. */
  announced: { reload: Promise<void> } = { reload: Promise.resolve() };
  /** The bridge, loading or open; null before the first use and after its code failed to load. */
  #bridge: Promise<Bridge<'app'>> | null = null;
  #opened: Bridge<'app'> | null = null;
  /** The bridge's chunk, once loaded. */
  #link: HostLinkModule | undefined;
  /** Ends a load of the bridge code under way (set while one runs): `close()` calls it. */
  #stopLoading: (() => void) | undefined;
  #openTimer: TimerId | undefined;
  #stopResize: (() => void) | null = null;
  #closed = false;

  /** `origin`: the dashboard's, from the launch; `refresh`: reloads the entitlement. */
  readonly #store: KitStore;
  readonly #options: ConnectionOptions;

  constructor(
    readonly env: KitEnvironment,
    store: KitStore,
    options: ConnectionOptions,
    readonly origin: string,
    readonly refresh: () => Promise<void>,
  ) {
    this.#store = store;
    this.#options = options;
    this.host = this.#facade();
  }

  get timeoutMs(): number | undefined {
    return this.#options.bridgeMs;
  }

  get autoResize(): boolean {
    return this.#options.autoResize;
  }

  /** The dashboard's `entitlementsChanged`: answered at once; the reload runs on its own (a failure leaves the last known entitlement). */
  entitlementsChanged(): void {
    const reload = this.refresh();
    reload.catch(() => undefined);
    this.announced = { reload };
  }

  /** `kit.upgrade()`: the plan chooser, then the reload (host-link.ts). `signedIn` says whether there is a session to reload. */
  async upgrade(params: { plan?: string | undefined; feature?: string | undefined }, signedIn: () => boolean): Promise<UpgradeOutcome> {
    const announced = this.announced;
    const { outcome } = await this.call('openUpgrade', params, { timeoutMs: this.#options.upgradeMs });
    // The chooser answered through the bridge: its chunk is loaded.
    await this.#link!.afterUpgrade(this, announced, outcome, signedIn);
    return outcome;
  }

  /** Opens the bridge in `ms` (replacing an earlier time), unless a host call opened it before. */
  openIn(ms: number): void {
    const { env } = this;
    env.clearTimeout(this.#openTimer);
    this.#openTimer = env.setTimeout(() => void (this.host && this.#connect().catch(() => undefined)), ms);
  }

  applyTheme(theme: Theme): void {
    if (this.env.root) this.env.root.dataset['mpTheme'] = theme;
    this.#store.set({ theme });
  }

  applyLocale(locale: string): void {
    // Not `lang`: the user's locale says nothing of the language the app's texts are in.
    if (this.env.root) this.env.root.dataset['mpLocale'] = locale;
    this.#store.set({ locale });
  }

  /** A call to the dashboard; the first one opens the bridge if it is not open yet. */
  async call<M extends HostMethod>(method: M, params: ParamsOf<M>, options?: { timeoutMs?: number | undefined }): Promise<ResultOf<M>> {
    return (await this.#connect()).call(method, params, options);
  }

  /** Stops the observer and the bridge; a bridge still loading is never opened. */
  close(): void {
    this.#closed = true;
    this.host = null;
    this.env.clearTimeout(this.#openTimer);
    this.#stopResize?.();
    this.#stopLoading?.();
    this.#opened?.destroy();
  }

  /** `kit.host`. The calls without a result resolve to nothing (the bridge's `call` checks it). */
  #facade(): HostBridge {
    const { env } = this;
    const options = this.#options;
    return {
      resize: (height?: number) => this.call('resize', { height: height ?? env.measureHeight() }),
      navigate: (path: string) => this.call('navigate', { path }),
      openExternal: (url: string) => this.call('openExternal', { url }),
      openUpgrade: (params = {}) => this.call('openUpgrade', params, { timeoutMs: options.upgradeMs }),
      toast: (message: string, tone?: ToastTone) => this.call('toast', tone ? { message, tone } : { message }),
      setTitle: (title: string) => this.call('setTitle', { title }),
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
    const { env } = this;
    const timeoutMs = this.#options.requestMs;
    let timer: TimerId | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = env.setTimeout(() => reject(new MarketplaceKitError('ERR_TIMEOUT', DEV ? `The host bridge's code did not load within ${timeoutMs} ms` : '')), timeoutMs);
    });
    // close() ends the wait at once: whatever waits for the bridge hears ERR_BRIDGE_CLOSED now.
    const stopped = new Promise<never>((_, reject) => (this.#stopLoading = () => reject(bridgeClosed())));
    const load = Promise.resolve().then(() => env.loadHostLink());
    const bridge = Promise.race([load, timeout, stopped])
      .finally(() => {
        env.clearTimeout(timer);
        this.#stopLoading = undefined;
      })
      .then((link) => {
        // Closed while loading: no bridge is opened, so nothing is posted to the dashboard.
        if (this.#closed) throw bridgeClosed();
        this.#link = link;
        const { bridge: opened, stop } = link.openHostLink(this);
        this.#opened = opened;
        this.#stopResize = stop;
        return opened;
      })
      .catch((cause: unknown) => {
        if (this.#bridge === bridge) this.#bridge = null;
        if (this.#closed) throw bridgeClosed();
        if (isKitError(cause)) throw cause;
        throw new MarketplaceKitError('ERR_NETWORK', DEV ? `The host bridge's code could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}` : '', {
          cause,
        });
      });
    this.#bridge = bridge;
    return bridge;
  }
}
