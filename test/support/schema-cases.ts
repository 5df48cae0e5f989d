// Valid and invalid examples of every shared schema, run in Node and in Chromium.
import * as schemas from '../../src/shared/schemas.js';

const profile = { id: 'usr_1', email: 'ada@example.com', name: 'Ada', avatar_url: 'https://cdn.example/ada.png' };
const entitlement = {
  user_id: 'usr_1',
  app_id: 'app_1',
  plan: 'pro',
  status: 'active',
  features: ['export'],
  usage: { api_calls: 10, limit: 1000 },
  expires_at: '2026-12-21T00:00:00Z',
};
const { status: _s, expires_at: _e, ...short } = entitlement;
const claims = {
  iss: 'http://127.0.0.1:4010',
  aud: 'client_1',
  sub: 'usr_1',
  app_id: 'app_1',
  host: 'http://127.0.0.1:4010',
  email: 'ada@example.com',
  name: 'Ada',
  avatar_url: 'https://cdn.example/ada.png',
  iat: 1_790_000_000,
  exp: 1_790_000_300,
  jti: '6f1c1b1e-0000-4000-8000-000000000000',
};

type Schema = { safeParse(value: unknown): { success: boolean } };
export interface SchemaCase {
  schema: string;
  name: string;
  value: unknown;
  valid: boolean;
}
export const schemaTable: Record<string, Schema> = {
  Profile: schemas.Profile,
  Entitlement: schemas.Entitlement,
  EntitlementShort: schemas.EntitlementShort,
  AnyEntitlement: schemas.AnyEntitlement,
  TokenResponse: schemas.TokenResponse,
  OAuthErrorBody: schemas.OAuthErrorBody,
  ApiErrorBody: schemas.ApiErrorBody,
  ContextTokenClaims: schemas.ContextTokenClaims,
  SessionResponse: schemas.SessionResponse,
  KnownWebhookDelivery: schemas.KnownWebhookDelivery,
  WebhookEnvelope: schemas.WebhookEnvelope,
};

