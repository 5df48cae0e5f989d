/**
 * `value` when it is exactly an http(s) origin as `URL#origin` writes it (`https://app.example`:
 * lower case, no path, no trailing slash); null otherwise. The browser runtime's `assertOrigin`
 * applies the same rule, so one `hostOrigins` list passes both or neither.
 */
export function exactOrigin(value: unknown): string | null {
  if (typeof value !== 'string' || !/^https?:\/\//.test(value)) return null;
  try {
    return new URL(value).origin === value ? value : null;
  } catch {
    return null;
  }
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** True for `http(s)://localhost`, `127.0.0.1` and `[::1]` on any port: a development server. */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}
