/**
 * `marketplace-app-kit/host`: the dashboard's side of the host bridge (docs/decisions.md#host-bridge). The simulator's
 * dashboard uses it (as the `MarketplaceHost` global of `dist/cdn/marketplace-host.js`), and so can
 * any page that embeds an app and plays the marketplace's part, such as an app's own tests.
 *
 * This module has no side effects: importing it (or loading the IIFE bundle) only defines
 * `connectApp` (and zod's `globalThis.__zod_globalConfig`, which every copy of zod on a page shares).
 */
import {
  BRIDGE_DEFAULT_TIMEOUT_MS,
  BRIDGE_MAX_MESSAGE_SIZE,
  BRIDGE_PROTOCOL_VERSION,
  BRIDGE_SERVICE_ID,
  openBridge,
  type HandlerTable,
  type ParamsOf,
} from '../shared/bridge.js';
import { MarketplaceKitError, isKitError, type ErrorCode } from '../shared/errors.js';
import { MAX_TIMER_MS, numberOption } from '../shared/options.js';
import { assertOrigin } from '../shared/origin.js';
import type { Theme } from '../shared/schemas.js';

export type { Theme };

export { BRIDGE_DEFAULT_TIMEOUT_MS, BRIDGE_MAX_MESSAGE_SIZE, BRIDGE_PROTOCOL_VERSION, BRIDGE_SERVICE_ID };
export { MarketplaceKitError, isKitError, type ErrorCode };

type Awaitable<T> = T | Promise<T>;

/**
 * What the dashboard does when the app asks: one handler per method of the bridge protocol that
 * the app calls (`BRIDGE_PROTOCOL` in src/shared/bridge.ts). Params are validated before a handler
 * runs; a handler that throws (or rejects) makes the app's call fail with `ERR_BRIDGE_REMOTE` and
 * the error's message (never its stack). A call to a handler that is not given fails the same
 * way. The calls without a result answer null whatever their handler returns (a toast library's
 * id, say); only a throw or a rejection is heard.
 *
 * - `getContext` (required): a fresh context token for the app (the app exchanges it for a new
 *   session). Give the dashboard's current `theme` and `locale` too: an app page loaded again
 *   inside the frame (a reload, a link to another page of the app) has no `mp_theme` / `mp_locale`.
 * - `resize({ height })`: the app's content height in CSS pixels (0 to 1000000): size the iframe to it.
 * - `navigate({ path })`: only a path that starts with one `/` and has no `.` or `..` segment arrives.
 * - `openExternal({ url })`: only absolute http(s) URLs arrive.
 * - `openUpgrade({ plan?, feature? })`: show the plan chooser; resolve once the user upgraded or dismissed it.
 * - `toast({ message, tone? })`: show `message` (up to 1000 characters, plain text).
 * - `setTitle({ title })`: show `title` (up to 200 characters, plain text) as the app's title.
 */
export interface HostHandlers extends Omit<HandlerTable<'host'>, 'getContext'> {
  getContext(): Awaitable<{ context: string; theme?: Theme | undefined; locale?: string | undefined }>;
}

/** Options of `connectApp`. */
export interface ConnectAppOptions {
  /** The app's origin, exactly (`https://app.example`); messages from any other origin are dropped. */
  appOrigin: string;
  /** What the dashboard does for each call of the app. */
  handlers: HostHandlers;
  /** Timeout of each call to the app, in milliseconds (default 5000). */
  timeoutMs?: number | undefined;
}

/** The dashboard's end of one app's bridge, as `connectApp` returns it. */
export interface HostConnection {
  /** Resolves when the app's kit has answered the handshake; waits as long as the app takes to load. */
  readonly ready: Promise<void>;
  /** Tells the app that the dashboard's theme changed. */
  themeChanged(theme: ParamsOf<'themeChanged'>['theme']): Promise<void>;
  /** Tells the app that the dashboard's locale changed (BCP 47 tag). */
  localeChanged(locale: ParamsOf<'localeChanged'>['locale']): Promise<void>;
  /** Tells the app to reload its entitlement (call it after the app backend got the webhook). */
  entitlementsChanged(): Promise<void>;
  /** Stops listening; pending and later calls fail with `ERR_BRIDGE_CLOSED`. */
  destroy(): void;
}

/**
 * The iframe's window once it holds a page of its own. Until then it holds the initial
 * `about:blank` document, of the dashboard's origin: a message to it would reach nobody and only
 * make the browser log an origin mismatch that misleads whoever debugs the app's origins.
 */
function appWindow(iframe: HTMLIFrameElement): Window | null {
  const win = iframe.contentWindow;
  try {
    if (win?.location.href === 'about:blank') return null;
  } catch {
    // Another origin's page, which is what is expected.
  }
  return win;
}

/**
 * Connects the dashboard to the app running in `iframe`. Call it before (or right after) setting
 * the iframe's `src`; only messages from `iframe.contentWindow` at `appOrigin` are accepted.
 *
 * @example
 * const connection = connectApp(iframe, {
 *   appOrigin: 'https://app.example',
 *   handlers: {
 *     getContext: async () => ({ context: await mintContextToken(), theme: 'dark', locale: 'de-DE' }),
 *     resize: ({ height }) => { iframe.style.height = `${height}px`; },
 *     openExternal: ({ url }) => { window.open(url, '_blank', 'noopener'); },
 *   },
 * });
 * iframe.src = embedUrl;
 * await connection.themeChanged('dark');
 */
export function connectApp(iframe: HTMLIFrameElement, options: ConnectAppOptions): HostConnection {
  if (typeof options?.handlers?.getContext !== 'function') {
    throw new MarketplaceKitError('ERR_CONFIG', 'connectApp needs handlers.getContext');
  }
  const appOrigin = assertOrigin(options.appOrigin, 'appOrigin');
  const view = iframe.ownerDocument.defaultView;
  if (!view) throw new MarketplaceKitError('ERR_CONFIG', 'connectApp needs an iframe that is in a document');
  // The app takes a message's sender (`event.source`) to be the window whose code posted it, and
  // accepts only its parent: posted from here into another document's iframe, every message
  // would be dropped while the app's handshake, heard there, made the connection look ready.
  if (view !== (globalThis as unknown)) {
    throw new MarketplaceKitError(
      'ERR_CONFIG',
      "connectApp needs an iframe of this window's document: for one inside another (same-origin) frame, call the connectApp of that frame's window",
    );
  }
  const bridge = openBridge({
    self: view,
    peer: () => appWindow(iframe),
    // The iframe, not its window: the window is not the app's until the app's page arrives, and
    // docs/host.md has the dashboard connect before that.
    channel: iframe,
    origin: appOrigin,
    side: 'host',
    handlers: options.handlers,
    timeoutMs: numberOption(options.timeoutMs, BRIDGE_DEFAULT_TIMEOUT_MS, "connectApp's timeoutMs", { min: 1, max: MAX_TIMER_MS }),
  });
  return {
    ready: bridge.ready,
    themeChanged: async (theme) => void (await bridge.call('themeChanged', { theme })),
    localeChanged: async (locale) => void (await bridge.call('localeChanged', { locale })),
    entitlementsChanged: async () => void (await bridge.call('entitlementsChanged', {})),
    destroy: () => bridge.destroy(),
  };
}
