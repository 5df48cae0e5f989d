/**
 * `createAppBackend({ replayStore })`, the option from before `stores`: one `ReplayStore` claims
 * context tokens and webhook deliveries alike. For webhooks it is adapted to `WebhookProcessing`
 * as it always behaved: a claim is kept until the delivery leaves the tolerance window, released
 * when the handler fails, and has no lease (a copy that meets it on another instance is a
 * duplicate at once). `stores.webhooks` is the port that tells "being handled" from "handled".
 */
import { claimInOrder, releaseAll, type ReplayStore } from '../replay-store.js';
import type { WebhookProcessing } from '../webhook-processing.js';

export function webhookProcessingOnReplayStore(store: ReplayStore): WebhookProcessing {
  return {
    async begin({ keys, doneUntil, sentAt, now }) {
      return (await claimInOrder(store, keys, doneUntil, now, sentAt)) ? { state: 'claimed' } : { state: 'done' };
    },
    renew: () => true,
    finish: () => undefined,
    abandon: (keys) => releaseAll(store, keys),
  };
}
