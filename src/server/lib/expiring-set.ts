/**
 * A bounded in-memory set of keys that expire: the store behind `createMemoryReplayStore` and the
 * backend's refresh throttle.
 *
 * Two generations keep every operation O(1): new keys go into `_current`; when it holds half the
 * budget it becomes `_previous` and the older generation is dropped whole. So at most
 * `maxEntries` keys are kept, and under a flood the oldest half goes first. (Deleting single
 * entries from the front of one big Map instead leaves holes that make each scan O(n) in V8.)
 */
export class ExpiringSet {
  private _current = new Map<string, number>();
  private _previous = new Map<string, number>();
  private readonly _generationSize: number;

  constructor(maxEntries: number) {
    this._generationSize = Math.max(1, Math.floor(maxEntries / 2));
  }

  /** True when `key` was added and has not expired at `now`. */
  has(key: string, now: number): boolean {
    const expiresAt = this._current.get(key);
    if (expiresAt !== undefined) return expiresAt > now;
    const older = this._previous.get(key);
    return older !== undefined && older > now;
  }

  /** Adds `key` until `expiresAt` (ms since the epoch). */
  add(key: string, expiresAt: number): void {
    if (this._current.size >= this._generationSize) {
      this._previous = this._current;
      this._current = new Map();
    }
    // A stale copy left in `_previous` is harmless: `has` reads `_current` first.
    this._current.set(key, expiresAt);
  }

  /** Forgets `key`, from both generations: a copy left in `_previous` would still count. */
  delete(key: string): void {
    this._current.delete(key);
    this._previous.delete(key);
  }

  get size(): number {
    return this._current.size + this._previous.size;
  }
}
