// Small helpers shared by the element tests.
import { aTimeout } from '@open-wc/testing';
import type { LitElement } from 'lit';

/** The first shadow node with `part` among its parts. */
export function part(element: Element, name: string): HTMLElement | null {
  return element.shadowRoot!.querySelector<HTMLElement>(`[part~="${name}"]`);
}

/** The element's rendered shadow text with whitespace collapsed. */
export function text(element: Element): string {
  return (element.shadowRoot!.textContent ?? '').replace(/\s+/g, ' ').trim();
}

/** Waits for the element's update after a kit change (the kit notifies synchronously). */
export async function settle(element: LitElement): Promise<void> {
  await element.updateComplete;
  await aTimeout(0);
  await element.updateComplete;
}

/** A promise with its resolve function, to hold an action open. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

export const HOSTILE = '<img src=x onerror="window.__xss = 1">';

/** The next `type` event on `target`, typed from `GlobalEventHandlersEventMap` (`mp-*` included). */
export function next<K extends keyof GlobalEventHandlersEventMap>(target: EventTarget, type: K): Promise<GlobalEventHandlersEventMap[K]> {
  return new Promise((resolve) => target.addEventListener(type, (event) => resolve(event as GlobalEventHandlersEventMap[K]), { once: true }));
}
