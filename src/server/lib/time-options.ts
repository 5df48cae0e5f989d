import { MarketplaceKitError } from '../../shared/errors.js';
import { shownValue } from '../../shared/options.js';

// Server-only, so that the browser runtime does not carry them.

/**
 * A lifetime option in whole seconds from 1 to `max`, and `max` when it is not given. Anything
 * else is `ERR_CONFIG`, never clamped or rounded: a token's `exp` is whole seconds, so 0.5 would
 * mint a token expired at birth, and a test that asks for 600 s must not get 300 s without a word.
 */
export function wholeSecondsOption(value: unknown, name: string, max: number): number {
  if (value === undefined) return max;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max) return value;
  throw new MarketplaceKitError('ERR_CONFIG', `${name} must be a whole number of seconds from 1 to ${max}, got ${shownValue(value)}`);
}

/** The latest time a `Date` can hold, in ms since the epoch. */
const LATEST_DATE_MS = 8.64e15;

/**
 * A `now` option (the clock of one call, for tests): milliseconds since the epoch or a `Date`, and
 * the current time when it is not given. Anything else is `ERR_CONFIG`, a mistake of the caller's:
 * `NaN` (a `Number()` of an unset variable) would compare false with every webhook timestamp and
 * accept them all, and jose refuses a time no `Date` holds as if the token were at fault.
 */
export function nowOption(value: unknown, name: string): number {
  if (value === undefined) return Date.now();
  const time = value instanceof Date ? value.getTime() : value;
  if (typeof time === 'number' && time >= 0 && time <= LATEST_DATE_MS) return time;
  throw new MarketplaceKitError('ERR_CONFIG', `${name} must be a time in ms since the epoch or a Date, got ${shownValue(value)}`);
}
