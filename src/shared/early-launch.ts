/**
 * The early exchange: a few lines of script, inlined in the app page's `<head>`, that send the
 * start-up request (`POST {backend}/session`) while the page's own code is still downloading.
 * `createKit` then adopts that request instead of sending its own: still one request, it just
 * leaves earlier. On a first launch that is worth the download and compile time of the app's
 * bundle (see `npm run bench`).
 *
 * The server module turns `earlyLaunch` into script text (`earlyLaunchScript`), so the function
 * must stand alone: no imports, no outer variables, no named inner functions. It does what the
 * runtime's start-up does before its request, with the same checks: launch parameters present,
 * framed, `mp_host` in the allowlist and, where the browser says, equal to the framing origin;
 * then it scrubs every `mp_*` parameter from the address bar and sends without a Referer. When
 * any check fails it does nothing at all, and the runtime starts as it would without it.
 */

/** `Symbol.for` key of the hand-over on `window` (a symbol: page markup cannot forge it). */
export const EARLY_LAUNCH_KEY = 'marketplace-app-kit/early-launch';

/** Options of `earlyLaunchScript`: the same `backend` and `hostOrigins` as the page's `createKit`. */
export interface EarlyLaunchOptions {
  /** The same `backend` as given to `createKit` (absolute, or relative to the page). */
  backend: string;
  /** The same `hostOrigins` as given to `createKit`. */
  hostOrigins: readonly string[];
  /** Timeout of the request, in milliseconds (default 10000, as `createKit`'s `timeoutMs`). */
  timeoutMs?: number | undefined;
}

/** What the script leaves for `createKit`, which takes it once. */
export interface EarlyLaunch {
  /** The page URL as it was before the scrub, launch parameters included. */
  href: string;
  /** The absolute backend base URL the request went to, without a trailing slash. */
  backend: string;
  /** The answer to `POST {backend}/session`. */
  response: Promise<Response>;
  /**
   * When the answer was read, by the page's clock (set before `response` resolves). `createKit`
   * may run much later: the answer's `Date` is of that moment, not of the kit's.
   */
  receivedAt?: number;
  /**
   * The answer's body as text (set before `response` resolves). `createKit` parses it at once:
   * reading `response`'s body again would wait for a task of its own, behind whatever the page
   * does meanwhile (the rest of its HTML, the elements' first render).
   */
  body?: string;
}

/** Runs in the page, as inline script. See the top of this file. */
export function earlyLaunch(options: EarlyLaunchOptions): void {
  try {
    const url = new URL(location.href);
    const params = url.searchParams;
    const context = params.get('mp_context');
    const host = params.get('mp_host');
    const ancestor = location.ancestorOrigins?.[0];
    if (!context || !host || window.parent === window || !options.hostOrigins.includes(host)) return;
    if (ancestor !== undefined && ancestor !== host) return;
    const href = url.href;
    // Everything that could still fail comes before the scrub, so that a failure leaves the page
    // as it was and the runtime reads the launch itself.
    const backend = new URL(options.backend, href).href.replace(/\/+$/, '');
    const init: RequestInit = {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ context, host }),
      referrerPolicy: 'no-referrer',
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    };
    // As the runtime's scrubbedUrl: the app's own parameters as written, and an absolute URL
    // (a path would be resolved against a <base href> on another origin, and refused).
    url.search = url.search
      .slice(1)
      .split('&')
      .filter((pair) => pair !== '' && !(new URLSearchParams(pair).keys().next().value ?? '').startsWith('mp_'))
      .join('&');
    history.replaceState(history.state, '', url.href);
    // The body is read here, within the timeout: the timeout's signal would otherwise also abort
    // a body that arrived in time but that createKit, run later, reads after the timeout.
    const response = fetch(`${backend}/session`, init).then((answer) =>
      answer.text().then((body) => {
        launch.receivedAt = Date.now();
        launch.body = body;
        return new Response([204, 205, 304].includes(answer.status) ? null : body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
      }),
    );
    // Nobody may be there to read it (createKit is never called): no unhandled rejection then.
    response.catch(() => undefined);
    const launch: EarlyLaunch = { href, backend, response };
    Object.defineProperty(window, Symbol.for('marketplace-app-kit/early-launch'), { value: launch, configurable: true });
  } catch {
    // Whatever went wrong, the runtime starts on its own.
  }
}
