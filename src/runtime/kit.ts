/**
 * The browser kit, a facade over its parts (docs/runtime.md): the options (`options.ts`), the
 * browser it runs in (`environment.ts`), what it shows and who hears of changes (`store.ts`), the
 * session (`session.ts`, with one strategy picked at start-up: `session-embedded.ts` inside the
 * dashboard, `session-own-site.ts` outside it), `kit.fetch` (`fetch.ts`) and the connection to the
 * dashboard (`host-connection.ts`). `createKit` (index.ts) builds it on the real window; tests
 * build it on a fake `KitEnvironment` whose clock they move.
 */
import { DEV } from '../shared/dev.js';
import type { AccessDecision, AccessRequirement } from '../shared/access.js';
import { checkAccess } from '../shared/access.js';
import type { EarlyLaunch } from '../shared/early-launch.js';
import { MarketplaceKitError } from '../shared/errors.js';
import type { Entitlement, Profile, Theme } from '../shared/schemas.js';
import { createBackendClient, type BackendClient } from './backend.js';
import type { KitEnvironment } from './environment.js';
import { authorizedFetch } from './fetch.js';
import { HostConnection } from './host-connection.js';
import { hasLaunchParams, readLaunch, scrubbedUrl, type Launch } from './launch.js';
import { resolveOptions, type KitOptions, type ResolvedOptions } from './options.js';
import { unregisterKit } from './registry.js';
import type { SessionContext, SessionManager } from './session.js';
import { EmbeddedSession } from './session-embedded.js';
import { OwnSiteSession } from './session-own-site.js';
import { KitStore } from './store.js';
import { KIT_CHANGE_EVENT, type HostBridge, type Kit, type KitState, type UpgradeOutcome } from './types.js';

export type { KitOptions } from './options.js';
export { browserEnvironment, type KitEnvironment } from './environment.js';

const notEmbedded = () => new MarketplaceKitError('ERR_NOT_EMBEDDED', DEV ? 'This needs the marketplace dashboard; the app is not embedded in it' : '');

export class MarketplaceKit extends EventTarget implements Kit {
  /** Settles when start-up is over, whatever its outcome (`state` then says which). */
  readonly started: Promise<void>;
  readonly embedded: boolean;
  readonly planNames: Readonly<Record<string, string>>;
  readonly fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

  readonly #store: KitStore;
  readonly #session: SessionManager;
  /** Inside the dashboard only. */
  readonly #connection: HostConnection | null;
  #destroyed = false;

  constructor(options: KitOptions, env: KitEnvironment) {
    super();
    const url = new URL(env.href());
    let resolved: ResolvedOptions;
    let backend: BackendClient;
    let launch: Launch;
    let adopted: EarlyLaunch | undefined;
    try {
      resolved = resolveOptions(options, url);
      backend = createBackendClient(resolved.backend, resolved.fetch, resolved.requestMs, url.origin, env);
      // The early exchange scrubbed the URL and sent the request: the launch it was handed is
      // checked as ours would be, and its request adopted only if it went to this kit's backend.
      const early = env.takeEarlyLaunch();
      const handed = early && typeof early.href === 'string' && early.response instanceof Promise ? early : undefined;
      if (handed?.backend === backend.base) adopted = handed;
      launch = readLaunch({ href: handed?.href ?? url.href, hostOrigins: resolved.hostOrigins, framed: env.framed, parentOrigin: env.parentOrigin });
      if (handed && !adopted && launch.kind === 'embedded') {
        // Its context token went to another backend, which spent it: the kit asks the dashboard
        // for a fresh one, as after a reload.
        if (DEV) console.warn(`[marketplace-app-kit] The early exchange went to ${handed.backend}, not to this kit's backend ${backend.base}: asking the dashboard for a new context.`);
        launch = { ...launch, context: null };
      }
    } finally {
      // Scrub before anything is sent, even after a configuration error: the context token must
      // not stay in the address bar, history or a copied link, nor go out as the Referer.
      if (hasLaunchParams(url)) env.replaceUrl(scrubbedUrl(url));
    }
    this.planNames = resolved.planNames;
    const initial = { state: 'loading', user: null, entitlement: null, theme: env.defaultTheme, locale: env.defaultLocale, error: null } as const;
    this.#store = new KitStore({ ...initial }, this, env, () => this.#session.now(), () => this.dispatchEvent(new Event(KIT_CHANGE_EVENT)));
    const ctx: SessionContext = { env, store: this.#store, backend, options: resolved, destroyed: () => this.#destroyed };
    // The mode is decided once, here; the bridge is there at once inside the dashboard, for an
    // mp-kit-created listener too: its first call opens it.
    if (launch.kind === 'embedded') {
      this.#connection = new HostConnection(env, this.#store, resolved, launch.host, () => this.refresh());
      this.#session = new EmbeddedSession(ctx, this.#connection, launch, adopted);
    } else {
      this.#connection = null;
      this.#session = new OwnSiteSession(ctx, launch);
    }
    this.embedded = this.#session.embedded;
    this.fetch = authorizedFetch(this.#session, resolved, () => env.href());
    // Sends the one request of start-up right away; the rest waits for the constructor to end.
    this.started = this.#session.started = this.#session.start();
  }

  get state(): KitState {
    return this.#store.fields.state;
  }
  get user(): Profile | null {
    return this.#store.fields.user;
  }
  get entitlement(): Entitlement | null {
    return this.#store.fields.entitlement;
  }
  get theme(): Theme {
    return this.#store.fields.theme;
  }
  get locale(): string {
    return this.#store.fields.locale;
  }
  get error(): MarketplaceKitError | null {
    return this.#store.fields.error;
  }
  get host(): HostBridge | null {
    return this.#connection?.host ?? null;
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
    return checkAccess(this.#store.fields.entitlement, requirement, this.#session.now());
  }

  refresh(): Promise<void> {
    return this.#session.refresh();
  }

  async signIn(returnTo?: string): Promise<void> {
    return (await this.#session.upkeep()).signIn(returnTo);
  }

  signOut(): Promise<void> {
    return this.#session.signOut();
  }

  async upgrade(options: { plan?: string | undefined; feature?: string | undefined } = {}): Promise<UpgradeOutcome> {
    const connection = this.#connection;
    if (!connection?.host) throw notEmbedded();
    return connection.upgrade(options, () => this.#store.fields.state !== 'signed-out');
  }

  subscribe(listener: (kit: Kit) => void): () => void {
    return this.#store.subscribe(listener);
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#connection?.close();
    this.#store.close();
    this.#session.close();
    unregisterKit(this);
  }
}
