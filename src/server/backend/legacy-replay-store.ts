/**
 * `createAppBackend({ replayStore })`, the option from before `stores`: one `ReplayStore` claims
 * context tokens and webhook deliveries alike. For webhooks it is adapted to `WebhookProcessing`
 * as it always behaved: a claim is kept until the delivery leaves the tolerance window, released
 * when the handler fails, and has no lease (a copy that meets it on another instance is a
 * duplicate at once). `stores.webhooks` is the port that tells "being handled" from "handled".
 */
import { claimAnswer, type ReplayStore } from '../replay-store.js';
import type { WebhookProcessing } from '../webhook-processing.js';

export function webhookProcessingOnReplayStore(store: ReplayStore): WebhookProcessing {
  return {
    /**
     * Claims the signature, then the id. Identical copies meet on the signature, so exactly one of
     * them goes on to the id; re-signed copies meet on the id. A re-signed copy refused by its id
     * keeps its signature claimed, so replaying that copy stays a duplicate after the id's claim
     * (made by an earlier copy, with an earlier timestamp) has expired.
     */
    async begin({ keys, doneUntil, now }) {
      const claimed: string[] = [];
      try {
        for (const key of keys) {
          if (!claimAnswer(await store.claim(key, doneUntil, now))) return { state: 'done' };
          claimed.push(key);
        }
      } catch (error) {
        // Refused (5xx, so it is retried): the keys it did claim must not make the retry a duplicate.
        const results = await Promise.allSettled(claimed.map(async (key) => store.release(key)));
        const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
        // A release that failed too would make the retry a duplicate: both failures go to the caller (and onError).
        if (failures.length > 0) throw new AggregateError([error, ...failures], 'The replay store failed to claim a delivery, then to release what it had claimed');
        throw error;
      }
      return { state: 'claimed' };
    },
    renew: () => true,
    finish: () => undefined,
    async abandon(keys) {
      // Each key is released even if another's release fails; the first failure is reported.
      const results = await Promise.allSettled(keys.map(async (key) => store.release(key)));
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}
