/**
 * The browser kit: launch, session exchange and upkeep, the entitlement store and the app's end of
 * the host bridge. `createKit` (index.ts) builds it on the real window; tests build it on a fake
 * `KitEnvironment`.
 */
import { checkAccess, type AccessDecision, type AccessRequirement } from '../shared/access.js';
// Types only: the bridge's code is loaded on first use (`KitEnvironment.loadHostLink`).
import type { Bridge, HandlerTable, HostMethod, MessagePeer, MessageSource, ParamsOf, ResultOf } from '../shared/bridge.js';
import { EARLY_LAUNCH_KEY, type EarlyLaunch } from '../shared/early-launch.js';
import { MarketplaceKitError, isKitError } from '../shared/errors.js';
import { MAX_TIMER_MS, numberOption } from '../shared/options.js';
import { assertOrigin } from '../shared/origin.js';
import { prepareSessionSchema, type Entitlement, type Profile, type Theme } from '../shared/schemas.js';
import { createBackendClient, unlessAborted, type BackendClient, type ServedSession } from './backend.js';
import { loadHostLink } from './host-link-loader.js';
import { hasLaunchParams, normalizeLocale, readLaunch, scrubbedUrl, type Launch } from './launch.js';
import { unregisterKit } from './registry.js';
import { KIT_CHANGE_EVENT, type HostBridge, type Kit, type KitState, type ToastTone, type UpgradeOutcome } from './types.js';

/** The plan chooser waits on a person, so its call gets far longer than the bridge's default. */
const UPGRADE_TIMEOUT_MS = 10 * 60_000;
/**
 * Inside the dashboard the bridge opens when start-up ends, or this long after the start-up
 * request left if start-up takes longer.
 */
const BRIDGE_OPEN_AT_LATEST_MS = 1_000;
/** The default timeout of each request the kit makes (`KitOptions.timeoutMs`). */
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * After an early renewal failed, how long the still valid token is used before the next attempt;
 * after a 429 without `Retry-After`, how long renewals pause.
 */
const RENEW_RETRY_MS = 5_000;
/** A browser clock further than this from the backend's (`Date`) is not trusted for session lifetimes. */
const CLOCK_SKEW_MS = 2_000;
/** The longest pause a backend's `Retry-After` puts on renewals (its own exchange limit counts 5 min). */
const MAX_RENEW_PAUSE_MS = 300_000;

const bridgeClosed = () => new MarketplaceKitError('ERR_BRIDGE_CLOSED', 'The host bridge is closed: the kit was destroyed');
const noSession = () =>
  new MarketplaceKitError('ERR_SESSION_MISSING', 'There is no session: the user is not signed in, signed out, or the kit was destroyed');
const renewalFailed = (cause: unknown) =>
  new MarketplaceKitError('ERR_SESSION_REFRESH_FAILED', `The session could not be renewed: ${cause instanceof Error ? cause.message : String(cause)}`, {
    cause,
    ...(isKitError(cause) ? { status: cause.status, retryAfterMs: cause.retryAfterMs } : {}),
  });

/**
 * A copy of `names` that answers only its own keys (`planNames.constructor` is undefined), or
 * `ERR_CONFIG` when it is not an object of texts.
 */
function ownNames(names: unknown, config: (message: string) => MarketplaceKitError): Readonly<Record<string, string>> {
  const entries = names && typeof names === 'object' && !Array.isArray(names) ? Object.entries(names) : null;
  if (!entries || entries.some(([, name]) => typeof name !== 'string')) throw config('createKit\'s planNames must be an object of texts, such as { pro_monthly: "Pro" }');
  return Object.freeze(Object.assign(Object.create(null) as Record<string, string>, names));
}

/** Options of `createKit`: `backend` and `hostOrigins` are required, the rest have defaults. */
export interface KitOptions {
  /**
   * Base URL of the app backend's session routes (`createAppBackend`'s `basePath`), absolute or
   * relative to the page: `'/api/marketplace'`, `'https://api.example/api/marketplace'`.
   */
  backend: string;
  /** Dashboard origins allowed to embed the app, exactly: `['https://dashboard.example']`. */
  hostOrigins: readonly string[];
  /**
   * More origins, exactly, that `kit.fetch` sends the session's bearer token to, for an API that
   * is not on the backend's origin (default: none; the backend's origin always gets it).
   */
  bearerOrigins?: readonly string[] | undefined;
  /** The `fetch` the kit uses for the backend and for `kit.fetch` (default: the global one). */
  fetch?: typeof fetch | undefined;
  /**
   * Timeout of each request to the backend, and of loading the host bridge's code (a chunk of the
   * app's bundle), in milliseconds (default 10000).
   */
  timeoutMs?: number | undefined;
  /** Timeout of each host bridge call, in milliseconds (default 5000). */
  bridgeTimeoutMs?: number | undefined;
  /**
   * How long `kit.upgrade()` / `host.openUpgrade()` waits for the person in the dashboard's plan
   * chooser, in milliseconds (default 600000: ten minutes).
   */
  upgradeTimeoutMs?: number | undefined;
  /** Inside the dashboard, report the document's height to the host as it changes (default true). */
  autoResize?: boolean | undefined;
  /**
   * Inside the dashboard, how long before the session's expiry `kit.fetch` renews it, in
   * milliseconds (default 60000).
   */
  refreshMarginMs?: number | undefined;
  /**
   * Display names of your plans, by the id entitlements carry: `{ pro_monthly: 'Pro' }`. The
   * elements show these ("Upgrade to Pro"); a plan without a name shows its id (default: none).
   */
  planNames?: Readonly<Record<string, string>> | undefined;
}

