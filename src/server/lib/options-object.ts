import { MarketplaceKitError } from '../../shared/errors.js';

/**
 * The options object a function was given, or `ERR_CONFIG`: called from plain JavaScript without
 * one, it would otherwise fail with a TypeError on its first property read.
 */
export function optionsObject<T>(value: T, name: string): NonNullable<T> {
  if (typeof value !== 'object' || value === null) throw new MarketplaceKitError('ERR_CONFIG', `${name} needs its options object`);
  return value;
}
