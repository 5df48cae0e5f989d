/**
 * What the page the dashboard embeds (the app's embed URL) needs in its headers: that only the
 * dashboard may frame it (`frame-ancestors`), and that it sends no `Referer` while its address
 * still carries the context token.
 */
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import { MarketplaceKitError } from '../shared/errors.js';
import { exactOrigin } from '../shared/origin.js';

/**
 * The `Content-Security-Policy` value that lets only the given dashboard origins frame a page.
 *
 * @example
 * frameAncestors(['https://dashboard.example']); // "frame-ancestors https://dashboard.example"
 */
export function frameAncestors(dashboardOrigins: string | readonly string[]): string {
  const list = typeof dashboardOrigins === 'string' ? [dashboardOrigins] : dashboardOrigins;
  if (!Array.isArray(list)) throw new MarketplaceKitError('ERR_CONFIG', `frameAncestors: pass the dashboard origins (a string or an array), got ${String(list)}`);
  const origins = list.map((value) => {
    const origin = exactOrigin(value);
    if (origin === null) throw new MarketplaceKitError('ERR_CONFIG', `frameAncestors: ${JSON.stringify(value)} is not an origin`);
    return origin;
  });
  return `frame-ancestors ${origins.length === 0 ? "'none'" : origins.join(' ')}`;
}

/** The headers of a page the dashboard embeds (see `embedPageHeaders`). */
export interface EmbedPageHeaders {
  'Content-Security-Policy': string;
  'Referrer-Policy': 'no-referrer';
}

/**
 * The headers for the page the dashboard embeds (the app's embed URL):
 * - `Content-Security-Policy: frame-ancestors …`, so that only the dashboard can frame it;
 * - `Referrer-Policy: no-referrer`, because the page is opened with the context token in its
 *   query (`?mp_context=…`): without it, every stylesheet, script or image the page loads before
 *   the kit removes the parameters would carry the token to its server in `Referer`.
 *
 * @example
 * return new Response(html, { headers: { 'content-type': 'text/html', ...embedPageHeaders(hostOrigins) } });
 */
export function embedPageHeaders(dashboardOrigins: string | readonly string[]): EmbedPageHeaders {
  return { 'Content-Security-Policy': frameAncestors(dashboardOrigins), 'Referrer-Policy': 'no-referrer' };
}

/**
 * Sets the embed page's headers (`embedPageHeaders`) on a Response, a Headers object or a
 * node:http, node:http2 or Express response. `frame-ancestors` replaces any in an existing policy and keeps
 * the policy's other directives.
 *
 * @example
 * return applyEmbedPageHeaders(new Response(html, { headers: { 'content-type': 'text/html' } }), hostOrigins);
 * // node:http / Express: applyEmbedPageHeaders(res, hostOrigins).end(html);
 */
export function applyEmbedPageHeaders<T extends Response | Headers | ServerResponse | Http2ServerResponse>(target: T, dashboardOrigins: string | readonly string[]): T {
  const headers = embedPageHeaders(dashboardOrigins);
  const directive = headers['Content-Security-Policy'];
  const merge = (existing: string | null | undefined) => {
    const kept = (existing ?? '')
      .split(';')
      .map((part) => part.trim())
      .filter((part) => part !== '' && !/^frame-ancestors(\s|$)/i.test(part));
    return [...kept, directive].join('; ');
  };
  if (target instanceof Response || target instanceof Headers) {
    const list = target instanceof Response ? target.headers : target;
    list.set('content-security-policy', merge(list.get('content-security-policy')));
    list.set('referrer-policy', headers['Referrer-Policy']);
  } else {
    const current = target.getHeader('content-security-policy');
    target.setHeader('content-security-policy', merge(Array.isArray(current) ? current.join('; ') : current?.toString()));
    target.setHeader('referrer-policy', headers['Referrer-Policy']);
  }
  return target;
}
