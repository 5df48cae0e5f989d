/**
 * The elements' texts in the user's language (docs/guides/locales.md): the locale packs that ship
 * with the kit, each loaded the first time an element needs it (English is built into the
 * classes' `defaultStrings`), the packs and single texts an app registers, and the lookup, which
 * falls back by language (`de-AT` → `de`) and then to English.
 */
import { MarketplaceKitError } from '../../shared/errors.js';
import { loaders } from '../locales/loaders.js';
import type { BaseStrings } from './marketplace-element.js';

/**
 * A text with one form per plural category of its language (`Intl.PluralRules`: `zero`, `one`,
 * `two`, `few`, `many`, `other`); `other` is required and stands in for any form left out.
 *
 * @example
 * const overQuotaText: PluralText = { one: 'You have used {used} of {limit} API call.', other: 'You have used {used} of {limit} API calls.' };
 */
export type PluralText = { readonly [C in Intl.LDMLPluralRule]?: string } & { readonly other: string };

/** A text of an element: one string, or plural forms where the element counts something. */
export type ElementText = string | PluralText;

/**
 * The texts of every element, by section: `common` (what every element has) and one section per
 * tag (`'mp-gate'`: `GateStrings`). Your own elements on `MarketplaceElement` add theirs:
 *
 * @example
 * declare module 'marketplace-app-kit/elements' {
 *   interface ElementTexts { 'mp-trial-banner': TrialStrings }
 * }
 */
export interface ElementTexts {
  common: BaseStrings;
}

/** Texts for one locale, any subset of them: a whole pack, or the one text an app changes. */
export type LocaleTexts = { [S in keyof ElementTexts]?: Partial<ElementTexts[S]> };

/** Loads a pack on demand, usually `() => import('./fi.js')` (a module whose default export is the pack). */
export type LocaleLoader = () => Promise<LocaleTexts | { default: LocaleTexts }>;

type Layer = Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>>;

/** Texts by canonical tag, first the app's (the last registered first), then the built-in pack. */
const packs = new Map<string, Layer[]>();
/** Loaders not run yet, by tag. */
const queued = new Map<string, LocaleLoader[]>();
/** Loads under way, by tag. */
const loading = new Map<string, Promise<void>>();
/** Every tag with texts, loaded or not; `en` always (the classes' `defaultStrings`). */
const known = new Set<string>(['en']);
const chains = new Map<string, readonly string[]>();
const directions = new Map<string, 'ltr' | 'rtl'>();
const listeners = new Set<() => void>();

for (const [tag, load] of Object.entries(loaders)) {
  known.add(tag);
  queued.set(tag, [load as LocaleLoader]);
}

/**
 * Adds texts for `locale`: a pack for a language the kit does not ship, or texts that replace
 * some of a shipped pack's (English included) in every element at once. Texts registered later
 * win; an element's `strings` and `label` still win over all. Elements on the page show them at
 * once (a loader runs when an element first needs `locale`).
 *
 * @throws {MarketplaceKitError} `ERR_CONFIG` when `locale` is no BCP 47 language tag, or `texts`
 * neither an object nor a function.
 *
 * @example
 * registerLocale('fi', () => import('./locales/fi.js'));            // a language of your own, on demand
 * registerLocale('en', { 'mp-gate': { upgrade: 'See plans' } });  // one English text, every gate
 */
export function registerLocale(locale: string, texts: LocaleTexts | LocaleLoader): void {
  const tag = canonical(locale);
  if (!tag) throw new MarketplaceKitError('ERR_CONFIG', `registerLocale: ${String(locale).slice(0, 40)} is no language tag`);
  known.add(tag);
  chains.clear();
  if (typeof texts === 'function') queued.set(tag, [...(queued.get(tag) ?? []), texts]);
  else add(tag, texts as Layer, false);
  changed();
}

/**
 * Loads the texts `locale` needs (its pack and the packs it falls back to), if they are not
 * loaded yet. Elements do this themselves; await it to have a locale ready before it is used.
 * A pack that fails to load is reported on the console and leaves the fallback's texts.
 *
 * @example
 * await loadLocale('de-AT'); // the built-in de pack
 */
export function loadLocale(locale: string): Promise<void> {
  return textsLoading(locale) ?? Promise.resolve();
}

/** The loads `locale` still waits for, started if need be; undefined when its texts are all here. */
export function textsLoading(locale: string): Promise<void> | undefined {
  let wait: Promise<unknown> | undefined;
  for (const tag of localeChain(locale)) {
    const load = start(tag);
    if (load) wait = wait ? Promise.all([wait, load]) : load;
  }
  return wait as Promise<void> | undefined;
}

