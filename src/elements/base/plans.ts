import { checkAccess, type AccessDecision, type AccessReason, type AccessRequirement } from '../../shared/access.js';
import type { Entitlement } from '../../shared/schemas.js';

/**
 * The plans named by a `plan` attribute (`<mp-gate>`, `<mp-upgrade-button>`): one plan, or
 * several that qualify, separated by spaces or commas (`pro business`, `pro, business`).
 * Undefined when it names none, so that "no plan required" never becomes "no plan qualifies".
 *
 * @example
 * parsePlanList('pro, business'); // ['pro', 'business']
 * parsePlanList(' ');             // undefined
 * parsePlanList(['pro', 'business']); // ['pro', 'business'] (a property set to a list)
 */
export function parsePlanList(value: string | readonly string[] | null | undefined): string[] | undefined {
  const plans = asText(value)?.split(/[\s,]+/).filter(Boolean);
  return plans?.length ? plans : undefined;
}

/**
 * The feature named by a `feature` attribute, without the spaces around it (a template's stray
 * space must not lock a user who has the feature); undefined when it names none.
 */
export function parseFeature(value: string | null | undefined): string | undefined {
  return asText(value)?.trim() || undefined;
}

/**
 * A property as its attribute would read: frameworks set what they are given (`:plan="2"` in
 * Vue is the number 2, a list may come as an array), and a render must not throw on it.
 */
function asText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  return Array.isArray(value) ? value.join(' ') : String(value);
}

/** Denials that renewing the user's own plan, or paying for it, would lift. */
const LAPSED: readonly AccessReason[] = ['expired', 'cancelled', 'past_due'];

/**
 * True when `decision` denies access only because the user's own paid plan lapsed: the same
 * entitlement, live again, would grant `requirement` (usage quota aside: a renewal starts a new
 * period). Then the elements offer to renew that plan, or to update its payment, instead of an
 * upgrade. A trial that ended is not a plan to renew: that is an upgrade.
 *
 * @example
 * // pro expired, the gate asks for pro or business: renewing pro is the way back
 * lapsedOwnPlan(entitlement, { plan: ['pro', 'business'] }, { granted: false, reason: 'expired' }); // true
 */
export function lapsedOwnPlan(entitlement: Entitlement | null | undefined, requirement: AccessRequirement, decision: AccessDecision): boolean {
  if (!entitlement || entitlement.status === 'trialing' || !LAPSED.includes(decision.reason)) return false;
  return checkAccess({ ...entitlement, status: 'active', expires_at: null }, { ...requirement, metered: false }).granted;
}

/**
 * The plans an upgrade offers for `decision`: the listed ones, but the user's own when access was
 * refused for the feature (the plan check passed: the user's plan is listed and lacks it, so
 * buying it again unlocks nothing). Undefined when none is left: the upgrade then asks the
 * chooser for the feature alone.
 *
 * @example
 * // holds pro, which lacks sso; the gate lists pro and business
 * plansToOffer(['pro', 'business'], entitlement, { granted: false, reason: 'feature' }); // ['business']
 */
export function plansToOffer(plans: string[] | undefined, entitlement: Entitlement | null | undefined, decision: AccessDecision | null): string[] | undefined {
  if (!plans || !entitlement || decision?.reason !== 'feature') return plans;
  const others = plans.filter((plan) => plan !== entitlement.plan);
  return others.length ? others : undefined;
}
