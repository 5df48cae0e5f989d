/**
 * `createKit`'s options and their checks: a mistake is `ERR_CONFIG` at once (docs/runtime.md,
 * "createKit(options)"), never a request that fails later.
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKitError } from '../shared/errors.js';
import { MAX_TIMER_MS, numberOption } from '../shared/options.js';
import { assertOrigin } from '../shared/origin.js';

/** The default timeout of each request the kit makes (`KitOptions.timeoutMs`). */
const REQUEST_TIMEOUT_MS = 10_000;
/** The plan chooser waits on a person, so its call gets far longer than the bridge's default. */
const UPGRADE_TIMEOUT_MS = 10 * 60_000;
/** Inside the dashboard, how long before expiry a session is renewed (`KitOptions.refreshMarginMs`). */
const REFRESH_MARGIN_MS = 60_000;

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
   * More origins, exactly, that `kit.fetch` sends the session's bearer token to inside the
   * dashboard, for an API that is not on the backend's origin (default: none; the backend's
   * origin always gets it). On your own site the session is the backend's cookie, which only the
   * backend's origin receives.
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

/** The options, checked, with their defaults. */
export interface ResolvedOptions {
  /** Absolute base URL of the session routes, without a trailing slash. */
  backend: string;
  hostOrigins: readonly string[];
  /** The origins `kit.fetch` gives the session to: the backend's, then `bearerOrigins`. */
  bearerOrigins: readonly string[];
  fetch: typeof fetch;
  /** Each backend request's timeout (and the bridge code's). */
  requestMs: number;
  /** Each bridge call's timeout; unset: the bridge's own default (its code is not loaded yet). */
  bridgeMs: number | undefined;
  upgradeMs: number;
  marginMs: number;
  autoResize: boolean;
  planNames: Readonly<Record<string, string>>;
}

const config = (message: string) => new MarketplaceKitError('ERR_CONFIG', message);

/** Checks `options` for a page at `pageUrl`; throws `ERR_CONFIG` naming the first mistake. */
export function resolveOptions(options: KitOptions, pageUrl: URL): ResolvedOptions {
  const origins = (list: unknown, name: string) => {
    if (!Array.isArray(list)) throw config(DEV ? `createKit needs ${name} (an array)` : '');
    for (const origin of list) assertOrigin(origin, DEV ? `Each of ${name}` : '');
  };
  if (typeof options?.backend !== 'string' || options.backend === '') throw config(DEV ? 'createKit needs a backend URL' : '');
  // The names are for the messages, which the production build leaves out (see dev.ts).
  origins(options.hostOrigins, DEV ? 'hostOrigins' : '');
  origins(options.bearerOrigins ?? [], DEV ? 'bearerOrigins' : '');
  const planNames = ownNames(options.planNames === undefined ? {} : options.planNames);
  const timer = (value: number | undefined, fallback: number, name: string, min = 1) =>
    numberOption(value, fallback, DEV ? `createKit's ${name}` : '', { min, max: MAX_TIMER_MS });
  const requestMs = timer(options.timeoutMs, REQUEST_TIMEOUT_MS, DEV ? 'timeoutMs' : '');
  const bridgeMs = options.bridgeTimeoutMs === undefined ? undefined : timer(options.bridgeTimeoutMs, 0, DEV ? 'bridgeTimeoutMs' : '');
  const upgradeMs = timer(options.upgradeTimeoutMs, UPGRADE_TIMEOUT_MS, DEV ? 'upgradeTimeoutMs' : '');
  const marginMs = timer(options.refreshMarginMs, REFRESH_MARGIN_MS, DEV ? 'refreshMarginMs' : '', 0);
  let base: URL;
  try {
    base = new URL(options.backend, pageUrl);
  } catch {
    throw config(DEV ? `createKit's backend is not a URL: ${options.backend}` : '');
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw config(DEV ? "createKit's fetch must be a function" : '');
  // Not coerced: 'no' or 'false' from a configuration file would turn it on.
  if (options.autoResize !== undefined && typeof options.autoResize !== 'boolean') throw config(DEV ? "createKit's autoResize must be true or false" : '');
  const fetchImpl = options.fetch;
  return {
    backend: base.href.replace(/\/+$/, ''),
    hostOrigins: options.hostOrigins,
    bearerOrigins: [base.origin, ...(options.bearerOrigins ?? [])],
    fetch: fetchImpl ?? ((input, init) => globalThis.fetch(input, init)),
    requestMs,
    bridgeMs,
    upgradeMs,
    marginMs,
    autoResize: options.autoResize !== false,
    planNames,
  };
}

/**
 * A copy of `names` that answers only its own keys (`planNames.constructor` is undefined), or
 * `ERR_CONFIG` when it is not an object of texts.
 */
function ownNames(names: unknown): Readonly<Record<string, string>> {
  const entries = names && typeof names === 'object' && !Array.isArray(names) ? Object.entries(names) : null;
  if (!entries || entries.some(([, name]) => typeof name !== 'string')) throw config(DEV ? 'createKit\'s planNames must be an object of texts, such as { pro_monthly: "Pro" }' : '');
  return Object.freeze(Object.assign(Object.create(null) as Record<string, string>, names));
}
