/**
 * host-link-loader.ts in the script tag (vite.config.ts, `bridgeFile`): the app's end of the host
 * bridge is a file of its own beside the script, `marketplace-app-kit-bridge.js` (`.dev.js` beside
 * the development build), imported inside the dashboard only, once the kit has started. A page on
 * the developer's own site never loads it. The file takes zod and the kit's shared modules from the
 * script that imports it (the build hands them over), so there is one copy of each on the page.
 */
import { DEV } from '../shared/dev.js';

/** Read while the script runs: `currentScript` is its tag only then. */
const base = (document.currentScript as HTMLScriptElement | null)?.src || document.baseURI;

export const loadHostLink = (): Promise<typeof import('./host-link.js')> =>
  import(/* @vite-ignore */ new URL(DEV ? 'marketplace-app-kit-bridge.dev.js' : 'marketplace-app-kit-bridge.js', base).href);
