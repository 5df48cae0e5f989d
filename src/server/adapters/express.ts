/**
 * `toExpressMiddleware`: the handler mounted in Express (4 and 5), with what a body parser
 * mounted before it left: raw bytes used as they are, a parsed JSON body re-serialised for the
 * session route, and a parsed webhook body refused (its signature covers the exact bytes).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MarketplaceKitError } from '../../shared/errors.js';
import { bodyReadFirst } from '../lib/body.js';
import { answer, assertAdapter, refusedBeforeHandler, withLog, type FetchHandler, type NodeAdapterOptions } from './handler.js';
import { declaresBody, isWebhookRoute, keptRawBody, requestUrl, toRequest } from './node-request.js';
import { writeResponse } from './write-response.js';

/** The parts of an Express request the adapter reads (Express 4 and 5). */
interface ExpressRequest extends IncomingMessage {
  originalUrl?: string | undefined;
  /** The path the middleware (or its router) is mounted at, '' at the root. */
  baseUrl?: string | undefined;
  body?: unknown;
}

/** Options of `toExpressMiddleware`. */
export interface ExpressAdapterOptions extends NodeAdapterOptions {
  /** Requests whose path is outside it go to `next()` (default: the backend's `basePath`, else `/`). */
  basePath?: string | undefined;
}

/**
 * Mounts a Web-standard handler in Express. Mount it before `express.json()`: a raw
 * (`express.raw`) or text body is used as is, so are bytes kept as `req.rawBody` (NestJS's
 * `rawBody: true`), and a JSON-parsed one is re-serialised for the session route, but on the
 * webhook route, whose signature covers the exact bytes, a parsed body is refused
 * (`ERR_WEBHOOK_BODY_PARSED`).
 *
 * @example
 * const app = express();
 * app.use(toExpressMiddleware(backend)); // before express.json()
 * app.get('/api/export', async (req, res) => { ... });
 */
export function toExpressMiddleware(
  handler: FetchHandler & { basePath?: string },
  options: ExpressAdapterOptions = {},
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  assertAdapter('toExpressMiddleware', handler, options);
  options = withLog(options);
  const basePath = (options.basePath ?? handler.basePath ?? '').replace(/\/+$/, '');
  if (options.basePath !== undefined && handler.basePath !== undefined && basePath !== handler.basePath) {
    throw new MarketplaceKitError(
      'ERR_CONFIG',
      `toExpressMiddleware: basePath ${JSON.stringify(options.basePath)} differs from the backend's ${JSON.stringify(handler.basePath)}, which would answer every request 404: set basePath in createAppBackend instead`,
    );
  }
  if (handler.basePath === '') {
    // Its router owns every path under its basePath: at the root, no request would reach the app's routes.
    throw new MarketplaceKitError(
      'ERR_CONFIG',
      "toExpressMiddleware: a backend at the root (basePath '/') would answer every request of the app: give it a basePath such as /api/marketplace, or serve it on its own with toNodeHandler",
    );
  }
  const origin = options.origin === undefined ? undefined : new URL(options.origin).origin;
  return (req, res, next) => {
    const expressReq = req as ExpressRequest;
    const target = expressReq.originalUrl ?? req.url ?? '/';
    const path = target.split('?')[0] ?? '/';
    const under = (prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
    let mistake: MarketplaceKitError | null = null;
    if (basePath !== '' && !under(basePath)) {
      // Mounted with a path (`app.use('/mp', …)`, a router): the backend still sees the whole
      // path, which its basePath must then include. Said at once, not left to Express's 404.
      const mount = expressReq.baseUrl ?? '';
      // Mounted at a prefix of basePath (`app.use('/api', …)` for /api/marketplace) is right.
      const fine = mount === '' || basePath.startsWith(`${mount}/`);
      if (fine || !under(`${mount}${basePath}`)) return next();
      mistake = new MarketplaceKitError(
        'ERR_CONFIG',
        `toExpressMiddleware is mounted under ${mount}, and the backend sees whole paths: its basePath (createAppBackend's) must be ${JSON.stringify(`${mount}${basePath}`)}, or mount it without a path`,
        { status: 500 },
      );
    }
    void (async () => {
      let response: Response;
      let request: Request | undefined;
      try {
        const url = requestUrl(req, target, origin);
        const body = mistake ?? bodyFromParser(expressReq, isWebhookRoute(url, basePath));
        // A body a parser consumed is the app's set-up mistake, as a wrong mount is: answered 500
        // in the handler's place, so that onError (console.error by default) hears of it like any 5xx.
        const refused = body instanceof MarketplaceKitError;
        request = toRequest(req, res, url, refused ? null : body);
        response = await answer(refused ? () => Promise.reject(body) : handler, request, options);
      } catch (error) {
        response = refusedBeforeHandler(error);
      }
      await writeResponse(res, response, request, options);
    })().catch(next);
  };
}

/**
 * What a body parser left: raw bytes or text to use, a parsed value, or nothing (`undefined`: the
 * body is still to be read). A parsed webhook body, or a body read and not kept, gives the error
 * to answer instead.
 */
function bodyFromParser(req: ExpressRequest, isWebhook: boolean): BodyInit | null | undefined | MarketplaceKitError {
  const { body } = req;
  // The exact bytes first, where a parser kept them (also beside a text body it decoded).
  const kept = keptRawBody(req);
  if (kept) return kept;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return new Uint8Array(body);
  // Read by a parser or not at all: a body value alone says nothing, as Express 4's parsers set
  // `req.body = {}` on every request, also on those they leave unread.
  if (!req.readableEnded) return undefined;
  const parsed = body !== undefined && body !== null;
  if (!parsed && !declaresBody(req)) return null; // nothing was lost
  if (isWebhook || !parsed) {
    return bodyReadFirst(
      isWebhook,
      parsed ? 'A body parser (e.g. express.json())' : 'A middleware before toExpressMiddleware',
      'mount toExpressMiddleware(backend) before it, or use express.raw({ type: "application/json", limit: "1mb" }) for the webhook path (in NestJS: create the app with { rawBody: true })',
    );
  }
  return JSON.stringify(body);
}
