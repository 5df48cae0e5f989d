/**
 * The app's own session tokens (docs/decisions.md#session-exchange): JWTs signed with the app's session secret, their own
 * `typ` so that a context token is never accepted as a session and the other way round, at most
 * 15 minutes, carrying the profile so that reading the session needs no `/whoami` call.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import { MarketplaceKitError, type ErrorCode } from '../shared/errors.js';
import { shownValue } from '../shared/options.js';
import { AppId, Profile, parseOrThrow } from '../shared/schemas.js';
import { hmacKey, type HmacKey } from './lib/hmac-key.js';
import { encodeHeader, JwtError, signHs256, verifyJwt } from './lib/jws.js';
import { optionsObject } from './lib/options-object.js';
import { nowOption, wholeSecondsOption } from './lib/time-options.js';

/** The `typ` header of an app session token, so that no other token passes for one. */
export const SESSION_TOKEN_TYPE = 'mp-session+jwt';
/** Upper bound of an app session's lifetime (docs/decisions.md#session-exchange). */
export const MAX_SESSION_TTL_SECONDS = 900;
/** Minimum length of `sessionSecret`: 32 characters, as HS256 needs a 256-bit key. */
export const MIN_SESSION_SECRET_LENGTH = 32;
/**
 * Fewer different characters than this is a secret typed by hand (`'a'.repeat(40)`, `abab…`,
 * `passwordpassword…`), not a random one: 32 random hex characters have fewer about once in
 * 30 million, base64 or longer ones far more rarely still.
 */
const MIN_SESSION_SECRET_CHARACTERS = 8;
/** How to make a session secret, for the messages that refuse one. */
export const MAKE_SESSION_SECRET = `make one with \`openssl rand -base64 32\` or \`node -p 'crypto.randomBytes(32).toString("base64url")'\``;

/** A verified app session. */
export interface AppSession {
  user: Profile;
  userId: string;
  /** The app id from the context token, or from the entitlement after an OAuth sign-in; null if unknown. */
  appId: string | null;
  /** The dashboard origin for embedded sessions; null for sessions from the OAuth sign-in. */
  host: string | null;
  /**
   * When the session was issued, in milliseconds since the epoch (whole seconds). Sessions are not
   * stored: compare it with the time of the user's latest `user.revoked` to refuse the ones from
   * before.
   */
  issuedAt: number;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** The session token itself. */
  token: string;
}

/** A session token or cookie that must not be accepted. `status` is 401. */
export class SessionError extends MarketplaceKitError {
  override name = 'SessionError';
}

const SESSION_HEADER = encodeHeader({ alg: 'HS256', typ: SESSION_TOKEN_TYPE });
const REQUIRED_CLAIMS = ['exp', 'iat', 'sub'];

const SessionClaims = z.object({
  sub: Profile.shape.id,
  email: Profile.shape.email,
  name: Profile.shape.name,
  avatar_url: Profile.shape.avatar_url,
  app_id: z.nullable(AppId),
  host: z.nullable(z.string()),
  iat: z.number(),
  exp: z.number(),
});

/** `SessionClaims` compiled by zod on first use: same results and messages, a fraction of the time. */
let compiledSessionClaims: typeof SessionClaims | undefined;
const sessionClaims = () => (compiledSessionClaims ??= z.compile(SessionClaims));

/** Options of `signSessionToken`. */
export interface SignSessionOptions {
  /** The app's session secret (≥ 32 characters). */
  secret: string;
  /** The app's Client ID: the token's `aud`, so one secret shared by two apps cannot mix sessions. */
  audience: string;
  user: Profile;
  appId: string | null;
  host: string | null;
  /** Lifetime in whole seconds, from 1 to 900 (default 900); anything else is `ERR_CONFIG`. */
  ttlSeconds?: number | undefined;
  /** Clock in ms since the epoch, or a Date (default: now). */
  now?: number | Date | undefined;
}

/** Options of `verifySessionToken`. */
export interface VerifySessionOptions {
  /** The app's session secret (≥ 32 characters). */
  secret: string;
  /** The app's Client ID: the token's expected `aud`. */
  audience: string;
  /** Clock in ms since the epoch, or a Date (default: now). */
  now?: number | Date | undefined;
}

/**
 * Mints an app session token.
 *
 * @example
 * const { token, expiresAt } = await signSessionToken({ secret, audience: clientId, user, appId: 'app_1', host: null });
 */
export async function signSessionToken(options: SignSessionOptions): Promise<{ token: string; expiresAt: number }> {
  checkKeys(optionsObject(options, 'signSessionToken'), 'signSessionToken');
  return sign(hmacKey(options.secret), options.audience, options, 'signSessionToken');
}

/**
 * Verifies an app session token (HS256 pinned, `typ` mp-session+jwt, audience, expiry).
 *
 * @example
 * const session = await verifySessionToken(token, { secret, audience: clientId });
 */
export async function verifySessionToken(token: string, options: VerifySessionOptions): Promise<AppSession> {
  // A missing or short secret is the app's mistake, never a 401 for every user; a missing
  // audience would accept every app's sessions signed with the same secret.
  checkKeys(optionsObject(options, 'verifySessionToken'), 'verifySessionToken');
  return verify(hmacKey(options.secret), options.audience, token, nowOption(options.now, 'verifySessionToken: now'));
}

