/**
 * `FakeKit`: a `Kit` with no backend and no bridge, for tests of pages and elements (an app's, the
 * kit's own element tests, the demo's component gallery). Browser code, in the
 * `marketplace-app-kit/testing` entry: docs/testing.md#fakekit.
 */
// Only the runtime's public entry, so that a FakeKit registers on the page exactly as the kit of
// `marketplace-app-kit` does (one global key, the same events): test/node/package.test.ts keeps it so.
import {
  KIT_CHANGE_EVENT,
  KIT_CREATED_EVENT,
  KIT_DESTROYED_EVENT,
  KIT_GLOBAL,
  MarketplaceKitError,
  checkAccess,
  getKit,
  type AccessDecision,
  type AccessRequirement,
  type Entitlement,
  type HostBridge,
  type Kit,
  type KitState,
  type Profile,
  type Theme,
  type UpgradeOutcome,
} from '../runtime/index.js';

/** A signed-in user for tests: Ada Lovelace, `usr_1`. */
export const sampleUser: Profile = {
  id: 'usr_1',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  avatar_url: 'https://avatars.example/usr_1.png',
};

/** An active `pro` entitlement with `export` and `reports`, 120 of 1,000 API calls used, ending in a year. */
export function sampleEntitlement(overrides: Partial<Entitlement> = {}): Entitlement {
  return {
    user_id: 'usr_1',
    app_id: 'app_1',
    plan: 'pro',
    status: 'active',
    features: ['export', 'reports'],
    usage: { api_calls: 120, limit: 1000 },
    expires_at: new Date(Date.now() + 365 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z'),
    ...overrides,
  };
}

/** What the next `upgrade()` call does. */
export interface UpgradeScript {
  /** The answer; default `dismissed`. */
  outcome?: UpgradeOutcome;
  /** Applied (and announced) before an `upgraded` outcome resolves, as the real kit reloads it. */
  entitlement?: Entitlement;
  /** Rejects with this instead of answering. */
  error?: unknown;
  /** Waits for this before answering, to observe the busy state. */
  wait?: Promise<unknown>;
}

/**
 * A fake kit: put it in any state with the setters (each notifies subscribers once if it changed
 * something, like the real kit), script what `upgrade()` answers, and read `calls` to see what the
 * elements asked for. Access decisions use the real rules (`checkAccess`).
 *
 * @example
 * const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'basic', features: [] }));
 * kit.scriptUpgrade({ outcome: 'upgraded', entitlement: sampleEntitlement({ plan: 'pro' }) });
 * const gate = await fixture(html`<mp-gate plan="pro" .kit=${kit}>Reports</mp-gate>`);
 */
export class FakeKit extends EventTarget implements Kit {
  state: KitState = 'loading';
  user: Profile | null = null;
  entitlement: Entitlement | null = null;
  theme: Theme = 'light';
  locale = 'en-US';
  /** Inside the dashboard (the default). Set it to false for a developer's own site: `upgrade()` then rejects with `ERR_NOT_EMBEDDED`, as the real kit's does. */
  embedded = true;
  error: MarketplaceKitError | null = null;
  host: HostBridge | null = null;
  destroyed = false;
  planNames: Readonly<Record<string, string>> = {};

  /** Every request the elements made, in order. */
  readonly calls = {
    signIn: [] as (string | undefined)[],
    signOut: 0,
    upgrade: [] as { plan?: string; feature?: string }[],
    refresh: 0,
  };

  /** Runs on `refresh()` (awaited; its value is ignored); by default the kit stays as it is. */
  onRefresh: ((kit: FakeKit) => unknown) | undefined;
  /** Runs on `signIn()` (awaited; its value is ignored); by default it resolves at once, as `openExternal` inside the dashboard. */
  onSignIn: ((returnTo: string | undefined) => unknown) | undefined;
  /** Answers `fetch()`; by default it rejects with `ERR_CONFIG` (there is no backend to call). */
  onFetch: ((input: RequestInfo | URL, init?: RequestInit) => Response | Promise<Response>) | undefined;

  private readonly _upgrades: UpgradeScript[] = [];

  /** Signed in with `user` and `entitlement` (null: no entitlement): state `ready`. */
  setSession(user: Profile = sampleUser, entitlement: Entitlement | null = sampleEntitlement()): this {
    return this._change({ state: 'ready', user, entitlement, error: null });
  }

  setState(state: KitState): this {
    return this._change({ state });
  }

  setUser(user: Profile | null): this {
    return this._change({ user });
  }

  setEntitlement(entitlement: Entitlement | null): this {
    return this._change({ entitlement });
  }

  setTheme(theme: Theme): this {
    return this._change({ theme });
  }

  setLocale(locale: string): this {
    return this._change({ locale });
  }

  /** As `createKit`'s `planNames`: `{ pro: 'Pro' }`. */
  setPlanNames(planNames: Readonly<Record<string, string>>): this {
    return this._change({ planNames });
  }

  /** Outside the dashboard with no session: state `signed-out`, no user or entitlement. */
  setSignedOut(): this {
    return this._change({ state: 'signed-out', user: null, entitlement: null, error: null });
  }

  /** State `error` with `error` (default: an `ERR_SESSION_REFRESH_FAILED`). */
  setError(error: MarketplaceKitError = new MarketplaceKitError('ERR_SESSION_REFRESH_FAILED', 'The session could not be refreshed')): this {
    return this._change({ state: 'error', error });
  }

  /** Queues what the next `upgrade()` call does (calls without a script answer `dismissed`). */
  scriptUpgrade(script: UpgradeScript): this {
    this._upgrades.push(script);
    return this;
  }

  /** Makes this the page's kit, as `createKit` does: the global symbol and `mp-kit-created`. */
  register(): this {
    (globalThis as Record<symbol, unknown>)[KIT_GLOBAL] = this;
    dispatchEvent(new CustomEvent(KIT_CREATED_EVENT, { detail: this }));
    return this;
  }

  has(feature: string): boolean {
    return this.access({ feature }).granted;
  }

  hasPlan(plan: string | readonly string[]): boolean {
    return this.access({ plan }).granted;
  }

  access(requirement: AccessRequirement): AccessDecision {
    // As the real kit: its entitlement, whatever the state (in `error` it keeps the last one).
    return checkAccess(this.entitlement, requirement);
  }

  async refresh(): Promise<void> {
    this.calls.refresh++;
    await this.onRefresh?.(this);
  }

  async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    if (this.onFetch) return this.onFetch(input, init);
    throw new MarketplaceKitError('ERR_CONFIG', 'FakeKit has no backend; set onFetch');
  }

  async signIn(returnTo?: string): Promise<void> {
    this.calls.signIn.push(returnTo);
    await this.onSignIn?.(returnTo);
  }

  async signOut(): Promise<void> {
    this.calls.signOut++;
    this.setSignedOut();
  }

  async upgrade(options: { plan?: string; feature?: string } = {}): Promise<UpgradeOutcome> {
    this.calls.upgrade.push(options);
    if (!this.embedded) throw new MarketplaceKitError('ERR_NOT_EMBEDDED', 'This needs the marketplace dashboard; the app is not embedded in it');
    const script = this._upgrades.shift() ?? {};
    await script.wait;
    if (script.error !== undefined) throw script.error;
    const outcome = script.outcome ?? 'dismissed';
    if (outcome === 'upgraded' && script.entitlement) this.setEntitlement(script.entitlement);
    return outcome;
  }

  subscribe(listener: (kit: Kit) => void): () => void {
    const handle = () => listener(this);
    this.addEventListener(KIT_CHANGE_EVENT, handle);
    return () => this.removeEventListener(KIT_CHANGE_EVENT, handle);
  }

  /** As `kit.destroy()`: no longer the page's kit, and `mp-kit-destroyed`. */
  destroy(): void {
    this.destroyed = true;
    if (getKit() === this) delete (globalThis as Record<symbol, unknown>)[KIT_GLOBAL];
    dispatchEvent(new CustomEvent(KIT_DESTROYED_EVENT, { detail: this }));
  }

  private _change(patch: Partial<Pick<FakeKit, 'state' | 'user' | 'entitlement' | 'theme' | 'locale' | 'error' | 'planNames'>>): this {
    // Compared by value, as the real kit does: the same session or error set again is no change.
    const changed = (Object.keys(patch) as (keyof typeof patch)[]).some((key) => JSON.stringify(this[key]) !== JSON.stringify(patch[key]));
    Object.assign(this, patch);
    if (changed) this.dispatchEvent(new Event(KIT_CHANGE_EVENT));
    return this;
  }
}
