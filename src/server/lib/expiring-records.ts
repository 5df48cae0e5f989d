/**
 * Records that expire, for the in-memory stores that must never forget a live one (docs/redis.md
 * "Memory stores"): replay claims, webhook marks, launch counts, revocation cut-offs. A `Map` of
 * live records plus an index of expiry buckets (one per `BUCKET_MS` of expiry time), so that
 * expired records are dropped a bucket at a time, in amortised O(1), and the count of live records
 * is exact to within one bucket. Full, it is full only of records that have not expired yet: the
 * store refuses new ones (`StoreCapacity`) rather than forget one. (`ExpiringMap` is the cache that
 * forgets its oldest keys instead.)
 *
 * A record is a key with an expiry (`add`), or also a value (`set`): the replay store holds
 * 100 000s of keys, so keys alone take no second map.
 */

const BUCKET_MS = 1_000;

export class ExpiringRecords<V = never> {
  private readonly _expiries = new Map<string, number>();
  /** The values of records made by `set`; none for keys alone. */
  private _values: Map<string, V> | undefined;
  /** Keys by the bucket their expiry falls in; a key re-set later stays in its old bucket too (checked on sweep). */
  private readonly _buckets = new Map<number, string[]>();
  /** Bucket numbers, ascending. Few: one per second of the longest lifetime stored. */
  private _order: number[] = [];

  constructor(readonly maxEntries: number) {}

  /** When `key` expires, or undefined when it is absent or expired at `now`. */
  expiresAt(key: string, now: number): number | undefined {
    const until = this._expiries.get(key);
    return until !== undefined && until > now ? until : undefined;
  }

  /** The value of `key` at `now`, or undefined when it is absent, expired or a key alone. */
  get(key: string, now: number): V | undefined {
    return this.expiresAt(key, now) === undefined ? undefined : this._values?.get(key);
  }

  /** Holds `key` until `until` (ms since the epoch). The caller checks `isFull` first when that matters. */
  add(key: string, until: number): void {
    this._expiries.set(key, until);
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

  /** Holds `value` for `key` until `until` (ms since the epoch). */
  set(key: string, value: V, until: number): void {
    (this._values ??= new Map()).set(key, value);
    this.add(key, until);
  }

  delete(key: string): void {
    this._expiries.delete(key);
    this._values?.delete(key);
  }

  /**
   * True when `maxEntries` records are still live at `now`. Expired ones are dropped first: whole
   * buckets, and when that is not enough, those of the earliest bucket one by one, so that room
   * comes exactly when a record expires.
   */
  isFull(now: number): boolean {
    this.sweep(now);
    if (this._expiries.size < this.maxEntries) return false;
    const first = this._order[0];
    if (first === undefined) return true;
    this._buckets.set(first, this._buckets.get(first)!.filter((key) => !this._dropIfExpired(key, now) && this._expiries.has(key)));
    return this._expiries.size >= this.maxEntries;
  }

  /** When the earliest live record expires (ms since the epoch): a full store has room by then. */
  nextExpiry(now: number): number {
    this.sweep(now);
    const first = this._order[0];
    if (first === undefined) return now;
    let earliest = first * BUCKET_MS;
    for (const key of this._buckets.get(first)!) {
      const until = this._expiries.get(key);
      if (until !== undefined && until > now && until < earliest) earliest = until;
    }
    return Math.max(now, earliest);
  }

  /** Records held, expired ones not yet swept included. */
  get size(): number {
    return this._expiries.size;
  }

  /** Drops every record whose bucket has ended by `now`. */
  sweep(now: number): void {
    let done = 0;
    while (done < this._order.length && this._order[done]! * BUCKET_MS <= now) {
      const bucket = this._order[done]!;
      for (const key of this._buckets.get(bucket)!) this._dropIfExpired(key, now);
      this._buckets.delete(bucket);
      done += 1;
    }
    if (done > 0) this._order = this._order.slice(done);
  }

  /** Drops `key` if it has expired at `now`; true when it did. */
  private _dropIfExpired(key: string, now: number): boolean {
    const until = this._expiries.get(key);
    if (until === undefined || until > now) return false;
    this.delete(key);
    return true;
  }
}
