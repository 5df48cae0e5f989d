import { MarketplaceKitError } from '../../shared/errors.js';
import { WebhookVerificationError } from '../webhooks.js';
import { unreadBody } from './lazy-request.js';

/**
 * Reads a body up to `limit` bytes from any byte stream (a Web `ReadableStream`, a node:http
 * request). A body declared or found to be larger fails with `tooLarge()` before all of it is read;
 * the stream is then released (cancelled or destroyed by the iterator's `return`).
 */
export async function readLimited(
  chunks: AsyncIterable<Uint8Array>,
  declaredLength: string | null | undefined,
  limit: number,
  tooLarge: () => Error,
): Promise<Uint8Array> {
  const declared = Number(declaredLength);
  if (declaredLength != null && Number.isFinite(declared) && declared > limit) {
    // Released unread, as `for await` releases it when a streamed body turns out too large: a
    // fetch answer's connection is freed at once, not when its timeout fires (or never).
    await chunks[Symbol.asyncIterator]().return?.();
    throw tooLarge();
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    parts.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return bytes;
}

/**
 * The error for a request whose body something read before the kit: the app's set-up mistake,
 * answered 500 so that `onError` hears of it, where an empty body would pass for the client's (a
 * signed webhook would fail as forged). `reader` says who read it, `advice` what to change.
 */
export function bodyReadFirst(isWebhook: boolean, reader: string, advice: string): MarketplaceKitError {
  const message = isWebhook
    ? `${reader} read the webhook body before the kit could, and its signature covers the exact raw bytes: ${advice}`
    : `${reader} read the request body before the kit could: ${advice}`;
  return isWebhook
    ? new WebhookVerificationError('ERR_WEBHOOK_BODY_PARSED', message, { status: 500 })
    : new MarketplaceKitError('ERR_CONFIG', message, { status: 500 });
}

/**
 * Reads a request body up to `limit` bytes; larger bodies are refused with 413 before all is read,
 * a body read before (`bodyUsed`) with `bodyReadFirst`.
 */
export function readBodyBytes(request: Request, limit: number, isWebhook: boolean): Promise<Uint8Array> {
  const tooLarge = () => new MarketplaceKitError('ERR_PAYLOAD_TOO_LARGE', `Request bodies are limited to ${limit} bytes`, { status: 413 });
  // Read whole by toNodeHandler, and nobody has touched the Request since (docs/server.md, "Speed").
  const unread = unreadBody(request);
  if (unread !== undefined) return unread.byteLength > limit ? Promise.reject(tooLarge()) : Promise.resolve(unread);
  if (request.bodyUsed) {
    const advice = "give the backend the Request unread (a middleware that needs the body can read request.clone() instead)";
    return Promise.reject(bodyReadFirst(isWebhook, 'Something (a middleware calling request.json() or text(), say)', advice));
  }
  if (!request.body) return Promise.resolve(new Uint8Array(0));
  // Node's ReadableStream is async iterable; the DOM lib's type does not say so.
  return readLimited(request.body as unknown as AsyncIterable<Uint8Array>, request.headers.get('content-length'), limit, tooLarge);
}
