/**
 * Webhook verification (seed §6; DESIGN D): HMAC-SHA256 over the exact raw body bytes, checked
 * in constant time against one or several secrets (rotation), then the body, its timestamp
 * (both directions) and replays. A delivery is recorded by the replay guard only after it has
 * fully verified, so a forged or broken delivery changes no state.
 */
import { isUtf8 } from 'node:buffer';
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { MarketplaceKitError, type ErrorCode } from '../shared/errors.js';
import { parseWebhookDelivery, type WebhookDelivery } from '../shared/schemas.js';
import { ExpiringSet } from './lib/expiring-set.js';

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/** A webhook that must not be handled. Switch on `code`; `status` is what to answer with. */
export class WebhookVerificationError extends MarketplaceKitError {
  override name = 'WebhookVerificationError';
}

/**
 * Remembers deliveries already handled. Replace the in-memory default with your own store
 * (e.g. Redis `SET key 1 PX ttl NX`) when several processes receive webhooks.
 */
export interface WebhookReplayGuard {
  /** True when `key` was recorded and its record has not expired at `now`. */
  seen(key: string, now: number): boolean | Promise<boolean>;
  /** Records `key` until `expiresAt` (ms since the epoch). */
  record(key: string, expiresAt: number, now: number): void | Promise<void>;
}

/**
 * The default replay guard: in memory, bounded (oldest records dropped first), records expire
 * when the delivery's timestamp leaves the tolerance window.
 *
 * @example
 * const replayGuard = createMemoryReplayGuard({ maxEntries: 50_000 });
 * await verifyWebhook(body, header, { secret, replayGuard });
 */
export function createMemoryReplayGuard(options: { maxEntries?: number } = {}): WebhookReplayGuard {
  const set = new ExpiringSet(options.maxEntries ?? 10_000);
  return {
    seen: (key, now) => set.has(key, now),
    record: (key, expiresAt) => set.add(key, expiresAt),
  };
}

export interface VerifyWebhookOptions {
  /** The webhook secret of the Developer Console. */
  secret?: string;
  /** Several secrets, during a rotation: a delivery signed with any of them is accepted. */
  secrets?: readonly string[];
  /** Maximum distance between the delivery's `timestamp` and now, either way (default 300 s). */
  toleranceSeconds?: number;
  /** Clock in ms since the epoch, or a Date (tests). */
  now?: number | Date;
  /** Default: one process-wide in-memory guard. */
  replayGuard?: WebhookReplayGuard;
}

/** The raw body as received: the exact bytes, or their text. */
export type RawBody = string | Uint8Array | ArrayBuffer | ArrayBufferView;

export interface ReceivedWebhook {
  delivery: WebhookDelivery;
  /** Records the delivery in the replay guard: call it once the delivery has been handled. */
  markHandled(): Promise<void>;
}

const defaultGuard = createMemoryReplayGuard();
const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Verifies a webhook delivery and returns it typed, or throws a `WebhookVerificationError`.
 * The delivery is recorded in the replay guard at once; to record it only after your handler
 * succeeded (so that a failed delivery can be retried), use `receiveWebhook`.
 *
 * @example
 * app.post('/webhooks', express.raw({ type: 'application/json' }), async (req, res) => {
 *   const delivery = await verifyWebhook(req.body, req.get('X-Service-Signature'), { secret });
 *   if (delivery.event === 'subscription.created') console.log(delivery.data.plan);
 *   res.sendStatus(200);
 * });
 */
