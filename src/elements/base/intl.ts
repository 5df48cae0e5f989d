/**
 * `Intl` formatters built once per page for each locale and options, not once per element render:
 * building one costs far more than using it, and a page of a thousand gates formats the same
 * figures in the same locale a thousand times (docs/benchmarks.md, "Elements").
 */

const built = new Map<string, unknown>();

/**
 * An `Intl` formatter (`Intl.NumberFormat`, `Intl.PluralRules`, …) for `locale` and `options`,
 * shared by every element. A locale `Intl` refuses (`not a locale!`) gets the browser's.
 *
 * @example
 * formatter(Intl.NumberFormat, 'de-DE').format(1200); // '1.200'
 * formatter(Intl.ListFormat, 'fr', { type: 'disjunction' }).format(['a', 'b']); // 'a ou b'
 */
export function formatter<T, O>(Kind: new (locale?: string, options?: O) => T, locale: string | undefined, options?: O): T {
  const key = `${Kind.name} ${locale} ${options ? JSON.stringify(options) : ''}`;
  let found = built.get(key) as T | undefined;
  if (!found) {
    try {
      found = new Kind(locale, options);
    } catch {
      found = new Kind(undefined, options);
    }
    built.set(key, found);
  }
  return found;
}
