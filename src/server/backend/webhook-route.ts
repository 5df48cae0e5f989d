/**
 * `POST /webhooks`: verify, claim the delivery in `stores.webhooks`, drop the user's cached
 * entitlement (and on `user.revoked` set the user's revocation cut-off), hand it to `onEvent`,
 * then mark it done, or free it if `onEvent` threw so that the marketplace's retry is handled
 * (docs/redis.md "Webhooks on several instances").
 *
 * A copy of a delivery that is being handled waits for the outcome: event-driven for a copy in
 * this process, polling the store for one handled on another instance. It is answered 200
 * duplicate once the first succeeded, handled itself if the first failed, and 503
 * `ERR_WEBHOOK_IN_PROGRESS` with `Retry-After` after `WEBHOOK_COPY_WAIT_MS` in all.
 */
import { MarketplaceKitError } from '../../shared/errors.js';
import { readBodyBytes } from '../lib/body.js';
import { randomToken } from '../oauth.js';
import { jsonResponse } from '../responses.js';
import { MAX_SESSION_TTL_SECONDS } from '../session.js';
import type { WebhookClaim } from '../webhook-processing.js';
import { checkWebhook, SIGNATURE_HEADER, type CheckedWebhook } from '../webhooks.js';
import { WEBHOOK_COPY_WAIT_MS, WEBHOOK_LEASE_MS } from './constants.js';
import type { BackendContext, Route } from './context.js';

const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/** How often a copy looks again whether another instance has finished with the delivery: at first, and at most. */
const COPY_POLL_MS = [50, 500] as const;

