/**
 * Webhook verification (docs/marketplace.md#webhooks; docs/decisions.md#webhooks): HMAC-SHA256 over the exact raw body bytes, checked
 * in constant time against one or several secrets (rotation), then the body, its timestamp
 * (both directions) and replays. A delivery is claimed in the replay store only after it has
 * fully verified, so a forged or broken delivery changes no state.
 */
import { isUtf8 } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { compile } from 'zod/mini';
import { MarketplaceKitError, type ErrorCode } from '../shared/errors.js';
import { KnownWebhookDelivery, parseWebhookDelivery, type WebhookDelivery } from '../shared/schemas.js';
import { deliveryTime } from './lib/delivery-time.js';
import { hmacKeyFor, hmacKeysFor, type HmacKey } from './lib/hmac-key.js';
import { optionsObject } from './lib/options-object.js';
import { nowOption } from './lib/time-options.js';
import { numberOption } from '../shared/options.js';
import { claimAnswer, claimInOrder, createMemoryReplayStore, releaseAll, type ReplayStore } from './replay-store.js';

/** The request header that carries a delivery's signature (docs/marketplace.md#webhooks). */
export const SIGNATURE_HEADER = 'X-Service-Signature';
/** How far a delivery's `timestamp` may be from now, either way, by default (seconds). */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/** A webhook that must not be handled. Switch on `code`; `status` is what to answer with. */
export class WebhookVerificationError extends MarketplaceKitError {
  override name = 'WebhookVerificationError';
}

/** Options of `verifyWebhook` and `receiveWebhook`. */
export interface VerifyWebhookOptions {
  /** The webhook secret of the Developer Console. */
  secret?: string | undefined;
  /** Several secrets, during a rotation: a delivery signed with any of them is accepted. */
  secrets?: readonly string[] | undefined;
  /** Maximum distance between the delivery's `timestamp` and now, either way (default 300 s). */
  toleranceSeconds?: number | undefined;
  /** Clock in ms since the epoch, or a Date (tests). */
  now?: number | Date | undefined;
  /** Where deliveries are claimed (keys start with `webhook:`). Default: one process-wide in-memory store. */
  replayStore?: ReplayStore | undefined;
}

/** The raw body as received: the exact bytes, or their text. */
export type RawBody = string | Uint8Array | ArrayBuffer | ArrayBufferView;

/** A verified delivery, claimed against replays, as `receiveWebhook` gives it. */
export interface ReceivedWebhook {
  /** The parsed delivery. */
  delivery: WebhookDelivery;
  /** Frees the delivery's claim when handling it failed, so that the marketplace's retry is handled. Once only. */
  release(): Promise<void>;
}

const defaultStore = createMemoryReplayStore();

/**
 * Verifies a webhook delivery and returns it typed, or throws a `WebhookVerificationError`.
 * The delivery is claimed in the replay store, and stays claimed: to free it when your handler
 * fails (so that the marketplace's retry is handled), use `receiveWebhook`.
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
  // Synchronous all the way when the store is (the default one is): this is the hot path.
  try {
    const { delivery, keys, sentAt, expiresAt, now } = checkWebhook(rawBody, signatureHeader, options, 'verifyWebhook');
    const store = options.replayStore ?? defaultStore;
    if (keys.length > 1) {
      return claimInOrder(store, keys, expiresAt, now, sentAt).then((fresh) => {
        if (!fresh) duplicate();
        return delivery;
      });
    }
    // Issued when it was sent: a store that lost its data refuses a delivery sent before the loss.
    const claimed = store.claim(keys[0]!, expiresAt, now, sentAt);
    if (claimed === true) return Promise.resolve(delivery);
    if (claimed === false) duplicate();
    return Promise.resolve(claimed).then((first) => {
      if (!claimAnswer(first)) duplicate();
      return delivery;
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Verifies and claims a delivery like `verifyWebhook` (so a concurrent copy is a duplicate at
 * once), and hands back `release()` to free the claim when handling it fails.
 *
 * @example
 * const { delivery, release } = await receiveWebhook(body, header, { secrets: [current, previous] });
 * try {
 *   await handle(delivery);
 * } catch (error) {
 *   await release(); // answer 500: the marketplace retries, and the retry is handled
 *   throw error;
 * }
 */
