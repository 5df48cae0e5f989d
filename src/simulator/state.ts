/**
 * Everything the simulated marketplace remembers, in memory: configuration, users and their
 * entitlements, pending authorizations, codes, tokens, and the recent deliveries and API calls
 * shown on the dashboard. Listeners (the dashboard's event stream) hear about every change.
 */
import type { Entitlement, Profile } from '../shared/schemas.js';
import { Catalog, profileOf, type SimulatedUserSeed } from './catalog.js';

export interface SimulatorConfig {
  appUrl: string | null;
  webhookUrl: string | null;
  redirectUris: string[];
}

export interface PendingAuthorization {
  clientId: string;
  redirectUri: string;
  scope: string;
  state: string | null;
  codeChallenge: string | null;
  expiresAt: number;
}

export interface AuthorizationCode {
  clientId: string;
  redirectUri: string;
  userId: string;
  scope: string;
  codeChallenge: string | null;
  expiresAt: number;
  used: boolean;
  /** Token family issued for this code, revoked if the code is replayed (RFC 6749 §4.1.2). */
  familyId: string | null;
}

export interface AccessTokenRecord {
  userId: string;
  scope: string;
  expiresAt: number;
  familyId: string;
}

/** How long a spent refresh token is remembered, so that its reuse still ends its family. */
export const SPENT_REFRESH_KEPT_MS = 86_400_000;

/**
 * Unused refresh tokens one user holds at most (Google's limit per account and client): a sign-in
 * beyond it drops the one refreshed or issued longest ago, which then answers `invalid_grant`.
 */
export const REFRESH_TOKENS_PER_USER = 100;

/** Authorization pages open at once at most: a newer one drops the oldest (its form then fails). */
export const PENDING_AUTHORIZATIONS = 1_000;

export interface RefreshTokenRecord {
  userId: string;
  clientId: string;
  scope: string;
  familyId: string;
  /** When it was spent on a refresh (ms), or null while it is unused. */
  usedAt: number | null;
}

/** One attempt of a webhook delivery. */
export interface DeliveryAttempt {
  /** When it was made (ISO 8601). */
  at: string;
  /** The receiver's HTTP status, null when it never answered. */
  status: number | null;
  /** Why it failed without an answer (refused, timed out), or null. */
  error: string | null;
  /** First bytes of the receiver's answer body. */
  body: string | null;
  duration_ms: number;
}

/** A webhook delivery the simulator made (or is making), as the dashboard's event log shows it. */
export interface DeliveryRecord {
  /** The delivery's `id`, as sent in its body. */
  id: string;
  /** The event's kind. */
  event: string;
  /** The event's `data`. */
  data: Record<string, unknown>;
  /** Where it was sent; null when no webhook URL was set (`skipped`). */
  url: string | null;
  /** `pending` while attempts are running. */
  outcome: 'pending' | 'delivered' | 'failed' | 'skipped';
  /** Every attempt so far. */
  attempts: DeliveryAttempt[];
  /** When the event was sent (ISO 8601). */
  created_at: string;
}

/** A call an app made to the simulated marketplace API, as the dashboard's API log shows it. */
export interface ApiCallRecord {
  /** When it was made (ISO 8601). */
  at: string;
  /** HTTP method. */
  method: string;
  /** Path and query. */
  path: string;
  /** How the caller identified itself. */
  auth: 'bearer' | 'test_key' | 'live_key' | 'client' | 'none';
  /** The user it was about, when there is one. */
  user_id: string | null;
  /** The HTTP status answered. */
  status: number;
  /** The answer body (the entitlement a check saw, or the error). */
  response: unknown;
}

/**
 * What `sim.subscribe` (and `GET /_simulator/stream`) reports: a change of entitlement, a delivery,
 * an API call or a change of configuration.
 */
export type SimulatorEvent =
  | { type: 'entitlement'; data: { user_id: string; entitlement: Entitlement | null } }
  | { type: 'delivery'; data: DeliveryRecord }
  | { type: 'api_call'; data: ApiCallRecord }
  | { type: 'config'; data: { app_url: string | null; webhook_url: string | null; redirect_uris: string[] } };

const RECENT = 50;

