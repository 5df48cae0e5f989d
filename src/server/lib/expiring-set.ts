/**
 * Bounded in-memory maps and sets of keys that expire: the store behind `createMemoryReplayStore`,
 * the backend's refresh throttle and its count of context exchanges per user.
 *
 * Two generations keep every operation O(1): new keys go into `_current`; when it holds half the
 * budget (rounded up) it becomes `_previous` and the older generation is dropped whole. So at most
 * `maxEntries` keys are kept (one more for an odd `maxEntries`), and under a flood the oldest half
 * goes first. (Deleting single entries from the front of one big Map instead leaves holes that
 * make each scan O(n) in V8.) A caller that must not forget live keys (the replay store) asks
 * `isFull(now)` first: it then holds up to exactly `maxEntries` (at least 2) live keys. A key
 * deleted from the older half while the newer one is full frees no room until the older half goes.
 */
export class ExpiringMap<V> {
  private _current = new Map<string, Entry<V>>();
  private _previous = new Map<string, Entry<V>>();
  /** The latest expiry in each generation: the older one may be dropped once it has passed. */
  private _currentLatest = 0;
  private _previousLatest = 0;
  private readonly _generationSize: number;

  constructor(private readonly _maxEntries: number) {
    this._generationSize = Math.max(1, Math.ceil(_maxEntries / 2));
  }

  /** The value of `key`, or undefined when it is not held at `now`. */
  get(key: string, now: number): V | undefined {
    return this._live(key, now)?.value;
  }

  /** When `key` expires (ms since the epoch), or undefined when it is not held at `now`. */
  expiresAt(key: string, now: number): number | undefined {
    return this._live(key, now)?.expiresAt;
  }

  /**
   * True when adding a key now would drop keys that may not have expired yet, or hold more than
   * `maxEntries` (at least 2) of them. It answers false again at the latest at `fullUntil`.
   */
  isFull(now: number): boolean {
    const previous = this._previousLatest > now ? this._previous.size : 0;
    return previous > 0 && (this._current.size >= this._generationSize || this._current.size + previous >= this._maxEntries);
  }

  /** When a full map has room again: the latest expiry in the older generation (ms since the epoch). */
  get fullUntil(): number {
    return this._previousLatest;
  }

  /** Holds `value` for `key` until `expiresAt` (ms since the epoch); when full, the older generation is dropped. */
  set(key: string, value: V, expiresAt: number): void {
    if (this._current.size >= this._generationSize && !this._current.has(key)) {
      this._previous = this._current;
      this._previousLatest = this._currentLatest;
      this._current = new Map();
      this._currentLatest = 0;
    }
    // A stale copy left in `_previous` is harmless: `_live` reads `_current` first.
    this._current.set(key, { value, expiresAt });
    if (expiresAt > this._currentLatest) this._currentLatest = expiresAt;
  }

  /** Forgets `key`, from both generations: a copy left in `_previous` would still count. */
  delete(key: string): void {
    this._current.delete(key);
    this._previous.delete(key);
  }

  get size(): number {
    return this._current.size + this._previous.size;
  }

  private _live(key: string, now: number): Entry<V> | undefined {
    const entry = this._current.get(key) ?? this._previous.get(key);
    return entry !== undefined && entry.expiresAt > now ? entry : undefined;
  }
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/** A set of keys that expire, on `ExpiringMap`. */
export class ExpiringSet extends ExpiringMap<true> {
  /** True when `key` was added and has not expired at `now`. */
  has(key: string, now: number): boolean {
    return this.expiresAt(key, now) !== undefined;
  }

  /** Adds `key` until `expiresAt` (ms since the epoch); when full, the older generation is dropped. */
  add(key: string, expiresAt: number): void {
    this.set(key, true, expiresAt);
  }
}
