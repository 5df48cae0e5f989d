/**
 * The small body of a request, read whole before the handler runs: for a body of a declared
 * length up to 64 KB, a stream costs more than the rest of a launch (docs/server.md, "Speed").
 */
import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream';

/** Bodies up to this size, of a declared length, are read whole before the Request is made. */
const SMALL_BODY_BYTES = 64 * 1024;

/**
 * The whole body of a request that declares a small one (`Content-Length` up to 64 KB, no chunking),
 * read before the handler runs; undefined for any other (GET, a large or chunked body: streamed).
 */
export function smallBody(req: IncomingMessage): Promise<Buffer<ArrayBuffer>> | undefined {
  const method = req.method ?? 'GET';
  const length = req.headers['content-length'];
  if (method === 'GET' || method === 'HEAD' || req.readableEnded || length === undefined || req.headers['transfer-encoding'] !== undefined) return undefined;
  if (!(Number(length) <= SMALL_BODY_BYTES)) return undefined;
  return new Promise((resolve, reject) => {
    const chunks: Buffer<ArrayBuffer>[] = [];
    req.on('data', (chunk: Buffer<ArrayBuffer> | string) => void chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    finished(req, (error) => (error ? reject(error) : resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))));
  });
}