export function webhookRoute(ctx: BackendContext, secrets: readonly string[]): Route {
  const { options, clock, client, stores, report } = ctx;
  // Keys of the deliveries this process is handling, each with a promise that settles once that
  // delivery is handled or freed: a copy here waits for it without asking the store.
  const handling = new Map<string, Promise<void>>();

  const tolerance = options.webhookToleranceSeconds === undefined ? {} : { toleranceSeconds: options.webhookToleranceSeconds };

  /** Every check of `verifyWebhook` but the claim: the keys are claimed below, all at once, in `stores.webhooks`. */
  function verify(bytes: Uint8Array, request: Request): CheckedWebhook {
    return checkWebhook(bytes, request.headers.get(SIGNATURE_HEADER), { secrets, now: clock.now(), ...tolerance }, 'createAppBackend');
  }

  /** Marks `keys` as handled here; the returned function settles the mark. */
  function markHandling(keys: readonly string[]): () => void {
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    for (const key of keys) handling.set(key, done);
    return () => {
      for (const key of keys) if (handling.get(key) === done) handling.delete(key);
      settle();
    };
  }

  /** False when `pending` did not settle within `ms`. */
  async function settlesWithin(pending: Promise<void>, ms: number): Promise<boolean> {
    const stop = new AbortController();
    let slept = false;
    try {
      const woke = clock.sleep(ms, stop.signal).then(
        () => (slept = true) && false,
        () => false,
      );
      return await Promise.race([pending.then(() => true), woke]);
    } finally {
      // Only a wait still running is cancelled: the copy's timer does not outlive the first.
      if (!slept) stop.abort();
    }
  }

  /**
   * What a delivery's own shared state needs besides the claim, sent with it (one round trip):
   * drop the user's cached entitlement everywhere, and on `user.revoked` end the user's sessions.
   */
  function sideEffects({ delivery, sentAt }: CheckedWebhook): Promise<unknown> {
    const userId = delivery.data.user_id;
    if (typeof userId !== 'string') return Promise.resolve();
    const now = clock.now();
    const work: Array<Promise<unknown>> = [client.invalidate(userId)];
    if (delivery.event === 'user.revoked') {
      // The delivery's own time (never later than now): an identical copy sets the same cut-off.
      const at = Math.min(sentAt, now);
      work.push(Promise.resolve().then(() => stores.revocations.revoke(userId, at, at + MAX_SESSION_TTL_SECONDS * 1000, now)));
    }
    return Promise.all(work);
  }

  /**
   * Claims the delivery, waiting for copies being handled (here or elsewhere) for at most
   * `WEBHOOK_COPY_WAIT_MS` in all. Resolves to the claim (`claimed` with the function that settles
   * this process's mark, or `done`), or null when the wait ran out.
   */
  async function claim(verified: CheckedWebhook, owner: string): Promise<{ claim: WebhookClaim; settle: () => void } | null> {
    const { keys, expiresAt: doneUntil, sentAt } = verified;
    const waitUntil = clock.now() + WEBHOOK_COPY_WAIT_MS;
    let effects: Promise<unknown> | null = null;
    for (let pause: number = COPY_POLL_MS[0]; ; pause = Math.min(pause * 2, COPY_POLL_MS[1])) {
      for (const key of keys) {
        for (let pending = handling.get(key); pending; pending = handling.get(key)) {
          if (!(await settlesWithin(pending, Math.max(0, waitUntil - clock.now())))) return null;
        }
      }
      // Marked before the store answers, so that a copy arriving meanwhile waits too.
      const settle = markHandling(keys);
      const now = clock.now();
      const claiming = Promise.resolve().then(() => stores.webhooks.begin({ keys, owner, leaseUntil: now + WEBHOOK_LEASE_MS, doneUntil, sentAt, now }));
      effects ??= sideEffects(verified);
      const [claimed, affected] = await Promise.allSettled([claiming, effects]);
      if (claimed.status === 'rejected') {
        settle();
        throw claimed.reason;
      }
      if (affected.status === 'rejected') {
        // Not handled: freed, so that the marketplace's retry is.
        if (claimed.value.state === 'claimed') await Promise.resolve().then(() => stores.webhooks.abandon(keys, owner)).catch(() => undefined);
        settle();
        throw affected.reason;
      }
      if (claimed.value.state !== 'busy') return { claim: claimed.value, settle };
      settle();
      // Being handled on another instance: look again, within the wait.
      const left = waitUntil - clock.now();
      // A lease that outlasts the wait (or a delivery a store that lost its data cannot vouch for): 503 now.
      if (left <= 0 || claimed.value.retryAfterMs > left + COPY_POLL_MS[1]) return null;
      await clock.sleep(Math.min(pause, left, Math.max(1, claimed.value.retryAfterMs)));
    }
  }

  /** Keeps the lease while `onEvent` runs (in real time, as the store's expiry runs), so that only a holder that died loses it. */
  function keepLease(keys: readonly string[], owner: string, request: Request): () => void {
    const timer = setInterval(() => {
      const now = clock.now();
      Promise.resolve()
        .then(() => stores.webhooks.renew(keys, owner, now + WEBHOOK_LEASE_MS, now))
        .then((held) => {
          if (!held) report(new MarketplaceKitError('ERR_WEBHOOK_IN_PROGRESS', 'A webhook delivery outlived its lease: another instance may handle it too'), request);
        })
        .catch((error: unknown) => report(error, request));
    }, WEBHOOK_LEASE_MS / 3);
    timer.unref();
    return () => clearInterval(timer);
  }

  return async function postWebhook(request: Request): Promise<Response> {
    const bytes = await readBodyBytes(request, WEBHOOK_BODY_LIMIT, true);
    const verified = verify(bytes, request);
    const owner = randomToken('', 12);
    const claimed = await claim(verified, owner);
    if (claimed === null) {
      const error = new MarketplaceKitError('ERR_WEBHOOK_IN_PROGRESS', 'The same delivery is still being handled: retry later', { status: 503 });
      return jsonResponse(error.toJSON(), { status: 503, headers: { 'retry-after': String(WEBHOOK_COPY_WAIT_MS / 1000) } });
    }
    const { keys, expiresAt: doneUntil, delivery } = verified;
    try {
      if (claimed.claim.state === 'done') return jsonResponse({ received: true, duplicate: true });
      const stopLease = keepLease(keys, owner, request);
      try {
        await options.onEvent?.(delivery);
      } catch (error) {
        // Freed: the marketplace retries, and the retry is handled. The answer is 500 either way,
        // and onError hears of it once, from the handler's catch-all, as ERR_WEBHOOK_HANDLER_FAILED
        // with the app's error as `cause`.
        stopLease();
        await Promise.resolve()
          .then(() => stores.webhooks.abandon(keys, owner))
          .catch((releaseError: unknown) => report(releaseError, request));
        throw new MarketplaceKitError('ERR_WEBHOOK_HANDLER_FAILED', `The app failed to handle the ${delivery.event} delivery`, { status: 500, cause: error });
      }
      stopLease();
      // Handled: a store that fails to note it now leaves the lease to run out (a copy within it
      // still waits), and the marketplace is told it arrived, which it did.
      await Promise.resolve()
        .then(() => stores.webhooks.finish(keys, owner, doneUntil, clock.now()))
        .catch((error: unknown) => report(error, request));
      return jsonResponse({ received: true, event: delivery.event });
    } finally {
      claimed.settle();
    }
  };
}
