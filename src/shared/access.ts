/**
 * The access rules (docs/decisions.md#marketplace-api), one implementation for the server (`requireEntitlement`), the
 * browser runtime (`kit.has`, `kit.access`) and the elements (`<mp-gate>`).
 *
 * Browser-side checks only decide what the UI shows. Anything worth protecting must be checked
 * again on the server with `requireEntitlement`.
 */
import { DEV } from './dev.js';
import { MarketplaceKitError } from './errors.js';
import type { AnyEntitlement } from './schemas.js';

/** What access needs: a feature, a plan, usage left (`metered`); every one given must hold. */
export interface AccessRequirement {
  /** A feature identifier the entitlement must list. */
  feature?: string | undefined;
  /**
   * The plan, or any of several plans, the user must hold. Plans have no order in the marketplace,
   * so list every plan that qualifies: `{ plan: ['pro', 'business'] }`.
   */
  plan?: string | readonly string[] | undefined;
  /** Also refuse when the usage quota is spent (`usage.api_calls >= usage.limit`). */
  metered?: boolean | undefined;
}

/**
 * Why access is granted or not, most fundamental reason first:
 * - `none`: no entitlement at all (or the user is signed out);
 * - `expired`, `cancelled`, `past_due`: the entitlement's status, or `expired` when `expires_at`
 *   has passed;
 * - `inactive`: a status the kit does not know (fail closed);
 * - `plan`, `feature`: the entitlement is live but does not cover the requirement;
 * - `over_quota`: a `metered` requirement and the usage limit is reached.
 */
export type AccessReason =
  | 'granted'
  | 'none'
  | 'expired'
  | 'cancelled'
  | 'past_due'
  | 'inactive'
  | 'plan'
  | 'feature'
  | 'over_quota';

/** `checkAccess`'s answer: whether access is granted, and why (the reason names what is missing when it is not). */
export interface AccessDecision {
  /** Whether the entitlement grants the requirement. */
  granted: boolean;
  /** `granted` when it is; otherwise what refused it. */
  reason: AccessReason;
}

const LIVE_STATUSES = new Set(['active', 'trialing']);
const KNOWN_DENIED: Record<string, AccessReason> = { past_due: 'past_due', cancelled: 'cancelled', expired: 'expired' };

const REQUIREMENT_KEYS = new Set(['feature', 'plan', 'metered']);

/**
 * A requirement the rules can read, or `ERR_CONFIG`. A misspelled key (`features`), a bare string
 * or a plan that is not a text would otherwise read as "no requirement" and grant access.
 */
function assertRequirement(requirement: unknown): asserts requirement is AccessRequirement {
  const { feature, plan, metered } = (requirement ?? {}) as AccessRequirement;
  if (
    typeof requirement !== 'object' ||
    requirement === null ||
    Object.keys(requirement).some((key) => !REQUIREMENT_KEYS.has(key)) ||
    !(feature === undefined || typeof feature === 'string') ||
    !(plan === undefined || typeof plan === 'string' || (Array.isArray(plan) && plan.every((name) => typeof name === 'string'))) ||
    !(metered === undefined || typeof metered === 'boolean')
  ) {
    throw new MarketplaceKitError('ERR_CONFIG', DEV ? 'An access requirement is an object of feature (a text), plan (a text or a list of texts) and metered (a boolean), such as { feature: "export" }' : '');
  }
}

/**
 * Decides access and says why. A requirement that is not of `AccessRequirement`'s shape throws
 * `ERR_CONFIG`, whatever the entitlement (fail closed).
 *
 * @example
 * checkAccess(entitlement, { feature: 'export' }); // { granted: false, reason: 'past_due' }
 */
export function checkAccess(
  entitlement: AnyEntitlement | null | undefined,
  requirement: AccessRequirement = {},
  now: number = Date.now(),
): AccessDecision {
  assertRequirement(requirement);
  const deny = (reason: AccessReason): AccessDecision => ({ granted: false, reason });
  if (!entitlement) return deny('none');

  // A short-form entitlement has no status and no expiry: it counts as active (docs/decisions.md#marketplace-api).
  const status = 'status' in entitlement ? entitlement.status : 'active';
  if (!LIVE_STATUSES.has(status)) return deny(Object.hasOwn(KNOWN_DENIED, status) ? KNOWN_DENIED[status]! : 'inactive');

  const expiresAt = 'expires_at' in entitlement ? entitlement.expires_at : undefined;
  if (expiresAt != null) {
    const expiry = Date.parse(expiresAt);
    if (!(expiry > now)) return deny('expired'); // NaN fails closed too
  }

  const { plan, feature, metered } = requirement;
  if (plan !== undefined) {
    const plans: readonly string[] = typeof plan === 'string' ? [plan] : plan;
    if (!plans.includes(entitlement.plan)) return deny('plan');
  }
  if (feature !== undefined && !entitlement.features.includes(feature)) return deny('feature');
  if (metered && isOverQuota(entitlement)) return deny('over_quota');
  return { granted: true, reason: 'granted' };
}

/**
 * True when the entitlement grants the requirement. Fails closed: no entitlement, an unknown
 * status or an unreadable expiry all mean no access.
 *
 * @example
 * if (hasAccess(entitlement, { feature: 'export', plan: ['pro', 'business'] })) showExport();
 */
export function hasAccess(
  entitlement: AnyEntitlement | null | undefined,
  requirement: AccessRequirement = {},
  now: number = Date.now(),
): boolean {
  return checkAccess(entitlement, requirement, now).granted;
}

/** True when the usage quota is spent: `usage.api_calls >= usage.limit`. */
export function isOverQuota(entitlement: AnyEntitlement | null | undefined): boolean {
  return !!entitlement && entitlement.usage.api_calls >= entitlement.usage.limit;
}