export async function receiveWebhook(
  rawBody: RawBody,
  signatureHeader: string | null | undefined,
  options: VerifyWebhookOptions,
): Promise<ReceivedWebhook> {
  const { delivery, keys, sentAt, expiresAt, now } = checkWebhook(rawBody, signatureHeader, options, 'receiveWebhook');
  const store = options.replayStore ?? defaultStore;
  if (!(await claimInOrder(store, keys, expiresAt, now, sentAt))) duplicate();
  let released = false;
  return {
    delivery,
    release: async () => {
      // A second call must not free a claim that a retry has made meanwhile.
      if (released) return;
      released = true;
      await releaseAll(store, keys);
    },
  };
}

/** A delivery that passed every check but the replay claim: what to claim it by, and until when. */
export interface CheckedWebhook {
  delivery: WebhookDelivery;
  /** Its replay keys: the signature's, then the delivery id's when it carries one. */
  keys: string[];
  /** Its own `timestamp` (ms since the epoch). */
  sentAt: number;
  /** Until when a copy of it is a replay: one millisecond past the tolerance window. */
  expiresAt: number;
  /** The time it was checked at. */
  now: number;
}

/**
 * Every check of `verifyWebhook` except the replay claim, in order: input, secret and options,
 * header, signature, body, timestamp. For a caller that claims the keys its own way (the app
 * backend's webhook route, in `stores.webhooks`). `caller` names the public function in errors.
 */
export function checkWebhook(
  rawBody: RawBody,
  signatureHeader: string | null | undefined,
  options: Omit<VerifyWebhookOptions, 'replayStore'>,
  caller = 'checkWebhook',
): CheckedWebhook {
  optionsObject(options, caller);
  const bytes = toBytes(rawBody, caller);
  // One secret is checked without building a list: this runs for every delivery.
  const { secret } = options;
  const secrets = options.secrets ?? null;
  if (secrets === null ? !usableSecret(secret) : !Array.isArray(secrets) || secrets.length === 0) {
    fail('ERR_WEBHOOK_NO_SECRET', 500, `${caller} needs a non-empty \`secret\` or \`secrets\``);
  }
  // `secrets: [current, process.env.PREVIOUS]` with the variable unset: say which one.
  const unusable = secrets === null ? -1 : secrets.findIndex((entry) => !usableSecret(entry));
  if (unusable >= 0) fail('ERR_WEBHOOK_NO_SECRET', 500, `${caller}: secrets[${unusable}] is empty or not a string; each secret must be a non-empty string`);
  const now = nowOption(options.now, `${caller}: now`);
  const toleranceMs = numberOption(options.toleranceSeconds, DEFAULT_WEBHOOK_TOLERANCE_SECONDS, `${caller}: toleranceSeconds`) * 1000;
  const hex = readSignatureHeader(signatureHeader);
  if (!(secrets === null ? matches(bytes, hmacKeyFor(options, secret as string)) : matchesAnySecret(bytes, hmacKeysFor(secrets)))) {
    fail('ERR_WEBHOOK_SIGNATURE_MISMATCH', 401, `The ${SIGNATURE_HEADER} signature does not match the body for any configured secret`);
  }

  const delivery = parseBody(bytes);
  const sentAt = deliveryTime(delivery.timestamp);
  if (Number.isNaN(sentAt)) fail('ERR_WEBHOOK_TIMESTAMP_INVALID', 400, 'The delivery timestamp is not an ISO 8601 date-time');
  if (Math.abs(now - sentAt) > toleranceMs) {
    const direction = sentAt < now ? 'old' : 'far in the future';
    fail(
      'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
      400,
      `The delivery timestamp is too ${direction}: ${Math.round(Math.abs(now - sentAt) / 1000)} s from now, tolerance ${toleranceMs / 1000} s`,
    );
  }
  // The signature (an HMAC of the exact bytes) names one copy of a delivery; a delivery id, when
  // one is ever sent, names the delivery across re-signed retries. Hex never contains ":". The
  // `webhook:` prefix keeps these apart from context-token keys in a shared store.
  const keys = delivery.id ? [`webhook:${hex}`, `webhook:id:${delivery.id}`] : [`webhook:${hex}`];
  // Claimed one millisecond past the window: a delivery accepted at its very edge (|now - sent| =
  // tolerance) must still be held then, when the store counts only claims that expire later than now.
  return { delivery, keys, sentAt, now, expiresAt: sentAt + toleranceMs + 1 };
}

function duplicate(): never {
  fail('ERR_WEBHOOK_DUPLICATE', 409, 'This delivery was already received within the tolerance window');
}

function fail(code: ErrorCode, status: number, message: string): never {
  throw new WebhookVerificationError(code, message, { status });
}

