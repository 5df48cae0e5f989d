/**
 * The marketplace API client (docs/marketplace.md#endpoints, docs/marketplace.md#authentication, docs/marketplace.md#rate-limits; docs/decisions.md#marketplace-api): OAuth code exchange and refresh,
 * `/whoami` and `/entitlements` with a user's token or with an API key, client-side pacing under
 * the key's rate limit, Retry-After, timeouts and a short per-user entitlement cache. A facade:
 * the refresh single flight is `client/refresh.ts`, the entitlement cache and the loads callers
 * share are `client/entitlements.ts`.
 */
import { AnyEntitlement, Profile, type Entitlement } from '../shared/schemas.js';
import { MarketplaceKitError } from '../shared/errors.js';
import { MarketplaceApiError, type MarketplaceEndpoint } from './api-error.js';
import { systemClock, type Clock } from './lib/clock.js';
import { pacedKeyId, processPacing, type KeyPacer } from './api-key-pacing.js';
import { entitlementLoads } from './client/entitlements.js';
import { refreshSingleFlight } from './client/refresh.js';
import { abortable } from './client/shared-work.js';
import { answerError, answerName, readJsonAnswer, send, type Answer, type Transport } from './lib/http.js';
import { describeValue, functionOption, methodsOption, numberOption, shownValue } from '../shared/options.js';
import { isLoopbackOrigin } from './lib/origin.js';
import { optionsObject } from './lib/options-object.js';
import { PacerWaitTooLong, type ReleaseSlot } from './lib/pacer.js';
import { createMemoryRefreshFlight } from './refresh-flight.js';
import { readStores, type ClientStores } from './stores.js';
import {
  buildAuthorizationUrl,
  buildTokenRequest,
  processTokenAnswer,
  trimSlash,
  type AuthorizationRequest,
  type TokenGrant,
  type TokenSet,
} from './oauth.js';

/** Requests per minute by API key kind (docs/marketplace.md#rate-limits). */
export const API_KEY_LIMITS = { test: 100, live: 1000 } as const;
/** An API key's kind, read from its prefix: `test_…` or `live_…`. */
export type ApiKeyKind = keyof typeof API_KEY_LIMITS;

export { REFRESH_REUSE_WINDOW_MS } from './client/refresh.js';

/** Options of `createMarketplaceClient`: `siteUrl`, plus the credentials of the calls you make. */
export interface MarketplaceClientOptions {
  /** `{site_url}`: host root of the marketplace (authorization page, token endpoint). */
  siteUrl: string;
  /** `{base_url}`; default `${siteUrl}/api/v1`. */
  apiBaseUrl?: string | undefined;
  /** Needed for the OAuth calls. */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** A `test_` or `live_` key; needed to call the API by `userId`. */
  apiKey?: string | undefined;
  /** Token endpoint path under `siteUrl` (default `/api/oauth/token`), or an absolute URL. */
  tokenPath?: string | undefined;
  fetch?: typeof fetch | undefined;
  /** Per HTTP attempt, body included (default 10 000 ms). Pacing waits are not counted: see `maxQueueWaitMs`. */
  timeoutMs?: number | undefined;
  /**
   * Longest wait for a slot under the API key's rate limit (default: `timeoutMs`). A call that
   * would wait longer fails at once with `ERR_RATE_LIMITED` (status 429, `retryAfterMs` set)
   * instead of queueing behind everyone else's calls.
   */
  maxQueueWaitMs?: number | undefined;
  /** How long a user's entitlement stays cached (default 30 000 ms; 0 disables the cache). */
  entitlementTtlMs?: number | undefined;
  /** Retries after a 429 (default 2). */
  maxRetries?: number | undefined;
  /** A 429 asking for a longer wait than this fails at once with `ERR_RATE_LIMITED` (default 10 000 ms). */
  maxRetryWaitMs?: number | undefined;
  /** Override the key kind's limit (requests per `windowMs`, default one minute). */
  rateLimit?: { limit: number; windowMs?: number | undefined } | undefined;
  /**
   * Where the entitlement cache, API-key pacing and refresh single flight live. Default: in memory,
   * the cache and refreshes per client, pacing shared by every client of the process on the same
   * key. Pass `createRedisStores({ client })` (`marketplace-app-kit/redis`) to share them with
   * other instances; any port left out keeps its default.
   */
  stores?: Partial<ClientStores> | undefined;
  /** Injected clock (tests). */
  clock?: Clock | undefined;
}

