/**
 * Reading the embed launch parameters (docs/runtime.md, "Inside the dashboard (embedded app)")
 * from the page URL, before anything else runs.
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKitError } from '../shared/errors.js';
import { EMBED_PARAMS, SIGN_IN_ERROR_CODE, SIGN_IN_ERROR_PARAM, type Theme } from '../shared/schemas.js';

export type Launch =
  /** `signInError`: the RFC 6749 error code the backend's OAuth callback sent back, if any. */
  | { kind: 'standalone'; signInError: string | null }
  /**
   * `context` is null when a framed page lost its parameters (an in-frame reload): ask the host.
   * `theme` and `locale` are null when the URL has none (or an invalid one): the kit's defaults apply.
   */
  | { kind: 'embedded'; context: string | null; host: string; theme: Theme | null; locale: string | null }
  | { kind: 'rejected'; error: MarketplaceKitError };

export interface LaunchInput {
  /** The page URL. */
  href: string;
  /** The configured allowlist of dashboard origins. */
  hostOrigins: readonly string[];
  /** False when the page is the top-level window (not framed). */
  framed: boolean;
  /** `location.ancestorOrigins[0]` where the browser offers it (Chromium, WebKit). */
  parentOrigin?: string | undefined;
}

const MP_PARAM = /^mp_/;
const LAUNCH_PARAMS: readonly string[] = Object.values(EMBED_PARAMS);

/** True when the URL carries any `mp_*` parameter (they are all removed, known or not). */
export function hasLaunchParams(url: URL): boolean {
  for (const key of url.searchParams.keys()) if (MP_PARAM.test(key)) return true;
  return false;
}

/** True when the URL carries a dashboard launch parameter (`mp_context`, `mp_host`, `mp_locale`, `mp_theme`), as opposed to other `mp_*` ones. */
function isDashboardLaunch(url: URL): boolean {
  for (const key of url.searchParams.keys()) if (LAUNCH_PARAMS.includes(key)) return true;
  return false;
}

/**
 * The URL without any `mp_*` parameter, for `history.replaceState`. Absolute: a path alone is
 * resolved against the document's `<base href>`, which may be another origin (a CDN), and then the
 * browser refuses it. The app's own parameters stay as written (`q=a%20b&flag`): rebuilding the
 * query would re-encode them (`q=a+b&flag=`).
 */
export function scrubbedUrl(url: URL): string {
  const clean = new URL(url.href);
  const kept = clean.search.slice(1).split('&').filter((pair) => pair !== '' && !MP_PARAM.test(new URLSearchParams(pair).keys().next().value ?? ''));
  clean.search = kept.join('&');
  return clean.href;
}

/** A well-formed BCP 47 tag, canonicalised; otherwise `fallback`. */
export function normalizeLocale<F extends string | null>(value: string | null | undefined, fallback: F): string | F {
  if (!value || value.length > 35) return fallback;
  try {
    return Intl.getCanonicalLocales(value)[0] ?? fallback;
  } catch {
    return fallback;
  }
}

/**
 * Decides how the kit starts. Fails closed: launch parameters with a host outside the allowlist,
 * outside a frame, or framed by another origin than `mp_host` claims, are rejected, and the token
 * is never sent anywhere.
 */
export function readLaunch(input: LaunchInput): Launch {
  const url = new URL(input.href);
  if (!isDashboardLaunch(url)) {
    // Reloaded inside the dashboard (the parameters were scrubbed on first load): the framing
    // origin, as the browser reports it, says whether an allowed host is there to ask for a context.
    const host = input.parentOrigin;
    if (input.framed && host !== undefined && input.hostOrigins.includes(host)) {
      return { kind: 'embedded', context: null, host, theme: null, locale: null };
    }
    // A code as the backend's callback sends it (`access_denied`); anything else in a crafted
    // link is not repeated to the page.
    const signInError = url.searchParams.get(SIGN_IN_ERROR_PARAM);
    return { kind: 'standalone', signInError: signInError === null ? null : SIGN_IN_ERROR_CODE.test(signInError) ? signInError : 'invalid_request' };
  }
  const params = url.searchParams;
  const context = params.get(EMBED_PARAMS.context);
  const host = params.get(EMBED_PARAMS.host);
  const reject = (message: string, code: 'ERR_HOST_NOT_ALLOWED' | 'ERR_INVALID_INPUT' = 'ERR_HOST_NOT_ALLOWED'): Launch => ({
    kind: 'rejected',
    error: new MarketplaceKitError(code, message),
  });
  if (!host || !input.hostOrigins.includes(host)) {
    return reject(DEV ? `The dashboard origin ${JSON.stringify(host)} is not in hostOrigins; the launch is refused` : '');
  }
  if (!input.framed) return reject(DEV ? 'Launch parameters were given to a page that is not framed by the dashboard' : '');
  if (input.parentOrigin !== undefined && input.parentOrigin !== host) {
    return reject(DEV ? `The page is framed by ${input.parentOrigin}, not by ${host}` : '');
  }
  if (!context) return reject(DEV ? `The launch carries no ${EMBED_PARAMS.context}` : '', 'ERR_INVALID_INPUT');
  const requested = params.get(EMBED_PARAMS.theme);
  const theme = requested === 'dark' || requested === 'light' ? requested : null;
  return { kind: 'embedded', context, host, theme, locale: normalizeLocale(params.get(EMBED_PARAMS.locale), null) };
}
