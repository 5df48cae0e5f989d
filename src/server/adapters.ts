/**
 * Thin adapters from the Web-standard handler to node:http and Express (docs/server.md "Adapters
 * and headers"): `toNodeHandler` here, `toExpressMiddleware` in `adapters/express.ts`, and what
 * they share in `adapters/`: calling the handler, the request it gets, the answer written back.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { bodyReadFirst } from './lib/body.js';
import { answer, assertAdapter, refusedBeforeHandler, withLog, type FetchHandler, type NodeAdapterOptions } from './adapters/handler.js';
import { bodyGone, isWebhookRoute, keptRawBody, requestUrl, toRequest } from './adapters/node-request.js';
import { smallBody } from './adapters/small-body.js';
import { writeResponse } from './adapters/write-response.js';

export { toExpressMiddleware, type ExpressAdapterOptions } from './adapters/express.js';
export type { FetchHandler, NodeAdapterOptions } from './adapters/handler.js';

/**
 * Serves a Web-standard handler from node:http, node:https or node:http2 (its compatibility API,
 * `createSecureServer(options, toNodeHandler(backend))`).
 *
 * @example
 * import { createServer } from 'node:http';
 * createServer(toNodeHandler(backend)).listen(3000);
 */
export function toNodeHandler(
  handler: FetchHandler & { basePath?: string },
  options: NodeAdapterOptions = {},
): (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void {
  assertAdapter('toNodeHandler', handler, options);
  options = withLog(options);
  const origin = options.origin === undefined ? undefined : new URL(options.origin).origin;
  return (incoming, outgoing) => {
    // node:http2's request and response offer all that is used here, under the same names.
    const [req, res] = [incoming as IncomingMessage, outgoing as ServerResponse];
    void (async () => {
      let response: Response;
      let request: Request | undefined;
      try {
        const url = requestUrl(req, req.url ?? '/', origin);
        // A framework's body parser (Fastify's, Koa's) or a logger read the stream first.
        const reader = "Something before toNodeHandler (a body parser, such as Fastify's or Koa's, or a middleware)";
        const kept = keptRawBody(req);
        const refused = !kept && bodyGone(req) ? bodyReadFirst(isWebhookRoute(url, handler.basePath), reader, 'give toNodeHandler the request unread') : null;
        // A small body of a declared length is read whole first: a stream costs more than the rest of a launch.
        const reading = refused || kept ? undefined : smallBody(req);
        const small = reading === undefined ? undefined : await reading;
        request = toRequest(req, res, url, refused ? null : (kept ?? small));
        response = await answer(refused ? () => Promise.reject(refused) : handler, request, options);
      } catch (error) {
        response = refusedBeforeHandler(error);
      }
      await writeResponse(res, response, request, options);
    })().catch((error: unknown) => res.destroy(error instanceof Error ? error : undefined));
  };
}
