/** The longest place kept, as given and once percent-encoded. */
const MAX_RETURN_TO = 2048;

/**
 * Where to send the browser after the OAuth sign-in: a place on the app's own origin (as a path),
 * or an absolute URL on one of `trusted` (the backend's `corsOrigins`: the site that calls a
 * backend on another origin). Anything else (`//evil`, `https://evil`, `/\evil`, `/.//evil`,
 * `javascript:`, control characters) falls back to `/`, so the callback is never an open redirect.
 */
export function safeReturnTo(value: string | null | undefined, publicOrigin: string, trusted: ReadonlySet<string> = new Set()): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_RETURN_TO) return '/';
  // Browsers treat `\` as `/` and drop tabs and newlines, which turns `/\evil` into `//evil`.
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return '/';
  const relative = value.startsWith('/');
  if (relative && value.startsWith('//')) return '/';
  if (!relative && !/^https?:\/\//i.test(value)) return '/';
  let url: URL;
  try {
    url = new URL(value, publicOrigin);
  } catch {
    return '/';
  }
  if (url.origin !== publicOrigin && !trusted.has(url.origin)) return '/';
  // Dot segments can leave a path that starts with `//` (`/.//evil` → `//evil`): as a Location,
  // that is another host.
  if (url.pathname.startsWith('//') || url.pathname.includes('\\')) return '/';
  const place = `${url.pathname}${url.search}${url.hash}`;
  const target = url.origin === publicOrigin ? place : `${url.origin}${place}`;
  // Percent-encoding can make it nine times longer (a Japanese path): it goes into the sign-in's
  // state cookie, which a browser drops whole beyond 4 KB.
  return target.length > MAX_RETURN_TO ? '/' : target;
}
