/**
 * Exact origins: the one rule behind every origin list of the kit (the runtime's `hostOrigins` and
 * `bearerOrigins`, the host's `appOrigin`, the backend's `hostOrigins` and `publicOrigin`), so one
 * list passes all of them or none. An origin is written the way `URL#origin` writes it:
 * `https://app.example`, lower case, no path, no trailing slash.
 */
import { DEV } from './dev.js';
import { MarketplaceKitError } from './errors.js';

/** `value` when it is exactly an http(s) origin; null otherwise. */
export function exactOrigin(value: unknown): string | null {
  if (typeof value !== 'string' || !/^https?:\/\//.test(value)) return null;
  try {
    return new URL(value).origin === value ? value : null;
  } catch {
    return null;
  }
}

/** `value` when it is exactly an http(s) origin; throws `ERR_CONFIG` naming `what` otherwise. */
export function assertOrigin(value: unknown, what: string): string {
  const origin = exactOrigin(value);
  if (origin === null) {
    throw new MarketplaceKitError('ERR_CONFIG', DEV ? `${what} must be an exact http(s) origin such as https://app.example, got "${String(value)}"` : '');
  }
  return origin;
}
