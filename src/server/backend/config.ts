/**
 * The configuration of `createAppBackend`: every option checked at creation (a mistake is
 * `ERR_CONFIG` at once, never a failure of each request later), and the stores it runs on.
 */
import { MarketplaceKitError, isKitError } from '../../shared/errors.js';
import { exactOrigin } from '../../shared/origin.js';
import { functionOption, methodsOption, numberOption } from '../../shared/options.js';
import type { AppBackendOptions } from '../backend.js';
import { apiKeyKind, assertCredential, createMarketplaceClient, siteRoot, type MarketplaceClient } from '../client.js';
import type { Clock } from '../lib/clock.js';
import { isLoopbackOrigin } from '../lib/origin.js';
import { wholeSecondsOption } from '../lib/time-options.js';
import { trimSlash } from '../oauth.js';
import { createMemoryLaunchLimiter } from '../launch-limiter.js';
import { createMemoryReplayStore, DEFAULT_REPLAY_STORE_ENTRIES } from '../replay-store.js';
import { createMemoryRevocationStore } from '../revocations.js';
import { MAX_SESSION_TTL_SECONDS, MIN_SESSION_SECRET_LENGTH, MAKE_SESSION_SECRET, assertSessionSecret } from '../session.js';
import { readStores, type MarketplaceStores } from '../stores.js';
import { createMemoryWebhookProcessing } from '../webhook-processing.js';
import { DEFAULT_BASE_PATH } from './constants.js';
import { webhookProcessingOnReplayStore } from './legacy-replay-store.js';

/** The stores the backend itself uses (its client has its own). */
export type BackendStores = Pick<MarketplaceStores, 'replay' | 'webhooks' | 'launches' | 'revocations'>;

export interface BackendConfig {
  siteUrl: string;
  basePath: string;
  publicOrigin: string | undefined;
  hostOrigins: ReadonlySet<string>;
  corsOrigins: ReadonlySet<string>;
  /** null with `webhooks: false`. */
  webhookSecrets: readonly string[] | null;
  maxExchangesPerUser: number;
}

