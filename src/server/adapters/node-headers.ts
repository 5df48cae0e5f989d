/** An answer's headers onto a node:http response: every Set-Cookie line, none of the headers about the connection. */
import type { ServerResponse } from 'node:http';

/**
 * Each Set-Cookie line: `getSetCookie()`, else node-fetch's `raw()`, else the one value `get()`
 * gives (several cookies arrive joined there, and cannot be split safely).
 */
function setCookieLines(headers: Headers): string[] {
  if (typeof headers.getSetCookie === 'function') return headers.getSetCookie();
  const raw = (headers as { raw?: () => Record<string, string[] | undefined> }).raw?.()['set-cookie'];
  if (Array.isArray(raw)) return raw;
  const value = headers.get('set-cookie');
  return value === null ? [] : [value];
}

/** An answer's headers onto node:http's response, but those about the connection. */
export function copyHeaders(res: ServerResponse, headers: Headers): void {
  const cookies = setCookieLines(headers);
  // A Response of your own may carry them: one passed on from `fetch(upstream)` does.
  const named = (headers.get('connection') ?? '').split(',').map((name) => name.trim().toLowerCase());
  headers.forEach((value, name) => {
    if (name !== 'set-cookie' && !HOP_BY_HOP.has(name) && !named.includes(name)) res.setHeader(name, value);
  });
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
}

/** Headers about one connection (RFC 9110 §7.6.1): node:http writes its own, node:http2 refuses them. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'transfer-encoding', 'upgrade']);