export class SimulatorState {
  readonly users = new Map<string, { seed: SimulatedUserSeed; profile: Profile }>();
  readonly entitlements = new Map<string, Entitlement | null>();
  readonly pending = new Map<string, PendingAuthorization>();
  readonly codes = new Map<string, AuthorizationCode>();
  readonly accessTokens = new Map<string, AccessTokenRecord>();
  readonly refreshTokens = new Map<string, RefreshTokenRecord>();
  readonly deliveries: DeliveryRecord[] = [];
  readonly apiCalls: ApiCallRecord[] = [];
  private readonly listeners = new Set<(event: SimulatorEvent) => void>();
  /** The user the authorization page signs in by default (the dashboard's selected user). */
  currentUserId: string;

  constructor(
    readonly config: SimulatorConfig,
    siteUrl: string,
    appId: string,
    now: number,
    readonly catalog: Catalog = new Catalog(),
  ) {
    for (const seed of catalog.users) {
      this.users.set(seed.id, { seed, profile: profileOf(seed, siteUrl) });
      this.entitlements.set(seed.id, catalog.startingEntitlement(seed, appId, now));
    }
    this.currentUserId = catalog.users[0]!.id;
  }

  profiles(): Profile[] {
    return [...this.users.values()].map((user) => user.profile);
  }

  setEntitlement(userId: string, entitlement: Entitlement | null, notify = true): void {
    this.entitlements.set(userId, entitlement);
    if (notify) this.emit({ type: 'entitlement', data: { user_id: userId, entitlement } });
  }

  /** Ends every token and unspent authorization code of a user (the user revoked the app). */
  revokeUser(userId: string): void {
    for (const [code, record] of this.codes) if (record.userId === userId) this.codes.delete(code);
    for (const [token, record] of this.accessTokens) if (record.userId === userId) this.accessTokens.delete(token);
    for (const [token, record] of this.refreshTokens) if (record.userId === userId) this.refreshTokens.delete(token);
  }

  /** Keeps a user's unused refresh tokens under `REFRESH_TOKENS_PER_USER`, before one more is issued. */
  makeRoomForRefreshToken(userId: string): void {
    const unused = [...this.refreshTokens].filter(([, record]) => record.userId === userId && record.usedAt === null);
    // A Map iterates in insertion order, and every refresh inserts its new token: oldest first.
    for (const [token] of unused.slice(0, Math.max(0, unused.length - REFRESH_TOKENS_PER_USER + 1))) this.refreshTokens.delete(token);
  }

  /** Keeps the open authorization pages under `PENDING_AUTHORIZATIONS`, before one more opens. */
  makeRoomForPending(): void {
    for (const key of [...this.pending.keys()].slice(0, Math.max(0, this.pending.size - PENDING_AUTHORIZATIONS + 1))) this.pending.delete(key);
  }

  /** Ends every token descended from one authorization (code replay, refresh-token reuse). */
  revokeFamily(familyId: string): void {
    for (const [token, record] of this.accessTokens) if (record.familyId === familyId) this.accessTokens.delete(token);
    for (const [token, record] of this.refreshTokens) if (record.familyId === familyId) this.refreshTokens.delete(token);
  }

  /**
   * Drops expired one-time records so a long-running simulator does not grow without bound. A
   * spent refresh token is kept a day, for reuse detection; an unused one stays (the marketplace's
   * documentation gives refresh tokens no lifetime): every refresh spends one, and a user holds at most
   * `REFRESH_TOKENS_PER_USER`.
   */
  sweep(now: number): void {
    for (const [key, value] of this.pending) if (value.expiresAt <= now) this.pending.delete(key);
    for (const [key, value] of this.codes) if (value.expiresAt + 3_600_000 <= now) this.codes.delete(key);
    for (const [key, value] of this.accessTokens) if (value.expiresAt <= now) this.accessTokens.delete(key);
    for (const [key, value] of this.refreshTokens) if (value.usedAt !== null && value.usedAt + SPENT_REFRESH_KEPT_MS <= now) this.refreshTokens.delete(key);
  }

  recordCall(call: ApiCallRecord): void {
    remember(this.apiCalls, call);
    this.emit({ type: 'api_call', data: call });
  }

  recordDelivery(delivery: DeliveryRecord): void {
    remember(this.deliveries, delivery);
  }

  subscribe(listener: (event: SimulatorEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Tells every listener. One that throws changes nothing here (the request that made the change
   * is still answered, the other listeners still hear of it); its error is thrown again on its
   * own, as an uncaught exception, as a throwing EventTarget listener's is.
   */
  emit(event: SimulatorEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

function remember<T>(list: T[], item: T): void {
  list.unshift(item);
  if (list.length > RECENT) list.length = RECENT;
}
