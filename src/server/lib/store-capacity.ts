/**
 * What a memory store does when it is full of live records (docs/redis.md "Memory stores"): it
 * refuses a new record with 503 `ERR_REPLAY_STORE_FULL` and `Retry-After` until its earliest record
 * expires, rather than forget a live one (a forgotten claim lets its replay through, a forgotten
 * cut-off a revoked session). It says so in one line when it fills and in one when it has room
 * again, below 90 % of its size: under a steady flood it stays full, and says nothing more.
 */
import { ReplayStoreFullError } from '../store-error.js';
import type { ExpiringRecords } from './expiring-records.js';

/** Below this share of its size, a store that was full has room again. */
const ROOM_AGAIN = 0.9;

/** How a store names itself in its lines and errors. */
export interface CapacityNames {
  /** The store, as in `replay store`. */
  name: string;
  /** What its records are, as in `keys`. */
  records: string;
  /** What its refusals refuse, as in `launches and deliveries`. */
  refused: string;
  /** What to do about it, said in the line and the error. */
  advice: string;
}

export class StoreCapacity {
  private _full = false;

  constructor(
    private readonly _records: ExpiringRecords<unknown>,
    private readonly _names: CapacityNames,
    private readonly _onFull: (line: string) => void = (line) => console.warn(line),
  ) {}

  /** Throws `ReplayStoreFullError` when no record can be added at `now`. */
  admit(now: number): void {
    const { maxEntries } = this._records;
    const { name, records, refused, advice } = this._names;
    if (this._records.isFull(now)) {
      if (!this._full) {
        this._full = true;
        this._onFull(`[marketplace-app-kit] ${name} full: ${maxEntries} live ${records}; ${refused} are refused with 503 until ${records} expire. ${advice}`);
      }
      throw new ReplayStoreFullError(this._records.nextExpiry(now) - now, { name, advice });
    }
    if (this._full && this._records.size < maxEntries * ROOM_AGAIN) {
      this._full = false;
      this._onFull(`[marketplace-app-kit] ${name} has room again: ${this._records.size} of ${maxEntries} live ${records}`);
    }
  }
}
