import { MarketplaceKitError } from '../../shared/errors.js';

/**
 * A numeric option: `value`, or `fallback` when it is not given. Anything but a finite number of
 * at least `min` is `ERR_CONFIG` (status 500), at once: a `NaN` from `Number(process.env.X)` would
 * otherwise turn a comparison off without a word (a tolerance that accepts every timestamp, a
 * retry limit that never stops).
 */
export function numberOption(value: unknown, fallback: number, name: string, min = 0): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new MarketplaceKitError('ERR_CONFIG', `${name} must be a finite number of at least ${min}, got ${String(value)}`, { status: 500 });
  }
  return value;
}
