/**
 * Records that expire, for the in-memory stores (docs/redis.md "Memory stores"): a `Map` of live
 * records plus an index of expiry buckets (one per `BUCKET_MS` of expiry time), so that expired
 * records are dropped a bucket at a time, in amortised O(1), and the count of live records is
 * exact to within one bucket. Unlike the two generations of `ExpiringMap`, which drop half the
 * records whenever the newer half fills, a full `ExpiringRecords` is full only of records that
 * have not expired yet: callers that must not forget a live record (replay claims) refuse new
 * ones instead.
 */

const BUCKET_MS = 1_000;

/** Keys that expire: the expiry of each live key (a number, no object: a replay store holds 100 000s). */
export class ExpiringKeys {
  protected readonly _entries = new Map<string, number>();
  /** Keys by the bucket their expiry falls in; a key re-set later stays in its old bucket too (checked on sweep). */
  private readonly _buckets = new Map<number, string[]>();
  /** Bucket numbers, ascending. Few: one per second of the longest lifetime stored. */
  private _order: number[] = [];

  constructor(readonly maxEntries: number) {}

  /** When `key` expires, or undefined when it is absent or expired at `now`. */
  expiresAt(key: string, now: number): number | undefined {
    const until = this._entries.get(key);
    return until !== undefined && until > now ? until : undefined;
  }

  /** Holds `key` until `until` (ms since the epoch). The caller checks `isFull` first when that matters. */
  add(key: string, until: number): void {
    this._entries.set(key, until);
    const bucket = Math.ceil(until / BUCKET_MS);
    const keys = this._buckets.get(bucket);
    if (keys) {
      keys.push(key);
      return;
    }
    this._buckets.set(bucket, [key]);
    // Mostly appended at the end: expiries grow with time.
    let index = this._order.length;
    while (index > 0 && this._order[index - 1]! > bucket) index -= 1;
    this._order.splice(index, 0, bucket);
  }

  delete(key: string): void {
    this._entries.delete(key);
  }

  /** Dropped with its key: see `ExpiringRecords`. */
  protected _dropped(_key: string): void {}

  /**
   * True when `maxEntries` records are still live at `now`. Expired ones are dropped first: whole
   * buckets, and when that is not enough, those of the earliest bucket one by one, so that room
   * comes exactly when a record expires.
   */
  isFull(now: number): boolean {
    this.sweep(now);
    if (this._entries.size < this.maxEntries) return false;
    const first = this._order[0];
    if (first === undefined) return true;
    const keys = this._buckets.get(first)!;
    const kept = keys.filter((key) => {
      const until = this._entries.get(key);
      if (until === undefined || until > now) return until !== undefined;
      this._entries.delete(key);
      this._dropped(key);
      return false;
    });
    this._buckets.set(first, kept);
    return this._entries.size >= this.maxEntries;
  }

  /** When the earliest live record expires (ms since the epoch): a full store has room by then. */
  nextExpiry(now: number): number {
    this.sweep(now);
    const first = this._order[0];
    if (first === undefined) return now;
    let earliest = first * BUCKET_MS;
    for (const key of this._buckets.get(first)!) {
      const until = this._entries.get(key);
      if (until !== undefined && until > now && until < earliest) earliest = until;
    }
    return Math.max(now, earliest);
  }

  /** Records held, expired ones not yet swept included. */
  get size(): number {
    return this._entries.size;
  }

  /** Drops every record whose bucket has ended by `now`. */
  sweep(now: number): void {
    let done = 0;
    while (done < this._order.length && this._order[done]! * BUCKET_MS <= now) {
      const bucket = this._order[done]!;
      for (const key of this._buckets.get(bucket)!) {
        const until = this._entries.get(key);
        if (until !== undefined && until <= now) {
          this._entries.delete(key);
          this._dropped(key);
        }
      }
      this._buckets.delete(bucket);
      done += 1;
    }
    if (done > 0) this._order = this._order.slice(done);
  }
}

/** Keys that expire, each with a value. */
export class ExpiringRecords<V> extends ExpiringKeys {
  private readonly _values = new Map<string, V>();

  /** The value of `key` at `now`, or undefined when it is absent or expired. */
  get(key: string, now: number): V | undefined {
    return this.expiresAt(key, now) === undefined ? undefined : this._values.get(key);
  }

  /** Holds `value` for `key` until `until` (ms since the epoch). */
  set(key: string, value: V, until: number): void {
    this._values.set(key, value);
    this.add(key, until);
  }

  override delete(key: string): void {
    super.delete(key);
    this._values.delete(key);
  }

  protected override _dropped(key: string): void {
    this._values.delete(key);
  }
}
