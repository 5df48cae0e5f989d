/**
 * Context token verification (docs/decisions.md#embed-launch, docs/decisions.md#session-exchange): the
 * marketplace signs an embed context token with the app's Client Secret; the backend verifies it
 * with every check pinned: jose's checks (in `lib/jws.ts`, on node:crypto, see docs/server.md
 * "Speed"), then the claims' schema.
 */
import { compile } from 'zod/mini';
import { MarketplaceKitError, type ErrorCode } from '../shared/errors.js';
import { CONTEXT_TOKEN_MAX_AGE_SECONDS, CONTEXT_TOKEN_TYPE, ContextTokenClaims, describeFailure } from '../shared/schemas.js';
import { hmacKey } from './lib/hmac-key.js';
import { JwtError, verifyJwt } from './lib/jws.js';
import { optionsObject } from './lib/options-object.js';
import { nowOption } from './lib/time-options.js';
import { trimSlash } from './oauth.js';
import { claimAnswer, createMemoryReplayStore, type ReplayStore } from './replay-store.js';

/** Clock skew accepted between the marketplace and this server, in seconds (docs/decisions.md#session-exchange). */
export const CLOCK_TOLERANCE_SECONDS = 10;

/** A context token that must not be accepted. `status` is 401. */
export class ContextTokenError extends MarketplaceKitError {
  override name = 'ContextTokenError';
}

/** Options of `verifyContextToken`. */
export interface VerifyContextTokenOptions {
  /** The app's Client ID: the expected `aud`. */
  clientId: string;
  /** The app's Client Secret: the HS256 key. */
  clientSecret: string;
  /** `{site_url}` of the marketplace: the expected `iss` (a trailing slash is ignored). */
  issuer: string;
  /** When given, the `host` claim must equal it (the `mp_host` the browser saw). */
  host?: string | undefined;
  /** Clock in ms since the epoch, or a Date (tests). */
  now?: number | Date | undefined;
  /** Where `jti`s are claimed (keys start with `jti:`). Default: one process-wide in-memory store. */
  replayStore?: ReplayStore | undefined;
}

const defaultReplayStore = createMemoryReplayStore();

/**
 * Verifies an embed context token and returns its claims: HS256 only, `typ` mp-context+jwt,
 * issuer, audience = Client ID, at most 300 s old (10 s clock tolerance), `exp` ≤ `iat` + 300,
 * claims as in docs/decisions.md#embed-launch, `host` when asked, and a `jti` never seen before (checked last, so a
 * rejected token is not recorded).
 *
 * @example
 * const claims = await verifyContextToken(body.context, { clientId, clientSecret, issuer: siteUrl, host: body.host });
 * console.log(claims.sub, claims.app_id, claims.email);
 */
export async function verifyContextToken(token: string, options: VerifyContextTokenOptions): Promise<ContextTokenClaims> {
  optionsObject(options, 'verifyContextToken');
  if (!options.clientSecret || !options.clientId || !options.issuer) {
    throw new MarketplaceKitError('ERR_CONFIG', 'verifyContextToken needs clientId, clientSecret and issuer');
  }
  if (typeof token !== 'string' || token === '') fail('ERR_CONTEXT_TOKEN_MALFORMED', 'The context token is missing');
  const now = nowOption(options.now, 'verifyContextToken: now');

  let payload: unknown;
  try {
    ({ claims: payload } = verifyJwt(token, hmacKey(options.clientSecret).node, {
      typ: CONTEXT_TOKEN_TYPE,
      issuer: trimSlash(options.issuer),
      audience: options.clientId,
      requiredClaims: REQUIRED_CLAIMS,
      maxTokenAge: CONTEXT_TOKEN_MAX_AGE_SECONDS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      now,
    }));
  } catch (error) {
    throw failure(error);
  }

  const parsed = (compiledClaims ??= compile(ContextTokenClaims)).safeParse(payload);
  if (!parsed.success) fail('ERR_CONTEXT_TOKEN_CLAIM', describeFailure('context token claims', parsed.error));
  const claims = parsed.data;
  if (claims.exp > claims.iat + CONTEXT_TOKEN_MAX_AGE_SECONDS) {
    fail('ERR_CONTEXT_TOKEN_CLAIM', `The context token lives longer than ${CONTEXT_TOKEN_MAX_AGE_SECONDS} s (exp - iat)`);
  }
  if (options.host !== undefined && claims.host !== options.host) {
    fail('ERR_CONTEXT_TOKEN_HOST', 'The context token was issued for another dashboard origin than mp_host');
  }
  const replayStore = options.replayStore ?? defaultReplayStore;
  const expiresAt = (claims.exp + CLOCK_TOLERANCE_SECONDS) * 1000;
  // Issued at `iat`: a shared store that lost its data refuses a token issued before the loss.
  const first = claimAnswer(await replayStore.claim(contextTokenKey(claims), expiresAt, now, claims.iat * 1000));
  if (!first) fail('ERR_CONTEXT_TOKEN_REPLAYED', 'This context token was already used; ask the dashboard for a fresh one');
  return claims;
}

/**
 * The replay-store key of a context token's `jti`. The `jti:` prefix keeps these apart from
 * webhook keys in a shared store.
 */
export function contextTokenKey(claims: Pick<ContextTokenClaims, 'iss' | 'aud' | 'jti'>): string {
  return `jti:${claims.iss} ${claims.aud} ${claims.jti}`;
}

function fail(code: ErrorCode, message: string): never {
  throw new ContextTokenError(code, message, { status: 401 });
}

const REQUIRED_CLAIMS = ['exp', 'iat', 'jti', 'sub'];
/** The claims' schema compiled by zod on first use: same results and messages, a fraction of the time. */
let compiledClaims: typeof ContextTokenClaims | undefined;

/** A failed verification, under the kit's stable codes. */
function failure(error: unknown): ContextTokenError {
  if (!(error instanceof JwtError)) throw error;
  const make = (code: ErrorCode, message: string) => new ContextTokenError(code, `${message}: ${error.message}`, { status: 401, cause: error });
  switch (error.kind) {
    case 'type':
      return make('ERR_CONTEXT_TOKEN_TYPE', `The token is not a context token (typ must be ${CONTEXT_TOKEN_TYPE})`);
    case 'claim':
      return make('ERR_CONTEXT_TOKEN_CLAIM', `The context token claim "${error.claim}" is invalid`);
    case 'expired':
      return make('ERR_CONTEXT_TOKEN_EXPIRED', 'The context token has expired or is too old');
    case 'algorithm':
      return make('ERR_CONTEXT_TOKEN_ALGORITHM', 'The context token must be signed with HS256');
    case 'signature':
      return make('ERR_CONTEXT_TOKEN_SIGNATURE', "The context token signature is invalid (is clientSecret this app's Client Secret from the marketplace?)");
    case 'malformed':
      return make('ERR_CONTEXT_TOKEN_MALFORMED', 'The context token is malformed');
  }
}
