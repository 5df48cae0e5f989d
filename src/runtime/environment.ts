/**
 * The parts of the browser the kit touches: the page URL and history, the frame, the document's
 * height, the user's preferences, and time. `createKit` runs the kit on the real window
 * (`browserEnvironment`); tests run it on a fake whose clock they move, so that no test waits in
 * real time for a timeout, a renewal or an entitlement's end.
 */
import type { MessagePeer, MessageSource } from '../shared/bridge.js';
import { EARLY_LAUNCH_KEY, type EarlyLaunch } from '../shared/early-launch.js';
import type { Theme } from '../shared/schemas.js';
import { loadHostLink } from './host-link-loader.js';
import { normalizeLocale } from './launch.js';

/** A timer of the environment, as its `setTimeout` returns it. */
export type TimerId = ReturnType<typeof setTimeout>;

/** The kit's clock: every wait and every "now" of the kit goes through it. */
export interface KitTimers {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerId;
  clearTimeout(timer: TimerId | undefined): void;
  /** A signal that aborts with a `TimeoutError` after `ms` (`AbortSignal.timeout`). */
  timeoutSignal(ms: number): AbortSignal;
}

/** The parts of the browser the kit touches, so tests can run it on fakes. */
export interface KitEnvironment extends KitTimers {
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
  const scheme = () => window.matchMedia?.('(prefers-color-scheme: dark)');
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
      return scheme()?.matches ? 'dark' : 'light';
    },
    observePreferences(callback) {
      const query = scheme();
      query?.addEventListener('change', callback);
      addEventListener('languagechange', callback);
      return () => {
        query?.removeEventListener('change', callback);
        removeEventListener('languagechange', callback);
      };
    },
    // Hidden or shown, either way: looking again is harmless.
    observeWake(callback) {
      document.addEventListener('visibilitychange', callback);
      return () => document.removeEventListener('visibilitychange', callback);
    },
    now: () => Date.now(),
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (timer) => clearTimeout(timer),
    timeoutSignal: (ms) => AbortSignal.timeout(ms),
    takeEarlyLaunch() {
      const key = Symbol.for(EARLY_LAUNCH_KEY);
      const early = (window as unknown as Record<symbol, EarlyLaunch | undefined>)[key];
      delete (window as unknown as Record<symbol, unknown>)[key];
      return early;
    },
    loadHostLink,
  };
}
