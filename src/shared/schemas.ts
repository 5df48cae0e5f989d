/**
 * One schema per marketplace resource (docs/marketplace.md#resources, docs/marketplace.md#webhooks; docs/decisions.md), shared by the server module,
 * the browser runtime, the elements, the simulator and the tests. Written with `zod/mini` so the
 * browser bundle stays small. Parse with `parseOrThrow` to get a typed `ERR_INVALID_INPUT` error.
 */
import * as z from 'zod/mini';
import { DEV } from './dev.js';
import { MarketplaceKitError, type ErrorCode } from './errors.js';

/*
 * Size matters here: the browser runtime bundles these schemas.
 * - zod marks its own functions free of side effects, but a bundler cannot tell that of a
 *   `.check()` call or a property read, so checked strings go through `string()` and other
 *   top-level checks carry a pure mark. A bundle then keeps only the schemas it uses.
 * - Building zod schemas is slow on a cold page (about 3 ms for the session answer's tree in
 *   Chromium, more than the whole request on loopback). The browser runtime needs one of them,
 *   `SessionResponse`, so that one is `z.lazy`: it is built from the same functions as the
 *   resources it holds (`profile()`, `entitlement()`), on first use, which the runtime makes happen
 *   while its start-up request is on the way (`prepareSessionSchema`). The eager exports
 *   (`Profile`, `Entitlement`, ...) are built from those functions too, and a bundle that does not
 *   use them drops them.
 * - Lengths and number ranges are refinements, not zod's `minLength`, `maxLength`, `int`,
 *   `nonnegative` and `maximum` checks: each check kind adds its own code to the bundle, a
 *   refinement only its test. They accept and refuse exactly the same values.
 */

/** `z.string().check(...checks)`. */
/* @__NO_SIDE_EFFECTS__ */
function string(...checks: z.core.$ZodCheck<string>[]): z.ZodMiniString<string> {
  return z.string().check(...checks);
}

/** Matches `pattern` (what `z.regex(pattern)` accepts). */
/* @__NO_SIDE_EFFECTS__ */
export function matches(pattern: RegExp, message: string): z.core.$ZodCheck<string> {
  return z.refine((value: string) => {
    pattern.lastIndex = 0;
    return pattern.test(value);
  }, message);
}

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

/**
 * Between `min` and `max` characters, both included; no upper limit without `max`. Characters are
 * code points, as zod's `minLength` and `maxLength` count them: a surrogate pair (an emoji) is one.
 */
/* @__NO_SIDE_EFFECTS__ */
export function length(min: number, max = Infinity): z.core.$ZodCheck<string> {
  return z.refine(
    (value: string) => {
      const characters = value.length - (value.match(SURROGATE_PAIR)?.length ?? 0);
      return characters >= min && characters <= max;
    },
    !DEV ? '' : max === Infinity ? `expected at least ${min} characters` : `expected ${min} to ${max} characters`,
  );
}

/* Each function builds a new schema; `/* @__NO_SIDE_EFFECTS__ *\/` lets a bundle drop unused ones. */

const userId = /* @__NO_SIDE_EFFECTS__ */ () => string(matches(/^usr_[A-Za-z0-9_-]{1,64}$/, DEV ? 'expected a user id of the form usr_<id>' : ''));
const appId = /* @__NO_SIDE_EFFECTS__ */ () => string(matches(/^app_[A-Za-z0-9_-]{1,64}$/, DEV ? 'expected an app id of the form app_<id>' : ''));
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * False when the `YYYY-MM-DD` a timestamp starts with names a day its month lacks, which
 * Date.parse rolls over (2024-02-31 is read as March 2). A month out of range it refuses itself.
 */
export function hasRealDay(timestamp: string): boolean {
  // No array, no map: the server checks the timestamp of every webhook delivery.
  const year = Number(timestamp.substring(0, 4));
  const month = Number(timestamp.substring(5, 7));
  const day = Number(timestamp.substring(8, 10));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 31));
}