function toBytes(rawBody: RawBody, caller: string): Uint8Array | string {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  if (ArrayBuffer.isView(rawBody)) return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  // No body at all is the app's set-up, not the sender's doing: a request without one gives ''.
  if (rawBody === undefined || rawBody === null) {
    fail(
      'ERR_WEBHOOK_BODY_PARSED',
      500,
      `${caller} got ${String(rawBody)} for the raw request body: no body parser read it. Read the body raw on this route ` +
        "(e.g. express.raw({ type: 'application/json' }), whose type must match the request's Content-Type, or await request.arrayBuffer()).",
    );
  }
  return fail(
    'ERR_WEBHOOK_BODY_PARSED',
    500,
    `${caller} needs the raw request body (a string or bytes) exactly as received, but got ${typeof rawBody === 'object' ? 'an already parsed object' : `a ${typeof rawBody}`}. ` +
      'The signature covers the exact bytes, so a re-serialised object cannot be verified: read the body raw ' +
      "(e.g. express.raw({ type: 'application/json' }) or await request.arrayBuffer()).",
  );
}

function usableSecret(secret: unknown): boolean {
  return typeof secret === 'string' && secret !== '';
}

/**
 * The header's signature, decoded into `signatureBytes`; returns its hex in lower case (the replay
 * key). Verification is synchronous from here to the comparison, so one buffer serves every call.
 */
const signatureBytes = Buffer.alloc(32);
function readSignatureHeader(header: string | null | undefined): string {
  if (header === undefined || header === null || header === '') {
    fail('ERR_WEBHOOK_SIGNATURE_MISSING', 401, `The ${SIGNATURE_HEADER} header is missing`);
  }
  const value = typeof header === 'string' ? header.trim() : '';
  const hex = value.length === 71 && value.startsWith('sha256=') ? value.slice(7) : '';
  // Decoded, then encoded again: only 64 hex digits come back as they were. (Node's decoder stops
  // at the first pair that is not hex, and reads only the low byte of each character, so 'İ'
  // (U+0130) would decode as '0': a copy so rewritten would verify under a replay key of its own.)
  // Encoding makes the key in lower case, as one flat string, which the store hashes quickly.
  const canonical = signatureBytes.write(hex, 'hex') === 32 ? signatureBytes.toString('hex') : '';
  if (canonical === '' || (canonical !== hex && canonical !== hex.toLowerCase())) {
    fail('ERR_WEBHOOK_SIGNATURE_MALFORMED', 401, `The ${SIGNATURE_HEADER} header is not of the form sha256=<64 hex digits>`);
  }
  return canonical;
}

function matches(body: Uint8Array | string, key: HmacKey): boolean {
  return timingSafeEqual(createHmac('sha256', key.node).update(body).digest(), signatureBytes);
}

function matchesAnySecret(body: Uint8Array | string, keys: readonly HmacKey[]): boolean {
  let matched = false;
  // Every secret is tried, so the time taken does not tell which one matched.
  for (const key of keys) if (matches(body, key)) matched = true;
  return matched;
}

/**
 * Strict UTF-8 decoding. The decoder replaces every ill-formed sequence with U+FFFD, so a text
 * without one came from valid UTF-8; only a text with one (rare) is validated byte by byte. The
 * search costs less than a validation pass, and nothing at all in an ASCII text.
 */
function utf8Text(bytes: Uint8Array): string {
  const text = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('utf8');
  if (text.includes('\uFFFD') && !isUtf8(bytes)) throw new TypeError('The body is not valid UTF-8');
  return text;
}

/**
 * The delivery schemas compiled by zod (on first use) into one plain function: a tenth of the
 * interpreted parse. Anything it does not accept goes through `parseWebhookDelivery`, which then
 * decides (unknown kinds) or words the error, so results and messages are the same.
 */
let compiledKnown: typeof KnownWebhookDelivery | undefined;

function parseDelivery(value: unknown): WebhookDelivery {
  compiledKnown ??= compile(KnownWebhookDelivery);
  const known = compiledKnown.safeParse(value);
  return known.success ? known.data : parseWebhookDelivery(value);
}

function parseBody(body: Uint8Array | string): WebhookDelivery {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : utf8Text(body));
  } catch (error) {
    throw new WebhookVerificationError('ERR_WEBHOOK_BODY_INVALID', 'The webhook body is not UTF-8 JSON', { status: 400, cause: error });
  }
  try {
    return parseDelivery(value);
  } catch (error) {
    const message = error instanceof Error ? error.message : 'The webhook body is not a delivery';
    throw new WebhookVerificationError('ERR_WEBHOOK_BODY_INVALID', message, { status: 400, cause: error });
  }
}
