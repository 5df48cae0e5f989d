/**
 * Compact JWS with HS256 only, on node:crypto, for the tokens on the server's hot paths: context
 * tokens (verified at every launch) and the app's own session tokens (signed at every launch,
 * verified at every paid request). jose signs and verifies the same tokens through WebCrypto,
 * whose every call is a trip to a worker thread; a synchronous HMAC with a key imported once is
 * several times faster (docs/server.md, "Speed").
 *
 * The checks are jose's `jwtVerify` checks, in jose's order and with jose's messages, and more:
 * `crit` is refused outright (no extension is supported), the segments must be strict base64url,
 * and the signature must be the one canonical encoding of the HMAC. test/node/server-jws.test.ts
 * runs both on the same tokens: what this accepts, jose accepts.
 */
import { isUtf8 } from 'node:buffer';
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

/** Why a token failed: `malformed`, `algorithm` and `signature` from the JWS; `type`, `claim` and `expired` from the claims. */
export type JwtFailure = 'malformed' | 'algorithm' | 'signature' | 'type' | 'claim' | 'expired';

export class JwtError extends Error {
  override name = 'JwtError';
  constructor(
    readonly kind: JwtFailure,
    message: string,
    /** The claim at fault, for `type` (`typ`), `claim` and `expired`. */
    readonly claim?: string,
  ) {
    super(message);
  }
}

export type JsonObject = Record<string, unknown>;

/** What a verified token's claims must meet, as jose's `jwtVerify` options. */
export interface ClaimChecks {
  /** The `typ` header, compared as jose does (case-insensitive, `application/` implied). */
  typ: string;
  issuer?: string;
  audience: string;
  requiredClaims: readonly string[];
  /** Seconds. */
  maxTokenAge?: number;
  /** Seconds. */
  clockTolerance?: number;
  /** Milliseconds since the epoch. */
  now: number;
}

/** Strict base64url, with no padding and no length that no byte count encodes to. */
const BASE64URL = /^[\w-]*$/;

/**
 * The base64url header segment of `header`, for `signHs256`; compute it once per kind of token.
 *
 * @example
 * const SESSION_HEADER = encodeHeader({ alg: 'HS256', typ: 'mp-session+jwt' });
 */
export function encodeHeader(header: { alg: 'HS256'; typ: string }): string {
  return Buffer.from(JSON.stringify(header)).toString('base64url');
}

