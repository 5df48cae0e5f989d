/**
 * The OAuth 2.0 Authorization Code flow of the simulated marketplace (docs/marketplace.md#authorization-page, docs/marketplace.md#token-endpoint, docs/marketplace.md#oauth-sign-in):
 * the authorization page with PKCE (RFC 7636, S256 only) and `state`, and the token endpoint
 * with the `authorization_code` and `refresh_token` grants (docs/decisions.md#marketplace-api). Errors follow RFC 6749:
 * §4.1.2.1 for the authorization page, §5.2 for the token endpoint.
 */
import { randomBytes } from 'node:crypto';
import { safeEqual } from '../server/lib/safe-equal.js';
import { pkceChallenge, randomToken } from '../server/oauth.js';
import { ApiError, OAuthError, html, json, mediaType, readBody, redirect } from './http.js';
import { SCOPES, authorizePage, errorPage } from './pages.js';
import type { SimulatorContext } from './context.js';
import type { ApiCallRecord } from './state.js';

/** A sign-in request must be approved or denied within this time. */
const FORM_TOKEN_TTL_MS = 10 * 60_000;
const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function nonce(): string {
  return randomBytes(16).toString('base64');
}

function showError(status: number, title: string, message: string, untrusted = false): Response {
  const n = nonce();
  return html(status, errorPage(n, title, message, untrusted), { nonce: n });
}

/** Redirects an error to the app's registered redirect URI, with `state` (RFC 6749 §4.1.2.1). */
function redirectWithError(redirectUri: string, state: string | null, error: string, description: string, status = 302): Response {
  const target = new URL(redirectUri);
  target.searchParams.set('error', error);
  target.searchParams.set('error_description', description);
  if (state !== null) target.searchParams.set('state', state);
  return redirect(target.href, status);
}

/** `GET {site_url}/oauth/authorize` (docs/marketplace.md#authorization-page): checks the request and shows the consent page. */
export function authorizeGet(ctx: SimulatorContext, url: URL): Response {
  const params = url.searchParams;
  const clientIds = params.getAll('client_id');
  const redirectUris = params.getAll('redirect_uri');
  // Until client and redirect URI are known to be right, nothing may be sent to the redirect URI.
  if (clientIds.length !== 1 || clientIds[0] !== ctx.credentials.clientId) {
    return showError(400, 'Unknown application', clientIds.length === 0 ? 'The request has no client_id.' : 'The client_id of this request does not belong to any application.', true);
  }
  if (redirectUris.length !== 1 || !ctx.state.config.redirectUris.includes(redirectUris[0]!)) {
    return showError(
      400,
      'Redirect URI not registered',
      redirectUris.length === 0
        ? 'The request has no redirect_uri.'
        : `The redirect_uri is not one of the application's registered Redirect URIs (they must match exactly): ${redirectUris.join(', ')}`,
      true,
    );
  }
  const redirectUri = redirectUris[0]!;
  const states = params.getAll('state');
  const state = states.length === 1 ? states[0]! : null;
  const fail = (error: string, description: string) => redirectWithError(redirectUri, state, error, description);

  for (const name of ['response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method']) {
    if (params.getAll(name).length > 1) return fail('invalid_request', `The ${name} parameter is repeated.`);
  }
  const responseType = params.get('response_type');
  if (!responseType) return fail('invalid_request', 'The response_type parameter is missing.');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
  const scope = params.get('scope');
  if (!scope) return fail('invalid_request', 'The scope parameter is missing.');
  const scopes = scope.split(' ').filter(Boolean);
  // Own keys only: `toString` or `__proto__` is no scope.
  const unknown = scopes.filter((s) => !Object.hasOwn(SCOPES, s));
  if (scopes.length === 0 || unknown.length > 0) return fail('invalid_scope', `Unknown scope: ${unknown.join(' ') || '(empty)'}.`);
  const challenge = params.get('code_challenge');
  const method = params.get('code_challenge_method');
  if (challenge !== null || method !== null) {
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not supported).');
    if (challenge === null || !PKCE_CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).');
  }

  const formToken = randomToken('ft_');
  ctx.state.makeRoomForPending();
  ctx.state.pending.set(formToken, {
    clientId: ctx.credentials.clientId,
    redirectUri,
    scope: scopes.join(' '),
    state,
    codeChallenge: challenge,
    expiresAt: ctx.clock() + FORM_TOKEN_TTL_MS,
  });
  const n = nonce();
  const page = authorizePage({
    nonce: n,
    appName: ctx.appName,
    formToken,
    scopes,
    redirectUri,
    users: ctx.state.profiles(),
    currentUserId: ctx.state.currentUserId,
  });
  return html(200, page, { nonce: n, formAction: new URL(redirectUri).origin });
}

