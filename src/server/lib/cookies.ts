/** Minimal RFC 6265 cookie reading and writing for the kit's own cookies. */

/** Every value of the cookie `name`, in the order the browser sent them (the longest Path first). */
export function readCookies(header: string | null, name: string): string[] {
  const values: string[] = [];
  for (const part of header?.split(';') ?? []) {
    const index = part.indexOf('=');
    if (index !== -1 && part.slice(0, index).trim() === name) values.push(part.slice(index + 1).trim());
  }
  return values;
}

export function readCookie(header: string | null, name: string): string | undefined {
  return readCookies(header, name)[0];
}

export interface CookieAttributes {
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
}

/** An HttpOnly, SameSite=Lax cookie. `value` must already be cookie-safe (JWS compact form is). */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  const parts = [`${name}=${value}`, `Path=${attributes.path}`, `Max-Age=${Math.max(0, Math.floor(attributes.maxAgeSeconds))}`, 'HttpOnly', 'SameSite=Lax'];
  if (attributes.secure) parts.push('Secure');
  return parts.join('; ');
}