/** The parts of the browser the kit touches, so tests can run it on fakes. */
export interface KitEnvironment {
  /** The current page URL. */
  href(): string;
  /** `history.replaceState` to `url` (path, query and hash). */
  replaceUrl(url: string): void;
  /** Top-level navigation (sign-in on the developer's own site). */
  navigate(url: string): void;
  /** True when the page is inside a frame. */
  framed: boolean;
  /** `location.ancestorOrigins[0]` where the browser has it. */
  parentOrigin: string | undefined;
  /** Where bridge messages arrive (the page's window). */
  self: MessageSource;
  /** The parent window, where bridge messages go, or null at top level. */
  parent: MessagePeer | null;
  /** `document.documentElement`: receives `data-mp-theme` and `data-mp-locale` inside the dashboard. */
  root: HTMLElement | null;
  /** Calls `callback` with the document's height whenever it changes; returns a stop function. */
  observeHeight(callback: (height: number) => void): () => void;
  /** The document's current height in CSS pixels. */
  measureHeight(): number;
  /** The browser's language (`navigator.language`), for a page outside the dashboard. */
  defaultLocale: string;
  /** The browser's color scheme (`prefers-color-scheme`), for a page outside the dashboard. */
  defaultTheme: Theme;
  /** Calls `callback` when `defaultTheme` or `defaultLocale` changes; returns a stop function. */
  observePreferences(callback: () => void): () => void;
  /**
   * Calls `callback` when the page is hidden or shown again (the device woke up, the tab came
   * back): timers may have counted none of the time in between. Returns a stop function.
   */
  observeWake(callback: () => void): () => void;
  now(): number;
  /** Takes what the early exchange script left on the page, if anything (once). */
  takeEarlyLaunch(): EarlyLaunch | undefined;
  /** Loads the app's end of the host bridge (host-link-loader.ts). */
  loadHostLink(): Promise<typeof import('./host-link.js')>;
}

/** The real browser, for `createKit`. */
export function browserEnvironment(): KitEnvironment {
  const framed = window.parent !== window;
  const root = document.documentElement;
  const measureHeight = () => Math.ceil(root.getBoundingClientRect().height);
  return {
    href: () => location.href,
    replaceUrl: (url) => history.replaceState(history.state, '', url),
    navigate: (url) => location.assign(url),
    framed,
    parentOrigin: location.ancestorOrigins?.[0],
    self: window,
    parent: framed ? window.parent : null,
    root,
    observeHeight(callback) {
      const observer = new ResizeObserver(() => callback(measureHeight()));
      observer.observe(root);
      return () => observer.disconnect();
    },
    measureHeight,
    // Read when the kit is created and, on your own site, on each change of the preferences;
    // inside the dashboard its `mp_theme` / `mp_locale` then replace them.
    get defaultLocale() {
      return normalizeLocale(navigator.language, 'en-US');
    },
    get defaultTheme(): Theme {
      return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
    },
    observePreferences(callback) {
      const scheme = window.matchMedia?.('(prefers-color-scheme: dark)');
      scheme?.addEventListener('change', callback);
      addEventListener('languagechange', callback);
      return () => {
        scheme?.removeEventListener('change', callback);
        removeEventListener('languagechange', callback);
      };
    },
    // Hidden or shown, either way: looking again is harmless.
    observeWake(callback) {
      document.addEventListener('visibilitychange', callback);
      return () => document.removeEventListener('visibilitychange', callback);
    },
    now: Date.now,
    takeEarlyLaunch() {
      const key = Symbol.for(EARLY_LAUNCH_KEY);
      const early = (window as unknown as Record<symbol, EarlyLaunch | undefined>)[key];
      delete (window as unknown as Record<symbol, unknown>)[key];
      return early;
    },
    loadHostLink,
  };
}

interface Session {
  token: string;
  /** From when `kit.fetch` renews the session, alongside its request (see `acceptSession`). */
  renewAt: number;
  /** Until when the token may still be used if that renewal fails. */
  expiresAt: number;
  /** The backend's `expires_at`, as a time: of two tokens, the one that ends later is the newer. */
  ends: number;
}

type Fields = Pick<Kit, 'state' | 'user' | 'entitlement' | 'theme' | 'locale' | 'error'>;

export class MarketplaceKit extends EventTarget implements Kit {
  /** Settles when start-up is over, whatever its outcome (`state` then says which). */
  readonly started: Promise<void>;
  readonly embedded: boolean = false;
  readonly planNames: Readonly<Record<string, string>>;

  /** What the getters answer; `#set` changes it. */
  #fields: Fields;

