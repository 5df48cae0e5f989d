import { BUILT_IN_LOCALES, type BuiltInLocale } from './tags.js';
import type { LocalePack } from './en.js';

/**
 * The script tag's packs: `locales/<tag>.js` next to the script itself (vite.config.ts builds them
 * there), whatever path or host it is served from. Read while the script runs: `currentScript` is
 * the tag only then.
 */
const base = (document.currentScript as HTMLScriptElement | null)?.src || document.baseURI;

export const loaders = Object.fromEntries(
  BUILT_IN_LOCALES.filter((tag) => tag !== 'en').map((tag) => [tag, () => import(/* @vite-ignore */ new URL(`locales/${tag}.js`, base).href)]),
) as Record<Exclude<BuiltInLocale, 'en'>, () => Promise<{ default: LocalePack }>>;