/** ISO 8601 UTC timestamp, `YYYY-MM-DDThh:mm:ssZ` (fractional seconds tolerated). */
const utcTimestamp = /* @__NO_SIDE_EFFECTS__ */ () =>
  string(
    matches(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, DEV ? 'expected an ISO 8601 UTC timestamp' : ''),
    z.refine((value) => hasRealDay(value) && !Number.isNaN(Date.parse(value)), DEV ? 'expected a real date' : ''),
  );
const httpUrl = /* @__NO_SIDE_EFFECTS__ */ () => string(matches(/^https?:\/\/[^\s]+$/i, DEV ? 'expected an http(s) URL' : ''));
/** A safe integer, 0 or more (what `z.int()` with `z.nonnegative()` accepts). */
const count = /* @__NO_SIDE_EFFECTS__ */ () =>
  z.number().check(z.refine((value: number) => Number.isSafeInteger(value) && value >= 0, DEV ? 'expected a whole number, 0 or more' : ''));
const email = /* @__NO_SIDE_EFFECTS__ */ () => string(length(3, 320));
const name = /* @__NO_SIDE_EFFECTS__ */ () => string(length(0, 200));

/** `usr_<id>` (docs/marketplace.md#profile). */
export const UserId = userId();
/** `app_<id>` (docs/marketplace.md#entitlement). */
export const AppId = appId();
const HttpUrl = httpUrl();
const Count = count();
const Email = email();
const Name = name();

const profile = /* @__NO_SIDE_EFFECTS__ */ () => z.object({ id: userId(), email: email(), name: name(), avatar_url: httpUrl() });
/** Schema of `Profile`. */
export const Profile = profile();
/** The signed-in user, as `GET /whoami` answers (docs/marketplace.md#profile): `id` (`usr_…`), `email`, `name`, `avatar_url`. */
export type Profile = z.infer<typeof Profile>;

/** Known entitlement statuses (docs/decisions.md#marketplace-api). Any other value is kept but never grants access. */
export const ENTITLEMENT_STATUSES = ['active', 'trialing', 'past_due', 'cancelled', 'expired'] as const;
/** One of `ENTITLEMENT_STATUSES`. */
export type KnownEntitlementStatus = (typeof ENTITLEMENT_STATUSES)[number];
/**
 * An entitlement's `status`: a known one, or any other text the marketplace may add later (kept,
 * but it never grants access).
 */
export type EntitlementStatus = KnownEntitlementStatus | (string & {});

const usage = /* @__NO_SIDE_EFFECTS__ */ () => z.object({ api_calls: count(), limit: count() });
/** Schema of `Usage`. */
export const Usage = usage();
/** Metered use in the current period: `api_calls` made of `limit` allowed (over quota once `api_calls >= limit`). */
export type Usage = z.infer<typeof Usage>;

const entitlementShortShape = /* @__NO_SIDE_EFFECTS__ */ () => ({
  user_id: userId(),
  app_id: appId(),
  plan: string(length(1, 100)),
  features: z.array(string(length(0, 100))),
  usage: usage(),
});
/**
 * The short entitlement form of the marketplace's monetization description (docs/marketplace.md#entitlement): no status, no expiry (an
 * `expires_at: null` says the same). An answer with a status or an expiry is the full form and
 * must pass as one: were those keys dropped instead, a `cancelled` entitlement with an odd
 * `expires_at` would be read as short, that is as active.
 */
export const EntitlementShort = /* @__PURE__ */ z.object({
  ...entitlementShortShape(),
  status: z.optional(z.never()),
  expires_at: z.optional(z.null()),
});
/** An entitlement in the short form: user, app, plan, features and usage, with no status or expiry. */
export type EntitlementShort = Omit<z.infer<typeof EntitlementShort>, 'status'>;

