/**
 * Server-side access checks. Browser gates (`<mp-gate>`, `kit.has`) only hide UI; anything worth
 * protecting must be refused here too. The rules themselves live in `src/shared/access.ts`.
 */
import { checkAccess, type AccessReason, type AccessRequirement } from '../shared/access.js';
import { MarketplaceKitError } from '../shared/errors.js';
import type { AnyEntitlement } from '../shared/schemas.js';

/** Why access was refused: every `AccessReason` but `granted`. */
export type DeniedReason = Exclude<AccessReason, 'granted'>;

/** Access refused by the entitlement rules. `status` is 403; `reason` says why. */
export class AccessDeniedError extends MarketplaceKitError {
  override name = 'AccessDeniedError';
  readonly reason: DeniedReason;

  constructor(reason: DeniedReason, message: string) {
    super('ERR_ACCESS_DENIED', message, { status: 403 });
    this.reason = reason;
  }

  /** Adds `reason` to the error body, so the page can say why (e.g. show the paywall). */
  override toJSON(): { error: { code: 'ERR_ACCESS_DENIED'; message: string; reason: DeniedReason } } {
    return { error: { code: 'ERR_ACCESS_DENIED', message: this.message, reason: this.reason } };
  }
}

const EXPLANATIONS: Record<DeniedReason, string> = {
  none: 'the user holds no entitlement for this app',
  expired: 'the entitlement has expired',
  cancelled: 'the subscription was cancelled',
  past_due: 'the subscription is past due',
  inactive: 'the entitlement is not active',
  plan: 'the plan does not include this',
  feature: 'the plan does not include this feature',
  over_quota: 'the usage limit is reached',
};

/**
 * Throws `AccessDeniedError` unless the entitlement grants the requirement (same rules as the
 * browser's `kit.has`).
 *
 * @example
 * assertAccess(entitlement, { feature: 'export', metered: true });
 */
export function assertAccess(entitlement: AnyEntitlement | null | undefined, requirement: AccessRequirement = {}, now = Date.now()): void {
  const decision = checkAccess(entitlement, requirement, now);
  if (decision.granted) return;
  const reason = decision.reason as DeniedReason;
  throw new AccessDeniedError(reason, `Access denied: ${EXPLANATIONS[reason]}`);
}
