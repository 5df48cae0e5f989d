/**
 * The page-wide registration of the current kit, so that elements loaded before (or from another
 * bundle than) the kit still find it: a `Symbol.for` key on `globalThis` plus a window event.
 * Kept apart from the kit so that importing `getKit` costs nothing.
 */
import { KIT_CREATED_EVENT, type Kit } from './types.js';

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

/** Makes `kit` the current kit and fires `mp-kit-created` on window with the kit as `detail`. */
export function registerKit(kit: Kit): void {
  (globalThis as Registry)[KIT_GLOBAL] = kit;
  globalThis.dispatchEvent?.(new CustomEvent(KIT_CREATED_EVENT, { detail: kit }));
}

/** Forgets `kit` if it is still the current one (called by `kit.destroy()`). */
export function unregisterKit(kit: Kit): void {
  if (getKit() === kit) delete (globalThis as Registry)[KIT_GLOBAL];
}