/**
 * `POST {site_url}/oauth/authorize`: the consent form. Its one-time form token, bound to the
 * checked request, is what makes the form CSRF-safe; a cross-origin `Origin` is refused as well.
 */
export async function authorizePost(ctx: SimulatorContext, request: Request): Promise<Response> {
  const origin = request.headers.get('origin');
  if (origin !== null && origin !== ctx.origin) {
    return showError(403, 'Request refused', 'The approval form was posted from another site.');
  }
  if (mediaType(request) !== 'application/x-www-form-urlencoded') {
    return showError(400, 'Bad request', 'The approval form must be posted as application/x-www-form-urlencoded.');
  }
  const form = new URLSearchParams(await readBody(request));
  const formToken = form.get('form_token') ?? '';
  const pending = ctx.state.pending.get(formToken);
  ctx.state.pending.delete(formToken);
  if (!pending || pending.expiresAt <= ctx.clock()) {
    return showError(400, 'This sign-in request has expired', 'It was already answered or is too old. Start the sign-in again from the app.');
  }
  const decision = form.get('decision');
  if (decision === 'deny') {
    return redirectWithError(pending.redirectUri, pending.state, 'access_denied', 'The user denied the request.', 303);
  }
  const userId = form.get('user_id') ?? '';
  if (decision !== 'approve' || !ctx.state.users.has(userId)) {
    return showError(400, 'Bad request', 'Choose a user, then Approve or Deny.');
  }
  const code = randomToken('code_');
  ctx.state.codes.set(code, {
    clientId: pending.clientId,
    redirectUri: pending.redirectUri,
    userId,
    scope: pending.scope,
    codeChallenge: pending.codeChallenge,
    expiresAt: ctx.clock() + ctx.codeTtlMs,
    used: false,
    familyId: null,
  });
  ctx.state.currentUserId = userId;
  const target = new URL(pending.redirectUri);
  target.searchParams.set('code', code);
  if (pending.state !== null) target.searchParams.set('state', pending.state);
  // The marketplace tells the app about the grant; the redirect does not wait for it.
  void ctx.webhooks.send('user.authorized', { user_id: userId });
  return redirect(target.href, 303);
}

/**
 * `POST {site_url}/api/oauth/token` and its alias `POST {base_url}/oauth/token` (docs/marketplace.md#token-endpoint).
 * Accepts JSON (as the marketplace documents) and form encoding (RFC 6749 clients); client credentials in the body
 * or by HTTP Basic (RFC 6749 §2.3.1).
 */
