import { MarketplaceKitError } from '../../shared/errors.js';
import { shownValue } from '../../shared/options.js';

/**
 * A lifetime option in whole seconds from 1 to `max`, and `max` when it is not given. Anything
 * else is `ERR_CONFIG`, never clamped or rounded: a token's `exp` is whole seconds, so 0.5 would
 * mint a token expired at birth, and a test that asks for 600 s must not get 300 s without a word.
 * (Server-only, so that the browser runtime does not carry it.)
 */
export function wholeSecondsOption(value: unknown, name: string, max: number): number {
  if (value === undefined) return max;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max) return value;
  throw new MarketplaceKitError('ERR_CONFIG', `${name} must be a whole number of seconds from 1 to ${max}, got ${shownValue(value)}`);
}
