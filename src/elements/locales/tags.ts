/**
 * The locales whose texts ship with the elements (docs/guides/locales.md). English is built in;
 * each other one is a pack of its own, loaded the first time an element needs it.
 */
export const BUILT_IN_LOCALES = ['en', 'de', 'fr', 'es', 'it', 'pt-BR', 'nl', 'sv', 'pl', 'ja', 'ko', 'zh-CN', 'zh-TW', 'ar', 'he'] as const;

/** A locale whose texts ship with the elements. */
export type BuiltInLocale = (typeof BUILT_IN_LOCALES)[number];