export async function tokenEndpoint(ctx: SimulatorContext, request: Request, path: string): Promise<Response> {
  const call: ApiCallRecord = { at: new Date(ctx.clock()).toISOString(), method: request.method, path, auth: 'client', user_id: null, status: 0, response: null };
  try {
    if (request.method !== 'POST') throw new OAuthError(405, 'invalid_request', 'Use POST.', { allow: 'POST' });
    const params = await readTokenParams(request);
    const grantType = params.get('grant_type');
    if (!grantType) throw new OAuthError(400, 'invalid_request', 'The grant_type parameter is missing.');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
      throw new OAuthError(400, 'unsupported_grant_type', `Unsupported grant_type: ${grantType}.`);
    }
    authenticateClient(ctx, request, params);
    const answer = grantType === 'authorization_code' ? exchangeCode(ctx, params) : refresh(ctx, params);
    call.user_id = answer.userId;
    call.status = 200;
    call.response = { ...answer.body, access_token: redact(answer.body.access_token), refresh_token: redact(answer.body.refresh_token) };
    return json(200, answer.body, { pragma: 'no-cache' });
  } catch (error) {
    const oauth =
      error instanceof OAuthError
        ? error
        : error instanceof ApiError
          ? new OAuthError(error.status, 'invalid_request', error.message, error.headers)
          : null;
    if (!oauth) throw error;
    call.status = oauth.status;
    call.response = { error: oauth.error, error_description: oauth.description };
    return oauth.toResponse();
  } finally {
    ctx.state.recordCall(call);
  }
}

function redact(token: string): string {
  return `${token.slice(0, 10)}…`;
}

async function readTokenParams(request: Request): Promise<Map<string, string>> {
  const type = mediaType(request);
  const params = new Map<string, string>();
  if (type === 'application/json') {
    let value: unknown;
    try {
      value = JSON.parse(await readBody(request));
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw new OAuthError(400, 'invalid_request', 'The body is not valid JSON.');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new OAuthError(400, 'invalid_request', 'The body must be a JSON object.');
    }
    for (const [key, field] of Object.entries(value)) {
      if (typeof field !== 'string') throw new OAuthError(400, 'invalid_request', `The ${key} parameter must be a string.`);
      params.set(key, field);
    }
    return params;
  }
  if (type === 'application/x-www-form-urlencoded') {
    for (const [key, field] of new URLSearchParams(await readBody(request))) {
      if (params.has(key)) throw new OAuthError(400, 'invalid_request', `The ${key} parameter is repeated.`);
      params.set(key, field);
    }
    return params;
  }
  throw new OAuthError(400, 'invalid_request', 'Send the token request as application/json or application/x-www-form-urlencoded.');
}

function authenticateClient(ctx: SimulatorContext, request: Request, params: Map<string, string>): void {
  let clientId = params.get('client_id');
  let secret = params.get('client_secret');
  const header = request.headers.get('authorization') ?? undefined;
  const basic = header?.match(/^Basic\s+([A-Za-z0-9+/=]+)$/i);
  if (header !== undefined) {
    if (!basic) throw invalidClient('Unsupported Authorization header: use HTTP Basic or credentials in the body.', true);
    if (secret !== undefined) throw new OAuthError(400, 'invalid_request', 'Authenticate the client one way only: HTTP Basic or body credentials.');
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw invalidClient('Malformed HTTP Basic credentials.', true);
    let basicId: string;
    try {
      // RFC 6749 §2.3.1: both parts are form-urlencoded before Basic encoding.
      basicId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    } catch {
      throw invalidClient('Malformed HTTP Basic credentials.', true);
    }
    if (clientId !== undefined && clientId !== basicId) throw new OAuthError(400, 'invalid_request', 'client_id differs from the HTTP Basic user.');
    clientId = basicId;
  }
  if (!clientId) throw new OAuthError(400, 'invalid_request', 'The client_id parameter is missing.');
  if (clientId !== ctx.credentials.clientId) throw invalidClient('Unknown client.', !!basic);
  if (!secret || !safeEqual(secret, ctx.credentials.clientSecret)) throw invalidClient('Client authentication failed.', !!basic);
}

function invalidClient(description: string, basic: boolean): OAuthError {
  // RFC 6749 §5.2: 401 with a challenge for the scheme the client used.
  return new OAuthError(401, 'invalid_client', description, { 'www-authenticate': basic ? 'Basic realm="marketplace"' : 'Bearer realm="marketplace"' });
}