function start(tag: string): Promise<void> | undefined {
  const queue = queued.get(tag);
  if (queue) {
    queued.delete(tag);
    const running = Promise.all([
      loading.get(tag),
      ...queue.map((load) =>
        Promise.resolve()
          .then(load)
          // A built-in pack goes under what the app registered for its locale.
          .then((module) => add(tag, (module && 'default' in module ? module.default : module) as Layer, load === (loaders as Record<string, unknown>)[tag]))
          .catch((error: unknown) => console.warn(`[marketplace-app-kit] ${tag} texts not loaded (docs/guides/locales.md):`, error)),
      ),
    ]).then(() => {
      loading.delete(tag);
      changed();
    });
    loading.set(tag, running);
  }
  return loading.get(tag);
}

function add(tag: string, texts: Layer, builtIn: boolean): void {
  if (!texts || typeof texts !== 'object') throw new MarketplaceKitError('ERR_CONFIG', `The ${tag} texts are no object of texts`);
  const layers = packs.get(tag) ?? [];
  if (builtIn) layers.push(texts);
  else layers.unshift(texts);
  packs.set(tag, layers);
}

/** Calls `listener` when texts were added (a pack loaded, an app registered some); returns a stop function. */
export function onTextsChanged(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function changed(): void {
  for (const listener of listeners) listener();
}

/** `locale` as `Intl` spells it, or '' when it is no language tag. */
function canonical(locale: string): string {
  try {
    return Intl.getCanonicalLocales(locale)[0] ?? '';
  } catch {
    return '';
  }
}

function likely(tag: string): Intl.Locale {
  return new Intl.Locale(tag).maximize();
}

/**
 * The tags whose texts `locale` reads, best first, ending with `en`: the tag itself, its language
 * (`de-AT` → `de`), and only when neither has texts, another region of the same language and
 * script (`pt-PT` → `pt-BR`, `zh-HK` → `zh-TW`, never `zh-TW` → `zh-CN`).
 *
 * @example
 * localeChain('de-AT'); // ['de', 'en']
 */
export function localeChain(locale: string): readonly string[] {
  let chain = chains.get(locale);
  if (chain) return chain;
  const tag = canonical(locale) || 'en';
  const wanted = likely(tag);
  const near = [tag, wanted.language].filter((candidate) => known.has(candidate));
  if (near.length === 0) {
    for (const candidate of known) {
      const other = likely(candidate);
      if (other.language === wanted.language && other.script === wanted.script) near.push(candidate);
    }
  }
  chain = [...new Set([...near, 'en'])];
  chains.set(locale, chain);
  return chain;
}

/** The language of the texts `chain` gives now: its first tag whose texts are loaded, else `en`. */
export function textLanguage(chain: readonly string[]): string {
  return chain.find((tag) => packs.has(tag)) ?? 'en';
}

/**
 * The candidates for text `key` of `section`, best first: in each locale of `chain`, each layer's
 * section, then its `common`. Not all are texts: the caller takes the first that is.
 */
export function* candidates(chain: readonly string[], section: string, key: string): Generator<unknown> {
  for (const tag of chain) {
    for (const layer of packs.get(tag) ?? []) {
      yield read(layer[section], key);
      yield read(layer['common'], key);
    }
  }
}

/**
 * `object[key]`, or undefined when `object` is no object. Inherited keys count (a pack may be a
 * Proxy, or inherit from another); what objects inherit from `Object.prototype` are functions, or
 * the prototype itself, which no caller takes for a text.
 */
export function read(object: unknown, key: string): unknown {
  return object && typeof object === 'object' ? (object as Record<string, unknown>)[key] : undefined;
}

/** Scripts written right to left (ISO 15924): Arabic, Hebrew, Thaana, Syriac, N'Ko, Adlam, Hanifi Rohingya, Mandaic, Samaritan. */
const RTL_SCRIPTS = /^(Arab|Hebr|Thaa|Syrc|Nkoo|Adlm|Rohg|Mand|Samr)$/;

/**
 * The direction a language is written in, from its likely script: `rtl` for `ar`, `he`, `fa`,
 * `ur`, …; `ltr` for the others and for a tag that is not valid.
 *
 * @example
 * localeDirection('ar-EG'); // 'rtl'
 * document.documentElement.dir = localeDirection(kit.locale);
 */
export function localeDirection(locale: string): 'ltr' | 'rtl' {
  let direction = directions.get(locale);
  if (!direction) {
    try {
      direction = RTL_SCRIPTS.test(likely(locale).script ?? '') ? 'rtl' : 'ltr';
    } catch {
      direction = 'ltr';
    }
    directions.set(locale, direction);
  }
  return direction;
}
