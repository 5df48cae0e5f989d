import { MarketplaceKitError } from '../../shared/errors.js';

/** Reads a request body up to `limit` bytes; larger bodies are refused with 413 before all is read. */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () => new MarketplaceKitError('ERR_PAYLOAD_TOO_LARGE', `Request bodies are limited to ${limit} bytes`, { status: 413 });
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