const entitlement = /* @__NO_SIDE_EFFECTS__ */ () =>
  z.object({
    ...entitlementShortShape(),
    status: string(length(1, 50)),
    expires_at: z.optional(z.nullable(utcTimestamp())),
  });
/** Schema of `Entitlement`. */
export const Entitlement = entitlement();
/**
 * Full entitlement, `GET /entitlements` (docs/marketplace.md#entitlement): `plan`, `features`, `usage`, `status` and
 * `expires_at`. `expires_at` absent or null means lifetime access (one-time purchase). `status` is
 * any string so that an unknown status parses and is then refused by the access rules (fail
 * closed) instead of failing the whole response.
 */
export type Entitlement = Omit<z.infer<typeof Entitlement>, 'status'> & { status: EntitlementStatus };

/** Either form; the access rules treat a missing status as `active` (docs/decisions.md#marketplace-api). */
export const AnyEntitlement = z.union([Entitlement, EntitlementShort]);
export type AnyEntitlement = Entitlement | EntitlementShort;

/** Token endpoint answer (docs/marketplace.md#token-response). `expires_in` is in seconds (docs/decisions.md#marketplace-api). */
export const TokenResponse = z.object({
  access_token: string(length(1)),
  token_type: string(matches(/^bearer$/i, 'expected token_type Bearer')),
  expires_in: Count,
  refresh_token: z.optional(string(length(1))),
  scope: z.optional(z.string()),
});
export type TokenResponse = z.infer<typeof TokenResponse>;

/** RFC 6749 §5.2 error body, answered by the OAuth endpoints (docs/decisions.md#marketplace-api). */
export const OAuthErrorBody = z.object({
  error: string(length(1)),
  error_description: z.optional(z.string()),
  error_uri: z.optional(z.string()),
});
export type OAuthErrorBody = z.infer<typeof OAuthErrorBody>;

/** `{"error": {"code", "message"}}`, answered by the API and by the kit's own handlers (docs/decisions.md#marketplace-api). */
export const ApiErrorBody = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;

/* Webhook deliveries (docs/marketplace.md#webhooks, docs/decisions.md#webhooks). */

/** The webhook event kinds the kit knows and types (docs/marketplace.md#webhooks). Others arrive as generic deliveries. */
export const WEBHOOK_EVENTS = ['user.authorized', 'subscription.created', 'subscription.cancelled', 'user.revoked'] as const;
/** One of `WEBHOOK_EVENTS`. */
export type KnownWebhookEvent = (typeof WEBHOOK_EVENTS)[number];

const deliveryOf = /* @__NO_SIDE_EFFECTS__ */ <E extends KnownWebhookEvent, D extends z.ZodMiniType>(event: E, data: D) =>
  z.object({ event: z.literal(event), timestamp: z.string(), data, id: z.optional(z.string()) });

export const UserAuthorizedDelivery = deliveryOf('user.authorized', z.looseObject({ user_id: UserId }));
export const SubscriptionCreatedDelivery = deliveryOf(
  'subscription.created',
  z.looseObject({ user_id: UserId, plan: string(length(1)) }),
);
export const SubscriptionCancelledDelivery = deliveryOf(
  'subscription.cancelled',
  z.looseObject({ user_id: UserId, plan: string(length(1)) }),
);
export const UserRevokedDelivery = deliveryOf('user.revoked', z.looseObject({ user_id: UserId }));

/** Any delivery: the envelope every event kind shares. Unknown kinds parse with this alone. */
export const WebhookEnvelope = z.object({
  event: string(length(1, 200)),
  timestamp: z.string(),
  data: z.record(z.string(), z.unknown()),
  id: z.optional(z.string()),
});
/** A delivery of a kind the kit does not know: `event`, `timestamp`, `data` as an object, optional `id`. */
export type GenericWebhookDelivery = z.infer<typeof WebhookEnvelope>;