/** Who a call is about: a user's OAuth access token, or a user id with the client's API key. */
export type UserSelector = ({ accessToken: string; userId?: never } | { userId: string; accessToken?: never }) & {
  signal?: AbortSignal | undefined;
};

/**
 * The marketplace API client, as `createMarketplaceClient` returns it: OAuth (authorization URL,
 * code exchange, refresh) and the API (`whoami`, `entitlements`), with retries, rate-limit pacing
 * and typed `MarketplaceApiError`s.
 */
export interface MarketplaceClient {
  /** `{site_url}`, without a trailing slash. */
  readonly siteUrl: string;
  /** `{base_url}` of the API calls (`{site_url}/api/v1` by default). */
  readonly apiBaseUrl: string;
  /** The token endpoint's URL. */
  readonly tokenUrl: string;
  /** `test` or `live` from the API key's prefix; null without a key. */
  readonly keyKind: ApiKeyKind | null;
  /** The Client ID of the OAuth calls; null without both `clientId` and `clientSecret` (they throw `ERR_CONFIG` then). */
  readonly clientId: string | null;
  /** The authorization page address with fresh `state` and PKCE verifier (docs/marketplace.md#authorization-page). */
  authorizationUrl(options: { redirectUri: string; scope?: string | undefined; state?: string | undefined; codeVerifier?: string | undefined }): AuthorizationRequest;
  /** Exchanges an authorization code (docs/marketplace.md#token-endpoint). */
  exchangeCode(options: { code: string; redirectUri: string; codeVerifier?: string | undefined; signal?: AbortSignal | undefined }): Promise<TokenSet>;
  /**
   * Renews an access token. Concurrent calls with one refresh token share one request, and for
   * `REFRESH_REUSE_WINDOW_MS` after it succeeded (at most while its access token lives) later calls
   * with that spent token get the same answer instead of sending it again; for 10 s after it failed,
   * its failure.
   */
  refresh(refreshToken: string, options?: { signal?: AbortSignal | undefined }): Promise<TokenSet>;
  /** `GET {base_url}/whoami`. */
  whoami(who: UserSelector): Promise<Profile>;
  /**
   * `GET {base_url}/entitlements`: the user's entitlement, or null when the marketplace holds
   * none (404). Cached per user; `fresh: true` skips the cache.
   */
  entitlements(who: UserSelector & { fresh?: boolean | undefined }): Promise<Entitlement | null>;
  /**
   * Drops the user's cached entitlement (and stops an in-flight load from being cached), in the
   * store: with shared stores, for every instance. Done when the promise settles; with a shared
   * store it rejects with `ERR_STORE_UNAVAILABLE` when the store fails, so await it.
   */
  invalidate(userId: string): Promise<void>;
  /**
   * True when the user's entitlement is cached and unexpired, so `entitlements()` would not ask the
   * marketplace. With a shared store, as far as this client saw (it reads or writes the cache itself).
   */
  isCached(userId: string): boolean;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_ENTITLEMENT_TTL_MS = 30_000;
const BACKOFF_MS = 1_000;
/** A slot whose request never reports back (its process died) counts as answered this long after the request's timeout. */
const SLOT_HOLD_MARGIN_MS = 1_000;
/** What a credential sent in a header may hold: visible ASCII (RFC 6750 b64token, and more). */
const HEADER_TOKEN = /^[\x21-\x7e]+$/;

/**
 * Creates a client for one app. Only what you pass is usable: OAuth calls need the client
 * credentials, calls by `userId` need an API key.
 *
 * @example
 * const client = createMarketplaceClient({ siteUrl: 'https://marketplace.example', apiKey: process.env.MP_API_KEY });
 * const entitlement = await client.entitlements({ userId: 'usr_1' });
 */
export function createMarketplaceClient(options: MarketplaceClientOptions): MarketplaceClient {
  optionsObject(options, 'createMarketplaceClient');
  const configError = (message: string) => new MarketplaceKitError('ERR_CONFIG', `createMarketplaceClient: ${message}`);
  const siteUrl = siteRoot(options.siteUrl, configError);
  const apiBaseUrl = trimSlash(options.apiBaseUrl ? requireUrl(options.apiBaseUrl, 'apiBaseUrl', configError) : `${siteUrl}/api/v1`);
  const tokenPath = options.tokenPath ?? '/api/oauth/token';
  if (typeof tokenPath !== 'string' || !/^[^\s]+$/.test(tokenPath)) {
    throw configError(`tokenPath must be a path such as /api/oauth/token or an https URL, got ${shownValue(tokenPath)}`);
  }
  // A path on siteUrl, or a URL of its own: `ftp://x/token` is neither (it would become a path).
  const tokenUrl = /^[a-z][a-z\d+.-]*:/i.test(tokenPath)
    ? requireUrl(tokenPath, 'tokenPath', configError)
    : `${siteUrl}${tokenPath.startsWith('/') ? '' : '/'}${tokenPath}`;
  for (const name of ['clientId', 'clientSecret'] as const) {
    if (options[name] !== undefined) assertCredential(options[name], name, configError);
  }
  functionOption(options.fetch, 'createMarketplaceClient: fetch');
  const clock = methodsOption(options.clock, 'createMarketplaceClient: clock', ['now', 'sleep']) ?? systemClock;
  const transport: Transport = {
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    timeoutMs: numberOption(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'createMarketplaceClient: timeoutMs', { min: 1 }),
    clock,
  };
  const keyKind = options.apiKey === undefined ? null : apiKeyKind(options.apiKey);
  const stores = readStores(options.stores, 'createMarketplaceClient', ['entitlements', 'pacing', 'refresh']);
  const pace: Pacing | null =
    keyKind === null
      ? null
      : {
          limit: numberOption(options.rateLimit?.limit, API_KEY_LIMITS[keyKind], 'createMarketplaceClient: rateLimit.limit', { min: 1 }),
          windowMs: numberOption(options.rateLimit?.windowMs, 60_000, 'createMarketplaceClient: rateLimit.windowMs', { min: 1 }),
          maxWaitMs: numberOption(options.maxQueueWaitMs, transport.timeoutMs, 'createMarketplaceClient: maxQueueWaitMs', { unlimited: true }),
          holdMs: transport.timeoutMs + SLOT_HOLD_MARGIN_MS,
          pacer: null as unknown as KeyPacer,
        };
  // One pacer per key for every client given the same pacing store (the process, by default).
  if (pace) pace.pacer = (stores.pacing ?? processPacing).pacer({ id: pacedKeyId(apiBaseUrl, options.apiKey!), limit: pace.limit, windowMs: pace.windowMs, clock });
  const maxRetries = numberOption(options.maxRetries, 2, 'createMarketplaceClient: maxRetries');
  const maxRetryWaitMs = numberOption(options.maxRetryWaitMs, 10_000, 'createMarketplaceClient: maxRetryWaitMs', { unlimited: true });
  const ttlMs = numberOption(options.entitlementTtlMs, DEFAULT_ENTITLEMENT_TTL_MS, 'createMarketplaceClient: entitlementTtlMs', { unlimited: true });
  // A refresh with every retry it may make: another instance waiting for it gives up after this.
  const refreshLeaseMs = (maxRetries + 1) * transport.timeoutMs + maxRetries * Math.min(maxRetryWaitMs, 60_000);

  const credentials = () => {
    if (!options.clientId || !options.clientSecret) {
      throw new MarketplaceKitError('ERR_CONFIG', 'createMarketplaceClient needs clientId and clientSecret for OAuth calls');
    }
    return { clientId: options.clientId, clientSecret: options.clientSecret };
  };

  /** One logical call: paced (API key), retried after 429 within limits. `onSend` hears when a request goes out. */
  async function call(endpoint: MarketplaceEndpoint, request: OutgoingRequest, signal?: AbortSignal, onSend?: () => void): Promise<Answer> {
    const { url, init, paced, secrets } = request;
    const pacing = paced ? pace : null;
    for (let attempt = 0; ; attempt++) {
      const release = pacing ? await takeSlot(endpoint, pacing, signal) : undefined;
      onSend?.();
      let answer: Answer;
      try {
        answer = await send(transport, endpoint, url, init, signal, secrets);
      } finally {
        release?.();
      }
      if (answer.status !== 429) return answer;
      const now = clock.now();
      const error = answerError(answer, endpoint, now);
      const wait = error.retryAfterMs ?? BACKOFF_MS * 2 ** attempt;
      // Only an API-key 429 pauses the API-key queue: a Bearer or token call's 429 says nothing
      // about the key's budget (the marketplace's documentation leaves OAuth-token callers' limits
      // unshown: docs/marketplace.md#rate-limits). A shared
      // pause that cannot be stored is left out: the next slot fails on the same store anyway.
      if (pacing) await Promise.resolve(pacing.pacer.pauseUntil(now + wait)).catch(() => undefined);
      // A paced retry that the queue would refuse to wait for fails with this 429 (the call was sent).
      if (attempt >= maxRetries || wait > maxRetryWaitMs || (pacing && wait > pacing.maxWaitMs)) throw error;
      if (!pacing) await abortable(endpoint, clock.sleep(wait, signal), signal);
    }
  }

  async function token(grant: TokenGrant, signal?: AbortSignal, previousRefreshToken?: string): Promise<TokenSet> {
    const { clientId, clientSecret } = credentials();
    // Not the authorization code: it comes from the callback's URL, so a visitor picks it (a code of
    // `invalid_grant` would hide the marketplace's answer), and it is worth nothing without the
    // client secret and the verifier, which are redacted.
    const secrets = [clientSecret, ...(grant.grant_type === 'refresh_token' ? [grant.refresh_token] : [grant.code_verifier ?? ''])];
    const answer = await call('token', { ...buildTokenRequest(tokenUrl, { clientId, clientSecret }, grant), paced: false, secrets }, signal);
    return processTokenAnswer(answer, clock.now(), previousRefreshToken);
  }

  function apiRequest(path: string, who: SelectedUser): OutgoingRequest {
    const url = new URL(`${apiBaseUrl}${path}`);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (who.accessToken !== undefined) {
      headers.authorization = `Bearer ${who.accessToken}`;
      return { url: url.href, init: { method: 'GET', headers }, paced: false, secrets: [who.accessToken] };
    }
    if (!options.apiKey) {
      throw new MarketplaceKitError('ERR_CONFIG', `createMarketplaceClient needs an apiKey to call ${path} by userId`);
    }
    headers['x-api-key'] = options.apiKey;
    url.searchParams.set('user_id', who.userId);
    return { url: url.href, init: { method: 'GET', headers }, paced: true, secrets: [options.apiKey] };
  }

  const refresh = refreshSingleFlight({
    clock,
    flight: stores.refresh ?? createMemoryRefreshFlight(),
    leaseMs: refreshLeaseMs,
    send: (refreshToken) => token({ grant_type: 'refresh_token', refresh_token: refreshToken }, undefined, refreshToken),
  });

  const entitlements = entitlementLoads({
    clock,
    ttlMs,
    store: stores.entitlements,
    async fetch(who, onSend) {
      const answer = await call('entitlements', apiRequest('/entitlements', who), undefined, onSend);
      if (answer.status === 404 && isApiErrorBody(answer)) return null;
      const value = toFullEntitlement(readJsonAnswer(answer, 'entitlements', AnyEntitlement, clock.now()));
      assertSameUser(answer, 'entitlements', who.userId, value.user_id);
      return value;
    },
  });

  return {
    siteUrl,
    apiBaseUrl,
    tokenUrl,
    keyKind,
    clientId: options.clientId && options.clientSecret ? options.clientId : null,

    authorizationUrl(authOptions) {
      return buildAuthorizationUrl({ ...authOptions, siteUrl, clientId: credentials().clientId });
    },

    async exchangeCode(exchange) {
      if (typeof exchange !== 'object' || exchange === null) throw argumentError('exchangeCode', '{ code, redirectUri }', exchange);
      const { code, redirectUri, codeVerifier, signal } = exchange;
      const grant: TokenGrant = {
        grant_type: 'authorization_code',
        code: textArgument(code, 'exchangeCode', 'code'),
        redirect_uri: textArgument(redirectUri, 'exchangeCode', 'redirectUri'),
        ...(codeVerifier === undefined ? {} : { code_verifier: textArgument(codeVerifier, 'exchangeCode', 'codeVerifier') }),
      };
      return token(grant, signal);
    },

    async refresh(refreshToken, refreshOptions = {}) {
      return refresh(textArgument(refreshToken, 'refresh', 'the refresh token'), refreshOptions.signal);
    },

    async whoami(who) {
      const selected = selectUser(who, 'whoami');
      const answer = await call('whoami', apiRequest('/whoami', selected), who.signal);
      const profile = readJsonAnswer(answer, 'whoami', Profile, clock.now());
      assertSameUser(answer, 'whoami', selected.userId, profile.id);
      return profile;
    },

    async entitlements(who) {
      return entitlements.entitlements(selectUser(who, 'entitlements'), who.fresh === true, who.signal);
    },

    invalidate: (userId) => entitlements.invalidate(userId),

    isCached: (userId) => entitlements.isCached(userId),
  };
}

/** The client's API-key pacing: the shared pacer of its key, and this client's limits for it. */
interface Pacing {
  pacer: KeyPacer;
  limit: number;
  windowMs: number;
  maxWaitMs: number;
  holdMs: number;
}

/** A request as the client sends it: `secrets` are the credentials it carries, which no message shows. */
interface OutgoingRequest {
  url: string;
  init: RequestInit;
  /** Under the API key's rate limit. */
  paced: boolean;
  secrets: readonly string[];
}

/**
 * A client method's argument that plain JavaScript left out or got wrong: `ERR_INVALID_INPUT`
 * before anything is sent (`refresh(undefined)` would send a request without a token, `whoami()`
 * fail with a TypeError). The value is never shown: it may be a credential.
 */
function argumentError(method: string, wanted: string, value: unknown): MarketplaceKitError {
  return new MarketplaceKitError('ERR_INVALID_INPUT', `${method}() needs ${wanted}, got ${describeValue(value)}`);
}

/** A token, code or URI argument: a non-empty string, or `argumentError`. */
function textArgument(value: unknown, method: string, name: string): string {
  if (typeof value !== 'string' || value === '') throw argumentError(method, `${name} (a non-empty string)`, value);
  return value;
}

/** A `UserSelector` that `selectUser` accepted: one of the two, and nothing else. */
export type SelectedUser = { accessToken: string; userId?: undefined } | { userId: string; accessToken?: undefined };

/** Who a `whoami()` or `entitlements()` is about, checked before anything is sent or shared. */
function selectUser(who: UserSelector, method: string): SelectedUser {
  if (typeof who !== 'object' || who === null) throw argumentError(method, '{ accessToken } or { userId }', who);
  const { accessToken, userId } = who;
  if (typeof accessToken === 'string' && accessToken !== '') {
    // Refused before fetch would refuse it: its error quotes the whole header, token included.
    if (!HEADER_TOKEN.test(accessToken)) {
      throw new MarketplaceKitError('ERR_INVALID_INPUT', `The accessToken passed to ${method}() holds a space, a line break or another character a Bearer token cannot have`);
    }
    return { accessToken };
  }
  // An empty one too (an unset variable): `?user_id=` would be about nobody.
  if (typeof userId !== 'string' || userId === '') {
    throw new MarketplaceKitError('ERR_INVALID_INPUT', `Pass { accessToken } or { userId } to ${method}()`);
  }
  return { userId };
}

/**
 * An answer by `user_id` must be about that user: a marketplace (or proxy) that ignored the
 * parameter would otherwise hand one user another's plan (fails closed).
 */
function assertSameUser(answer: Answer, endpoint: MarketplaceEndpoint, asked: string | undefined, got: string): void {
  if (asked === undefined || got === asked) return;
  throw new MarketplaceApiError('ERR_RESPONSE_INVALID', endpoint, `The ${answerName(endpoint, answer.status, answer.request)} is about another user than the one asked for`, {
    status: answer.status,
  });
}

/**
 * The kind of an API key from its prefix (docs/marketplace.md#api-keys). Anything else is a configuration error.
 *
 * @example
 * apiKeyKind('test_abc'); // 'test'
 */
export function apiKeyKind(apiKey: string): ApiKeyKind {
  // From plain JavaScript or an untyped config the key may be anything; say so instead of a TypeError.
  if (typeof apiKey !== 'string') {
    throw new MarketplaceKitError('ERR_CONFIG', `apiKey must be a string starting with test_ or live_, got ${apiKey === null ? 'null' : typeof apiKey}`);
  }
  const kind = apiKey.startsWith('test_') ? 'test' : apiKey.startsWith('live_') ? 'live' : null;
  if (!kind || apiKey.length === 5) {
    throw new MarketplaceKitError('ERR_CONFIG', 'An API key must start with test_ (development) or live_ (production), as the Developer Console issues them');
  }
  // Never quoted: a key with a line break would be sent nowhere, and only leak in a message.
  if (!HEADER_TOKEN.test(apiKey)) throw new MarketplaceKitError('ERR_CONFIG', 'The API key holds a space, a line break or another character an API key cannot have');
  return kind;
}

/** A short-form entitlement counts as active without expiry (docs/decisions.md#marketplace-api); give it that status. */
function toFullEntitlement(entitlement: AnyEntitlement): Entitlement {
  return 'status' in entitlement ? entitlement : { ...entitlement, status: 'active' };
}

/**
 * Takes an API-key slot for one request. A caller that stops waiting (abort) while the slot is
 * being granted gives it straight back, so that no slot stays taken by a request never sent.
 */
async function takeSlot(endpoint: MarketplaceEndpoint, pacing: Pacing, signal?: AbortSignal): Promise<ReleaseSlot> {
  const taking = pacing.pacer.acquire(signal, pacing.maxWaitMs, pacing.holdMs);
  try {
    return await abortable(endpoint, taking, signal);
  } catch (error) {
    taking.then(
      (release) => release(),
      () => undefined,
    );
    return rethrowPacing(error, endpoint, pacing);
  }
}

/** A call the pacer refused to queue fails like a 429 of the marketplace would. */
function rethrowPacing(error: unknown, endpoint: MarketplaceEndpoint, pacer: Pacing): never {
  if (!(error instanceof PacerWaitTooLong)) throw error;
  const why = error.paused
    ? 'the marketplace answered an earlier request with 429, and the pause it asked for (or the backoff)'
    : `the API key's rate limit (${pacer.limit} requests per ${pacer.windowMs / 1000} s)`;
  throw new MarketplaceApiError(
    'ERR_RATE_LIMITED',
    endpoint,
    `The marketplace ${endpoint} request was not sent: ${why} would hold it for more than ${pacer.maxWaitMs} ms (maxQueueWaitMs); retry after ${Math.ceil(error.retryAfterMs / 1000)} s`,
    { status: 429, retryAfterMs: error.retryAfterMs, cause: error },
  );
}

function isApiErrorBody(answer: Answer): boolean {
  try {
    const value = JSON.parse(answer.text) as { error?: { code?: unknown } };
    return typeof value?.error?.code === 'string';
  } catch {
    return false;
  }
}

type ConfigError = (message: string) => MarketplaceKitError;

/**
 * An https URL, or http on a loopback host (the simulator, a development proxy): elsewhere http
 * would carry the client secret, the API key and users' tokens in the clear.
 */
function requireUrl(value: unknown, name: string, configError: ConfigError): string {
  const url = typeof value === 'string' && !/\s/.test(value) && URL.canParse(value) ? new URL(value) : null;
  if (url === null || !/^https?:$/.test(url.protocol)) throw configError(`${name} must be an https URL, got ${shownValue(value)}`);
  if (url.protocol === 'http:' && !isLoopbackOrigin(url.origin)) {
    throw configError(`${name} must use https, got ${shownValue(value)}: over http the client secret, the API key and tokens travel in the clear (http is for localhost, 127.0.0.1 and [::1])`);
  }
  return value as string;
}

/** `{site_url}`: the marketplace's host root (no path; trailing slashes dropped), as `requireUrl`. */
export function siteRoot(value: unknown, configError: ConfigError): string {
  const url = new URL(trimSlash(requireUrl(value, 'siteUrl', configError)));
  if (url.href !== `${url.origin}/`) {
    throw configError(`siteUrl must be the marketplace's host root, such as https://marketplace.example (no path), got ${shownValue(value)}`);
  }
  return url.origin;
}

/**
 * A Client ID or Client Secret: text that a form body and HTTP Basic carry as it is. A space or a
 * line break (a secret read from a file with its newline, a CRLF .env) would fail every launch
 * and sign-in far from here. Never quoted: the message would leak the secret.
 */
export function assertCredential(value: unknown, name: string, configError: ConfigError): void {
  if (typeof value !== 'string' || value === '') throw configError(`${name} is required`);
  if (!HEADER_TOKEN.test(value)) {
    throw configError(`${name} holds a space, a line break or another character it cannot have (read from a file with its newline, or from a .env with CRLF line ends?)`);
  }
}