export function verifyWebhook(
  rawBody: RawBody,
  signatureHeader: string | null | undefined,
  options: VerifyWebhookOptions,
): Promise<WebhookDelivery> {
  // Synchronous all the way when the guard is (the default one is): this is the hot path.
  try {
    const checked = inspect(rawBody, signatureHeader, options);
    const { guard, key, now } = checked;
    const seen = guard.seen(key, now);
    if (seen === true || seen === false) {
      if (seen) duplicate();
      const recorded = guard.record(key, checked.expiresAt, now);
      return recorded ? recorded.then(() => checked.delivery) : Promise.resolve(checked.delivery);
    }
    return seen.then(async (wasSeen) => {
      if (wasSeen) duplicate();
      await guard.record(key, checked.expiresAt, now);
      return checked.delivery;
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Verifies a delivery like `verifyWebhook` (duplicates included) but leaves recording to the
 * caller: `markHandled()` after the delivery was handled.
 *
 * @example
 * const { delivery, markHandled } = await receiveWebhook(body, header, { secrets: [current, previous] });
 * await handle(delivery); // throws → answer 500, the marketplace retries, nothing was recorded
 * await markHandled();
 */
export async function receiveWebhook(
  rawBody: RawBody,
  signatureHeader: string | null | undefined,
  options: VerifyWebhookOptions,
): Promise<ReceivedWebhook> {
  const { guard, key, now, expiresAt, delivery } = inspect(rawBody, signatureHeader, options);
  if (await guard.seen(key, now)) duplicate();
  return {
    delivery,
    markHandled: async () => {
      await guard.record(key, expiresAt, now);
    },
  };
}

interface Inspected {
  delivery: WebhookDelivery;
  guard: WebhookReplayGuard;
  key: string;
  now: number;
  expiresAt: number;
}

/** Every check except the replay guard, in order: input, secret, header, signature, body, timestamp. */
function inspect(rawBody: RawBody, signatureHeader: string | null | undefined, options: VerifyWebhookOptions): Inspected {
  const bytes = toBytes(rawBody);
  const secrets = secretsOf(options);
  const signature = readSignatureHeader(signatureHeader);
  if (!matchesAnySecret(bytes, signature.bytes, secrets)) {
    fail('ERR_WEBHOOK_SIGNATURE_MISMATCH', 401, `The ${SIGNATURE_HEADER} signature does not match the body for any configured secret`);
  }

  const delivery = parseBody(bytes);
  const now = options.now === undefined ? Date.now() : +options.now;
  const toleranceMs = (options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS) * 1000;
  const sentAt = TIMESTAMP_PATTERN.test(delivery.timestamp) ? Date.parse(delivery.timestamp) : Number.NaN;
  if (Number.isNaN(sentAt)) fail('ERR_WEBHOOK_TIMESTAMP_INVALID', 400, 'The delivery timestamp is not an ISO 8601 date-time');
  if (Math.abs(now - sentAt) > toleranceMs) {
    const direction = sentAt < now ? 'old' : 'far in the future';
    fail(
      'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
      400,
      `The delivery timestamp is too ${direction}: ${Math.round(Math.abs(now - sentAt) / 1000)} s from now, tolerance ${toleranceMs / 1000} s`,
    );
  }
  // A delivery id, when one is ever sent, names the delivery across re-signed retries; otherwise
  // the signature (an HMAC of the exact bytes) names it. Hex never contains ":".
  const key = delivery.id ? `id:${delivery.id}` : signature.hex;
  return { delivery, guard: options.replayGuard ?? defaultGuard, key, now, expiresAt: sentAt + toleranceMs };
}

function duplicate(): never {
  fail('ERR_WEBHOOK_DUPLICATE', 409, 'This delivery was already received within the tolerance window');
}

function fail(code: ErrorCode, status: number, message: string): never {
  throw new WebhookVerificationError(code, message, { status });
}

function toBytes(rawBody: RawBody): Uint8Array | string {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  if (ArrayBuffer.isView(rawBody)) return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  if (rawBody === undefined || rawBody === null) fail('ERR_WEBHOOK_BODY_INVALID', 400, 'The webhook body is missing');
  return fail(
    'ERR_WEBHOOK_BODY_PARSED',
    500,
    `verifyWebhook needs the raw request body (a string or bytes) exactly as received, but got ${typeof rawBody === 'object' ? 'an already parsed object' : `a ${typeof rawBody}`}. ` +
      'The signature covers the exact bytes, so a re-serialised object cannot be verified: read the body raw ' +
      "(e.g. express.raw({ type: 'application/json' }) or await request.arrayBuffer()).",
  );
}

function secretsOf(options: VerifyWebhookOptions): readonly string[] {
  const secrets = options.secrets ?? (options.secret === undefined ? [] : [options.secret]);
  let usable = secrets.length > 0;
  for (const secret of secrets) if (typeof secret !== 'string' || secret === '') usable = false;
  if (!usable) fail('ERR_WEBHOOK_NO_SECRET', 500, 'verifyWebhook needs a non-empty `secret` or `secrets`');
  return secrets;
}

/** The signature's 32 bytes and their hex. Plain string checks: a regex costs more than the HMAC comparison. */
function readSignatureHeader(header: string | null | undefined): { hex: string; bytes: Buffer } {
  if (header === undefined || header === null || header === '') {
    fail('ERR_WEBHOOK_SIGNATURE_MISSING', 401, `The ${SIGNATURE_HEADER} header is missing`);
  }
  const value = typeof header === 'string' ? header.trim() : '';
  const hex = value.slice(7).toLowerCase();
  // Buffer.from stops at the first non-hex character, so 32 bytes means 64 valid hex digits.
  const bytes = value.length === 71 && value.startsWith('sha256=') ? Buffer.from(hex, 'hex') : undefined;
  if (bytes === undefined || bytes.length !== 32) {
    fail('ERR_WEBHOOK_SIGNATURE_MALFORMED', 401, `The ${SIGNATURE_HEADER} header is not of the form sha256=<64 hex digits>`);
  }
  return { hex, bytes };
}

function matchesAnySecret(body: Uint8Array | string, signature: Buffer, secrets: readonly string[]): boolean {
  let matched = false;
  // Every secret is tried, so the time taken does not tell which one matched.
  for (const secret of secrets) {
    if (timingSafeEqual(createHmac('sha256', hmacKey(secret)).update(body).digest(), signature)) matched = true;
  }
  return matched;
}

/** Strict UTF-8 decoding (invalid bytes throw); `isUtf8` + `toString` beats a fatal TextDecoder here. */
function utf8Text(bytes: Uint8Array): string {
  if (!isUtf8(bytes)) throw new TypeError('The body is not valid UTF-8');
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('utf8');
}

/** Imported keys, reused: importing the secret again for every delivery costs a fifth of the HMAC. */
const hmacKeys = new Map<string, KeyObject>();
function hmacKey(secret: string): KeyObject {
  let key = hmacKeys.get(secret);
  if (!key) {
    if (hmacKeys.size >= 16) hmacKeys.clear();
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    hmacKeys.set(secret, key);
  }
  return key;
}

function parseBody(body: Uint8Array | string): WebhookDelivery {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : utf8Text(body));
  } catch (error) {
    throw new WebhookVerificationError('ERR_WEBHOOK_BODY_INVALID', 'The webhook body is not UTF-8 JSON', { status: 400, cause: error });
  }
  try {
    return parseWebhookDelivery(value);
  } catch (error) {
    const message = error instanceof Error ? error.message : 'The webhook body is not a delivery';
    throw new WebhookVerificationError('ERR_WEBHOOK_BODY_INVALID', message, { status: 400, cause: error });
  }
}
