/**
 * The marketplace's side of the two signatures the kit verifies: context tokens (docs/decisions.md#embed-launch) and
 * webhook signatures (docs/decisions.md#webhooks). The simulator signs with these, and so can an app's tests.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { MarketplaceKitError } from '../shared/errors.js';
import { CONTEXT_TOKEN_MAX_AGE_SECONDS, CONTEXT_TOKEN_TYPE, type Profile } from '../shared/schemas.js';
import { optionsObject } from './lib/options-object.js';
import { nowOption, wholeSecondsOption } from './lib/time-options.js';

/** Options of `signContextToken`. */
export interface SignContextTokenOptions {
  /** The app's Client ID: becomes `aud`. */
  clientId: string;
  /** The app's Client Secret: the HS256 key. */
  clientSecret: string;
  /** `{site_url}` of the marketplace: becomes `iss`. */
  issuer: string;
  /** Origin of the dashboard that embeds the app: becomes `host`. */
  host: string;
  appId: string;
  user: Profile;
  /** Lifetime in whole seconds, from 1 to 300 (default 300); anything else is `ERR_CONFIG`. */
  ttlSeconds?: number | undefined;
  /** Clock in ms since the epoch, or a Date (tests; default: now). */
  now?: number | Date | undefined;
  /** Defaults to a random UUID. */
  jti?: string | undefined;
}

/**
 * Signs an embed context token as the marketplace does.
 *
 * @example
 * const token = await signContextToken({ clientId, clientSecret, issuer: siteUrl, host: dashboardOrigin, appId: 'app_1', user });
 */
export async function signContextToken(options: SignContextTokenOptions): Promise<string> {
  optionsObject(options, 'signContextToken');
  const iat = Math.floor(nowOption(options.now, 'signContextToken: now') / 1000);
  // Refused, not clamped: a test that asks for a 10-minute token must not get a 5-minute one.
  const lifetime = wholeSecondsOption(options.ttlSeconds, 'signContextToken: ttlSeconds', CONTEXT_TOKEN_MAX_AGE_SECONDS);
  const { user } = options;
  return new SignJWT({ app_id: options.appId, host: options.host, email: user.email, name: user.name, avatar_url: user.avatar_url })
    .setProtectedHeader({ alg: 'HS256', typ: CONTEXT_TOKEN_TYPE })
    .setIssuer(options.issuer)
    .setAudience(options.clientId)
    .setSubject(user.id)
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetime)
    .setJti(options.jti ?? randomUUID())
    .sign(new TextEncoder().encode(options.clientSecret));
}

/**
 * The `X-Service-Signature` value for a raw body: `sha256=<lowercase hex HMAC-SHA256>`.
 *
 * @example
 * const body = JSON.stringify({ event: 'user.revoked', timestamp: new Date().toISOString(), data: { user_id: 'usr_1' } });
 * await fetch(webhookUrl, { method: 'POST', body, headers: { 'X-Service-Signature': signWebhookBody(body, secret) } });
 */
export function signWebhookBody(rawBody: string | Uint8Array | ArrayBuffer, secret: string): string {
  if (typeof secret !== 'string' || secret === '') throw new MarketplaceKitError('ERR_CONFIG', 'signWebhookBody needs the webhook secret (a non-empty string)');
  return `sha256=${createHmac('sha256', secret).update(rawBody instanceof ArrayBuffer ? new Uint8Array(rawBody) : rawBody).digest('hex')}`;
}
