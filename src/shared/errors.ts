/** Codes are grouped by the part of the kit that raises them. */
export type ErrorCode =
  // Shared: input that fails its schema.
  | 'ERR_INVALID_INPUT'
  // Marketplace API client (server) and any HTTP call.
  | 'ERR_HTTP'
  | 'ERR_RESPONSE_INVALID'
  | 'ERR_RATE_LIMITED'
  | 'ERR_TIMEOUT'
  | 'ERR_NETWORK'
  | 'ERR_ABORTED'
  // OAuth (RFC 6749 error bodies and our own checks).
  | 'ERR_OAUTH'
  | 'ERR_OAUTH_STATE'
  // Webhooks.
  | 'ERR_WEBHOOK_BODY_PARSED'
  | 'ERR_WEBHOOK_SIGNATURE_MISSING'
  | 'ERR_WEBHOOK_SIGNATURE_MALFORMED'
  | 'ERR_WEBHOOK_SIGNATURE_MISMATCH'
  | 'ERR_WEBHOOK_BODY_INVALID'
  | 'ERR_WEBHOOK_TIMESTAMP_INVALID'
  | 'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE'
  | 'ERR_WEBHOOK_DUPLICATE'
  | 'ERR_WEBHOOK_NO_SECRET'
  | 'ERR_WEBHOOK_HANDLER_FAILED'
  | 'ERR_WEBHOOK_IN_PROGRESS'
  // The default in-memory replay store (webhooks and context tokens), full of unexpired keys.
  | 'ERR_REPLAY_STORE_FULL'
  // A shared store (Redis) that did not answer in time, or could not be reached.
  | 'ERR_STORE_UNAVAILABLE'
  // Context tokens and app session tokens.
  | 'ERR_CONTEXT_TOKEN_MALFORMED'
  | 'ERR_CONTEXT_TOKEN_ALGORITHM'
  | 'ERR_CONTEXT_TOKEN_SIGNATURE'
  | 'ERR_CONTEXT_TOKEN_TYPE'
  | 'ERR_CONTEXT_TOKEN_CLAIM'
  | 'ERR_CONTEXT_TOKEN_EXPIRED'
  | 'ERR_CONTEXT_TOKEN_REPLAYED'
  | 'ERR_CONTEXT_TOKEN_HOST'
  | 'ERR_SESSION_MISSING'
  | 'ERR_SESSION_INVALID'
  | 'ERR_SESSION_EXPIRED'
  | 'ERR_SESSION_REVOKED'
  // Access rules; a cookie-session request from another origin (CSRF).
  | 'ERR_ACCESS_DENIED'
  | 'ERR_ORIGIN_REFUSED'
  // The kit's HTTP handlers (server).
  | 'ERR_NOT_FOUND'
  | 'ERR_METHOD_NOT_ALLOWED'
  | 'ERR_PAYLOAD_TOO_LARGE'
  | 'ERR_INTERNAL'
  // Browser runtime and host bridge.
  | 'ERR_HOST_NOT_ALLOWED'
  | 'ERR_NOT_EMBEDDED'
  | 'ERR_BRIDGE_TIMEOUT'
  | 'ERR_BRIDGE_REMOTE'
  | 'ERR_BRIDGE_INVALID_MESSAGE'
  | 'ERR_BRIDGE_CLOSED'
  | 'ERR_SESSION_REFRESH_FAILED'
  // Dev warnings: a running kit was replaced by another; elements found no kit. Then an element's
  // action that failed with an error that was not the kit's.
  | 'ERR_KIT_REPLACED'
  | 'ERR_KIT_NOT_FOUND'
  | 'ERR_ACTION_FAILED'
  // Configuration mistakes by the developer.
  | 'ERR_CONFIG';

/** The optional details of a `MarketplaceKitError`. */
export interface MarketplaceKitErrorOptions {
  /** HTTP status involved, when there is one (upstream status, or the status to answer with). */
  status?: number | undefined;
  /** The other side's own error code, when it gave one (see `MarketplaceKitError.upstreamCode`). */
  upstreamCode?: string | undefined;
  /** How long the other side asked to be left alone (a 429's or 503's `Retry-After`), in ms. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

/**
 * Every error the kit throws is a `MarketplaceKitError` (or a subclass) with a stable `code`.
 * Callers switch on `code`; messages are for humans and may change.
 *
 * @example
 * try {
 *   await verifyWebhook(body, header, { secret });
 * } catch (error) {
 *   if (error instanceof MarketplaceKitError && error.code === 'ERR_WEBHOOK_DUPLICATE') return ok();
 *   throw error;
 * }
 */
export class MarketplaceKitError extends Error {
  override name = 'MarketplaceKitError';
  readonly code: ErrorCode;
  readonly status: number | undefined;
  /**
   * The other side's own error code, when it gave one: the marketplace's RFC 6749 `error` or API
   * `error.code` (server), or the sign-in's OAuth error (`access_denied`) of a browser `ERR_OAUTH`.
   */
  readonly upstreamCode: string | undefined;
  /**
   * How long to wait before trying again, when the other side said (`Retry-After`): the
   * marketplace's (server) or the app backend's (browser). `undefined` when nobody said.
   */
  readonly retryAfterMs: number | undefined;

  /**
   * `message` may be empty in the production build of the browser entries, which leaves long
   * explanations out (`DEV` in dev.ts): the code then says what failed, and docs/errors.md why.
   */
  constructor(code: ErrorCode, message: string, options: MarketplaceKitErrorOptions = {}) {
    super(message || `${code} (docs/errors.md of marketplace-app-kit; the development build says more)`, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    // A configuration mistake is the server's own fault wherever it is found: 500.
    this.status = options.status ?? (code === 'ERR_CONFIG' ? 500 : undefined);
    this.upstreamCode = options.upstreamCode;
    this.retryAfterMs = options.retryAfterMs;
  }

  /** The JSON body the kit's HTTP handlers answer with: the API error shape of docs/decisions.md#marketplace-api. */
  toJSON(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

/**
 * True for any kit error, optionally of one code: `isKitError(e, 'ERR_TIMEOUT')`, after which
 * TypeScript knows `e.code` is `'ERR_TIMEOUT'`.
 */
export function isKitError<Code extends ErrorCode = ErrorCode>(error: unknown, code?: Code): error is MarketplaceKitError & { readonly code: Code } {
  return error instanceof MarketplaceKitError && (code === undefined || error.code === code);
}