/** Signs `claims` as a compact JWS under a header from `encodeHeader`. */
export function signHs256(encodedHeader: string, claims: JsonObject, key: KeyObject): string {
  const input = `${encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

/** Verifies a compact HS256 JWS and its claims; its header and claims, or a `JwtError`. */
export function verifyJwt(token: string, key: KeyObject, checks: ClaimChecks): { header: Readonly<JsonObject>; claims: JsonObject } {
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  if (second < 0 || token.indexOf('.', second + 1) >= 0) throw new JwtError('malformed', 'Invalid Compact JWS');
  const segment = token.slice(0, first);
  const known = headers.get(segment);
  const header = known ?? jsonSegment(token, 0, first, 'JWS Protected Header is invalid');
  // jose accepts `crit: ["b64"]`; no token of the kit's has any extension.
  if (header.crit !== undefined) throw new JwtError('malformed', '"crit" (Critical) Header Parameter is not supported');
  const { alg } = header;
  if (typeof alg !== 'string' || alg === '') throw new JwtError('malformed', 'JWS "alg" (Algorithm) Header Parameter missing or invalid');
  if (alg !== 'HS256') throw new JwtError('algorithm', '"alg" (Algorithm) Header Parameter value not allowed');
  const signature = token.slice(second + 1);
  if (signature.length % 4 === 1 || !BASE64URL.test(signature)) throw new JwtError('malformed', 'Failed to base64url decode the signature');
  const expected = createHmac('sha256', key).update(token.slice(0, second)).digest('base64url');
  // Compared as the canonical text of the HMAC: same length first (that says nothing secret), then in constant time.
  if (signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature, 'latin1'), Buffer.from(expected, 'latin1'))) {
    throw new JwtError('signature', 'signature verification failed');
  }
  if (known === undefined) remember(segment, header);
  const claims = jsonSegment(token, first + 1, second, 'JWT Claims Set must be a top-level JSON object');
  checkClaims(header, claims, checks);
  return { header, claims };
}

/**
 * Protected headers of tokens whose signature held: a kit's tokens of one kind all carry the same
 * one, so a verification decodes only its claims (docs/server.md, "Speed"). A handful of kinds at
 * most, so the cache is simply emptied when it fills; no forged header gets in, and a key is a copy
 * of the header's text, not a slice that would keep the whole token in memory.
 */
const headers = new Map<string, Readonly<JsonObject>>();
const MAX_HEADERS = 16;
const MAX_HEADER_LENGTH = 256;

function remember(segment: string, header: JsonObject): void {
  if (segment.length > MAX_HEADER_LENGTH) return;
  if (headers.size >= MAX_HEADERS) headers.clear();
  headers.set(Buffer.from(segment, 'latin1').toString('latin1'), Object.freeze(header));
}

/** The JSON object that `token.slice(start, end)` encodes, or a `malformed` JwtError with `message`. */
function jsonSegment(token: string, start: number, end: number, message: string): JsonObject {
  const segment = token.slice(start, end);
  const bytes = Buffer.from(segment, 'base64url');
  // Node's decoder skips what is not base64url: only the canonical encoding of the bytes is taken.
  if (bytes.length === 0 || bytes.toString('base64url') !== segment) throw new JwtError('malformed', message);
  const text = bytes.toString('utf8');
  // The decoder writes U+FFFD for every ill-formed sequence: only then is the strict check needed.
  if (text.includes('\uFFFD') && !isUtf8(bytes)) throw new JwtError('malformed', message);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new JwtError('malformed', message);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new JwtError('malformed', message);
  return value as JsonObject;
}

const normalizeTyp = (value: string) => (value.includes('/') ? value.toLowerCase() : `application/${value.toLowerCase()}`);

/** jose's `validateClaimsSet`, for the options the kit uses, in its order. */
function checkClaims(header: JsonObject, claims: JsonObject, checks: ClaimChecks): void {
  const { typ } = header;
  if (typeof typ !== 'string' || normalizeTyp(typ) !== normalizeTyp(checks.typ)) throw new JwtError('type', 'unexpected "typ" JWT header value', 'typ');
  const required = [...checks.requiredClaims];
  if (checks.maxTokenAge !== undefined) required.push('iat');
  required.push('aud');
  if (checks.issuer !== undefined) required.push('iss');
  for (const claim of new Set(required.reverse())) {
    if (!Object.hasOwn(claims, claim)) throw new JwtError('claim', `missing required "${claim}" claim`, claim);
  }
  if (checks.issuer !== undefined && claims.iss !== checks.issuer) throw new JwtError('claim', 'unexpected "iss" claim value', 'iss');
  const { aud } = claims;
  if (!(aud === checks.audience || (Array.isArray(aud) && aud.includes(checks.audience)))) throw new JwtError('claim', 'unexpected "aud" claim value', 'aud');
  const tolerance = checks.clockTolerance ?? 0;
  const now = Math.floor(checks.now / 1000);
  const iat = numericDate(claims, 'iat', checks.maxTokenAge !== undefined);
  const nbf = numericDate(claims, 'nbf', false);
  if (nbf !== undefined && nbf > now + tolerance) throw new JwtError('claim', '"nbf" claim timestamp check failed', 'nbf');
  const exp = numericDate(claims, 'exp', false);
  if (exp !== undefined && exp <= now - tolerance) throw new JwtError('expired', '"exp" claim timestamp check failed', 'exp');
  if (checks.maxTokenAge !== undefined) {
    const age = now - iat!;
    if (age - tolerance > checks.maxTokenAge) throw new JwtError('expired', '"iat" claim timestamp check failed (too far in the past)', 'iat');
    if (age < -tolerance) throw new JwtError('claim', '"iat" claim timestamp check failed (it should be in the past)', 'iat');
  }
}

function numericDate(claims: JsonObject, claim: string, required: boolean): number | undefined {
  const value = claims[claim];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'number') throw new JwtError('claim', `"${claim}" claim must be a number`, claim);
  return value;
}
