/**
 * `marketplace-app-kit`: the browser runtime. One call, `createKit`, starts everything an app
 * needs inside the marketplace dashboard (embed context, session exchange, entitlements, host
 * bridge) and on the developer's own site (cookie session after sign-in).
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKit, browserEnvironment, type KitOptions } from './kit.js';
import { registerKit } from './registry.js';
import type { Kit } from './types.js';
import { MarketplaceKitError } from '../shared/errors.js';

export type { KitOptions } from './kit.js';
export { KIT_GLOBAL, getKit } from './registry.js';
export { KIT_CHANGE_EVENT, KIT_CREATED_EVENT, KIT_DESTROYED_EVENT } from './types.js';
export type { HostBridge, Kit, KitState, ToastTone, UpgradeOutcome } from './types.js';
export { MarketplaceKitError, isKitError, type ErrorCode } from '../shared/errors.js';
export { checkAccess, hasAccess, isOverQuota } from '../shared/access.js';
export type { AccessDecision, AccessReason, AccessRequirement } from '../shared/access.js';
export type { AnyEntitlement, Entitlement, EntitlementShort, Profile, Theme } from '../shared/schemas.js';

/**
 * Starts the kit and resolves once start-up is over: `kit.state` is then `ready`, `signed-out`
 * (own site, nobody signed in) or `error` (`kit.error` says why). It rejects only for a
 * configuration mistake (`ERR_CONFIG`), such as a call outside a browser (a server-side render
 * runs your entry module in Node: create the kit from client-only code). The kit is registered
 * for `getKit()` and announced with `mp-kit-created` before start-up, in state `loading`.
 *
 * Inside the dashboard it reads and scrubs the `mp_*` launch parameters, checks `mp_host` against
 * `hostOrigins` and exchanges the context token at `POST {backend}/session`; on the developer's own
 * site it reads the cookie session at `GET {backend}/session`. Either way: one request.
 *
 * @example
 * const kit = await createKit({ backend: '/api/marketplace', hostOrigins: ['https://dashboard.example'] });
 * if (kit.has('export')) showExportButton();
 * const reports = await kit.fetch('/api/reports').then((r) => r.json());
 */
export async function createKit(options: KitOptions): Promise<Kit> {
  if (typeof window === 'undefined' || typeof document === 'undefined') {
    throw new MarketplaceKitError('ERR_CONFIG', DEV ? 'createKit needs a browser: create the kit from client-only code, not in a server-side render' : '');
  }
  const kit = new MarketplaceKit(options, browserEnvironment());
  registerKit(kit);
  await kit.started;
  return kit;
}
