/**
 * Client-side pacing for an API key (docs/marketplace.md#rate-limits): at most `limit` requests in any sliding window of
 * `windowMs`. A request holds its slot from when it is sent until one window after its answer
 * came back (or it failed): the marketplace counts a request somewhere between those two moments,
 * so `limit + 1` requests can never be counted within one window, whichever way the marketplace
 * aligns its fixed windows and however long the first connection takes.
 * Callers take turns in arrival order; a 429's Retry-After pauses everyone. Nobody waits longer
 * than `maxWaitMs`: a caller whose turn would come later is refused at once with `PacerWaitTooLong`.
 */
import { linkSignals } from './abort.js';
import type { KeyPacer } from '../api-key-pacing.js';
import type { Clock } from './clock.js';

/**
 * The wait for a slot would exceed the pacer's `maxWaitMs`; the next slot frees up in
 * `retryAfterMs` at the earliest. `paused`: the wait is the marketplace's (a 429's pause), not the
 * pacer's window.
 */
export class PacerWaitTooLong extends Error {
  override name = 'PacerWaitTooLong';
  constructor(
    readonly retryAfterMs: number,
    readonly paused: boolean,
  ) {
    super(`The next slot frees up in ${Math.ceil(retryAfterMs / 1000)} s`);
  }
}

/** Gives the slot back: call it once the request's answer has arrived or the request failed. */
export type ReleaseSlot = () => void;

/** A slot still in flight ends at +Infinity; once released, at the time of its answer. */
interface Slot {
  end: number;
}

export class Pacer implements KeyPacer {
  private _slots: Slot[] = [];
  private _pausedUntil = 0;
  private _tail: Promise<void> = Promise.resolve();
  private _onRelease: (() => void) | null = null;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly _clock: Clock,
    readonly maxWaitMs = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Waits for a free slot and takes it. Rejects (without taking a slot) when `signal` aborts, or
   * with `PacerWaitTooLong` when the slot would come more than `maxWaitMs` (by default the
   * pacer's) after this call.
   */
  acquire(signal?: AbortSignal, maxWaitMs = this.maxWaitMs): Promise<ReleaseSlot> {
    const since = this._clock.now();
    const turn = this._tail.then(() => this._take(since, maxWaitMs, signal));
    this._tail = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  /** Nobody sends before `until` (ms since the epoch): the marketplace's Retry-After. */
  pauseUntil(until: number): void {
    this._pausedUntil = Math.max(this._pausedUntil, until);
  }

  private async _take(since: number, maxWaitMs: number, signal?: AbortSignal): Promise<ReleaseSlot> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this._clock.now();
      this._slots = this._slots.filter((slot) => slot.end > now - this.windowMs);
      // Full: the earliest answered slot frees up one window after its answer. When every slot is
      // still in flight, the wait is at least one window from now (an answer could come now).
      // A loop, not Math.min(...ends): spread arguments overflow the stack past ~150,000 slots.
      const earliestEnd = this._slots.reduce((earliest, slot) => Math.min(earliest, slot.end), Number.POSITIVE_INFINITY);
      const inFlightOnly = this._slots.length >= this.limit && earliestEnd === Number.POSITIVE_INFINITY;
      const windowWait = this._slots.length < this.limit ? 0 : inFlightOnly ? this.windowMs : earliestEnd + this.windowMs - now;
      const pause = this._pausedUntil - now;
      const wait = Math.max(windowWait, pause);
      if (wait <= 0) return this._claim();
      // Earlier callers are served in order, so this caller has waited at most `maxWaitMs` so far.
      if (now + wait - since > maxWaitMs) throw new PacerWaitTooLong(wait, pause > windowWait);
      if (inFlightOnly && pause <= 0) {
        // The slot comes one window after an answer: an answer later than this breaks maxWaitMs.
        const latest = since + maxWaitMs - this.windowMs - now;
        if (!(await this._nextRelease(latest, signal))) throw new PacerWaitTooLong(this.windowMs, false);
      } else {
        await this._clock.sleep(wait, signal);
      }
    }
  }

  private _claim(): ReleaseSlot {
    const slot: Slot = { end: Number.POSITIVE_INFINITY };
    this._slots.push(slot);
    return () => {
      if (slot.end !== Number.POSITIVE_INFINITY) return;
      slot.end = this._clock.now();
      const wake = this._onRelease;
      this._onRelease = null;
      wake?.();
    };
  }

  /**
   * True when a slot is released within `withinMs`, false when that time runs out first. Only the
   * caller at the head of the queue waits here.
   */
  private async _nextRelease(withinMs: number, signal?: AbortSignal): Promise<boolean> {
    const done = new AbortController();
    const linked = signal ? linkSignals(signal, done.signal) : null;
    const stop = linked?.signal ?? done.signal;
    const released = new Promise<true>((resolve, reject) => {
      const onAbort = () => {
        this._onRelease = null;
        reject(stop.reason);
      };
      this._onRelease = () => {
        stop.removeEventListener('abort', onAbort);
        resolve(true);
      };
      stop.addEventListener('abort', onAbort, { once: true });
    });
    const waits: Promise<boolean>[] = [released];
    if (withinMs !== Number.POSITIVE_INFINITY) waits.push(this._clock.sleep(withinMs, stop).then(() => false));
    // The loser is rejected by `done` below; nobody waits for it.
    for (const wait of waits) wait.catch(() => undefined);
    try {
      return await Promise.race(waits);
    } finally {
      done.abort();
      linked?.dispose();
    }
  }
}
