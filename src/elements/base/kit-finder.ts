/**
 * How elements find the kit without importing the runtime: `createKit` puts the kit on a global
 * symbol and fires `mp-kit-created` on `window`. Reading the symbol keeps Lit out of the runtime
 * entry and the runtime out of element-only bundles, and works across two copies of the kit.
 */
import { KIT_CREATED_EVENT, type Kit } from '../../runtime/types.js';

/** `Symbol.for` so that every copy of the package (two script tags, two bundles) shares it. */
export const KIT_GLOBAL = Symbol.for('marketplace-app-kit.kit');

/** The kit registered by `createKit`, or null when none has been created yet. */
export function findKit(): Kit | null {
  return ((globalThis as Record<symbol, unknown>)[KIT_GLOBAL] as Kit | undefined) ?? null;
}

/** Calls `listener` with each kit created from now on; returns the function that stops listening. */
export function onKitCreated(listener: (kit: Kit) => void): () => void {
  const handle = (event: Event) => {
    const detail = (event as CustomEvent<unknown>).detail as Kit | null | undefined;
    const kit = detail && typeof detail.subscribe === 'function' ? detail : findKit();
    if (kit) listener(kit);
  };
  addEventListener(KIT_CREATED_EVENT, handle);
  return () => removeEventListener(KIT_CREATED_EVENT, handle);
}
