/**
 * Client-side pacing for an API key (seed §8): at most `limit` requests in any sliding window of
 * `windowMs`, which also keeps every fixed window of the marketplace's counter under the limit.
 * Callers take turns in arrival order; a 429's Retry-After pauses everyone.
 */
import type { Clock } from './clock.js';

export class Pacer {
  private readonly _sent: number[] = [];
  private _pausedUntil = 0;
  private _tail: Promise<void> = Promise.resolve();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly _clock: Clock,
  ) {}

  /** Waits for a free slot and takes it. Rejects (without taking a slot) when `signal` aborts. */
  acquire(signal?: AbortSignal): Promise<void> {
    const turn = this._tail.then(() => this._take(signal));
    this._tail = turn.catch(() => undefined);
    return turn;
  }

  /** Nobody sends before `until` (ms since the epoch): the marketplace's Retry-After. */
  pauseUntil(until: number): void {
    this._pausedUntil = Math.max(this._pausedUntil, until);
  }

  private async _take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this._clock.now();
      while (this._sent.length > 0 && this._sent[0]! <= now - this.windowMs) this._sent.shift();
      const windowWait = this._sent.length >= this.limit ? this._sent[0]! + this.windowMs - now : 0;
      const wait = Math.max(windowWait, this._pausedUntil - now);
      if (wait <= 0) {
        this._sent.push(now);
        return;
      }
      await this._clock.sleep(wait, signal);
    }
  }
}
