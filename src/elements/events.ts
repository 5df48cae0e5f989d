/**
 * One `Event` subclass per event the elements fire. All bubble and cross shadow roots
 * (`composed`), so a page can listen once on `document`. Request events are cancelable: call
 * `preventDefault()` to veto the action (for example to show your own pricing page instead).
 */
import type { AccessDecision } from '../shared/access.js';
import type { MarketplaceKitError } from '../shared/errors.js';
import type { UpgradeOutcome } from '../runtime/types.js';

const init = (cancelable = false): EventInit => ({ bubbles: true, composed: true, cancelable });
// The fields are `declare`d, set by assignment in the constructors: a class field would define
// each again on every event, and a thousand gates fire one each on a plan switch.

/** Fired by `<mp-sign-in-button>` and `<mp-gate>` before sign-in starts. Cancelable. */
export class MpSignInRequestEvent extends Event {
  /** Where the user comes back to after signing in. */
  declare readonly returnTo: string;
  constructor(returnTo: string) {
    super('mp-sign-in-request', init(true));
    this.returnTo = returnTo;
  }
}

/** Fired by `<mp-upgrade-button>` and `<mp-gate>` before the plan chooser opens. Cancelable. */
export class MpUpgradeRequestEvent extends Event {
  declare readonly plan: string | undefined;
  declare readonly feature: string | undefined;
  constructor(plan?: string, feature?: string) {
    super('mp-upgrade-request', init(true));
    this.plan = plan;
    this.feature = feature;
  }
}

/** Fired when the plan chooser closes: `outcome` is `upgraded` or `dismissed`. */
export class MpUpgradeEvent extends Event {
  declare readonly outcome: UpgradeOutcome;
  declare readonly plan: string | undefined;
  declare readonly feature: string | undefined;
  constructor(outcome: UpgradeOutcome, plan?: string, feature?: string) {
    super('mp-upgrade', init());
    this.outcome = outcome;
    this.plan = plan;
    this.feature = feature;
  }
}

/** Fired by `<mp-gate>` when its access decision changes (also on the first decision). */
export class MpAccessChangeEvent extends Event {
  declare readonly granted: boolean;
  declare readonly reason: AccessDecision['reason'];
  constructor(decision: AccessDecision) {
    super('mp-access-change', init());
    this.granted = decision.granted;
    this.reason = decision.reason;
  }
}

/** Where `<mp-usage-meter>`'s usage stands against its `warning` and `exceeded` thresholds. */
export type UsageLevel = 'ok' | 'warning' | 'exceeded';

/** Fired by `<mp-usage-meter>` when usage crosses a threshold (also on the first reading). */
export class MpUsageLevelEvent extends Event {
  declare readonly level: UsageLevel;
  constructor(level: UsageLevel) {
    super('mp-usage-level', init());
    this.level = level;
  }
}

/** Fired when an action an element started (sign-in, upgrade, retry) fails. */
export class MpErrorEvent extends Event {
  /**
   * Switch on `error.code`: the kit's own code (`ERR_NOT_EMBEDDED`, `ERR_BRIDGE_TIMEOUT`, …), or
   * `ERR_ACTION_FAILED` for any other failure, which is kept as `error.cause`.
   */
  declare readonly error: MarketplaceKitError;
  constructor(error: MarketplaceKitError) {
    super('mp-error', init());
    this.error = error;
  }
}

declare global {
  interface GlobalEventHandlersEventMap {
    'mp-sign-in-request': MpSignInRequestEvent;
    'mp-upgrade-request': MpUpgradeRequestEvent;
    'mp-upgrade': MpUpgradeEvent;
    'mp-access-change': MpAccessChangeEvent;
    'mp-usage-level': MpUsageLevelEvent;
    'mp-error': MpErrorEvent;
  }
}
