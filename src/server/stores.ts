/**
 * Every piece of state that several instances of an app backend must share, as one set of ports
 * (docs/redis.md). `createMemoryStores` gives the in-memory defaults (one process);
 * `createRedisStores` from `marketplace-app-kit/redis` gives them all on one Redis.
 */
import { MarketplaceKitError } from '../shared/errors.js';
import { numberOption } from '../shared/options.js';
import { createMemoryPacing, processPacing, type ApiKeyPacing } from './api-key-pacing.js';
import { createMemoryEntitlementStore, type EntitlementStore } from './entitlement-store.js';
import { createMemoryLaunchLimiter, type LaunchLimiter } from './launch-limiter.js';
import { createMemoryRefreshFlight, type RefreshFlight } from './refresh-flight.js';
import { createMemoryReplayStore, DEFAULT_REPLAY_STORE_ENTRIES, type ReplayStore } from './replay-store.js';
import { createMemoryRevocationStore, type RevocationStore } from './revocations.js';
import { createMemoryWebhookProcessing, type WebhookProcessing } from './webhook-processing.js';

/** The shared state of an app backend and its marketplace client, one port each. */
export interface MarketplaceStores {
  /** Context-token `jti` claims (`createAppBackend`). */
  replay: ReplayStore;
  /** Webhook deliveries: claimed while handled, done after (`createAppBackend`). */
  webhooks: WebhookProcessing;
  /** Launches per user, `maxExchangesPerUser` (`createAppBackend`). */
  launches: LaunchLimiter;
  /** The revocation cut-off per user, from `user.revoked` (`createAppBackend`). */
  revocations: RevocationStore;
  /** The entitlement cache and its per-user invalidation (`createMarketplaceClient`). */
  entitlements: EntitlementStore;
  /** API-key pacing and the pause after a 429 (`createMarketplaceClient`). */
  pacing: ApiKeyPacing;
  /** Refresh-token single flight (`createMarketplaceClient`). */
  refresh: RefreshFlight;
}

/** The ports `createMarketplaceClient` uses. */
export type ClientStores = Pick<MarketplaceStores, 'entitlements' | 'pacing' | 'refresh'>;

const PORT_METHODS: Record<keyof MarketplaceStores, readonly string[]> = {
  replay: ['claim', 'release'],
  webhooks: ['begin', 'renew', 'finish', 'abandon'],
  launches: ['take', 'giveBack'],
  revocations: ['revoke', 'revokedAt'],
  entitlements: ['read', 'generation', 'write', 'invalidate'],
  pacing: ['pacer'],
  refresh: ['begin', 'finish'],
};

/** Options of `createMemoryStores`. */
export interface MemoryStoresOptions {
  /** Live context-token claims held at most (default 200 000: 500 launches a second for a token's whole life). */
  replayEntries?: number | undefined;
}

/**
 * The in-memory stores: right for one process, and the default of `createAppBackend`. Pacing is
 * shared by the whole process unless you pass your own.
 *
 * @example
 * const backend = createAppBackend({ ...options, stores: createMemoryStores({ replayEntries: 500_000 }) });
 */
export function createMemoryStores(options: MemoryStoresOptions = {}): MarketplaceStores {
  const replayEntries = numberOption(options.replayEntries, DEFAULT_REPLAY_STORE_ENTRIES, 'createMemoryStores: replayEntries', { min: 2 });
  return {
    replay: createMemoryReplayStore({ maxEntries: replayEntries }),
    webhooks: createMemoryWebhookProcessing(),
    launches: createMemoryLaunchLimiter({ maxUsers: replayEntries }),
    revocations: createMemoryRevocationStore(),
    entitlements: createMemoryEntitlementStore(),
    pacing: processPacing,
    refresh: createMemoryRefreshFlight(),
  };
}

export { createMemoryPacing };

/**
 * `stores` as given to `createAppBackend` or `createMarketplaceClient`: an object whose given
 * ports each have their methods, or `ERR_CONFIG` naming what is missing.
 */
export function readStores<K extends keyof MarketplaceStores>(value: unknown, caller: string, ports: readonly K[]): Partial<Pick<MarketplaceStores, K>> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MarketplaceKitError('ERR_CONFIG', `${caller}: stores must be an object such as createRedisStores({ client }) returns`);
  }
  const given = value as Record<string, unknown>;
  for (const port of ports) {
    const store = given[port];
    if (store === undefined) continue;
    const missing = PORT_METHODS[port].filter((method) => typeof (store as Record<string, unknown> | null)?.[method] !== 'function');
    if (missing.length > 0) throw new MarketplaceKitError('ERR_CONFIG', `${caller}: stores.${port} lacks ${missing.join(', ')}`);
  }
  return given as Partial<Pick<MarketplaceStores, K>>;
}
