/**
 * The backend's front: which route a request is for (under `basePath`, own keys only), 404 and 405
 * answers, errors turned into answers (and reported), CORS, and HEAD without a body.
 */
import { MarketplaceKitError, isKitError } from '../../shared/errors.js';
import { toErrorResponse } from '../responses.js';
import type { BackendConfig } from './config.js';
import type { BackendContext, Route } from './context.js';

/** Routes by path (under `basePath`), then by method. */
export type RouteTable = Record<string, Partial<Record<string, Route>>>;

export function router(routes: RouteTable, config: BackendConfig, report: BackendContext['report']): (request: Request) => Promise<Response> {
  const { basePath } = config;

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname === basePath ? '/' : url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length) : null;
    if (path === null) throw new MarketplaceKitError('ERR_NOT_FOUND', `${url.pathname} is outside ${basePath || '/'}`, { status: 404 });
    const methods = ownValue(routes, path.replace(/\/+$/, '') || '/');
    if (!methods) throw new MarketplaceKitError('ERR_NOT_FOUND', `No route ${request.method} ${url.pathname}`, { status: 404 });
    if (request.method === 'OPTIONS' && config.corsOrigins.size > 0) return new Response(null, { status: 204 });
    // Own keys only: a runtime that passes any method name on (Deno, Bun, Workers) must not find
    // `constructor` or `toString` among the routes.
    const handler = ownValue(methods, request.method);
    if (!handler) {
      const response = toErrorResponse(
        new MarketplaceKitError('ERR_METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${url.pathname}`, { status: 405 }),
      );
      response.headers.set('allow', Object.keys(methods).join(', '));
      return response;
    }
    return handler(request, url);
  }

  return async function handle(request: Request): Promise<Response> {
    let response: Response;
    try {
      response = await route(request);
    } catch (error) {
      response = toErrorResponse(error);
      // Every 5xx answer, the marketplace's failures included (their upstream text is not in the
      // answer), and signatures that match no secret: mostly a wrong or rotated secret, which
      // would otherwise fail in silence (the marketplace retries, the browser shows an error).
      if (response.status >= 500 || isKitError(error, 'ERR_WEBHOOK_SIGNATURE_MISMATCH') || isKitError(error, 'ERR_CONTEXT_TOKEN_SIGNATURE')) {
        report(error, request);
      }
    }
    // An answer to HEAD has no body, errors included (node:http drops it; a fetch runtime may not).
    return withCors(request, request.method === 'HEAD' ? new Response(null, response) : response, config.corsOrigins);
  };
}

/** `record[key]` when it is the record's own: never an inherited `constructor` or `toString`. */
function ownValue<T>(record: Partial<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function withCors(request: Request, response: Response, allowed: ReadonlySet<string>): Response {
  const origin = request.headers.get('origin');
  if (origin === null || !allowed.has(origin)) return response;
  const headers = new Headers(response.headers);
  headers.set('access-control-allow-origin', origin);
  headers.set('access-control-allow-credentials', 'true');
  headers.append('vary', 'Origin');
  if (request.method === 'OPTIONS') {
    headers.set('access-control-allow-methods', 'GET, POST, DELETE');
    headers.set('access-control-allow-headers', 'authorization, content-type');
    headers.set('access-control-max-age', '600');
  } else {
    // The browser kit reads how long a 429 or 503 asks it to wait before it renews again, and
    // counts session lifetimes by this server's clock when the browser's is wrong.
    headers.set('access-control-expose-headers', 'retry-after, date');
  }
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
