/**
 * The script-tag bundle, `dist/cdn/marketplace-app-kit.js` (global `MarketplaceKit`): the runtime
 * and every element in one classic script, for pages without a build step. It registers the
 * elements and starts the kit from its own tag:
 *
 *   <script src="/marketplace-app-kit.js" data-backend="/api/marketplace"
 *           data-host-origins="https://dashboard.example"></script>
 *
 * Without `data-backend` it starts nothing: call `MarketplaceKit.createKit({...})` yourself.
 * Loading it twice neither throws (names already registered are left alone) nor starts a second
 * kit (a kit registered by the first copy is kept).
 */
import { createKit, getKit } from './runtime/index.js';

export * from './runtime/index.js';
export * from './elements/index.js';

const script = document.currentScript as HTMLScriptElement | null;
const backend = script?.dataset.backend;

if (backend && !getKit()) {
  const hostOrigins = (script.dataset.hostOrigins ?? '').split(/[\s,]+/).filter(Boolean);
  createKit({ backend, hostOrigins }).catch((error: unknown) => {
    console.error('[marketplace-app-kit] The kit could not start from the script tag:', error);
  });
}
