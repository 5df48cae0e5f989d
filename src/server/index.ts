/**
 * `marketplace-app-kit/server`: everything an app backend needs to talk to the marketplace and
 * to serve the kit's browser runtime. Node ≥ 20.3; nothing here runs in a browser.
 */
export { createMarketplaceClient, apiKeyKind, API_KEY_LIMITS, REFRESH_REUSE_WINDOW_MS } from './client.js';
export type { MarketplaceClient, MarketplaceClientOptions, UserSelector, ApiKeyKind } from './client.js';
export { MarketplaceApiError } from './api-error.js';
export type { MarketplaceEndpoint, MarketplaceApiErrorOptions } from './api-error.js';
export { buildAuthorizationUrl, buildTokenRequest, processTokenAnswer, pkceChallenge, randomToken, DEFAULT_SCOPE } from './oauth.js';
export type { TokenSet, AuthorizationUrlOptions, AuthorizationRequest, TokenGrant } from './oauth.js';
export type { Answer } from './lib/http.js';
export type { Clock } from './lib/clock.js';
export {
  verifyWebhook,
  receiveWebhook,
  WebhookVerificationError,
  SIGNATURE_HEADER,
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
} from './webhooks.js';
export type { VerifyWebhookOptions, ReceivedWebhook, RawBody } from './webhooks.js';
export { verifyContextToken, ContextTokenError, CLOCK_TOLERANCE_SECONDS } from './context-token.js';
export type { VerifyContextTokenOptions } from './context-token.js';
export { createMemoryReplayStore, ReplayStoreFullError, DEFAULT_REPLAY_STORE_ENTRIES } from './replay-store.js';
export type { ReplayStore, MemoryReplayStoreOptions } from './replay-store.js';
export { createMemoryStores, createMemoryPacing } from './stores.js';
export type { MarketplaceStores, ClientStores, MemoryStoresOptions } from './stores.js';
export { createMemoryWebhookProcessing } from './webhook-processing.js';
export type { WebhookProcessing, WebhookClaim, WebhookClaimRequest } from './webhook-processing.js';
export { createMemoryLaunchLimiter } from './launch-limiter.js';
export type { LaunchLimiter, LaunchDecision } from './launch-limiter.js';
export { createMemoryEntitlementStore } from './entitlement-store.js';
export type { EntitlementStore, EntitlementRead, EntitlementWrite } from './entitlement-store.js';
export { pacedKeyId } from './api-key-pacing.js';
export type { ApiKeyPacing, KeyPacer, PacedKey } from './api-key-pacing.js';
export { PacerWaitTooLong } from './lib/pacer.js';
export type { ReleaseSlot } from './lib/pacer.js';
export { createMemoryRefreshFlight } from './refresh-flight.js';
export type { RefreshFlight, RefreshTurn } from './refresh-flight.js';
export { createMemoryRevocationStore } from './revocations.js';
export type { RevocationStore } from './revocations.js';
export { StoreUnavailableError } from './store-error.js';
export { signSessionToken, verifySessionToken, SessionError, SESSION_TOKEN_TYPE, MAX_SESSION_TTL_SECONDS } from './session.js';
export type { AppSession, SignSessionOptions, VerifySessionOptions } from './session.js';
export { createAppBackend, DEFAULT_BASE_PATH, SESSION_COOKIE, OAUTH_STATE_COOKIE, OAUTH_ERROR_PARAM, REFRESH_MIN_INTERVAL_MS, WEBHOOK_COPY_WAIT_MS } from './backend.js';
export type { AppBackend, AppBackendOptions } from './backend.js';
export { toNodeHandler, toExpressMiddleware } from './adapters.js';
export type { FetchHandler, NodeAdapterOptions, ExpressAdapterOptions } from './adapters.js';
export { frameAncestors, embedPageHeaders, applyEmbedPageHeaders } from './embed-page.js';
export type { EmbedPageHeaders } from './embed-page.js';
export { earlyLaunchScript } from './early-launch-script.js';
export type { EarlyLaunchOptions } from '../shared/early-launch.js';
export { toErrorResponse, jsonResponse } from './responses.js';
export { createErrorLog, isExpectedRejection } from './error-log.js';
export type { ErrorLog, ErrorLogOptions } from './error-log.js';
export { assertAccess, AccessDeniedError, type DeniedReason } from './access.js';
export { signContextToken, signWebhookBody } from './signers.js';
export type { SignContextTokenOptions } from './signers.js';

export { checkAccess, hasAccess, isOverQuota } from '../shared/access.js';
export type { AccessRequirement, AccessDecision, AccessReason } from '../shared/access.js';
export { MarketplaceKitError, isKitError } from '../shared/errors.js';
export type { ErrorCode, MarketplaceKitErrorOptions } from '../shared/errors.js';
export { isKnownEvent, parseWebhookDelivery, CONTEXT_TOKEN_TYPE, WEBHOOK_EVENTS, ENTITLEMENT_STATUSES } from '../shared/schemas.js';
export type {
  Profile,
  Entitlement,
  EntitlementShort,
  AnyEntitlement,
  EntitlementStatus,
  TokenResponse,
  ContextTokenClaims,
  SessionResponse,
  WebhookDelivery,
  KnownWebhookDelivery,
  GenericWebhookDelivery,
  KnownWebhookEvent,
  Usage,
} from '../shared/schemas.js';
