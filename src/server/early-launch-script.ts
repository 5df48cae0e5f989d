/** `earlyLaunchScript`: the embedded page's early exchange as inline script text (docs/runtime.md#start-sooner-the-early-exchange). */
import { earlyLaunch, type EarlyLaunchOptions } from '../shared/early-launch.js';
import { MarketplaceKitError } from '../shared/errors.js';
import { exactOrigin } from '../shared/origin.js';
import { MAX_TIMER_MS, numberOption } from '../shared/options.js';

/**
 * The early exchange, as script text for an inline `<script>` in the embedded page's `<head>`,
 * before the app's own scripts: it sends the start-up request while they download, and
 * `createKit` (given the same `backend`) adopts it. Pass `createKit`'s `backend`, `hostOrigins`
 * and `timeoutMs`. The text depends only on the options: compute it once, and allow it in a
 * Content-Security-Policy with a nonce or its `sha256-` hash.
 *
 * @example
 * const early = earlyLaunchScript({ backend: '/api/marketplace', hostOrigins: ['https://dashboard.example'] });
 * const html = `<!doctype html><head><script>${early}</script><script type="module" src="/app.js"></script></head>`;
 */
export function earlyLaunchScript(options: EarlyLaunchOptions): string {
  if (typeof options?.backend !== 'string' || options.backend === '') {
    throw new MarketplaceKitError('ERR_CONFIG', 'earlyLaunchScript needs the backend URL given to createKit');
  }
  if (!Array.isArray(options.hostOrigins) || options.hostOrigins.some((origin) => exactOrigin(origin) !== origin)) {
    throw new MarketplaceKitError('ERR_CONFIG', 'earlyLaunchScript needs hostOrigins: exact dashboard origins, as given to createKit');
  }
  const { backend, hostOrigins, timeoutMs } = options;
  // The range of createKit's timeoutMs: past MAX_TIMER_MS a browser timer may fire at once.
  if (timeoutMs !== undefined) numberOption(timeoutMs, 0, 'earlyLaunchScript: timeoutMs', { min: 1, max: MAX_TIMER_MS });
  // JSON inside a <script>: `<` is escaped so that no value can close the element.
  const json = JSON.stringify({ backend, hostOrigins, timeoutMs }).replace(/</g, '\\u003c');
  return `(${earlyLaunch.toString()})(${json});`;
}