  readonly #env: KitEnvironment;
  readonly #backend: BackendClient;
  readonly #fetch: typeof fetch;
  readonly #options: KitOptions;
  /** Origins `kit.fetch` adds the bearer token for. */
  readonly #bearerOrigins: readonly string[];
  readonly #listeners = new Set<(kit: Kit) => void>();
  #signature: string;
  #session: Session | null = null;
  /**
   * Counts the times the session was forgotten (sign-out, destroy, a lost session). Work that
   * started before (start-up, a renewal, a refresh) must not bring it back when it ends.
   */
  #generation = 0;
  #hostOrigin = '';
  /** The bridge, loading or open; null before the first use and after its code failed to load. */
  #bridge: Promise<Bridge<'app'>> | null = null;
  #opened: Bridge<'app'> | null = null;
  /** Ends a load of the bridge code under way (set while one runs): destroy() calls it. */
  #stopLoading: (() => void) | undefined;
  #openTimer: ReturnType<typeof setTimeout> | undefined;
  /** Fires when the entitlement ends (see `#set`). */
  #expiryTimer: ReturnType<typeof setTimeout> | undefined;
  #host: HostBridge | null = null;
  #renewal: Promise<string> | null = null;
  /** The backend asked for a wait (a 429, a 503 with `Retry-After`): no renewal is asked for until `until`. */
  #renewPause: { until: number; error: MarketplaceKitError } | null = null;
  /** How far the backend's clock is ahead of the browser's, when they disagree (see `#acceptSession`). */
  #skew = 0;
  #refreshRunning: Promise<void> | null = null;
  #refreshQueued: Promise<void> | null = null;
  /** The reload the dashboard's last `entitlementsChanged` started; a new object for each one. */
  #announced: { reload: Promise<void> } = { reload: Promise.resolve() };
  #stopResize: (() => void) | null = null;
  #stopPreferences: (() => void) | null = null;
  #stopWake: (() => void) | null = null;
  #destroyed = false;
  /** The launch was on the developer's own site: the session is the backend's cookie. */
  #cookieLaunch = false;
  /** `signOut()`'s last request to the backend, settled or not: a refresh waits for it. */
  #signingOut: Promise<unknown> | null = null;
  /** The timing options, checked. */
  readonly #timing: { request: number; bridge: number | undefined; upgrade: number; margin: number };

  constructor(options: KitOptions, env: KitEnvironment) {
    super();
    this.#env = env;
    this.#options = options;
    const url = new URL(env.href());
    let launch: Launch;
    let adopted: EarlyLaunch | undefined;
    try {
      const config = (message: string) => new MarketplaceKitError('ERR_CONFIG', message);
      const origins = (list: unknown, name: string) => {
        if (!Array.isArray(list)) throw config(`createKit needs ${name} (an array)`);
        for (const origin of list) assertOrigin(origin, `Each of ${name}`);
      };
      if (typeof options?.backend !== 'string' || options.backend === '') throw config('createKit needs a backend URL');
      origins(options.hostOrigins, 'hostOrigins');
      origins(options.bearerOrigins ?? [], 'bearerOrigins');
      this.planNames = ownNames(options.planNames === undefined ? {} : options.planNames, config);
      const timer = (value: number | undefined, fallback: number, name: string, min = 1) =>
        numberOption(value, fallback, `createKit's ${name}`, { min, max: MAX_TIMER_MS });
      this.#timing = {
        request: timer(options.timeoutMs, REQUEST_TIMEOUT_MS, 'timeoutMs'),
        // Unset: the bridge's own default (its code is not loaded yet).
        bridge: options.bridgeTimeoutMs === undefined ? undefined : timer(options.bridgeTimeoutMs, 0, 'bridgeTimeoutMs'),
        upgrade: timer(options.upgradeTimeoutMs, UPGRADE_TIMEOUT_MS, 'upgradeTimeoutMs'),
        margin: timer(options.refreshMarginMs, 60_000, 'refreshMarginMs', 0),
      };
      let base: URL;
      try {
        base = new URL(options.backend, url);
      } catch {
        throw config(`createKit's backend is not a URL: ${options.backend}`);
      }
      this.#bearerOrigins = [base.origin, ...(options.bearerOrigins ?? [])];
      if (options.fetch !== undefined && typeof options.fetch !== 'function') throw config("createKit's fetch must be a function");
      // Not coerced: 'no' or 'false' from a configuration file would turn it on.
      if (options.autoResize !== undefined && typeof options.autoResize !== 'boolean') throw config("createKit's autoResize must be true or false");
      this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
      this.#backend = createBackendClient(base.href.replace(/\/+$/, ''), this.#fetch, this.#timing.request, new URL(url).origin);
      // The early exchange scrubbed the URL and sent the request: the launch it was handed is
      // checked as ours would be, and its request adopted only if it went to this kit's backend.
      const early = env.takeEarlyLaunch();
      const handed = early && typeof early.href === 'string' && early.response instanceof Promise ? early : undefined;
      if (handed?.backend === this.#backend.base) adopted = handed;
      launch = readLaunch({ href: handed?.href ?? url.href, hostOrigins: options.hostOrigins, framed: env.framed, parentOrigin: env.parentOrigin });
      if (handed && !adopted && launch.kind === 'embedded') {
        // Its context token went to another backend, which spent it: the kit asks the dashboard
        // for a fresh one, as after a reload.
        console.warn(`[marketplace-app-kit] The early exchange went to ${handed.backend}, not to this kit's backend ${this.#backend.base}: asking the dashboard for a new context.`);
        launch = { ...launch, context: null };
      }
      if (launch.kind === 'embedded') {
        this.embedded = true;
        // The bridge is there at once, for an mp-kit-created listener too: its first call opens it.
        this.#hostOrigin = launch.host;
        this.#host = this.#hostFacade();
      }
      this.#cookieLaunch = launch.kind === 'standalone';
    } finally {
      // Scrub before anything is sent, even after a configuration error: the context token must
      // not stay in the address bar, history or a copied link, nor go out as the Referer.
      if (hasLaunchParams(url)) env.replaceUrl(scrubbedUrl(url));
    }
    // Sends the one request of start-up right away; the rest waits for the constructor to end.
    this.started = this.#start(launch, adopted);
    this.#fields = { state: 'loading', user: null, entitlement: null, theme: env.defaultTheme, locale: env.defaultLocale, error: null };
    this.#signature = this.#sign();
  }