export function readConfig(options: AppBackendOptions): BackendConfig {
  const configError = (message: string) => new MarketplaceKitError('ERR_CONFIG', `createAppBackend: ${message}`);
  if (typeof options !== 'object' || options === null) throw configError('pass the options object (clientId, clientSecret, siteUrl, …)');
  for (const name of ['clientId', 'clientSecret', 'siteUrl', 'apiKey'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '') throw configError(`${name} is required`);
  }
  assertCredential(options.clientId, 'clientId', configError);
  assertCredential(options.clientSecret, 'clientSecret', configError);
  functionOption(options.onEvent, 'createAppBackend: onEvent');
  functionOption(options.onError, 'createAppBackend: onError');
  methodsOption(options.replayStore, 'createAppBackend: replayStore', ['claim', 'release']);
  readStores(options.stores, 'createAppBackend', ['replay', 'webhooks', 'launches', 'revocations', 'entitlements', 'pacing', 'refresh']);
  methodsOption(options.clock, 'createAppBackend: clock', ['now', 'sleep']);
  if (options.sessionSecret === undefined || options.sessionSecret === '') {
    throw configError(`sessionSecret is required: at least ${MIN_SESSION_SECRET_LENGTH} random characters of your own (not the Client Secret); ${MAKE_SESSION_SECRET}`);
  }
  try {
    assertSessionSecret(options.sessionSecret);
  } catch (error) {
    throw configError((error as Error).message);
  }
  if (options.sessionSecret === options.clientSecret) {
    throw configError('sessionSecret must differ from clientSecret, so that session and context tokens never cross');
  }
  const ttl = wholeSecondsOption(options.sessionTtlSeconds, 'createAppBackend: sessionTtlSeconds', MAX_SESSION_TTL_SECONDS);
  const origins = (list: readonly string[] | undefined, name: string) => {
    const set = new Set<string>();
    if (list !== undefined && !Array.isArray(list)) throw configError(`${name} must be an array of origins, got ${JSON.stringify(list)}`);
    for (const value of list ?? []) {
      const origin = exactOrigin(value);
      if (origin === null) throw configError(`${name} must list exact http(s) origins such as https://dashboard.example (no path, no trailing slash, lower case), got ${JSON.stringify(value)}`);
      set.add(origin);
    }
    return set;
  };
  numberOption(options.webhookToleranceSeconds, 0, 'createAppBackend: webhookToleranceSeconds');
  const maxExchangesPerUser = numberOption(
    options.maxExchangesPerUser,
    30 + Math.ceil(3000 / ttl),
    'createAppBackend: maxExchangesPerUser',
    { min: 1, unlimited: true },
  );
  const hostOrigins = origins(options.hostOrigins, 'hostOrigins');
  if (hostOrigins.size === 0) throw configError('hostOrigins must list at least one dashboard origin');
  let publicOrigin: string | undefined;
  if (options.publicOrigin !== undefined) {
    const origin = exactOrigin(options.publicOrigin);
    if (origin === null) throw configError(`publicOrigin must be an exact http(s) origin such as https://app.example (no path, no trailing slash, lower case), got ${JSON.stringify(options.publicOrigin)}`);
    // Over http the session cookie, and the session tokens the kit sends, travel in the clear.
    if (origin.startsWith('http:') && !isLoopbackOrigin(origin)) {
      throw configError(`publicOrigin must use https, got ${JSON.stringify(origin)}: over http sessions travel in the clear (http is for localhost, 127.0.0.1 and [::1])`);
    }
    publicOrigin = origin;
  }
  if (options.redirectUri !== undefined) {
    const redirect = URL.canParse(options.redirectUri) ? new URL(options.redirectUri) : null;
    if (redirect === null || !/^https?:$/.test(redirect.protocol)) throw configError(`redirectUri must be an http(s) URL, got ${JSON.stringify(options.redirectUri)}`);
    // No marketplace may register one with a fragment (the simulator refuses it too): every sign-in would fail on its authorization page.
    if (options.redirectUri.includes('#')) throw configError(`redirectUri must not include a fragment (RFC 6749 §3.1.2), got ${JSON.stringify(options.redirectUri)}`);
    // A public redirectUri says the app runs in public. Without publicOrigin the backend would then
    // take each request's Host for loopback (a proxy that sends Host: 127.0.0.1 does), and set
    // cookies without Secure or __Host- there.
    if (publicOrigin === undefined && !isLoopbackOrigin(redirect.origin)) {
      throw configError(`redirectUri is on ${redirect.origin}: set publicOrigin too (the origin the browser sees, e.g. ${redirect.origin}), so that no request's Host header decides whether the backend runs on loopback`);
    }
    // The sign-in's state cookie belongs to publicOrigin alone (host-only, `__Host-` on https):
    // a callback on any other origin (www. or not) never receives it, so no sign-in could end.
    if (publicOrigin !== undefined && redirect.origin !== publicOrigin) {
      throw configError(`redirectUri must be on publicOrigin ${publicOrigin}, got ${redirect.origin}: the sign-in's state cookie is set there and reaches no other origin`);
    }
  }
  const basePath = trimSlash(options.basePath ?? DEFAULT_BASE_PATH);
  if (basePath !== '' && !/^\/[\w\-./~]*$/.test(basePath)) throw configError('basePath must be a path like /api/marketplace');
  // The host root (`{site_url}` in docs/marketplace.md), which context tokens name exactly as their issuer.
  const siteUrl = siteRoot(options.siteUrl, configError);
  if (options.client !== undefined) readGivenClient(options, siteUrl, configError);
  if (options.client !== undefined && options.stores !== undefined && ['entitlements', 'pacing', 'refresh'].some((port) => port in options.stores!)) {
    throw configError('stores.entitlements, stores.pacing and stores.refresh would be ignored with your own client: pass the stores to createMarketplaceClient instead');
  }
  return {
    siteUrl,
    maxExchangesPerUser,
    basePath,
    publicOrigin,
    hostOrigins,
    corsOrigins: origins(options.corsOrigins, 'corsOrigins'),
    webhookSecrets: readWebhookSecrets(options, configError),
  };
}

/**
 * A client of your own carries its own settings: the backend's options that only build a client
 * would be ignored without a word, so they are refused, as is a client for another marketplace.
 */
function readGivenClient(options: AppBackendOptions, siteUrl: string, configError: (message: string) => MarketplaceKitError): void {
  const ignored = CLIENT_OPTIONS.filter((name) => options[name] !== undefined);
  if (ignored.length > 0) {
    throw configError(`${ignored.join(', ')} would be ignored with your own client: pass ${ignored.length === 1 ? 'it' : 'them'} to createMarketplaceClient instead`);
  }
  const client = options.client!;
  const clientSite = URL.canParse(client.siteUrl) ? new URL(client.siteUrl).origin : client.siteUrl;
  if (clientSite !== siteUrl) {
    throw configError(`the client is for ${JSON.stringify(client.siteUrl)}, not for siteUrl ${JSON.stringify(siteUrl)}`);
  }
  let kind;
  try {
    kind = apiKeyKind(options.apiKey);
  } catch (error) {
    throw configError((error as Error).message);
  }
  // Every launch loads the entitlement by user id, with the client's API key.
  if (client.keyKind !== kind) {
    throw configError(`the client has ${client.keyKind === null ? 'no API key' : `a ${client.keyKind} API key`}, but apiKey is a ${kind} key: create it with the same apiKey`);
  }
  // The sign-in sends options.clientId to the authorization page and has the client exchange the
  // code: with other credentials, every sign-in would fail only at its callback.
  if (client.clientId !== options.clientId) {
    throw configError(
      `${client.clientId === null ? 'the client has no clientId and clientSecret' : `the client's clientId is ${JSON.stringify(client.clientId)}`}, ` +
        `not ${JSON.stringify(options.clientId)}: create it with the same clientId and clientSecret`,
    );
  }
}

