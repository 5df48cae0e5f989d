/**
 * The page-wide registration of the current kit, so that elements loaded before (or from another
 * bundle than) the kit still find it: a `Symbol.for` key on `globalThis` plus a window event.
 * Kept apart from the kit so that importing `getKit` costs nothing: the elements use this module
 * and never the runtime's implementation, which keeps Lit out of the runtime entry and the
 * runtime out of element-only bundles.
 */
import { DEV } from '../shared/dev.js';
import type { ErrorCode } from '../shared/errors.js';
import { KIT_CREATED_EVENT, KIT_DESTROYED_EVENT, type Kit } from './types.js';

const REPLACED: ErrorCode = 'ERR_KIT_REPLACED';

/** `globalThis[KIT_GLOBAL]` holds the current kit. `Symbol.for`, so every copy of the package agrees. */
export const KIT_GLOBAL = Symbol.for('marketplace-app-kit.kit');

type Registry = { [KIT_GLOBAL]?: Kit | undefined };

/**
 * The kit created last on this page (in any state, `loading` included), or null.
 *
 * @example
 * const kit = getKit();
 * if (kit?.state === 'ready') render(kit.user);
 */
export function getKit(): Kit | null {
  return (globalThis as Registry)[KIT_GLOBAL] ?? null;
}

/**
 * Makes `kit` the current kit and fires `mp-kit-created` on window with the kit as `detail`.
 * Replacing a kit that still runs is a mistake worth a warning: the first kit scrubbed the launch
 * parameters, so inside the dashboard the second one starts without them.
 */
export function registerKit(kit: Kit): void {
  const running = getKit();
  if (running && !running.destroyed) {
    console.warn(
      `[marketplace-app-kit] ${REPLACED}${
        DEV
          ? ': createKit() replaced a running kit (a script tag with data-backend starts one); the new kit cannot see the launch parameters the first one scrubbed. Use getKit(), or destroy() the running kit first (marketplace-app-kit: docs/runtime.md#createkitoptions-promisekit).'
          : ''
      }`,
    );
  }
  (globalThis as Registry)[KIT_GLOBAL] = kit;
  globalThis.dispatchEvent?.(new CustomEvent(KIT_CREATED_EVENT, { detail: kit }));
}

/** Forgets `kit` if it is still the current one and fires `mp-kit-destroyed` (called by `kit.destroy()`). */
export function unregisterKit(kit: Kit): void {
  if (getKit() === kit) delete (globalThis as Registry)[KIT_GLOBAL];
  globalThis.dispatchEvent?.(new CustomEvent(KIT_DESTROYED_EVENT, { detail: kit }));
}

/**
 * Calls `listener` whenever a kit is created or destroyed on this page, by any copy of the package;
 * returns the function that stops listening.
 */
export function onKitsChanged(listener: () => void): () => void {
  const handle = () => listener();
  addEventListener(KIT_CREATED_EVENT, handle);
  addEventListener(KIT_DESTROYED_EVENT, handle);
  return () => {
    removeEventListener(KIT_CREATED_EVENT, handle);
    removeEventListener(KIT_DESTROYED_EVENT, handle);
  };
}
