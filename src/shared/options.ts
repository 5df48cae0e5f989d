import { DEV } from './dev.js';
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
    const kind = () => (unlimited ? 'a number (or Infinity)' : 'a finite number');
    const range = () => (max === Infinity ? `of at least ${min}` : `from ${min} to ${max}`);
    throw new MarketplaceKitError('ERR_CONFIG', DEV ? `${name} must be ${kind()} ${range()}, got ${shownValue(value)}` : '');
  }
  return value;
}

/** A refused option's value for its message. A string is quoted: `got "50000"` says what `got 50000` would hide (an unparsed process.env value). */
export function shownValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * A function option (a callback, `fetch`), or `undefined`: anything else is `ERR_CONFIG` at once,
 * not a TypeError at its first call, which would read as the failure of whatever called it
 * (`onError: console` would silence every report).
 */
export function functionOption<T>(value: T, name: string): T {
  if (value !== undefined && typeof value !== 'function') throw new MarketplaceKitError('ERR_CONFIG', `${name} must be a function, got ${describeValue(value)}`);
  return value;
}

/** An object option whose `methods` are called (a store, a clock), or `undefined`; anything else is `ERR_CONFIG`, as with `functionOption`. */
export function methodsOption<T>(value: T, name: string, methods: readonly string[]): T {
  if (value === undefined) return value;
  const wanted = `an object with the methods ${methods.join(' and ')}`;
  if (typeof value !== 'object' || value === null) throw new MarketplaceKitError('ERR_CONFIG', `${name} must be ${wanted}, got ${describeValue(value)}`);
  const missing = methods.filter((method) => typeof (value as Record<string, unknown>)[method] !== 'function');
  if (missing.length > 0) throw new MarketplaceKitError('ERR_CONFIG', `${name} must be ${wanted}: ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} missing`);
  return value;
}

/** What a value that was refused is, for a message: never its content (it may be a credential). */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (value === '') return 'an empty string';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