/** The client `createAppBackend` creates; a mistake in the options it passes on is the backend's. */
export function ownClient(options: AppBackendOptions, siteUrl: string, clock: Clock): MarketplaceClient {
  try {
    return createMarketplaceClient({
      siteUrl,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      apiKey: options.apiKey,
      clock,
      ...(options.apiBaseUrl === undefined ? {} : { apiBaseUrl: options.apiBaseUrl }),
      ...(options.tokenPath === undefined ? {} : { tokenPath: options.tokenPath }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.entitlementTtlMs === undefined ? {} : { entitlementTtlMs: options.entitlementTtlMs }),
      ...(options.stores === undefined ? {} : { stores: options.stores }),
    });
  } catch (error) {
    if (!isKitError(error, 'ERR_CONFIG')) throw error;
    throw new MarketplaceKitError('ERR_CONFIG', `createAppBackend: ${error.message.replace(/^createMarketplaceClient: /, '')}`);
  }
}

/** The options of `createAppBackend` that only go into the client it creates. */
const CLIENT_OPTIONS = ['apiBaseUrl', 'tokenPath', 'fetch', 'timeoutMs', 'entitlementTtlMs'] as const;

/** Fails closed at start-up: without a secret every delivery would be refused at run time. */
function readWebhookSecrets(options: AppBackendOptions, configError: (message: string) => MarketplaceKitError): readonly string[] | null {
  if (options.webhookSecret !== undefined && options.webhookSecrets !== undefined) {
    throw configError('pass webhookSecret or webhookSecrets, not both: during a rotation, list every secret in webhookSecrets');
  }
  const given = options.webhookSecrets ?? (options.webhookSecret === undefined ? [] : [options.webhookSecret]);
  if (options.webhooks === false) {
    if (given.length > 0) throw configError('webhooks: false and a webhook secret exclude each other');
    return null;
  }
  if (options.webhooks !== undefined) throw configError('webhooks accepts only false (to turn the webhook route off)');
  if (given.length === 0) {
    throw configError('webhookSecret (or webhookSecrets during a rotation) is required; pass webhooks: false if the app receives no webhooks');
  }
  const empty = given.findIndex((secret) => typeof secret !== 'string' || secret === '');
  if (empty !== -1) {
    const name = options.webhookSecrets === undefined ? 'webhookSecret' : `webhookSecrets[${empty}]`;
    throw configError(`${name} is empty or not a string (an unset environment variable?); pass webhooks: false if the app receives no webhooks`);
  }
  return [...given];
}

/**
 * The backend's stores: those given in `stores`, the legacy `replayStore` (context tokens and,
 * adapted, webhooks), else the memory defaults, the replay store of `replayStoreSize`.
 */
export function readBackendStores(options: AppBackendOptions): BackendStores {
  const configError = (message: string) => new MarketplaceKitError('ERR_CONFIG', `createAppBackend: ${message}`);
  const given = readStores(options.stores, 'createAppBackend', ['replay', 'webhooks', 'launches', 'revocations']);
  if (options.replayStore !== undefined && (given.replay !== undefined || given.webhooks !== undefined)) {
    throw configError('pass replayStore or stores.replay and stores.webhooks, not both');
  }
  const size = numberOption(options.replayStoreSize, DEFAULT_REPLAY_STORE_ENTRIES, 'createAppBackend: replayStoreSize', { min: 2 });
  if (options.replayStoreSize !== undefined && (given.replay !== undefined || options.replayStore !== undefined)) {
    throw configError('replayStoreSize sizes the default memory replay store: it would be ignored with a replay store of your own');
  }
  const legacy = options.replayStore;
  return {
    replay: given.replay ?? legacy ?? createMemoryReplayStore({ maxEntries: size }),
    webhooks: given.webhooks ?? (legacy ? webhookProcessingOnReplayStore(legacy) : createMemoryWebhookProcessing()),
    launches: given.launches ?? createMemoryLaunchLimiter({ maxUsers: size }),
    revocations: given.revocations ?? createMemoryRevocationStore(),
  };
}