interface TokenAnswer {
  userId: string;
  body: { access_token: string; token_type: 'Bearer'; expires_in: number; refresh_token: string; scope: string };
}

function exchangeCode(ctx: SimulatorContext, params: Map<string, string>): TokenAnswer {
  const code = params.get('code');
  const redirectUri = params.get('redirect_uri');
  if (!code) throw new OAuthError(400, 'invalid_request', 'The code parameter is missing.');
  if (!redirectUri) throw new OAuthError(400, 'invalid_request', 'The redirect_uri parameter is missing.');
  const record = ctx.state.codes.get(code);
  if (!record || record.clientId !== ctx.credentials.clientId) throw invalidGrant('The authorization code is not valid.');
  if (record.used) {
    // A replayed code may be stolen: end what the first exchange issued (RFC 6749 §4.1.2).
    if (record.familyId) ctx.state.revokeFamily(record.familyId);
    throw invalidGrant('The authorization code was already used.');
  }
  record.used = true;
  if (record.expiresAt <= ctx.clock()) throw invalidGrant('The authorization code has expired.');
  if (record.redirectUri !== redirectUri) throw invalidGrant('redirect_uri does not match the one of the authorization request.');
  const verifier = params.get('code_verifier');
  if (record.codeChallenge !== null) {
    if (!verifier) throw invalidGrant('The code_verifier parameter is missing (the request used PKCE).');
    if (!PKCE_VERIFIER.test(verifier) || pkceChallenge(verifier) !== record.codeChallenge) {
      throw invalidGrant('The code_verifier does not match the code_challenge.');
    }
  } else if (verifier !== undefined) {
    throw invalidGrant('A code_verifier was sent but the authorization request had no code_challenge.');
  }
  const familyId = randomToken('fam_', 9);
  record.familyId = familyId;
  return issue(ctx, record.userId, record.scope, familyId);
}

function refresh(ctx: SimulatorContext, params: Map<string, string>): TokenAnswer {
  const token = params.get('refresh_token');
  if (!token) throw new OAuthError(400, 'invalid_request', 'The refresh_token parameter is missing.');
  const record = ctx.state.refreshTokens.get(token);
  if (!record || record.clientId !== ctx.credentials.clientId) throw invalidGrant('The refresh token is not valid.');
  if (record.usedAt !== null) {
    // Reuse of a rotated refresh token means two parties hold it: end the whole family.
    ctx.state.revokeFamily(record.familyId);
    throw invalidGrant('The refresh token was already used (tokens rotate on every refresh).');
  }
  const requested = params.get('scope');
  const granted = record.scope.split(' ');
  if (requested !== undefined && !requested.split(' ').every((s) => granted.includes(s))) {
    throw new OAuthError(400, 'invalid_scope', 'A refresh may not widen the granted scope.');
  }
  record.usedAt = ctx.clock();
  return issue(ctx, record.userId, requested ?? record.scope, record.familyId);
}

function issue(ctx: SimulatorContext, userId: string, scope: string, familyId: string): TokenAnswer {
  const accessToken = randomToken('mpat_');
  const refreshToken = randomToken('mprt_');
  ctx.state.makeRoomForRefreshToken(userId);
  ctx.state.accessTokens.set(accessToken, { userId, scope, familyId, expiresAt: ctx.clock() + ctx.accessTokenTtlSeconds * 1000 });
  ctx.state.refreshTokens.set(refreshToken, { userId, clientId: ctx.credentials.clientId, scope, familyId, usedAt: null });
  return {
    userId,
    body: { access_token: accessToken, token_type: 'Bearer', expires_in: ctx.accessTokenTtlSeconds, refresh_token: refreshToken, scope },
  };
}

function invalidGrant(description: string): OAuthError {
  return new OAuthError(400, 'invalid_grant', description);
}