/** Schema of `KnownWebhookDelivery`. */
export const KnownWebhookDelivery = z.discriminatedUnion('event', [
  UserAuthorizedDelivery,
  SubscriptionCreatedDelivery,
  SubscriptionCancelledDelivery,
  UserRevokedDelivery,
]);
/** A delivery of one of `WEBHOOK_EVENTS`, with that kind's typed `data` (switch on `event`). */
export type KnownWebhookDelivery = z.infer<typeof KnownWebhookDelivery>;

/**
 * What `verifyWebhook` returns. Narrow with `isKnownEvent(delivery)` first, then switch on
 * `delivery.event` to get each kind's typed `data`.
 */
export type WebhookDelivery = KnownWebhookDelivery | GenericWebhookDelivery;

/** Whether the delivery is one of `WEBHOOK_EVENTS`; narrows it to `KnownWebhookDelivery`. */
export function isKnownEvent(delivery: WebhookDelivery): delivery is KnownWebhookDelivery {
  return (WEBHOOK_EVENTS as readonly string[]).includes(delivery.event);
}

/** Parses a delivery body: known kinds strictly, unknown kinds as generic events. */
export function parseWebhookDelivery(value: unknown): WebhookDelivery {
  // Hot path (every webhook): a valid delivery of a known kind needs one pass, not two.
  const known = KnownWebhookDelivery.safeParse(value);
  if (known.success) return known.data;
  const envelope = parseOrThrow(WebhookEnvelope, value, 'webhook delivery', 'ERR_WEBHOOK_BODY_INVALID');
  if (!isKnownEvent(envelope)) return envelope;
  return parseOrThrow(KnownWebhookDelivery, value, `${envelope.event} delivery`, 'ERR_WEBHOOK_BODY_INVALID');
}

/* Embed context token (docs/decisions.md#embed-launch). */

/** The `typ` header of an embed context token; a token of any other type is refused. */
export const CONTEXT_TOKEN_TYPE = 'mp-context+jwt';
/** The longest a context token may live (`exp - iat`), in seconds. */
export const CONTEXT_TOKEN_MAX_AGE_SECONDS = 300;

/** Schema of `ContextTokenClaims`. */
export const ContextTokenClaims = z.object({
  iss: string(length(1)),
  aud: string(length(1)),
  sub: UserId,
  app_id: AppId,
  host: string(matches(/^https?:\/\/[^/\s]+$/, 'expected an origin')),
  email: Email,
  name: Name,
  avatar_url: HttpUrl,
  iat: Count,
  exp: Count,
  jti: string(length(8, 200)),
});
/**
 * The claims of an embed context token (docs/decisions.md#embed-launch): issuer and audience, the user (`sub`, `email`,
 * `name`, `avatar_url`), the app (`app_id`), the dashboard's origin (`host`), `iat`, `exp` and a
 * one-time `jti`.
 */
export type ContextTokenClaims = z.infer<typeof ContextTokenClaims>;

/* The app's own session, answered by `POST /session` and `GET /session` (docs/runtime.md). */

let sessionResponse: ReturnType<typeof buildSessionResponse> | undefined;
/* @__NO_SIDE_EFFECTS__ */
const buildSessionResponse = () =>
  z.object({
    session: z.object({ token: z.optional(string(length(1))), expires_at: utcTimestamp() }),
    user: profile(),
    /** `null` when the marketplace holds no entitlement for this user and app. */
    entitlement: z.nullable(entitlement()),
    host: z.optional(z.nullable(z.string())),
  });

/**
 * `SessionResponse`, built on its first call (see the top of this file): the runtime reads its
 * answers with this, which keeps zod's `lazy` out of the browser's bundle.
 */
export function sessionResponseSchema(): ReturnType<typeof buildSessionResponse> {
  return (sessionResponse ??= buildSessionResponse());
}

/**
 * Built on first use (see the top of this file); `prepareSessionSchema()` builds it ahead.
 * `session.token` is the bearer token of a context exchange (and of a `GET /session` sent with
 * it); an answer to the session cookie alone has none (docs/security.md#tokens).
 */
