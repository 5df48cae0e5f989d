/**
 * The options of `startSimulator`, checked before it listens: a mistake is `ERR_CONFIG` at once,
 * and nothing is left listening. Messages name what the developer wrote: the option (`appUrl`),
 * or the flag when mpkit checks its flags with the same rules (`--app-url`).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MarketplaceKitError } from '../shared/errors.js';
import { shownValue } from '../shared/options.js';
import { AppId } from '../shared/schemas.js';
import { sleep, type Clock } from '../server/lib/clock.js';
import { randomToken } from '../server/oauth.js';
import { Catalog } from './catalog.js';
import { parseCatalog, type PlanDefinition, type UserDefinition } from './config.js';
import type { RateLimits, SimulatorCredentials } from './context.js';
import { isEndpointUrl } from './control.js';

/** Options of `startSimulator` (and of `mpkit simulate`'s flags); every one has a default. */
export interface SimulatorOptions {
  /** TCP port on 127.0.0.1; `0` (the default) picks a free one. */
  port?: number | undefined;
  /** The app's embed URL, loaded in the dashboard's iframe. */
  appUrl?: string | undefined;
  /**
   * Registered Redirect URIs, matched exactly. Default: `{app origin}/api/marketplace/oauth/callback`
   * when `appUrl` is given (the callback of `createAppBackend`), else none.
   */
  redirectUris?: readonly string[] | undefined;
  /** Where deliveries go. Default: `{app origin}/api/marketplace/webhooks` when `appUrl` is given. */
  webhookUrl?: string | undefined;
  /** `app_<id>` of the simulated app. Default `app_simulated`. */
  appId?: string | undefined;
  /** Shown on the authorization page and the dashboard. Default `Your app`. */
  appName?: string | undefined;
  /** Fixed credentials (tests, demos); each one left out is made up at random, a blank one is `ERR_CONFIG`. */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** Must start with `test_`. */
  testApiKey?: string | undefined;
  /** Must start with `live_`. */
  liveApiKey?: string | undefined;
  webhookSecret?: string | undefined;
  /**
   * The simulator's clock, for tests: `{ now, sleep }` (ms since the epoch, and a wait) drives
   * every time it stamps or counts (tokens, codes, rate limits, deliveries) and every wait (the
   * webhook backoff); a function alone gives `now`, and waits are then real. Default: the system clock.
   */
  clock?: (() => number) | SimulatorClock | undefined;
  /** Lifetime of authorization codes in seconds. Default 60. */
  codeTtlSeconds?: number | undefined;
  /** `expires_in` of access tokens, in seconds. Default 3600. */
  accessTokenTtlSeconds?: number | undefined;
  /** Requests per window per caller. Default: test 100, live 1,000, bearer 1,000 per 60 s. */
  rateLimits?: Partial<RateLimits> | undefined;
  /** Delivery attempts per event (first try included). Default 5. */
  webhookMaxAttempts?: number | undefined;
  /** Wait after the first failed attempt, doubled after each further one. Default 1000 ms. */
  webhookBackoffMs?: number | undefined;
  /** Timeout of one delivery attempt. Default 10,000 ms. */
  webhookTimeoutMs?: number | undefined;
  /** The host bridge bundle the dashboard serves. Default: this package's `dist/cdn/marketplace-host.js`. */
  hostBundle?: string | URL | undefined;
  /**
   * The app's plans (id, name, kind, price, features, usage limit), as the Developer Console's
   * Pricing tab holds them. Default: the built-in `PLANS`.
   */
  plans?: readonly PlanDefinition[] | undefined;
  /** The users and the plan each starts on. Default: the built-in `USER_SEEDS`, on plans of `plans` of the same kinds. */
  users?: readonly UserDefinition[] | undefined;
}

/** A clock the simulator runs on: now, and a wait (which ends early, rejecting, when `signal` aborts). */
export interface SimulatorClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds by this clock; rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** What an option is called in messages: `appUrl`, `redirectUris[1]`; mpkit names its flags instead. */
export type OptionName = (option: string) => string;

