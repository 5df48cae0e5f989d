/**
 * What the kit shows (state, user, entitlement, theme, locale, error) and who is told when it
 * changes: each listener once per visible change, and once more when the entitlement's
 * `expires_at` passes while the page is open (docs/runtime.md#the-kit).
 */
import { MAX_TIMER_MS } from '../shared/options.js';
import type { KitTimers, TimerId } from './environment.js';
import type { Kit } from './types.js';

/** The fields the kit's getters answer. */
export type KitFields = Pick<Kit, 'state' | 'user' | 'entitlement' | 'theme' | 'locale' | 'error'>;

export class KitStore {
  #fields: KitFields;
  readonly #listeners = new Set<(kit: Kit) => void>();
  /** Everything a listener can see, as text: a change is a new signature. */
  #signature: string;
  /** Fires when the entitlement ends (see `set`). */
  #expiryTimer: TimerId | undefined;
  #closed = false;

  /**
   * `now`: the backend's time as the browser can tell it (an entitlement ends by that clock);
   * `announce`: fires the kit's `change` event, after the listeners.
   */
  readonly #kit: Kit;
  readonly #timers: Pick<KitTimers, 'setTimeout' | 'clearTimeout'>;
  readonly #now: () => number;
  readonly #announce: () => void;

  constructor(initial: KitFields, kit: Kit, timers: Pick<KitTimers, 'setTimeout' | 'clearTimeout'>, now: () => number, announce: () => void) {
    this.#fields = initial;
    this.#kit = kit;
    this.#timers = timers;
    this.#now = now;
    this.#announce = announce;
    this.#signature = this.#sign();
  }

  get fields(): Readonly<KitFields> {
    return this.#fields;
  }

  subscribe(listener: (kit: Kit) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Applies `patch` and notifies every listener once, if anything visible changed at all. */
  set(patch: Partial<KitFields>): void {
    if (this.#closed) return;
    Object.assign(this.#fields, patch);
    // An entitlement that ends while the page is open changes `has()` with no news from anyone:
    // listeners hear of it then. setTimeout waits at most MAX_TIMER_MS; a later end is timed again.
    this.#timers.clearTimeout(this.#expiryTimer);
    const left = Date.parse(this.#fields.entitlement?.expires_at ?? '') - this.#now();
    if (left > 0) this.#expiryTimer = this.#timers.setTimeout(() => this.set({}), Math.min(left + 1, MAX_TIMER_MS));
    const signature = this.#sign();
    if (signature === this.#signature) return;
    this.#signature = signature;
    for (const listener of [...this.#listeners]) {
      // A listener may destroy the kit: after that, nobody else is told. One it unsubscribed (and
      // did not subscribe again) is not told either. One that changed the kit had everyone told
      // of the newer state already: the rest of this older round would tell them of it again.
      if (this.#closed || this.#signature !== signature) return;
      if (!this.#listeners.has(listener)) continue;
      try {
        listener(this.#kit);
      } catch (error) {
        // One broken listener must not starve the others.
        reportError(error);
      }
    }
    if (!this.#closed && this.#signature === signature) this.#announce();
  }

  /** Nothing changes or is announced any more; the listeners are forgotten. */
  close(): void {
    this.#closed = true;
    this.#timers.clearTimeout(this.#expiryTimer);
    this.#listeners.clear();
  }

  /** The fields as text (the error as its `toJSON()`), and whether the entitlement has ended by now. */
  #sign(): string {
    const ends = this.#fields.entitlement?.expires_at;
    return JSON.stringify([this.#fields, ends ? !(Date.parse(ends) > this.#now()) : false]);
  }
}
