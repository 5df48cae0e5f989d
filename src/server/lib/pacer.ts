/**
 * Client-side pacing for an API key (seed §8): at most `limit` requests in any sliding window of
 * `windowMs`, which also keeps every fixed window of the marketplace's counter under the limit.
 * Callers take turns in arrival order; a 429's Retry-After pauses everyone. Nobody waits longer
 * than `maxWaitMs`: a caller whose turn would come later is refused at once with `PacerWaitTooLong`.
 */
import type { Clock } from './clock.js';

/**
 * The wait for a slot would exceed the pacer's `maxWaitMs`; the next slot frees up in
 * `retryAfterMs`. `paused`: the wait is the marketplace's (a 429's pause), not the pacer's window.
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

export class Pacer {
  private readonly _sent: number[] = [];
  private _pausedUntil = 0;
  private _tail: Promise<void> = Promise.resolve();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly _clock: Clock,
    readonly maxWaitMs = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Waits for a free slot and takes it. Rejects (without taking a slot) when `signal` aborts, or
   * with `PacerWaitTooLong` when the slot would come more than `maxWaitMs` after this call.
   */
  acquire(signal?: AbortSignal): Promise<void> {
    const since = this._clock.now();
    const turn = this._tail.then(() => this._take(since, signal));
    this._tail = turn.catch(() => undefined);
    return turn;
  }

  /** Nobody sends before `until` (ms since the epoch): the marketplace's Retry-After. */
  pauseUntil(until: number): void {
    this._pausedUntil = Math.max(this._pausedUntil, until);
  }

  private async _take(since: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this._clock.now();
      while (this._sent.length > 0 && this._sent[0]! <= now - this.windowMs) this._sent.shift();
      const windowWait = this._sent.length >= this.limit ? this._sent[0]! + this.windowMs - now : 0;
      const pause = this._pausedUntil - now;
      const wait = Math.max(windowWait, pause);
      if (wait <= 0) {
        this._sent.push(now);
        return;
      }
      // Earlier callers are served in order, so this caller has waited at most `maxWaitMs` so far.
      if (now + wait - since > this.maxWaitMs) throw new PacerWaitTooLong(wait, pause > windowWait);
      await this._clock.sleep(wait, signal);
    }
  }
}
