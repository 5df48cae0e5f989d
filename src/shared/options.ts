import { MarketplaceKitError } from './errors.js';

/** The longest delay `setTimeout` takes (about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A numeric option: `value`, or `fallback` when it is not given. Anything but a number from `min`
 * to `max` is `ERR_CONFIG` (status 500, as every configuration error), at once: a `NaN` from `Number(process.env.X)` would otherwise turn a
 * comparison off without a word (a tolerance that accepts every timestamp, a retry limit that
 * never stops), and a timer past `MAX_TIMER_MS` fires at once. `Infinity` counts only where it
 * means "no limit" (`unlimited`); `integer` asks for a whole number (seconds in a token's `exp`).
 */
export function numberOption(value: unknown, fallback: number, name: string, { min = 0, max = Infinity, unlimited = false, integer = false } = {}): number {
  if (value === undefined) return fallback;
  const number = typeof value === 'number' && Number.isFinite(value) && (!integer || Number.isInteger(value));
  const valid = (unlimited && value === Infinity) || (number && value >= min && value <= max);
  if (!valid) {
    const kind = integer ? 'a whole number' : unlimited ? 'a number (or Infinity)' : 'a finite number';
    const range = max === Infinity ? `of at least ${min}` : `from ${min} to ${max}`;
    // A string is quoted: `got "600"` says what `got 600` would hide.
    throw new MarketplaceKitError('ERR_CONFIG', `${name} must be ${kind} ${range}, got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`);
  }
  return value;
}