export interface ResolvedOptions {
  port: number;
  clock: Clock;
  appId: string;
  appName: string;
  codeTtlMs: number;
  accessTokenTtlSeconds: number;
  maxAttempts: number;
  backoffMs: number;
  timeoutMs: number;
  rateLimits: RateLimits;
  credentials: SimulatorCredentials;
  /** The first configuration, in the control API's terms (`applyConfig`). */
  config: { app_url: string | null; webhook_url: string | null; redirect_uris: string[] };
  hostBundle: URL;
  /** True when `hostBundle` was given, not this package's own bundle. */
  hostBundleGiven: boolean;
  /** The plans and users. */
  catalog: Catalog;
}

const DEFAULT_BACKEND_PATH = '/api/marketplace';

/** Checks every option and resolves its default; throws `ERR_CONFIG` naming the option as `name` calls it. */
export function resolveOptions(options: unknown, name: OptionName = (option) => option): ResolvedOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw configError(`the options must be an object, got ${Array.isArray(options) ? 'an array' : shownValue(options)}`);
  }
  const given = options as SimulatorOptions;
  const clock = clockOption(given.clock, name('clock'));
  const now: unknown = clock.now();
  if (typeof now !== 'number' || !Number.isFinite(now)) throw configError(`${name('clock')}() must return milliseconds since the epoch, got ${shownValue(now)}`);
  const appId = given.appId ?? 'app_simulated';
  if (!AppId.safeParse(appId).success) throw configError(`${name('appId')} must look like app_<id>, got ${shownValue(appId)}`);
  const limits: unknown = given.rateLimits ?? {};
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    throw configError(`${name('rateLimits')} must be an object such as { test: 100 }, got ${Array.isArray(limits) ? 'an array' : shownValue(limits)}`);
  }
  const rate = limits as Partial<RateLimits>;
  const appUrl = optionalUrl(given.appUrl, name('appUrl'));
  const appOrigin = appUrl === null ? null : new URL(appUrl).origin;
  const redirectUris = given.redirectUris ?? (appOrigin ? [`${appOrigin}${DEFAULT_BACKEND_PATH}/oauth/callback`] : []);
  const { plans, users } = parseCatalog(given.plans, given.users, 'startSimulator');
  if (!Array.isArray(redirectUris)) throw configError(`${name('redirectUris')} must be an array of URLs, got ${shownValue(redirectUris)}`);
  return {
    port: wholeOption(given.port, 0, name('port'), 0, 65535),
    clock,
    appId,
    appName: fixed(given.appName, name('appName'), () => 'Your app'),
    codeTtlMs: wholeOption(given.codeTtlSeconds, 60, name('codeTtlSeconds'), 1) * 1000,
    accessTokenTtlSeconds: wholeOption(given.accessTokenTtlSeconds, 3600, name('accessTokenTtlSeconds'), 1),
    maxAttempts: wholeOption(given.webhookMaxAttempts, 5, name('webhookMaxAttempts'), 1),
    backoffMs: wholeOption(given.webhookBackoffMs, 1000, name('webhookBackoffMs'), 0),
    timeoutMs: wholeOption(given.webhookTimeoutMs, 10_000, name('webhookTimeoutMs'), 1),
    rateLimits: {
      test: wholeOption(rate.test, 100, name('rateLimits.test'), 1),
      live: wholeOption(rate.live, 1000, name('rateLimits.live'), 1),
      bearer: wholeOption(rate.bearer, 1000, name('rateLimits.bearer'), 1),
      windowMs: wholeOption(rate.windowMs, 60_000, name('rateLimits.windowMs'), 1),
    },
    credentials: {
      clientId: fixed(given.clientId, name('clientId'), () => randomToken('client_', 12)),
      clientSecret: fixed(given.clientSecret, name('clientSecret'), () => randomToken('secret_', 32)),
      testApiKey: apiKey(given.testApiKey, 'test_', name('testApiKey')),
      liveApiKey: apiKey(given.liveApiKey, 'live_', name('liveApiKey')),
      webhookSecret: fixed(given.webhookSecret, name('webhookSecret'), () => randomToken('whsec_', 24)),
    },
    config: {
      app_url: appUrl,
      webhook_url: optionalUrl(given.webhookUrl, name('webhookUrl')) ?? (appOrigin ? `${appOrigin}${DEFAULT_BACKEND_PATH}/webhooks` : null),
      redirect_uris: redirectUris.map((uri: unknown, i) => optionalUrl(uri, name(`redirectUris[${i}]`)) ?? endpointError(uri, name(`redirectUris[${i}]`))),
    },
    hostBundle: hostBundleUrl(given.hostBundle, name('hostBundle')),
    hostBundleGiven: given.hostBundle !== undefined,
    catalog: new Catalog(plans, users),
  };
}

