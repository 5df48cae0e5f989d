/**
 * What the refresh single flight shares (docs/redis.md "No secret in clear"): under a digest of
 * the refresh token, the token set its refresh returned, sealed (AES-256-GCM) with a key derived
 * from that refresh token. Only a caller holding the refresh token finds the entry and can read
 * it; a store (or its backups) alone holds neither tokens nor the means to read them.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { TokenSet } from '../oauth.js';

/** The store key of a refresh token: a digest that reveals nothing of it. */
export function refreshKey(refreshToken: string): string {
  return createHash('sha256').update(`marketplace-app-kit refresh key\n${refreshToken}`).digest('base64url');
}

function sealKey(refreshToken: string): Buffer {
  return Buffer.from(hkdfSync('sha256', refreshToken, 'marketplace-app-kit', 'refresh result seal', 32));
}

/** `tokens` sealed for whoever holds `refreshToken`: base64url of IV, tag and ciphertext. */
export function sealTokens(tokens: TokenSet, refreshToken: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(refreshToken), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(tokens), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The token set `sealTokens` sealed, or null when `sealed` was not sealed for this refresh token (or was altered). */
export function unsealTokens(sealed: string, refreshToken: string): TokenSet | null {
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', sealKey(refreshToken), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const text = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as TokenSet;
  } catch {
    return null;
  }
}
