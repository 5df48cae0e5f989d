/**
 * Test servers on 127.0.0.1, on a free port.
 *
 * A server that closes an idle keep-alive socket races the client that pools it: on a busy
 * machine, the client can write its next request to the socket in the very turn of the event
 * loop in which the server's idle timer destroys it, and the request fails with ECONNRESET.
 * Test servers therefore never time out idle sockets (`keepAliveTimeout = 0`): the client (fetch
 * closes its idle sockets after 4 s) is the only side that ends them, and it never reuses a
 * socket it closed. `close()` ends every socket that is still open.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on 127.0.0.1:0; resolves with the origin, `http://127.0.0.1:<port>`. */
export async function listenOnLoopback(server: Server): Promise<string> {
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes the server and every connection it still holds. */
export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
}
