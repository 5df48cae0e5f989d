/**
 * Finding an element's text (docs/guides/locales.md, "Which texts an element shows"): the first
 * of its own overrides, the locale packs of its chain and its English defaults that has one, in
 * the plural form its count needs, with its placeholders filled in; and the language it is
 * written in, which the node that shows it declares.
 */
import { isolated } from './bidi.js';
import { formatter } from './intl.js';
import { localeDirection, packsOf, read } from './texts.js';

/**
 * The values of a text's placeholders, by name: text, a number, or a function that makes the
 * value, called only if the text has its placeholder (a date no text shows is not formatted).
 */
export type TextValues = Record<string, string | number | (() => string)>;

/** A text as an element shows it, and the language and direction it is written in. */
export interface ShownText {
  readonly text: string;
  readonly lang: string;
  readonly dir: 'ltr' | 'rtl';
}

/** What to look for, and where. */
export interface TextQuery {
  readonly key: string;
  /** The element's own texts for `key`, best first (a `label` attribute, `strings[key]`): written in `lang`. */
  readonly overrides: readonly unknown[];
  /** The language of the element's texts. */
  readonly lang: string;
  /** The locales whose packs are read, best first (`localeChain`). */
  readonly chain: readonly string[];
  /** The section of the packs read before `common` (`'mp-gate'`). */
  readonly section: string;
  /** The class's `defaultStrings`: English, the last fallback. */
  readonly defaults: unknown;
  readonly values: TextValues;
  /** The number that picks a plural form; without it, `other`. */
  readonly count?: number | undefined;
  /** A text that is blank once filled in counts as none (a button needs a name). */
  readonly nonBlank?: boolean;
}

/**
 * The text for `query`: the first that is one (a string, or plural forms with `other`), in this
 * order: the overrides, then for each locale of the chain each of its packs (the latest
 * registration first, the built-in pack last), the section's text then the one in `common`; else
 * the English default. What is no text (a number, an object without `other`, `toString`) is passed by.
 */
export function findText(query: TextQuery): ShownText {
  const { key, section } = query;
  for (const override of query.overrides) {
    const found = shown(override, query.lang, query);
    if (found) return found;
  }
  for (const tag of query.chain) {
    for (const { texts } of packsOf(tag)) {
      const found = shown(read(texts[section], key), tag, query) ?? shown(read(texts['common'], key), tag, query);
      if (found) return found;
    }
  }
  return shown(read(query.defaults, key), 'en', query) ?? NO_TEXT;
}

const NO_TEXT: ShownText = { text: '', lang: 'en', dir: 'ltr' };

/**
 * `candidate`, a text written in `lang`, in the form `query.count` needs and filled in; undefined
 * when it is no text, or blank where that counts as none.
 */
function shown(candidate: unknown, lang: string, query: TextQuery): ShownText | undefined {
  const template = pluralForm(candidate, query.count, lang);
  if (template === undefined) return undefined;
  const dir = localeDirection(lang);
  const text = fillIn(template, query.values, dir === 'rtl');
  return query.nonBlank && text.trim() === '' ? undefined : { text, lang, dir };
}

/**
 * The string of a text: itself, or of plural forms the one `count` takes in `lang`
 * (`Intl.PluralRules`), `other` when that form is missing or there is no count; undefined for
 * what is no text.
 */
export function pluralForm(text: unknown, count: number | undefined, lang: string): string | undefined {
  if (typeof text === 'string') return text;
  const other = read(text, 'other');
  if (typeof other !== 'string') return undefined;
  if (count === undefined) return other;
  const form = read(text, formatter(Intl.PluralRules, lang).select(count));
  return typeof form === 'string' ? form : other;
}

const PLACEHOLDER = /\{(\w+)\}/g;

/**
 * `template` with its `{name}` placeholders filled in from `values`, each value isolated from a
 * sentence written right to left (`rtl`) or left to right when its direction may differ
 * (`isolated`). Only `values`' own names are placeholders (`{constructor}` is none): any other
 * is left out.
 */
export function fillIn(template: string, values: TextValues, rtl: boolean): string {
  if (!template.includes('{')) return template;
  return template.replace(PLACEHOLDER, (_, name: string) => {
    if (!Object.hasOwn(values, name)) return '';
    const value = values[name];
    return isolated(String(typeof value === 'function' ? value() : value), rtl);
  });
}
