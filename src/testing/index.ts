/**
 * `marketplace-app-kit/testing` in Node: helpers for an app's own tests, the signers (context
 * tokens, sessions, webhook deliveries) and the simulator helpers. In a browser or a bundler, the
 * same entry gives `FakeKit`, which is browser code (`./browser.ts`). Docs: docs/testing.md.
 *
 * @example
 * // startTestSimulator from 'marketplace-app-kit/testing'
 * const sim = await startTestSimulator({ config: 'mpkit.config.json', appUrl: 'http://127.0.0.1:3000/' });
 * const session = await sim.launchSession('usr_ada', { plan: 'pro_monthly' });
 */
export {
  signContextToken,
  signSessionToken,
  signWebhookBody,
  webhookDelivery,
  webhookRequest,
  type SignContextTokenOptions,
  type SignSessionOptions,
  type SignedDelivery,
  type WebhookDeliveryOptions,
} from './signers.js';
export { startTestSimulator, type LaunchOptions, type LaunchSessionOptions, type TestSession, type TestSimulator, type TestSimulatorOptions } from './simulator.js';
export { MarketplaceKitError, isKitError, type ErrorCode } from '../shared/errors.js';
