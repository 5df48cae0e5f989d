import { MarketplaceKitError } from './errors.js';

/** The longest delay `setTimeout` takes (about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A numeric option: `value`, or `fallback` when it is not given. Anything but a number from `min`
 * to `max` is `ERR_CONFIG` (status 500, as every configuration error), at once: a `NaN` from `Number(process.env.X)` would otherwise turn a
 * comparison off without a word (a tolerance that accepts every timestamp, a retry limit that
 * never stops), and a timer past `MAX_TIMER_MS` fires at once. `Infinity` counts only where it
 * means "no limit" (`unlimited`).
 */
export function numberOption(value: unknown, fallback: number, name: string, { min = 0, max = Infinity, unlimited = false } = {}): number {
  if (value === undefined) return fallback;
  const valid = (unlimited && value === Infinity) || (typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max);
  if (!valid) {
    const kind = unlimited ? 'a number (or Infinity)' : 'a finite number';
    const range = max === Infinity ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new MarketplaceKitError('ERR_CONFIG', `${name} must be ${kind} ${range}, got ${shownValue(value)}`);
  }
  return value;
}

/** A refused option's value for its message. A string is quoted: `got "50000"` says what `got 50000` would hide (an unparsed process.env value). */
export function shownValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