/**
 * `signSessionToken` and `verifySessionToken` for one secret and audience, checked and imported
 * once: what `createAppBackend` uses on every request.
 */
export function sessionTokens(secret: string, audience: string) {
  checkKeys({ secret, audience }, 'sessionTokens');
  const key = hmacKey(secret);
  return {
    sign: (options: Omit<SignSessionOptions, 'secret' | 'audience'>) => sign(key, audience, options, 'signSessionToken'),
    verify: (token: string, now: number) => verify(key, audience, token, now),
  };
}

function sign(key: HmacKey, audience: string, options: Omit<SignSessionOptions, 'secret' | 'audience'>, caller: string): { token: string; expiresAt: number } {
  const now = nowOption(options.now, `${caller}: now`);
  const ttl = wholeSecondsOption(options.ttlSeconds, `${caller}: ttlSeconds`, MAX_SESSION_TTL_SECONDS);
  const iat = Math.floor(now / 1000);
  const exp = iat + ttl;
  const user: Partial<Profile> | undefined = options.user;
  // A token that verifySessionToken would refuse (an avatar_url of null, an app id of 7) is not
  // signed: the mistake shows here, not as a 401 for every request of the session.
  const claims = parseOrThrow(
    sessionClaims(),
    { sub: user?.id, email: user?.email, name: user?.name, avatar_url: user?.avatar_url, app_id: options.appId, host: options.host, iat, exp },
    `${caller} user, appId or host (session claims)`,
  );
  // A JWT as jose's SignJWT makes it (jose verifies it), signed on node:crypto: see lib/jws.ts.
  const token = signHs256(
    SESSION_HEADER,
    {
      email: claims.email,
      name: claims.name,
      avatar_url: claims.avatar_url,
      app_id: claims.app_id,
      host: claims.host,
      sub: claims.sub,
      aud: audience,
      iat,
      exp,
      jti: randomUUID(),
    },
    key.node,
  );
  return { token, expiresAt: exp * 1000 };
}

function verify(key: HmacKey, audience: string, token: string, now: number): AppSession {
  let payload: unknown;
  try {
    if (typeof token !== 'string') throw new JwtError('malformed', 'Compact JWS must be a string');
    ({ claims: payload } = verifyJwt(token, key.node, { typ: SESSION_TOKEN_TYPE, audience, requiredClaims: REQUIRED_CLAIMS, now }));
  } catch (error) {
    if (!(error instanceof JwtError)) throw error;
    if (error.kind === 'expired') throw sessionError('ERR_SESSION_EXPIRED', 'The session has expired; start a new one', error);
    throw sessionError('ERR_SESSION_INVALID', 'The session token is invalid', error);
  }
  const parsed = sessionClaims().safeParse(payload);
  if (!parsed.success) throw sessionError('ERR_SESSION_INVALID', 'The session token claims are invalid', parsed.error);
  const claims = parsed.data;
  return {
    user: { id: claims.sub, email: claims.email, name: claims.name, avatar_url: claims.avatar_url },
    userId: claims.sub,
    appId: claims.app_id,
    host: claims.host,
    issuedAt: claims.iat * 1000,
    expiresAt: claims.exp * 1000,
    token,
  };
}

/** A session secret long and random enough to sign with, or `ERR_CONFIG` saying how to make one (never quoting it). */
export function assertSessionSecret(secret: unknown, name = 'sessionSecret'): asserts secret is string {
  if (typeof secret !== 'string' || secret.length < MIN_SESSION_SECRET_LENGTH) {
    throw new MarketplaceKitError('ERR_CONFIG', `${name} must be at least ${MIN_SESSION_SECRET_LENGTH} characters: ${MAKE_SESSION_SECRET}`);
  }
  const characters = distinctCharacters(secret, MIN_SESSION_SECRET_CHARACTERS);
  if (characters < MIN_SESSION_SECRET_CHARACTERS) {
    throw new MarketplaceKitError(
      'ERR_CONFIG',
      `${name} has only ${characters} different character${characters === 1 ? '' : 's'}: it looks typed by hand, not random; ${MAKE_SESSION_SECRET}`,
    );
  }
}

/** How many different characters `text` has, counted up to `enough` (a random secret gets there within a few). */
function distinctCharacters(text: string, enough: number): number {
  const seen: string[] = [];
  for (const character of text) {
    if (!seen.includes(character) && seen.push(character) >= enough) break;
  }
  return seen.length;
}

/** The secret and the audience (the app's Client ID) of a session token function, or ERR_CONFIG. */
function checkKeys(options: { secret: unknown; audience: unknown }, caller: string): void {
  assertSessionSecret(options.secret, `${caller}: secret`);
  if (typeof options.audience !== 'string' || options.audience === '') {
    throw new MarketplaceKitError('ERR_CONFIG', `${caller}: audience must be the app's Client ID, got ${shownValue(options.audience)}`);
  }
}

export function sessionError(code: ErrorCode, message: string, cause?: unknown): SessionError {
  return new SessionError(code, message, { status: 401, cause });
}
