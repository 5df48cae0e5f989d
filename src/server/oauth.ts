/**
 * OAuth 2.0 Authorization Code flow against the marketplace (docs/marketplace.md#authorization-page, docs/marketplace.md#token-endpoint; docs/decisions.md#session-exchange, docs/decisions.md#marketplace-api),
 * with `state` and PKCE S256. Building a request and processing its answer are separate steps,
 * so the same code serves `createMarketplaceClient` and anyone bringing their own transport.
 */
import { createHash, randomBytes } from 'node:crypto';
import { MarketplaceKitError } from '../shared/errors.js';
import { TokenResponse } from '../shared/schemas.js';
import { readJsonAnswer, type Answer } from './lib/http.js';
import { optionsObject } from './lib/options-object.js';

/** Scope of the marketplace's only documented permission (docs/marketplace.md#authorization-page). */
export const DEFAULT_SCOPE = 'identity:read';

/** A token answer with `expires_in` turned into an absolute time. */
export interface TokenSet {
  accessToken: string;
  tokenType: 'Bearer';
  /** When the access token expires, in milliseconds since the epoch. */
  expiresAt: number;
  /** The answer's `expires_in`, in seconds (docs/decisions.md#marketplace-api). */
  expiresIn: number;
  /** Absent only when neither this answer nor the refreshed token set had one. */
  refreshToken?: string | undefined;
  scope?: string | undefined;
}

/** Options of `buildAuthorizationUrl`. */
export interface AuthorizationUrlOptions {
  /** `{site_url}` of the marketplace. */
  siteUrl: string;
  clientId: string;
  /** Must be one of the app's registered Redirect URIs. */
  redirectUri: string;
  /** Default `identity:read`. */
  scope?: string | undefined;
  /**
   * Random if omitted. Compare it with the callback's `state` (see `createAppBackend`). Given, at
   * least 16 visible ASCII characters: an empty or guessable state protects nothing.
   */
  state?: string | undefined;
  /** Random if omitted; given, 43 to 128 of `A-Z a-z 0-9 - . _ ~` (RFC 7636 §4.1). Keep it server-side until the code exchange. */
  codeVerifier?: string | undefined;
}

/** A sign-in to start: the URL to send the browser to, and what to keep until the callback. */
export interface AuthorizationRequest {
  /** Where to send the browser: `{site_url}/oauth/authorize?…`. */
  url: string;
  state: string;
  codeVerifier: string;
}

/**
 * Builds the authorization page address (docs/marketplace.md#authorization-page) with `state` and a PKCE S256 challenge.
 *
 * @example
 * const { url, state, codeVerifier } = buildAuthorizationUrl({ siteUrl, clientId, redirectUri });
 * // keep state + codeVerifier (e.g. in a signed HttpOnly cookie), then redirect to url
 */
export function buildAuthorizationUrl(options: AuthorizationUrlOptions): AuthorizationRequest {
  optionsObject(options, 'buildAuthorizationUrl');
  for (const name of ['siteUrl', 'clientId', 'redirectUri'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '') throw new MarketplaceKitError('ERR_CONFIG', `buildAuthorizationUrl needs ${name}`);
  }
  if (!/^https?:\/\//i.test(options.siteUrl) || !URL.canParse(`${trimSlash(options.siteUrl)}/oauth/authorize`)) {
    throw new MarketplaceKitError('ERR_CONFIG', `buildAuthorizationUrl: siteUrl must be an http(s) URL, got ${JSON.stringify(options.siteUrl)}`);
  }
  if (options.redirectUri.includes('#')) {
    throw new MarketplaceKitError('ERR_CONFIG', `buildAuthorizationUrl: redirectUri must not include a fragment (RFC 6749 §3.1.2), got ${JSON.stringify(options.redirectUri)}`);
  }
  const state = options.state ?? randomToken();
  const codeVerifier = options.codeVerifier ?? randomToken();
  if (typeof state !== 'string' || !/^[\x21-\x7e]{16,}$/.test(state)) {
    throw new MarketplaceKitError('ERR_CONFIG', 'buildAuthorizationUrl: state must be at least 16 visible ASCII characters; leave it out for a random one');
  }
  if (typeof codeVerifier !== 'string' || !/^[\w.~-]{43,128}$/.test(codeVerifier)) {
    throw new MarketplaceKitError('ERR_CONFIG', 'buildAuthorizationUrl: codeVerifier must be 43 to 128 of A-Z a-z 0-9 - . _ ~ (RFC 7636); leave it out for a random one');
  }
  const url = new URL(`${trimSlash(options.siteUrl)}/oauth/authorize`);
  url.searchParams.set('client_id', options.clientId);
  url.searchParams.set('redirect_uri', options.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', options.scope ?? DEFAULT_SCOPE);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', pkceChallenge(codeVerifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { url: url.href, state, codeVerifier };
}

/**
 * The PKCE S256 challenge of a verifier: base64url(SHA-256(verifier)) (RFC 7636 §4.2).
 *
 * @example
 * pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'); // 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
 */
export function pkceChallenge(codeVerifier: string): string {
  if (typeof codeVerifier !== 'string' || codeVerifier === '') throw new MarketplaceKitError('ERR_INVALID_INPUT', 'pkceChallenge needs the code verifier');
  return createHash('sha256').update(codeVerifier).digest('base64url');
}

/**
 * `bytes` random bytes (default 32), base64url, after `prefix`: a `state`, a PKCE verifier
 * (43 characters, RFC 7636 §4.1), an opaque token.
 *
 * @example
 * const state = randomToken();
 * const accessToken = randomToken('mpat_');
 */
export function randomToken(prefix = '', bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** The body of a token request (docs/marketplace.md#token-endpoint for codes, docs/decisions.md#marketplace-api for refresh). */
export type TokenGrant =
  | { grant_type: 'authorization_code'; code: string; redirect_uri: string; code_verifier?: string }
  | { grant_type: 'refresh_token'; refresh_token: string };

/**
 * Builds a token endpoint request: JSON body with the client credentials (docs/marketplace.md#token-endpoint).
 *
 * @example
 * const { url, init } = buildTokenRequest(`${siteUrl}/api/oauth/token`, { clientId, clientSecret }, { grant_type: 'refresh_token', refresh_token });
 * const answer = await fetch(url, init);
 */
export function buildTokenRequest(
  tokenUrl: string,
  credentials: { clientId: string; clientSecret: string },
  grant: TokenGrant,
): { url: string; init: RequestInit } {
  const body = { ...grant, client_id: credentials.clientId, client_secret: credentials.clientSecret };
  return {
    url: tokenUrl,
    init: {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    },
  };
}

/**
 * Validates a token endpoint answer and turns it into a `TokenSet`. `previousRefreshToken` is
 * kept when a refresh answer carries no new one (docs/decisions.md#marketplace-api).
 *
 * @example
 * const answer = { status: response.status, headers: response.headers, text: await response.text() };
 * const tokens = processTokenAnswer(answer, Date.now());
 */
export function processTokenAnswer(answer: Answer, now: number, previousRefreshToken?: string): TokenSet {
  const body = readJsonAnswer(answer, 'token', TokenResponse, now);
  const refreshToken = body.refresh_token ?? previousRefreshToken;
  return {
    accessToken: body.access_token,
    tokenType: 'Bearer',
    expiresIn: body.expires_in,
    expiresAt: now + body.expires_in * 1000,
    ...(refreshToken === undefined ? {} : { refreshToken }),
    ...(body.scope === undefined ? {} : { scope: body.scope }),
  };
}

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