export const SessionResponse = /* @__PURE__ */ z.lazy(sessionResponseSchema);
/** What the app backend's `POST /session` and `GET /session` answer: the session, the user and the entitlement. */
export type SessionResponse = Omit<z.infer<typeof SessionResponse>, 'entitlement'> & { entitlement: Entitlement | null };

/**
 * Builds `SessionResponse` now, and runs its parser once, so that reading the answer later does
 * not pay for it. The runtime calls it while its start-up request is on the way.
 */
export function prepareSessionSchema(): void {
  sessionResponseSchema().safeParse(null);
}

/** Embed URL query parameters (docs/decisions.md#embed-launch). */
export const EMBED_PARAMS = { context: 'mp_context', host: 'mp_host', locale: 'mp_locale', theme: 'mp_theme' } as const;
/**
 * Set by the backend's `/oauth/callback` on its redirect back to `return_to` when sign-in did not
 * complete (the user denied it, or the exchange failed): an RFC 6749 error code such as
 * `access_denied`. Not a launch parameter; the runtime reads it, removes it and reports it.
 */
export const SIGN_IN_ERROR_PARAM = 'mp_oauth_error';
/** What a `mp_oauth_error` value may be: a code, never a text to show (both sides check it). */
export const SIGN_IN_ERROR_CODE = /^[\w.-]{1,64}$/;
/** The dashboard's themes. */
export const THEMES = ['light', 'dark'] as const;
/** Schema of `Theme`. */
export const Theme = /* @__PURE__ */ z.enum(THEMES);
/** The dashboard's theme, `light` or `dark`; the elements follow it. */
export type Theme = z.infer<typeof Theme>;

/**
 * Parses `value` or throws a `MarketplaceKitError` naming what was being parsed and where it failed.
 *
 * @example
 * const profile = parseOrThrow(Profile, await response.json(), 'whoami response', 'ERR_RESPONSE_INVALID');
 */
export function parseOrThrow<S extends z.ZodMiniType>(
  schema: S,
  value: unknown,
  what: string,
  code: ErrorCode = 'ERR_INVALID_INPUT',
  status?: number,
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data as z.infer<S>;
  // The production build of the browser entries leaves the description out (see dev.ts).
  throw new MarketplaceKitError(code, DEV ? describeFailure(what, result.error) : '', { status, cause: result.error });
}

/**
 * `Invalid <what> at <path>: <message>` for the first issue of a failed parse. When no branch of
 * a union matched, the first branch's issue is said (the full form, in `AnyEntitlement`).
 *
 * @example
 * describeFailure('toast params', result.error); // 'Invalid toast params at message: expected 1 to 1000 characters'
 * describeFailure('whoami answer', result.error); // 'Invalid whoami answer at email: expected string'
 */
export function describeFailure(what: string, error: z.core.$ZodError): string {
  let issue: z.core.$ZodIssue | undefined = error.issues[0];
  let path: PropertyKey[] = [];
  while (issue?.code === 'invalid_union' && issue.errors[0]?.[0]) {
    path = [...path, ...issue.path];
    issue = issue.errors[0][0];
  }
  if (issue) path = [...path, ...issue.path];
  const where = path.length > 0 ? ` at ${path.map(String).join('.')}` : '';
  return `Invalid ${what}${where}: ${issue ? explain(issue) : 'does not match its schema'}`;
}

/**
 * zod/mini carries no messages of its own (its locales would add to the browser bundle): it says
 * "Invalid input" for a wrong type or value. Those two say what was expected; our refinements
 * already carry their own message.
 */
function explain(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') return `expected ${issue.expected === 'never' ? 'no value' : issue.expected}`;
  if (issue.code === 'invalid_value') return `expected ${issue.values.map((value) => (typeof value === 'string' ? `"${value}"` : String(value))).join(' or ')}`;
  return issue.message;
}
