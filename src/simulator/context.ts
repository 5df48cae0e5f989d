/** What every handler of the simulator works with: resolved settings, credentials and state. */
import type { RateLimiter } from './rate-limit.js';
import type { SimulatorState } from './state.js';
import type { WebhookSender } from './webhooks.js';

export interface SimulatorCredentials {
  clientId: string;
  clientSecret: string;
  testApiKey: string;
  liveApiKey: string;
  webhookSecret: string;
}

/** The simulator's rate limits (`startSimulator`'s `rateLimits`): requests per window, by caller. */
export interface RateLimits {
  /** Requests per window for a `test_` key (docs/marketplace.md#rate-limits: 100 per minute). */
  test: number;
  /** Requests per window for a `live_` key (docs/marketplace.md#rate-limits: 1,000 per minute). */
  live: number;
  /** Requests per window for each user's OAuth access tokens (not shown in docs/marketplace.md#rate-limits; 1,000 per minute). */
  bearer: number;
  /** The length of a window in milliseconds (60000). */
  windowMs: number;
}

export interface SimulatorContext {
  state: SimulatorState;
  /** Now, by the simulator's one clock (`startSimulator`'s `clock`). */
  clock: () => number;
  /** Waits by that same clock: the webhook backoff. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  siteUrl: string;
  origin: string;
  baseUrl: string;
  dashboardUrl: string;
  appId: string;
  appName: string;
  credentials: SimulatorCredentials;
  codeTtlMs: number;
  accessTokenTtlSeconds: number;
  rateLimits: RateLimits;
  limiter: RateLimiter;
  webhooks: WebhookSender;
  /** The host bridge bundle the dashboard loads. */
  hostBundle: URL;
  /** True when `hostBundle` is the developer's own (the option), not this package's build output. */
  hostBundleGiven: boolean;
}
