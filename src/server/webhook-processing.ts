/**
 * Webhook processing (docs/redis.md "What is shared"): a delivery is *claimed* while it is handled
 * and *done* after. A copy that reaches another instance while the first is still handled is not
 * told "duplicate": the first may yet fail. It waits for the outcome, or is answered 503 so that
 * the marketplace retries. A claim is a lease: one whose holder died runs out, and a retry takes
 * over.
 */
import { functionOption, numberOption } from '../shared/options.js';
import { ExpiringRecords } from './lib/expiring-records.js';
import { StoreCapacity } from './lib/store-capacity.js';

/** What `begin` found: the delivery is now this caller's, was handled already, or another holder's lease runs. */
export type WebhookClaim =
  | { state: 'claimed' }
  | { state: 'done' }
  /** `retryAfterMs`: when the other holder's lease runs out at the latest. */
  | { state: 'busy'; retryAfterMs: number };

/** One delivery to claim. */
export interface WebhookClaimRequest {
  /**
   * The delivery's keys: its signature, then its `id` when it has one. Claimed all or none; a
   * copy that meets any of them done is done.
   */
  keys: readonly string[];
  /** Who handles it: a random id per attempt. */
  owner: string;
  /** The lease ends then unless renewed (ms since the epoch). */
  leaseUntil: number;
  /** How long a done mark is kept: until the delivery's timestamp leaves the tolerance window. */
  doneUntil: number;
  /** The delivery's own `timestamp` (ms): a store that lost its data refuses deliveries from before the loss. */
  sentAt: number;
  now: number;
}

/**
 * The port. The memory default serves one process; `createRedisStores` shares it (one Lua script per call).
 */
export interface WebhookProcessing {
  /** Claims every key for `owner`, atomically; or answers `done` (marking the other keys done too) or `busy`. */
  begin(request: WebhookClaimRequest): WebhookClaim | Promise<WebhookClaim>;
  /** Extends `owner`'s lease to `leaseUntil`; false when it no longer holds every key. */
  renew(keys: readonly string[], owner: string, leaseUntil: number, now: number): boolean | Promise<boolean>;
  /** The delivery was handled: later copies are duplicates until `doneUntil`. */
  finish(keys: readonly string[], owner: string, doneUntil: number, now: number): void | Promise<void>;
  /** The handler failed: ends `owner`'s lease without a done mark, so that a copy or a retry handles it. */
  abandon(keys: readonly string[], owner: string): void | Promise<void>;
}

type Mark = { done: true } | { done: false; owner: string };

/** Deliveries the memory default tracks at most: far above any marketplace's rate for one app. */
export const DEFAULT_WEBHOOK_ENTRIES = 100_000;

const WEBHOOK_NAMES = {
  name: 'webhook processing store',
  records: 'deliveries',
  refused: 'webhook deliveries',
  advice: 'Raise maxEntries of createMemoryWebhookProcessing or pass shared stores (docs/redis.md)',
};

/**
 * The in-memory default: one process, `maxEntries` deliveries (default 100 000). Full of live
 * marks it refuses new deliveries with 503 `ERR_REPLAY_STORE_FULL` (the marketplace retries)
 * rather than forget one, and tells `onFull` (default `console.warn`) once when it fills and once
 * when it has room again.
 *
 * @example
 * const backend = createAppBackend({ ...options, stores: { webhooks: createMemoryWebhookProcessing({ maxEntries: 500_000 }) } });
 */
export function createMemoryWebhookProcessing(options: { maxEntries?: number | undefined; onFull?: ((message: string) => void) | undefined } = {}): WebhookProcessing {
  const marks = new ExpiringRecords<Mark>(numberOption(options.maxEntries, DEFAULT_WEBHOOK_ENTRIES, 'createMemoryWebhookProcessing: maxEntries', { min: 2 }));
  const capacity = new StoreCapacity(marks, WEBHOOK_NAMES, functionOption(options.onFull, 'createMemoryWebhookProcessing: onFull'));
  const holds = (key: string, owner: string, now: number) => {
    const mark = marks.get(key, now);
    return mark !== undefined && !mark.done && mark.owner === owner;
  };
  return {
    begin({ keys, owner, leaseUntil, doneUntil, now }) {
      const found = keys.map((key) => marks.get(key, now));
      if (found.some((mark) => mark?.done)) {
        for (const [index, key] of keys.entries()) if (found[index] === undefined) marks.set(key, { done: true }, doneUntil);
        return { state: 'done' };
      }
      const busy = keys.filter((key, index) => found[index] !== undefined && !holds(key, owner, now));
      if (busy.length > 0) return { state: 'busy', retryAfterMs: Math.max(...busy.map((key) => marks.expiresAt(key, now)! - now)) };
      capacity.admit(now);
      for (const key of keys) marks.set(key, { done: false, owner }, leaseUntil);
      return { state: 'claimed' };
    },
    renew(keys, owner, leaseUntil, now) {
      if (!keys.every((key) => holds(key, owner, now))) return false;
      for (const key of keys) marks.set(key, { done: false, owner }, leaseUntil);
      return true;
    },
    finish(keys, _owner, doneUntil) {
      for (const key of keys) marks.set(key, { done: true }, doneUntil);
    },
    abandon(keys, owner) {
      // Now or never: a lease that ran out is no longer anyone's to end.
      for (const key of keys) if (holds(key, owner, Number.NEGATIVE_INFINITY)) marks.delete(key);
    },
  };
}
