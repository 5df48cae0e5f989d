/**
 * The elements' texts in the user's language (docs/guides/locales.md): the locale packs that ship
 * with the kit, each loaded the first time an element needs it (English is built into the
 * classes' `defaultStrings`), the packs and single texts an app registers, and the locales a
 * user's locale reads, which fall back by language (`de-AT` → `de`) and then to English. Finding
 * one text among them: `text-lookup.ts`.
 */
import { DEV } from '../../shared/dev.js';
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

/** A pack, or the texts an app registered: sections of texts by key. */
export type Pack = Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>>;

/**
 * The place of a registration among a locale's texts: the built-in pack is 0, under all that the
 * app registers; each `registerLocale` takes the next number, and the highest wins.
 */
const BUILT_IN = 0;
let registrations = BUILT_IN;

/** Texts of one registration (or the built-in pack) and its place. */
export interface Layer {
  readonly order: number;
  readonly texts: Pack;
}
/** A loader not run yet, and the place of its registration. */
interface Queued {
  readonly order: number;
  readonly load: LocaleLoader;
}
/** A load of a locale's queued loaders. */
export interface Load {
  readonly done: Promise<void>;
  /** It ran past an element's limit (`localeTimeoutMs`): no element waits for it any more. */
  overdue: boolean;
}

/** Texts by canonical tag, the highest `order` first. */
const packs = new Map<string, Layer[]>();
/** Loaders not run yet, by tag. */
const queued = new Map<string, Queued[]>();
/** The latest load of each tag still under way. */
const loading = new Map<string, Load>();
/** Every tag with texts, loaded or not; `en` always (the classes' `defaultStrings`). */
const known = new Set<string>(['en']);
const chains = new Map<string, readonly string[]>();
const directions = new Map<string, 'ltr' | 'rtl'>();
const listeners = new Set<() => void>();

for (const [tag, load] of Object.entries(loaders)) {
  known.add(tag);
  queued.set(tag, [{ order: BUILT_IN, load: load as LocaleLoader }]);
}

/**
 * Adds texts for `locale`: a pack for a language the kit does not ship, or texts that replace
 * some of a shipped pack's (English included) in every element at once. Texts registered later
 * win, whichever loader answers first; an element's `strings` and `label` still win over all.
 * Elements on the page show them at once (a loader runs when an element first needs `locale`).
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
  if (!tag) throw new MarketplaceKitError('ERR_CONFIG', DEV ? `registerLocale: ${String(locale).slice(0, 40)} is no language tag` : '');
  const order = ++registrations;
  if (typeof texts === 'function') queued.set(tag, [...(queued.get(tag) ?? []), { order, load: texts }]);
  else add(tag, { order, texts: texts as Pack });
  known.add(tag);
  chains.clear();
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
export async function loadLocale(locale: string): Promise<void> {
  await Promise.all(startLoading(localeChain(locale)).map((load) => load.done));
}

/**
 * Waits for the texts `locale` reads to load (starting what has not started), until `deadline`
 * (a `performance.now()` time) at most; undefined when there is nothing to wait for. A load still
 * under way at the deadline counts as failed for waiting: no element waits for it again (its
 * texts still show when they come, as any texts that arrive).
 */
export function waitForTexts(locale: string, deadline: number): Promise<void> | undefined {
  const loads = startLoading(localeChain(locale)).filter((load) => !load.overdue);
  if (loads.length === 0) return undefined;
  return new Promise((resolve) => {
    const late = () => {
      for (const load of loads) load.overdue = true;
      resolve();
    };
    const timer = setTimeout(late, Math.max(0, deadline - performance.now()));
    void Promise.all(loads.map((load) => load.done)).then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Starts the loaders of `chain`'s tags that have not run yet; returns the loads still under way. */
export function startLoading(chain: readonly string[]): Load[] {
  const loads: Load[] = [];
  for (const tag of chain) {
    if (queued.has(tag)) start(tag);
    const load = loading.get(tag);
    if (load) loads.push(load);
  }
  return loads;
}

/**
 * Runs the loaders queued for `tag` as one load, which also waits for the tag's load before it
 * (unless that one is overdue), so that the latest load stands for all of the tag's.
 */
function start(tag: string): void {
  const queue = queued.get(tag) ?? [];
  queued.delete(tag);
  const before = loading.get(tag);
  const waitFor = before && !before.overdue ? [before.done] : [];
  const load: Load = {
    done: Promise.all([...waitFor, ...queue.map((entry) => run(tag, entry))]).then(() => {
      // A load started since (a loader registered meanwhile) is still under way: it stays.
      if (loading.get(tag) === load) loading.delete(tag);
      changed();
    }),
    overdue: false,
  };
  loading.set(tag, load);
}

/** Runs one loader and adds its texts at its registration's place; a failure is reported, not thrown. */
async function run(tag: string, { order, load }: Queued): Promise<void> {
  try {
    const module = await load();
    add(tag, { order, texts: (module && 'default' in module ? module.default : module) as Pack });
  } catch (error) {
    console.warn(`[marketplace-app-kit] ${tag} texts not loaded (docs/guides/locales.md):`, error);
  }
}

function add(tag: string, layer: Layer): void {
  if (!layer.texts || typeof layer.texts !== 'object') throw new MarketplaceKitError('ERR_CONFIG', DEV ? `The ${tag} texts are no object of texts` : '');
  const layers = [...(packs.get(tag) ?? []), layer];
  packs.set(tag, layers.sort((a, b) => b.order - a.order));
}

/** The texts of `tag`, the latest registration first and the built-in pack last. */
export function packsOf(tag: string): readonly Layer[] {
  return packs.get(tag) ?? NONE;
}
const NONE: readonly Layer[] = [];

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
  // The language alone needs no likely subtags: `maximize` loads them (milliseconds at a page's
  // first call, docs/benchmarks.md "First launch"), so only the search by script below asks for them.
  const { language } = new Intl.Locale(tag);
  const near = [tag, language === 'und' ? likely(tag).language : language].filter((candidate) => known.has(candidate));
  if (near.length === 0) {
    const wanted = likely(tag);
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
      const tag = new Intl.Locale(locale);
      // Likely subtags only where neither the tag's script nor its language settles it (see localeChain).
      direction = tag.script === undefined ? ONE_DIRECTION[tag.language] : undefined;
      direction ??= RTL_SCRIPTS.test((tag.script === undefined ? tag.maximize() : tag).script ?? '') ? 'rtl' : 'ltr';
    } catch {
      direction = 'ltr';
    }
    directions.set(locale, direction);
  }
  return direction;
}

/** Languages of the built-in packs, each written in one direction in every region. */
const ONE_DIRECTION: Partial<Record<string, 'ltr' | 'rtl'>> = { ar: 'rtl', he: 'rtl', en: 'ltr', de: 'ltr', fr: 'ltr', es: 'ltr', it: 'ltr', pt: 'ltr', nl: 'ltr', sv: 'ltr', pl: 'ltr', ja: 'ltr', ko: 'ltr', zh: 'ltr' };
