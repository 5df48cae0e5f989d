/**
 * What the refresh single flight shares (docs/redis.md "No secret in clear"): under a digest of
 * the refresh token, the outcome of its refresh (the token set it returned, or how it failed),
 * sealed (AES-256-GCM) with a key derived from that refresh token. Only a caller holding the
 * refresh token finds the entry and can read it; a store (or its backups) alone holds neither
 * tokens nor the means to read them, nor the marketplace's words about a failure.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { isKitError, type ErrorCode } from '../../shared/errors.js';
import { MarketplaceApiError } from '../api-error.js';
import type { TokenSet } from '../oauth.js';

/** How a refresh ended: its token set, or its failure as another caller rethrows it. */
export type RefreshOutcome = { tokens: TokenSet } | { failure: SharedFailure };

/** A failed refresh, as much of its error as another caller needs to throw the same. */
interface SharedFailure {
  code: ErrorCode;
  message: string;
  status?: number | undefined;
  upstreamCode?: string | undefined;
  /** When the marketplace said to try again (epoch ms): a later reader is told what is left of the wait. */
  retryAt?: number | undefined;
}

/** The store key of a refresh token: a digest that reveals nothing of it. */
export function refreshKey(refreshToken: string): string {
  return createHash('sha256').update(`marketplace-app-kit refresh key\n${refreshToken}`).digest('base64url');
}

function sealKey(refreshToken: string): Buffer {
  return Buffer.from(hkdfSync('sha256', refreshToken, 'marketplace-app-kit', 'refresh result seal', 32));
}

/** The outcome of a refresh that failed with `error` at `now`. */
export function failedRefresh(error: unknown, now: number): RefreshOutcome {
  if (!isKitError(error)) return { failure: { code: 'ERR_INTERNAL', message: 'The refresh failed with an unexpected error' } };
  const { code, message, status, upstreamCode, retryAfterMs } = error;
  return { failure: { code, message, status, upstreamCode, retryAt: retryAfterMs === undefined ? undefined : now + retryAfterMs } };
}

/**
 * The error a caller throws at `now` for a refresh that another caller saw fail: the same code,
 * status and message, and what is left of the wait the marketplace asked for.
 */
export function refreshError({ code, message, status, upstreamCode, retryAt }: SharedFailure, now: number): MarketplaceApiError {
  return new MarketplaceApiError(code, 'token', message, { status, upstreamCode, retryAfterMs: retryAt === undefined ? undefined : Math.max(0, retryAt - now) });
}

/** `outcome` sealed for whoever holds `refreshToken`: base64url of IV, tag and ciphertext. */
export function sealOutcome(outcome: RefreshOutcome, refreshToken: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(refreshToken), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(outcome), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The outcome `sealOutcome` sealed, or null when `sealed` was not sealed for this refresh token (or was altered). */
export function openOutcome(sealed: string, refreshToken: string): RefreshOutcome | null {
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', sealKey(refreshToken), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const text = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as RefreshOutcome;
  } catch {
    return null;
  }
}
