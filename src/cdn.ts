/**
 * The script-tag bundle, `dist/cdn/marketplace-app-kit.js` (global `MarketplaceKit`): the runtime
 * and every element in one classic script, for pages without a build step. It registers the
 * elements and starts the kit from its own tag:
 *
 *   <script src="/marketplace-app-kit.js" data-backend="/api/marketplace"
 *           data-host-origins="https://dashboard.example"></script>
 *
 * `data-plan-names='{"pro_monthly":"Pro"}'` (JSON) gives `createKit`'s `planNames`.
 * Without `data-backend` it starts nothing: call `MarketplaceKit.createKit({...})` yourself.
 * Loading it twice neither throws (names already registered are left alone) nor starts a second
 * kit (a kit registered by the first copy is kept).
 *
 * Two builds: `marketplace-app-kit.js` for production, whose errors carry their code and
 * docs/errors.md, and `marketplace-app-kit.dev.js` with the long explanations (docs/script-tag.md).
 */
import { createKit, getKit } from './runtime/index.js';
import { DEV } from './shared/dev.js';

export * from './runtime/index.js';
export * from './elements/index.js';

// A module script (`type="module"`) has no `currentScript`, and its top-level `var MarketplaceKit`
// stays in the module's scope: without this message nothing would start, silently.
const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null;
const backend = script?.dataset.backend;
/** The `dataset` keys the tag is read for. */
const READ = ['backend', 'hostOrigins', 'planNames'];

if (!script) {
  console.error(
    DEV
      ? '[marketplace-app-kit] The script-tag bundle could not find its own <script> element, so it starts no kit. ' +
          'Load it as a classic script, without type="module" (a module also keeps window.MarketplaceKit from being set); ' +
          'with a bundler, import "marketplace-app-kit" and "marketplace-app-kit/elements" instead.'
      : '[marketplace-app-kit] No <script> element of its own, so no kit: load it as a classic script (docs/script-tag.md).',
  );
} else {
  // A misspelt attribute (`data-backend-url`) would otherwise start nothing without a word.
  const unread = Object.keys(script.dataset)
    .filter((key) => !READ.includes(key))
    .map((key) => `data-${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`);
  if (unread.length > 0) {
    console.warn(`[marketplace-app-kit] The script tag does not read ${unread.join(', ')}${DEV ? ': it reads data-backend, data-host-origins and data-plan-names.' : ' (docs/script-tag.md).'}`);
  }
}

if (script && backend && !getKit()) {
  const hostOrigins = (script.dataset.hostOrigins ?? '').split(/[\s,]+/).filter(Boolean);
  // Empty is none, as an absent attribute. Not JSON goes on as the text itself, which createKit
  // refuses with ERR_CONFIG like any bad option.
  const names = script.dataset.planNames;
  let planNames: unknown;
  try {
    planNames = names?.trim() ? JSON.parse(names) : undefined;
  } catch {
    planNames = names;
  }
  createKit({ backend, hostOrigins, planNames: planNames as Record<string, string> | undefined }).catch((error: unknown) => {
    console.error('[marketplace-app-kit] The kit could not start from the script tag:', error);
  });
}