export const schemaCases: SchemaCase[] = [
  { schema: 'Profile', name: 'documented profile', value: profile, valid: true },
  { schema: 'Profile', name: 'id without usr_ prefix', value: { ...profile, id: '42' }, valid: false },
  { schema: 'Profile', name: 'javascript: avatar', value: { ...profile, avatar_url: 'javascript:alert(1)' }, valid: false },
  { schema: 'Profile', name: 'missing email', value: { id: 'usr_1', name: 'Ada', avatar_url: profile.avatar_url }, valid: false },
  { schema: 'Entitlement', name: 'full form', value: entitlement, valid: true },
  { schema: 'Entitlement', name: 'lifetime (no expires_at)', value: { ...entitlement, expires_at: undefined }, valid: true },
  { schema: 'Entitlement', name: 'unknown status still parses', value: { ...entitlement, status: 'paused' }, valid: true },
  { schema: 'Entitlement', name: 'expires_at on a day its month lacks (Date.parse would roll it over)', value: { ...entitlement, expires_at: '2026-02-29T00:00:00Z' }, valid: false },
  { schema: 'Entitlement', name: 'expires_at on April 31', value: { ...entitlement, expires_at: '2026-04-31T00:00:00Z' }, valid: false },
  { schema: 'Entitlement', name: 'expires_at on February 29 of a leap year', value: { ...entitlement, expires_at: '2028-02-29T00:00:00Z' }, valid: true },
  { schema: 'Entitlement', name: 'expires_at not UTC', value: { ...entitlement, expires_at: '2026-12-21T00:00:00+01:00' }, valid: false },
  { schema: 'Entitlement', name: 'negative usage', value: { ...entitlement, usage: { api_calls: -1, limit: 5 } }, valid: false },
  { schema: 'Entitlement', name: 'fractional usage', value: { ...entitlement, usage: { api_calls: 1.5, limit: 5 } }, valid: false },
  { schema: 'Entitlement', name: 'short form lacks status', value: short, valid: false },
  { schema: 'EntitlementShort', name: 'short form', value: short, valid: true },
  { schema: 'EntitlementShort', name: 'features not an array', value: { ...short, features: 'export' }, valid: false },
  { schema: 'Entitlement', name: 'no features', value: { ...entitlement, features: [] }, valid: true },
  { schema: 'Entitlement', name: 'a feature of 100 characters (emoji count as one)', value: { ...entitlement, features: ['\u{1F600}'.repeat(100)] }, valid: true },
  { schema: 'Entitlement', name: 'a feature over 100 characters', value: { ...entitlement, features: ['export', 'x'.repeat(101)] }, valid: false },
  { schema: 'Entitlement', name: 'a feature of 101 emoji', value: { ...entitlement, features: ['\u{1F600}'.repeat(101)] }, valid: false },
  { schema: 'Entitlement', name: 'a feature of 100 lone surrogates (one character each)', value: { ...entitlement, features: ['\uD800'.repeat(100)] }, valid: true },
  { schema: 'Entitlement', name: 'a feature of 101 lone surrogates', value: { ...entitlement, features: ['\uDC00'.repeat(101)] }, valid: false },
  { schema: 'Entitlement', name: 'a feature that is no text', value: { ...entitlement, features: ['export', 7] }, valid: false },
  { schema: 'Entitlement', name: 'features with a hole (read as undefined)', value: { ...entitlement, features: ['export', , 'import'] }, valid: false },
  { schema: 'Entitlement', name: 'features as an array-like object', value: { ...entitlement, features: { 0: 'export', length: 1 } }, valid: false },
  { schema: 'Entitlement', name: 'usage as a numeric text', value: { ...entitlement, usage: { api_calls: '10', limit: 5 } }, valid: false },
  { schema: 'Entitlement', name: 'usage NaN', value: { ...entitlement, usage: { api_calls: Number.NaN, limit: 5 } }, valid: false },
  { schema: 'Entitlement', name: 'usage limit Infinity', value: { ...entitlement, usage: { api_calls: 1, limit: Number.POSITIVE_INFINITY } }, valid: false },
  { schema: 'Entitlement', name: 'usage past the safe integers', value: { ...entitlement, usage: { api_calls: 2 ** 53, limit: 5 } }, valid: false },
  { schema: 'AnyEntitlement', name: 'either form: full', value: entitlement, valid: true },
  { schema: 'AnyEntitlement', name: 'either form: short', value: short, valid: true },
  { schema: 'AnyEntitlement', name: 'either form: short with expires_at null', value: { ...short, expires_at: null }, valid: true },
  // A status that is no valid status must not make the entitlement short (that is, active).
  { schema: 'AnyEntitlement', name: 'empty status is no short form', value: { ...entitlement, status: '' }, valid: false },
  { schema: 'AnyEntitlement', name: 'numeric status is no short form', value: { ...short, status: 42 }, valid: false },
  { schema: 'AnyEntitlement', name: 'overlong status is no short form', value: { ...short, status: 'x'.repeat(51) }, valid: false },
  { schema: 'AnyEntitlement', name: 'a bad expiry is no short form', value: { ...short, expires_at: 'soon' }, valid: false },
  { schema: 'TokenResponse', name: 'documented token response', value: { access_token: 'a', token_type: 'Bearer', expires_in: 3600, refresh_token: 'r' }, valid: true },
  { schema: 'TokenResponse', name: 'refresh answer without refresh_token', value: { access_token: 'a', token_type: 'bearer', expires_in: 3600 }, valid: true },
  { schema: 'TokenResponse', name: 'wrong token_type', value: { access_token: 'a', token_type: 'mac', expires_in: 3600 }, valid: false },
  { schema: 'TokenResponse', name: 'expires_in as string', value: { access_token: 'a', token_type: 'Bearer', expires_in: '3600' }, valid: false },
  { schema: 'OAuthErrorBody', name: 'RFC 6749 error', value: { error: 'invalid_grant', error_description: 'code expired' }, valid: true },
  { schema: 'OAuthErrorBody', name: 'API error is not an OAuth error', value: { error: { code: 'x', message: 'y' } }, valid: false },
  { schema: 'ApiErrorBody', name: 'API error', value: { error: { code: 'rate_limited', message: 'slow down' } }, valid: true },
  { schema: 'ApiErrorBody', name: 'OAuth error is not an API error', value: { error: 'invalid_grant' }, valid: false },
  { schema: 'ContextTokenClaims', name: 'context-token claims', value: claims, valid: true },
  { schema: 'ContextTokenClaims', name: 'host with a path', value: { ...claims, host: 'https://dash.example/x' }, valid: false },
  { schema: 'ContextTokenClaims', name: 'missing jti', value: { ...claims, jti: undefined }, valid: false },
  { schema: 'ContextTokenClaims', name: 'jti of 8 characters', value: { ...claims, jti: 'abcdefgh' }, valid: true },
  { schema: 'ContextTokenClaims', name: 'jti under 8 characters', value: { ...claims, jti: 'abcdefg' }, valid: false },
  { schema: 'ContextTokenClaims', name: 'jti over 200 characters', value: { ...claims, jti: 'j'.repeat(201) }, valid: false },
  {
    schema: 'SessionResponse',
    name: 'session exchange answer',
    value: { session: { token: 't', expires_at: '2026-11-21T10:15:00Z' }, user: profile, entitlement, host: 'https://dashboard.example' },
    valid: true,
  },
  { schema: 'SessionResponse', name: 'no entitlement', value: { session: { token: 't', expires_at: '2026-11-21T10:15:00Z' }, user: profile, entitlement: null }, valid: true },
  { schema: 'KnownWebhookDelivery', name: 'subscription.created', value: { event: 'subscription.created', timestamp: '2026-11-21T10:00:00Z', data: { user_id: 'usr_1', plan: 'pro' } }, valid: true },
  { schema: 'KnownWebhookDelivery', name: 'subscription.cancelled', value: { event: 'subscription.cancelled', timestamp: '2026-11-21T10:00:00Z', data: { user_id: 'usr_1', plan: 'pro' } }, valid: true },
  { schema: 'KnownWebhookDelivery', name: 'user.authorized', value: { event: 'user.authorized', timestamp: '2026-11-21T10:00:00Z', data: { user_id: 'usr_1' } }, valid: true },
  { schema: 'KnownWebhookDelivery', name: 'user.revoked', value: { event: 'user.revoked', timestamp: '2026-11-21T10:00:00Z', data: { user_id: 'usr_1' } }, valid: true },
  { schema: 'KnownWebhookDelivery', name: 'subscription.created without plan', value: { event: 'subscription.created', timestamp: '2026-11-21T10:00:00Z', data: { user_id: 'usr_1' } }, valid: false },
  { schema: 'KnownWebhookDelivery', name: 'unknown kind is not known', value: { event: 'app.installed', timestamp: '2026-11-21T10:00:00Z', data: {} }, valid: false },
  { schema: 'WebhookEnvelope', name: 'unknown kind as generic event', value: { event: 'app.installed', timestamp: '2026-11-21T10:00:00Z', data: { x: 1 } }, valid: true },
  { schema: 'WebhookEnvelope', name: 'data not an object', value: { event: 'user.revoked', timestamp: '2026-11-21T10:00:00Z', data: 'usr_1' }, valid: false },
];