  get state(): KitState {
    return this.#fields.state;
  }
  get user(): Profile | null {
    return this.#fields.user;
  }
  get entitlement(): Entitlement | null {
    return this.#fields.entitlement;
  }
  get theme(): Theme {
    return this.#fields.theme;
  }
  get locale(): string {
    return this.#fields.locale;
  }
  get error(): MarketplaceKitError | null {
    return this.#fields.error;
  }
  get host(): HostBridge | null {
    return this.#host;
  }
  get destroyed(): boolean {
    return this.#destroyed;
  }

  has(feature: string): boolean {
    return this.access({ feature }).granted;
  }

  hasPlan(plan: string | readonly string[]): boolean {
    return this.access({ plan }).granted;
  }

  access(requirement: AccessRequirement): AccessDecision {
    return checkAccess(this.#fields.entitlement, requirement, this.#now());
  }

  /** The backend's time as the browser can tell it: an entitlement ends by that clock. */
  #now(): number {
    return this.#env.now() + this.#skew;
  }

  refresh(): Promise<void> {
    // A refresh asked for while one runs may carry news the running one missed (an entitlement
    // changed after its request left), so one more runs after it; later asks share that one.
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

  async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const request = new Request(typeof input === 'string' ? new URL(input, this.#env.href()) : input, init);
    // The bearer goes only to the backend's origin and those the app listed: never to others.
    if (!this.#bearerOrigins.includes(new URL(request.url).origin)) return this.#fetch(request);
    return this.#authorized((token) => {
      const attempt = request.clone();
      attempt.headers.set('Authorization', `Bearer ${token}`);
      return this.#fetch(attempt);
    }, request.signal);
  }

  async signIn(returnTo?: string): Promise<void> {
    const url = new URL(`${this.#backend.base}/oauth/start`);
    url.searchParams.set('return_to', this.#resolve(returnTo));
    if (this.embedded) {
      // OAuth pages refuse to be framed: the dashboard opens them at top level.
      await this.#requireHost().openExternal(url.href);
    } else {
      this.#env.navigate(url.href);
    }
  }

  /**
   * Where sign-in returns, as an absolute URL: relative to this page, not to the backend, which may
   * be on another origin. What is no URL goes as it is, for the backend to refuse.
   */
  #resolve(returnTo: string | undefined): string {
    const page = this.#env.href();
    try {
      return new URL(returnTo ?? page, page).href;
    } catch {
      return String(returnTo);
    }
  }

  async signOut(): Promise<void> {
    const token = this.#session?.token;
    // Forget locally first: even if the backend cannot be reached, this page is signed out.
    this.#signedOut();
    const deleting = this.#backend.send(`${this.#backend.base}/session`, {
      method: 'DELETE',
      credentials: 'include',
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });
    // A refresh asked for now must not read the cookie before it is deleted.
    this.#signingOut = deleting.catch(() => undefined);
    const response = await deleting;
    if (!response.ok && response.status !== 401) {
      throw new MarketplaceKitError('ERR_HTTP', `Sign-out answered ${response.status}`, { status: response.status });
    }
  }

  async upgrade(options: { plan?: string | undefined; feature?: string | undefined } = {}): Promise<UpgradeOutcome> {
    const announced = this.#announced;
    const { outcome } = await this.#requireHost().openUpgrade(options);
    // After signOut() there is no session to reload: the next launch shows the new plan.
    if (outcome === 'upgraded' && this.#fields.state !== 'signed-out') {
      // The dashboard announced a change while its chooser was open: that reload (most likely of
      // the purchase) is the one to wait for, since another one now would wait out the backend's
      // refresh interval (5 s). If it failed, the kit reloads once more all the same.
      const reload = this.#announced !== announced ? this.#announced.reload.catch(() => this.refresh()) : this.refresh();
      // The user did upgrade: a reload that fails must not turn that into a failure. It is said in
      // the console; the next refresh (the dashboard's entitlementsChanged, say) shows the plan.
      await reload.catch((error: unknown) => console.error('[marketplace-app-kit] The entitlement could not be reloaded after the upgrade:', error));
    }
    return outcome;
  }

  subscribe(listener: (kit: Kit) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    clearTimeout(this.#openTimer);
    clearTimeout(this.#expiryTimer);
    this.#stopResize?.();
    this.#stopPreferences?.();
    this.#stopWake?.();
    // A bridge still loading is never opened (see `#connect`).
    this.#stopLoading?.();
    this.#opened?.destroy();
    this.#host = null;
    this.#forget();
    this.#listeners.clear();
    unregisterKit(this);
  }

  /** `adopted`: the early exchange's request, sent before the kit existed. */
  async #start(launch: Launch, adopted: EarlyLaunch | undefined): Promise<void> {
    const generation = this.#generation;
    let request: Promise<ServedSession | null> | null = null;
    if (launch.kind === 'standalone') {
      request = this.#backend.session({ credentials: 'include' }).catch((error: unknown) => {
        if (isKitError(error) && error.status === 401) return null;
        throw error;
      });
    } else if (launch.kind === 'embedded' && launch.context) {
      request = adopted ? this.#backend.adopt(adopted) : this.#exchange(launch.context);
    }
    // Nothing was awaited so far, so the request above left inside the constructor.
    await null;
    // Destroyed already (say by an mp-kit-created listener): open nothing, drop the answer.
    if (this.#destroyed) return void request?.catch(() => undefined);
    if (launch.kind === 'rejected') {
      // A configuration mistake as often as an attack (hostOrigins not matching the dashboard):
      // said in the console too, where the developer looks first.
      console.error(`[marketplace-app-kit] ${launch.error.code}: ${launch.error.message}`);
      return this.#set({ state: 'error', error: launch.error });
    }
    if (launch.kind === 'standalone') {
      // On the developer's own site the browser's preferences are the theme and locale, live.
      const env = this.#env;
      this.#stopPreferences = env.observePreferences(() => this.#set({ theme: env.defaultTheme, locale: env.defaultLocale }));
    }
    // The entitlement's end is timed by setTimeout, which does not count a device's sleep and is
    // held back in a hidden tab: on waking, whether it has ended is looked at again (`#set`).
    this.#stopWake = this.#env.observeWake(() => this.#set({}));
    // The answer's schema is built while the request is on its way, not before it leaves.
    prepareSessionSchema();
    const openBridge = () => void (this.#host && this.#connect().catch(() => undefined));
    try {
      if (launch.kind === 'embedded') {
        // A slow start-up must not keep the dashboard's calls (a theme change, say) waiting for
        // the handshake past their timeout: the bridge opens after a while in any case.
        this.#openTimer = setTimeout(openBridge, BRIDGE_OPEN_AT_LATEST_MS);
        this.#applyTheme(launch.theme ?? this.#fields.theme);
        if (launch.locale) this.#applyLocale(launch.locale);
        request ??= this.#exchange(this.#fromHost(await this.#call('getContext', {})));
      }
      const response = await this.#unlessForgotten(generation, request);
      if (response) this.#acceptSession(response);
      else if (launch.kind === 'standalone' && launch.signInError) {
        this.#signedOut(new MarketplaceKitError('ERR_OAUTH', `Sign-in did not complete (${launch.signInError})`, { upstreamCode: launch.signInError }));
      } else this.#signedOut();
    } catch (error) {
      // Signed out or destroyed meanwhile: how start-up ended no longer matters.
      if (generation === this.#generation) {
        this.#fail(error);
        this.#renewalRefused(error);
      }
    } finally {
      // The bridge is not needed to get ready when the launch carried a context: it opens (and
      // auto-resize starts) in a task of its own, after the app's code that waited for start-up,
      // unless a host call opened it before.
      // If its code fails to load, the next host call tries again.
      clearTimeout(this.#openTimer);
      if (this.#host) this.#openTimer = setTimeout(openBridge, 0);
    }
  }

  /**
   * Applies the theme and locale the dashboard sent with a context, and returns the context. They
   * matter after a reload inside the frame, which has no `mp_theme` / `mp_locale` to read; a
   * locale that is no language tag is left out, as in the URL.
   */
  #fromHost({ context, theme, locale }: ResultOf<'getContext'>): string {
    if (theme === 'light' || theme === 'dark') this.#applyTheme(theme);
    const tag = locale == null ? null : normalizeLocale(locale, null);
    if (tag) this.#applyLocale(tag);
    return context;
  }

  #exchange(context: string): Promise<ServedSession> {
    return this.#backend.session({
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ context, host: this.#hostOrigin }),
    });
  }

  /** The app's calls to the dashboard; the first one opens the bridge if it is not open yet. */
  #hostFacade(): HostBridge {
    const done = () => undefined;
    return {
      resize: (height?: number) => this.#call('resize', { height: height ?? this.#env.measureHeight() }).then(done),
      navigate: (path: string) => this.#call('navigate', { path }).then(done),
      openExternal: (url: string) => this.#call('openExternal', { url }).then(done),
      openUpgrade: (options = {}) => this.#call('openUpgrade', options, { timeoutMs: this.#timing.upgrade }),
      toast: (message: string, tone?: ToastTone) => this.#call('toast', tone ? { message, tone } : { message }).then(done),
      setTitle: (title: string) => this.#call('setTitle', { title }).then(done),
    };
  }

  async #call<M extends HostMethod>(
    method: M,
    params: ParamsOf<M>,
    options?: { timeoutMs?: number | undefined },
  ): Promise<ResultOf<M>> {
    return (await this.#connect()).call(method, params, options);
  }

  /**
   * The bridge to the dashboard: its code is loaded, then it opens, on first use. Loading has the
   * kit's request timeout; if it fails the next call tries again. After `destroy()` it rejects
   * with `ERR_BRIDGE_CLOSED`.
   */
  #connect(): Promise<Bridge<'app'>> {
    if (this.#bridge) return this.#bridge;
    if (this.#destroyed) return Promise.reject(bridgeClosed());
    const timeoutMs = this.#timing.request;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new MarketplaceKitError('ERR_TIMEOUT', `The host bridge's code did not load within ${timeoutMs} ms`)), timeoutMs);
    });
    // destroy() ends the wait at once: whatever waits for the bridge hears ERR_BRIDGE_CLOSED now.
    const stopped = new Promise<never>((_, reject) => (this.#stopLoading = () => reject(bridgeClosed())));
    const load = Promise.resolve().then(() => this.#env.loadHostLink());
    const bridge = Promise.race([load, timeout, stopped])
      .finally(() => {
        clearTimeout(timer);
        this.#stopLoading = undefined;
      })
      .then(({ openHostLink }) => {
        // Destroyed while loading: no bridge is opened, so nothing is posted to the dashboard.
        if (this.#destroyed) throw bridgeClosed();
        return this.#open(openHostLink);
      })
      .catch((cause: unknown) => {
        if (this.#bridge === bridge) this.#bridge = null;
        if (this.#destroyed) throw bridgeClosed();
        if (isKitError(cause)) throw cause;
        throw new MarketplaceKitError('ERR_NETWORK', `The host bridge's code could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`, {
          cause,
        });
      });
    this.#bridge = bridge;
    return bridge;
  }

  #open(openHostLink: (typeof import('./host-link.js'))['openHostLink']): Bridge<'app'> {
    const env = this.#env;
    const handlers: HandlerTable<'app'> = {
      themeChanged: ({ theme }) => this.#applyTheme(theme),
      localeChanged: ({ locale }) => {
        const tag = normalizeLocale(locale, null);
        // Refused, so the dashboard hears that its value was not used.
        if (!tag) throw new Error(`locale ${JSON.stringify(locale.slice(0, 40))} is not a BCP 47 language tag`);
        this.#applyLocale(tag);
      },
      // Answer at once; the reload runs on its own (a failure leaves the last known entitlement).
      entitlementsChanged: () => {
        const reload = this.refresh();
        reload.catch(() => undefined);
        this.#announced = { reload };
      },
    };
    // What the dashboard must be told again when it starts its end over (set below).
    let restated = () => {};
    const bridge = openHostLink({
      self: env.self,
      peer: () => env.parent,
      origin: this.#hostOrigin,
      handlers,
      timeoutMs: this.#timing.bridge,
      onPeerRestart: () => restated(),
    });
    this.#opened = bridge;
    if (this.#options.autoResize !== false) {
      // The height sent last, or -1 once the last call failed; how many were sent.
      let last = -1;
      let sent = 0;
      const report = (height: number) => {
        if (height === last) return;
        last = height;
        const call = ++sent;
        // Resizing is best effort: a dashboard that does not answer must not break the app. Only
        // the last call's failure counts: an older one (to an end since gone) says nothing of it.
        this.#host?.resize(height).catch(() => {
          if (sent === call) last = -1;
        });
      };
      try {
        this.#stopResize = env.observeHeight(report);
        // A dashboard that connects late lets the first heights time out: once it has answered
        // the handshake, the height goes again (the observer says nothing until it changes).
        bridge.ready.then(() => last === -1 && !this.#destroyed && report(env.measureHeight()), () => undefined);
        // A dashboard that started over on this frame knows no height at all.
        restated = () => {
          last = -1;
          report(env.measureHeight());
        };
      } catch {
        // No ResizeObserver here: no automatic resizing, but the bridge and `host.resize()` work.
      }
    }
    return bridge;
  }

  #applyTheme(theme: Theme): void {
    if (this.#env.root) this.#env.root.dataset['mpTheme'] = theme;
    this.#set({ theme });
  }

  #applyLocale(locale: string): void {
    // Not `lang`: the user's locale says nothing of the language the app's texts are in.
    if (this.#env.root) this.#env.root.dataset['mpLocale'] = locale;
    this.#set({ locale });
  }

  #requireHost(): HostBridge {
    if (!this.#host) {
      throw new MarketplaceKitError('ERR_NOT_EMBEDDED', 'This needs the marketplace dashboard; the app is not embedded in it');
    }
    return this.#host;
  }

  /**
   * Keeps the token with the time to renew it. Inside the dashboard: the margin before expiry, but
   * never more than half the lifetime (short sessions). On the developer's site renewing early is
   * pointless (`GET /session` answers the same cookie token), so only a 401 renews. The lifetime
   * is counted from the backend's clock (its `Date` header) when the browser's is off by more than
   * `CLOCK_SKEW_MS`, so that a wrong browser clock neither renews all the time nor never. A session
   * that still looks expired on arrival (no `Date`) is renewed on a 401 only too.
   * An answer for an older token (a refresh that left before a renewal and came back after it)
   * brings its user and entitlement, but the newer token stays. A `renewed` token is the newest
   * whenever it ends (the backend may have been given a shorter session lifetime meanwhile).
   */
  #acceptSession(response: ServedSession, renewed = false): void {
    const now = this.#env.now();
    const ends = Date.parse(response.session.expires_at);
    const current = this.#session;
    if (renewed || !current || current.token === response.session.token || current.ends <= ends) {
      const served = response.servedAt ?? now;
      this.#skew = Math.abs(now - served) > CLOCK_SKEW_MS ? served - now : 0;
      const lifetime = ends - now - this.#skew;
      const margin = this.#timing.margin;
      const known = this.embedded && lifetime > 0;
      this.#session = {
        token: response.session.token,
        renewAt: known ? now + Math.max(lifetime - margin, lifetime / 2) : Infinity,
        expiresAt: known ? now + lifetime : Infinity,
        ends,
      };
    }
    this.#renewPause = null;
    this.#set({ state: 'ready', user: response.user, entitlement: response.entitlement, error: null });
  }

  /** Forgets the session and the user: this page is signed out (`error` says why, if it failed). */
  #signedOut(error: MarketplaceKitError | null = null): void {
    this.#forget();
    this.#set({ state: 'signed-out', user: null, entitlement: null, error });
  }

  #fail(error: unknown): void {
    const kitError = isKitError(error) ? error : new MarketplaceKitError('ERR_NETWORK', String(error), { cause: error });
    this.#set({ state: 'error', error: kitError });
  }

  /** Forgets the session token; what was under way for it is dropped when it ends. */
  #forget(): void {
    this.#session = null;
    this.#generation++;
  }

  /**
   * Settles as `work` does, unless the session was forgotten since `generation` was read: then its
   * outcome is dropped and this rejects with `ERR_SESSION_MISSING`.
   */
  #unlessForgotten<T>(generation: number, work: Promise<T> | T): Promise<T> {
    return Promise.resolve(work).finally(() => {
      if (generation !== this.#generation) throw noSession();
    });
  }

  /**
   * Sends with the bearer token; on a 401 renews once and sends again, unless the token was new.
   * Only a missing or expired session is waited for: before expiry the renewal runs alongside, and
   * if it fails the token stays in use and the renewal is tried again later.
   */
  async #authorized(send: (token: string) => Promise<Response>, signal?: AbortSignal): Promise<Response> {
    await unlessAborted(this.started, signal);
    const generation = this.#generation;
    // The caller's signal also ends its wait for a renewal (which goes on for other callers).
    const renewed = (stale: string | null) =>
      unlessAborted(
        this.#renew(stale).catch((error: unknown) => Promise.reject(this.#lost(error))),
        signal,
      );
    const attempt = async (token: string) => send(await this.#unlessForgotten(generation, token));
    const session = this.#session;
    const now = this.#env.now();
    if (!session || now >= session.expiresAt) return attempt(await renewed(session?.token ?? null));
    if (now >= session.renewAt) {
      this.#renew(session.token).catch(() => {
        session.renewAt = Math.min(this.#env.now() + RENEW_RETRY_MS, session.expiresAt);
      });
    }
    const response = await attempt(session.token);
    if (response.status !== 401) return response;
    return attempt(await renewed(session.token));
  }

  /** After a failed renewal: signs out or records the error (state `error`); returns the error to throw. */
  #lost(error: unknown): unknown {
    if (!isKitError(error) || error.code !== 'ERR_SESSION_REFRESH_FAILED') return error;
    // On the developer's site a 401 means the cookie session ended: the user is signed out.
    if (!this.embedded && error.status === 401) this.#signedOut();
    else {
      // Inside the dashboard the token is spent (expired or refused). On the developer's site a
      // network or server error says nothing about the cookie: the next call tries it again.
      if (this.embedded) this.#forget();
      this.#set({ state: 'error', error });
    }
    return error;
  }

  /** A new session token; concurrent callers share one renewal. */
  #renew(stale: string | null): Promise<string> {
    const current = this.#session;
    if (current && current.token !== stale && this.#env.now() < current.renewAt) return Promise.resolve(current.token);
    const pause = this.#renewPause;
    if (pause && this.#env.now() < pause.until) return Promise.reject(pause.error);
    this.#renewal ??= this.#runRenewal().finally(() => (this.#renewal = null));
    return this.#renewal;
  }

  /**
   * Whether a session may be obtained now. Inside the dashboard `signed-out` comes only from
   * signOut(), which lasts until the app is launched again: no fresh context is asked for behind
   * the user's back. On the developer's site the cookie is read again while there is a session, or
   * after a failed start-up (state `error`), never after a sign-out or a refused launch.
   */
  #mayRenew(): boolean {
    if (this.#destroyed) return false;
    const { state } = this.#fields;
    if (this.embedded) return !!this.#host && state !== 'signed-out';
    return this.#cookieLaunch && (!!this.#session || state === 'error');
  }

  async #runRenewal(): Promise<string> {
    const generation = this.#generation;
    const standalone = !this.embedded;
    if (!this.#mayRenew()) throw noSession();
    const request = standalone
      ? this.#backend.session({ credentials: 'include' })
      : this.#call('getContext', {}).then((answer) => this.#exchange(this.#fromHost(answer)));
    const refused = (cause: unknown) => Promise.reject(this.#renewalRefused(cause));
    const response = await this.#unlessForgotten(generation, request.catch(refused));
    this.#acceptSession(response, true);
    return response.session.token;
  }

  /**
   * The error a failed renewal (or start-up) leaves. When the backend asked for a wait (a 429, as
   * its per-user limit on exchanges sends, or a 503 with `Retry-After`: the marketplace rate
   * limited), renewals also pause that long: until then every call that needs a session fails at
   * once with this error, rather than each asking the dashboard and the backend again. Any other
   * failure (a 503 page from a proxy, the network) is tried again by the next call.
   */
  #renewalRefused(cause: unknown): MarketplaceKitError {
    const error = renewalFailed(cause);
    const asked = error.status === 429 || (error.status === 503 && error.retryAfterMs !== undefined);
    if (asked) {
      const wait = Math.min(error.retryAfterMs ?? RENEW_RETRY_MS, MAX_RENEW_PAUSE_MS);
      this.#renewPause = { until: this.#env.now() + wait, error };
    }
    return error;
  }

  #runRefresh(): Promise<void> {
    const run = (async () => {
      await this.started;
      await this.#signingOut;
      // A destroyed kit keeps no session: nothing is read for it. A refused launch stays refused:
      // no cookie session is read inside a frame the kit did not accept.
      if (this.#destroyed) throw noSession();
      if (!this.embedded && !this.#cookieLaunch) throw this.#fields.error ?? noSession();
      const generation = this.#generation;
      const token = this.#session?.token;
      const reading = this.embedded
        ? this.#authorized((token) =>
            this.#backend.send(`${this.#backend.base}/session?refresh=1`, { headers: { Authorization: `Bearer ${token}` } }),
          ).then((response) => this.#backend.read(response))
        : this.#backend.session({ credentials: 'include', headers: token ? { Authorization: `Bearer ${token}` } : {} }, '?refresh=1');
      try {
        // Only the answer is dropped if the session was forgotten meanwhile: a failure changes
        // nothing here, except that a 401 signs out, which is right whenever it arrives.
        this.#acceptSession(await reading.then((response) => this.#unlessForgotten(generation, response)));
      } catch (error) {
        if (this.embedded || !(isKitError(error) && error.status === 401)) throw error;
        this.#signedOut();
      }
    })();
    this.#refreshRunning = run;
    const settled = () => {
      if (this.#refreshRunning === run) this.#refreshRunning = null;
    };
    run.then(settled, settled);
    return run;
  }

  /** Applies `patch` and notifies every listener once, if anything visible changed at all. */
  #set(patch: Partial<Fields>): void {
    if (this.#destroyed) return;
    Object.assign(this.#fields, patch);
    // An entitlement that ends while the page is open changes `has()` with no news from anyone:
    // listeners hear of it then. setTimeout waits at most MAX_TIMER_MS; a later end is timed again.
    clearTimeout(this.#expiryTimer);
    const left = Date.parse(this.#fields.entitlement?.expires_at ?? '') - this.#now();
    if (left > 0) this.#expiryTimer = setTimeout(() => this.#set({}), Math.min(left + 1, MAX_TIMER_MS));
    const signature = this.#sign();
    if (signature === this.#signature) return;
    this.#signature = signature;
    for (const listener of [...this.#listeners]) {
      // A listener may destroy the kit: after that, nobody else is told. One it unsubscribed (and
      // did not subscribe again) is not told either. One that changed the kit had everyone told
      // of the newer state already: the rest of this older round would tell them of it again.
      if (this.#destroyed || this.#signature !== signature) return;
      if (!this.#listeners.has(listener)) continue;
      try {
        listener(this);
      } catch (error) {
        // One broken listener must not starve the others.
        reportError(error);
      }
    }
    if (!this.#destroyed && this.#signature === signature) this.dispatchEvent(new Event(KIT_CHANGE_EVENT));
  }

  /**
   * Everything a listener can see, as text; the error as its `toJSON()` (code and message), and
   * whether the entitlement has ended by now.
   */
  #sign(): string {
    const ends = this.#fields.entitlement?.expires_at;
    return JSON.stringify([this.#fields, ends ? !(Date.parse(ends) > this.#now()) : false]);
  }
}
