/**
 * Signers for an app's tests: what the marketplace and the app sign, made on demand, so a test can
 * call the app's backend as the dashboard, the kit or the marketplace would. The token and
 * signature formats: docs/decisions.md#embed-launch, docs/decisions.md#session-exchange and
 * docs/decisions.md#webhooks.
 */
import { MarketplaceKitError } from '../shared/errors.js';
import { SIGNATURE_HEADER } from '../server/webhooks.js';
import { signWebhookBody } from '../server/signers.js';

export { signContextToken, signWebhookBody, type SignContextTokenOptions } from '../server/signers.js';
export { signSessionToken, type SignSessionOptions } from '../server/session.js';

/** Options of `webhookDelivery` and `webhookRequest`. */
export interface WebhookDeliveryOptions {
  /** The app's webhook secret (the simulator's `webhookSecret`). */
  secret: string;
  /** The event kind: `subscription.created`, `user.revoked`, … */
  event: string;
  /** The event's data: `{ user_id, plan }` for `subscription.created`. */
  data: Record<string, unknown>;
  /** The delivery time, in ms since the epoch or a Date (default: now). The receiver refuses one more than 5 minutes away. */
  now?: number | Date | undefined;
}

/** A signed webhook delivery: the exact body and the headers the marketplace sends with it. */
export interface SignedDelivery {
  body: string;
  headers: { 'content-type': 'application/json'; 'x-service-signature': string };
}

/**
 * A delivery signed as the marketplace signs it: `{event, timestamp, data}`, with
 * `X-Service-Signature: sha256=<hex>` over the exact body.
 *
 * @example
 * const { body, headers } = webhookDelivery({ secret, event: 'user.revoked', data: { user_id: 'usr_ada' } });
 * await fetch('http://127.0.0.1:3000/api/marketplace/webhooks', { method: 'POST', body, headers });
 */
export function webhookDelivery(options: WebhookDeliveryOptions): SignedDelivery {
  if (typeof options !== 'object' || options === null) throw new MarketplaceKitError('ERR_CONFIG', 'webhookDelivery needs its options: { secret, event, data }');
  const { secret, event, data } = options;
  if (typeof event !== 'string' || event === '') throw new MarketplaceKitError('ERR_CONFIG', 'webhookDelivery: event must be an event name such as "user.revoked"');
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new MarketplaceKitError('ERR_CONFIG', 'webhookDelivery: data must be an object such as { user_id: "usr_ada" }');
  const at = options.now === undefined ? new Date() : new Date(options.now);
  if (Number.isNaN(at.getTime())) throw new MarketplaceKitError('ERR_CONFIG', 'webhookDelivery: now must be ms since the epoch or a valid Date');
  const body = JSON.stringify({ event, timestamp: at.toISOString(), data });
  return { body, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER.toLowerCase()]: signWebhookBody(body, secret) } as SignedDelivery['headers'] };
}

/**
 * The same delivery as a `Request` to `url`, to hand to your backend's handler without a server.
 *
 * @example
 * const answer = await backend(webhookRequest('http://app.test/api/marketplace/webhooks', { secret, event: 'user.revoked', data: { user_id: 'usr_ada' } }));
 * assert.equal(answer.status, 200);
 */
export function webhookRequest(url: string | URL, options: WebhookDeliveryOptions): Request {
  const { body, headers } = webhookDelivery(options);
  return new Request(url, { method: 'POST', body, headers });
}
