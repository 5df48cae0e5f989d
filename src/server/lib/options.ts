import { MarketplaceKitError } from '../../shared/errors.js';

/**
 * A numeric option: `value`, or `fallback` when it is not given. Anything but a number of at least
 * `min` is `ERR_CONFIG` (status 500), at once: a `NaN` from `Number(process.env.X)` would otherwise
 * turn a comparison off without a word (a tolerance that accepts every timestamp, a retry limit
 * that never stops). `Infinity` counts only where it means "no limit" (`unlimited`).
 */
export function numberOption(value: unknown, fallback: number, name: string, { min = 0, unlimited = false } = {}): number {
  const valid = typeof value === 'number' && value >= min && (Number.isFinite(value) || (unlimited && value === Infinity));
  if (value === undefined) return fallback;
  if (!valid) {
    const kind = unlimited ? 'a number (or Infinity)' : 'a finite number';
    throw new MarketplaceKitError('ERR_CONFIG', `${name} must be ${kind} of at least ${min}, got ${String(value)}`, { status: 500 });
  }
  return value;
}