/** The clock option: `{ now, sleep }`, or a function for `now` alone (waits are then real). */
function clockOption(given: unknown, name: string): Clock {
  if (given === undefined) return { now: Date.now, sleep };
  if (typeof given === 'function') return { now: () => (given as () => number)(), sleep };
  const clock = given as Partial<SimulatorClock> | null;
  if (typeof clock === 'object' && clock !== null && typeof clock.now === 'function' && typeof clock.sleep === 'function') {
    return { now: () => clock.now!(), sleep: (ms, signal) => clock.sleep!(ms, signal) };
  }
  const got = typeof given === 'object' && given !== null ? 'an object without both' : shownValue(given);
  throw configError(`${name} must be { now, sleep } or a function returning milliseconds since the epoch, got ${got}`);
}

/** An option mistake: `ERR_CONFIG`, as in `createAppBackend`. */
export function configError(message: string, cause?: unknown, caller = 'startSimulator'): MarketplaceKitError {
  return new MarketplaceKitError('ERR_CONFIG', `${caller}: ${message}`, { cause });
}

/** An API key: its prefix and more. The value is never shown: it may be a real key pasted by mistake. */
function apiKey(given: unknown, prefix: string, name: string): string {
  if (given === undefined) return randomToken(prefix);
  if (typeof given !== 'string' || !given.startsWith(prefix)) throw configError(`${name} must start with ${prefix}`);
  if (given.length === prefix.length) throw configError(`${name} must go on after ${prefix}: the prefix alone is no key`);
  return given;
}

/** A fixed text (a client id or secret, the app's name): any but a blank one, which no app could send. */
function fixed(given: unknown, name: string, make: () => string): string {
  if (given === undefined) return make();
  if (typeof given !== 'string' || !given.trim()) throw configError(`${name} must be a non-empty string`);
  return given;
}

/** A whole-number option from `min` to `max` (a NaN or fractional attempt count would never end or never start). */
function wholeOption(value: unknown, fallback: number, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw configError(`${name} must be a whole number ${range}, got ${shownValue(value)}`);
  }
  return value;
}

function optionalUrl(value: unknown, name: string): string | null {
  if (value === undefined) return null;
  return isEndpointUrl(value) ? value : endpointError(value, name);
}

function endpointError(value: unknown, name: string): never {
  throw configError(`${name} must be an absolute http(s) URL without a fragment, got ${shownValue(value)}`);
}

/**
 * The host bridge bundle. This package's own is not looked for here: before `npm run build` the
 * simulator still starts, and its dashboard says to build. A file the developer named must be
 * there now: a wrong path would otherwise show only on the dashboard, once it is opened.
 */
function hostBundleUrl(given: unknown, name: string): URL {
  // Resolves the same from src/simulator (tsx) and dist/simulator (tsc).
  if (given === undefined) return new URL('../../dist/cdn/marketplace-host.js', import.meta.url);
  const url = typeof given === 'string' && given.trim() ? pathToFileURL(resolve(given)) : given instanceof URL && given.protocol === 'file:' ? given : null;
  if (url === null) throw configError(`${name} must be a file path or a file: URL, got ${shownValue(given)}`);
  let file = false;
  try {
    file = statSync(url).isFile();
  } catch {
    // Missing, unreadable, or a file: URL of another host: no file to serve either way.
  }
  if (!file) {
    // A relative path is named as resolved too: the working directory may not be the one meant.
    const resolved = typeof given === 'string' && resolve(given) !== given ? ` (${resolve(given)})` : '';
    throw configError(`${name} must be an existing file, got ${shownValue(given instanceof URL ? given.href : given)}${resolved}: there is none (or it is a directory)`);
  }
  return url;
}
