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

interface Entry<V> {
  value: V;
  until: number;
}

export class ExpiringRecords<V> {
  private readonly _entries = new Map<string, Entry<V>>();
  /** Keys by the bucket their expiry falls in; a key re-set later stays in its old bucket too (checked on sweep). */
  private readonly _buckets = new Map<number, string[]>();
  /** Bucket numbers, ascending. Few: one per second of the longest lifetime stored. */
  private _order: number[] = [];

  constructor(readonly maxEntries: number) {}

  /** The value of `key` at `now`, or undefined when it is absent or expired. */
  get(key: string, now: number): V | undefined {
    const entry = this._entries.get(key);
    return entry !== undefined && entry.until > now ? entry.value : undefined;
  }

  /** When `key` expires, or undefined when it is absent or expired at `now`. */
  expiresAt(key: string, now: number): number | undefined {
    const entry = this._entries.get(key);
    return entry !== undefined && entry.until > now ? entry.until : undefined;
  }

  /** Holds `value` for `key` until `until` (ms since the epoch). The caller checks `isFull` first when that matters. */
  set(key: string, value: V, until: number): void {
    this._entries.set(key, { value, until });
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
      const entry = this._entries.get(key);
      if (entry === undefined || entry.until > now) return entry !== undefined;
      this._entries.delete(key);
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
      const until = this._entries.get(key)?.until;
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
        const entry = this._entries.get(key);
        if (entry !== undefined && entry.until <= now) this._entries.delete(key);
      }
      this._buckets.delete(bucket);
      done += 1;
    }
    if (done > 0) this._order = this._order.slice(done);
  }
}
