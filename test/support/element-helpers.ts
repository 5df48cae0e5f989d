// Small helpers shared by the element tests.
import { aTimeout, waitUntil } from '@open-wc/testing';
import type { LitElement } from 'lit';
import { HANG_MS } from './waiting.js';

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

/** Waits until `check()` holds (polled); only a hang guard, `HANG_MS`, ends the wait otherwise. */
export function until(check: () => boolean, message: string): Promise<void> {
  return waitUntil(check, message, { timeout: HANG_MS });
}

/** A promise with its resolve function, to hold an action open. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * Not operable: `disabled`, or `aria-disabled` (a kit that cannot act, or the current plan: the
 * button keeps the focus).
 */
export function unavailable(button: Element | null): boolean {
  return (button as HTMLButtonElement).disabled || button!.getAttribute('aria-disabled') === 'true';
}

/**
 * Focuses `button`'s base part, runs `change` (which leaves the kit unable to act), and says
 * whether the focus stayed, and whether a click then reached the kit (`calls`) or the page.
 */
export async function focusThroughChange(button: LitElement, change: () => void, calls: () => number): Promise<{ focused: boolean; calls: number; clicks: number }> {
  const base = part(button, 'base')!;
  base.focus();
  change();
  await settle(button);
  // The focus fixup (a focused element that became disabled loses the focus) runs with rendering.
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  let clicks = 0;
  button.addEventListener('click', () => clicks++);
  base.click();
  await settle(button);
  return { focused: button.shadowRoot!.activeElement === base && document.activeElement === button, calls: calls(), clicks };
}

export const HOSTILE = '<img src=x onerror="window.__xss = 1">';

/** The next `type` event on `target`, typed from `GlobalEventHandlersEventMap` (`mp-*` included). */
export function next<K extends keyof GlobalEventHandlersEventMap>(target: EventTarget, type: K): Promise<GlobalEventHandlersEventMap[K]> {
  return new Promise((resolve) => target.addEventListener(type, (event) => resolve(event as GlobalEventHandlersEventMap[K]), { once: true }));
}

/**
 * Parts of `elements` that stick out of `column` (on either side: right-to-left layouts grow
 * leftwards) or clip their own content. Parts not rendered (a hidden card) are left out.
 */
export function overflowing(column: HTMLElement, elements: readonly Element[]): string[] {
  const { left, right } = column.getBoundingClientRect();
  const found: string[] = [];
  for (const el of elements) {
    for (const node of el.shadowRoot!.querySelectorAll<HTMLElement>('*')) {
      if (node.classList.contains('sr-only') || !node.checkVisibility()) continue;
      const name = `${el.localName} ${node.getAttribute('part') ?? node.localName}`;
      const box = node.getBoundingClientRect();
      if (box.right > right + 0.5 || box.left < left - 0.5) found.push(`${name} sticks out`);
      if (node.clientWidth > 0 && node.scrollWidth > node.clientWidth + 1) found.push(`${name} clips its width`);
      if (node.clientHeight > 0 && node.scrollHeight > node.clientHeight + 1) found.push(`${name} clips its height`);
    }
  }
  return found;
}
