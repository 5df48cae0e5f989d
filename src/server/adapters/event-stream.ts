/** A Server-Sent Events answer onto a node:http response, chunk by chunk, as the client reads. */
import type { ServerResponse } from 'node:http';
import { copyHeaders } from './node-headers.js';

/**
 * Writes an event stream (`text/event-stream`, Server-Sent Events), which never ends: each chunk
 * as it comes, no faster than the client reads (the handler's stream is read only once the socket
 * drained). The handler's stream is cancelled when the client leaves; one that fails cuts the
 * connection, which tells an `EventSource` to reconnect.
 */
export async function writeEventStream(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  copyHeaders(res, response.headers);
  res.flushHeaders();
  const reader = response.body!.getReader();
  const left = new Promise<void>((resolve) => res.once('close', resolve));
  void left.then(() => reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      // A stream that fails while the client is slow ends the wait too (`closed` rejects).
      if (!res.write(Buffer.from(value.buffer, value.byteOffset, value.byteLength))) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), left, reader.closed]);
    }
    res.end();
  } catch {
    res.destroy();
  }
}
