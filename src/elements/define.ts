/**
 * Registers every element under its `mp-*` name. Safe when loaded twice (two script tags, two
 * bundles): a name that is already taken is left alone.
 */
import { MpGate } from './gate/gate.js';
import { MpPlanBadge } from './plan-badge/plan-badge.js';
import { MpSignInButton } from './sign-in-button/sign-in-button.js';
import { MpUpgradeButton } from './upgrade-button/upgrade-button.js';
import { MpUsageMeter } from './usage-meter/usage-meter.js';
import { MpUserBadge } from './user-badge/user-badge.js';

/** Every element, by tag name. */
export const elements = {
  'mp-sign-in-button': MpSignInButton,
  'mp-gate': MpGate,
  'mp-upgrade-button': MpUpgradeButton,
  'mp-usage-meter': MpUsageMeter,
  'mp-user-badge': MpUserBadge,
  'mp-plan-badge': MpPlanBadge,
} as const;

/**
 * Registers the elements that are not registered yet.
 *
 * @example
 * import { defineElements } from 'marketplace-app-kit/elements';
 * defineElements(); // already done on import; useful with a scoped registry
 */
export function defineElements(registry: CustomElementRegistry = customElements): void {
  for (const [name, element] of Object.entries(elements)) {
    if (!registry.get(name)) registry.define(name, element);
  }
}

defineElements();
