import { MarketplaceKitError } from '../../shared/errors.js';

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

/** Reads a request body up to `limit` bytes; larger bodies are refused with 413 before all is read. */
export function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return Promise.resolve(new Uint8Array(0));
  const tooLarge = () => new MarketplaceKitError('ERR_PAYLOAD_TOO_LARGE', `Request bodies are limited to ${limit} bytes`, { status: 413 });
  // Node's ReadableStream is async iterable; the DOM lib's type does not say so.
  return readLimited(request.body as unknown as AsyncIterable<Uint8Array>, request.headers.get('content-length'), limit, tooLarge);
}
