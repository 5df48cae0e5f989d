import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets in constant time. Both sides are hashed first, so neither the time taken
 * nor an early length check tells an attacker how long the expected secret is.
 */
export function safeEqual(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
}
