import type { BuiltInLocale } from './tags.js';
import type { LocalePack } from './en.js';

/**
 * The built-in packs, each in a chunk of its own: a literal `import()` per pack, which every
 * bundler splits out. The script-tag bundle swaps this module for `loaders-cdn.ts`.
 */
export const loaders: Record<Exclude<BuiltInLocale, 'en'>, () => Promise<{ default: LocalePack }>> = {
  de: () => import('./de.js'),
  fr: () => import('./fr.js'),
  es: () => import('./es.js'),
  it: () => import('./it.js'),
  'pt-BR': () => import('./pt-BR.js'),
  nl: () => import('./nl.js'),
  sv: () => import('./sv.js'),
  pl: () => import('./pl.js'),
  ja: () => import('./ja.js'),
  ko: () => import('./ko.js'),
  'zh-CN': () => import('./zh-CN.js'),
  'zh-TW': () => import('./zh-TW.js'),
  ar: () => import('./ar.js'),
  he: () => import('./he.js'),
};
