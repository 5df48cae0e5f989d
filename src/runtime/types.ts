/**
 * The public shape of the browser kit. The elements are written against this interface only, so
 * they work with the real kit, with the gallery's fake kit and with a kit handed to them.
 */
import type { AccessDecision, AccessRequirement } from '../shared/access.js';
import type { MarketplaceKitError } from '../shared/errors.js';
import type { Entitlement, Profile, Theme } from '../shared/schemas.js';

/**
 * - `loading`: start-up is under way and nothing is known yet (the kit never returns to it);
 * - `ready`: a user and (possibly null) entitlement are known;
 * - `signed-out`: no session: on your own site before sign-in (or after one that did not
 *   complete), or after `signOut()`;
 * - `error`: start-up or a session renewal failed; `kit.error` says why.
 */
export type KitState = 'loading' | 'ready' | 'signed-out' | 'error';

/** The look of a dashboard toast (`kit.host.toast(message, tone)`); `info` by default. */
export type ToastTone = 'info' | 'success' | 'warning' | 'error';
/** How the dashboard's plan chooser closed: the user `upgraded`, or `dismissed` it. */
export type UpgradeOutcome = 'upgraded' | 'dismissed';

/** The app's side of the host bridge (docs/host.md). Every call times out with `ERR_BRIDGE_TIMEOUT`. */
export interface HostBridge {
  /** Tells the dashboard the app's height; without an argument, measures the document. */
  resize(height?: number): Promise<void>;
  /**
   * Mirrors the app's route (`/reports/7`) into the dashboard's address bar. A path that does not
   * start with one `/`, or has a `.` or `..` segment, rejects with `ERR_INVALID_INPUT`.
   */
  navigate(path: string): Promise<void>;
  /** Opens a URL at top level (OAuth pages, checkout), since those cannot be framed. */
  openExternal(url: string): Promise<void>;
  /** Shows the dashboard's plan chooser; resolves when the user upgrades or dismisses it. */
  openUpgrade(options?: { plan?: string | undefined; feature?: string | undefined }): Promise<{ outcome: UpgradeOutcome }>;
  /** Shows a short message in the dashboard's own toast. */
  toast(message: string, tone?: ToastTone): Promise<void>;
  /** Sets the dashboard's title for the app (the browser tab and the app's header). */
  setTitle(title: string): Promise<void>;
}

/**
 * The running kit, as `createKit` resolves it and `getKit()` returns it: the session's state, user
 * and entitlement, access checks, `fetch` to the app's own backend, and the host bridge. Every
 * change of state fires `mp-kit-change` on it (or use `subscribe`).
 */
export interface Kit extends EventTarget {
  /** Where start-up and the session stand; see `KitState`. */
  readonly state: KitState;
  /** The signed-in user; null until a session is ready, and when signed out. */
  readonly user: Profile | null;
  /** The user's entitlement for this app; null when there is none, or no user. */
  readonly entitlement: Entitlement | null;
  /** The dashboard's theme inside it; on the developer's own site, the browser's `prefers-color-scheme`. */
  readonly theme: Theme;
  /** The user's locale (BCP 47), from the dashboard or else the browser; the elements format with it. */
  readonly locale: string;
  /**
   * True inside the marketplace dashboard: launched with `mp_*` parameters by an allowed host, or
   * loaded again inside its frame (a reload, another page of the app).
   */
  readonly embedded: boolean;
  /**
   * The last error that put the kit in `error` state; in `signed-out` state, why the last sign-in
   * did not complete (`ERR_OAUTH`, e.g. the user denied it); else null.
   */
  readonly error: MarketplaceKitError | null;
  /** The host bridge inside the dashboard; null on the developer's own site. */
  readonly host: HostBridge | null;
  /**
   * Display names of the app's plans by id (`createKit`'s `planNames`), which the elements show;
   * only own keys answer. A plan that is not in it goes by its id.
   */
  readonly planNames: Readonly<Record<string, string>>;
  /** True once `destroy()` ran; the elements let go of a destroyed kit. */
  readonly destroyed: boolean;

  /** True when the entitlement grants `feature` (status, expiry and feature list; fail closed). */
  has(feature: string): boolean;
  /** True when the user holds `plan`, or one of `plans`, on a live entitlement. */
  hasPlan(plan: string | readonly string[]): boolean;
  /** The full decision with its reason, as `<mp-gate>` uses it. */
  access(requirement: AccessRequirement): AccessDecision;

  /** Reloads session and entitlement from the app backend. */
  refresh(): Promise<void>;
  /** `fetch` with the session's bearer token; refreshes the session on expiry or a 401. */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
  /**
   * Starts sign-in: top-level navigation to `{backend}/oauth/start` on the developer's site,
   * `host.openExternal` inside the dashboard.
   */
  signIn(returnTo?: string): Promise<void>;
  signOut(): Promise<void>;
  /** Inside the dashboard: `host.openUpgrade`, then reloads the entitlement when upgraded. */
  upgrade(options?: { plan?: string | undefined; feature?: string | undefined }): Promise<UpgradeOutcome>;

  /**
   * Calls `listener` once per change of state, user, entitlement, theme, locale or error, and once
   * when the entitlement's `expires_at` passes while the page is open. Returns the unsubscribe function.
   */
  subscribe(listener: (kit: Kit) => void): () => void;
  /**
   * Stops timers, observers and the bridge and forgets the session: `host` becomes null, nothing
   * changes or is announced any more, and work under way is dropped (`ERR_SESSION_MISSING`).
   * `window` receives `mp-kit-destroyed`.
   */
  destroy(): void;
}

/** Fired on the kit (`kit.addEventListener('change', …)`) once per change. */
export const KIT_CHANGE_EVENT = 'change';
/** Fired on `window` when a kit is created, so elements loaded earlier can find it. */
export const KIT_CREATED_EVENT = 'mp-kit-created';
/** Fired on `window` by `kit.destroy()`, with the kit as `detail`. */
export const KIT_DESTROYED_EVENT = 'mp-kit-destroyed';

declare global {
  interface WindowEventMap {
    /** A kit was created (`event.detail`), in state `loading`. */
    'mp-kit-created': CustomEvent<Kit>;
    /** `event.detail.destroy()` was called. */
    'mp-kit-destroyed': CustomEvent<Kit>;
  }
}
