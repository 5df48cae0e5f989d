/**
 * A bounded in-memory cache of keys that expire, which forgets the oldest keys when it is full:
 * for what may be forgotten at a cost of a reload or a repeated request (settled refreshes, the
 * backend's refresh throttle, what a client saw of a shared cache). A store that must never forget
 * a live key (replay claims, launch counts, revocation cut-offs) uses `ExpiringRecords` instead,
 * which refuses new keys when full.
 *
 * Two generations keep every operation O(1): new keys go into `_current`; when it holds half the
 * budget (rounded up) it becomes `_previous` and the older generation is dropped whole. So at most
 * `maxEntries` keys are kept (one more for an odd `maxEntries`), and under a flood the oldest half
 * goes first. (Deleting single entries from the front of one big Map instead leaves holes that
 * make each scan O(n) in V8.)
 */
export class ExpiringMap<V> {
  private _current = new Map<string, Entry<V>>();
  private _previous = new Map<string, Entry<V>>();
  private readonly _generationSize: number;

  constructor(maxEntries: number) {
    this._generationSize = Math.max(1, Math.ceil(maxEntries / 2));
  }

  /** The value of `key`, or undefined when it is not held at `now`. */
  get(key: string, now: number): V | undefined {
    return this._live(key, now)?.value;
  }

  /** When `key` expires (ms since the epoch), or undefined when it is not held at `now`. */
  expiresAt(key: string, now: number): number | undefined {
    return this._live(key, now)?.expiresAt;
  }

  /** Holds `value` for `key` until `expiresAt` (ms since the epoch); when full, the older generation is dropped. */
  set(key: string, value: V, expiresAt: number): void {
    if (this._current.size >= this._generationSize && !this._current.has(key)) {
      this._previous = this._current;
      this._current = new Map();
    }
    // A stale copy left in `_previous` is harmless: `_live` reads `_current` first.
    this._current.set(key, { value, expiresAt });
  }

  /** Forgets `key`, from both generations: a copy left in `_previous` would still be read. */
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
