import { html, nothing, type PropertyValues } from 'lit';
import type { UpgradeOutcome } from '../../runtime/types.js';
import { MarketplaceElement, STRINGS_PROPERTY, type BaseStrings } from '../base/marketplace-element.js';
import { baseStyles } from '../base/base.styles.js';
import { en } from '../locales/en.js';
import { lapsedOwnPlan, parseFeature, parsePlanList, plansToOffer } from '../base/plans.js';
import { upgradeButtonStyles } from './upgrade-button.styles.js';

/** The texts of `<mp-upgrade-button>` (its `strings`); each key overrides one default. */
export type UpgradeButtonStrings = BaseStrings & {
  /** The label without a `plan`. */
  label: string;
  /** The label with a `plan`: `{plan}` (several plans read "pro or business"). */
  planLabel: string;
  /** Shown while the dashboard's plan chooser is open. */
  busy: string;
  /** Shown (disabled) when the user already has the plan or feature. */
  current: string;
  /** The label when the user's own plan, `{plan}`, would give access but has expired or was cancelled. */
  renew: string;
  /** The label when the user's own plan would give access but its payment is past due. */
  updatePayment: string;
  /** Announced after an upgrade. */
  upgraded: string;
  /** Announced when the plan chooser was closed without upgrading. */
  dismissed: string;
};

/**
 * @summary Opens the dashboard's plan chooser (`kit.upgrade({ plan, feature })`), shows progress
 * and reports the outcome. Shows "Current plan", disabled, when the user already has it, and
 * "Renew" or "Update payment" (offering the user's own plan) when that plan would give access but
 * has lapsed.
 * @tagname mp-upgrade-button
 *
 * @fires {MpUpgradeRequestEvent} mp-upgrade-request - Before the plan chooser opens; cancelable (`preventDefault()` to show your own pricing page).
 * @fires {MpUpgradeEvent} mp-upgrade - The chooser closed; `outcome` is `upgraded` or `dismissed`.
 * @fires {MpErrorEvent} mp-error - The chooser could not open (for example `ERR_NOT_EMBEDDED` outside the dashboard).
 *
 * @csspart base - The button.
 * @csspart current - The button, when it shows the current plan.
 * @csspart spinner - The progress indicator.
 * @csspart label - The label.
 * @csspart status - The visually hidden live region announcing the outcome, or a failure.
 *
 * @cssproperty --mp-color-accent - Button background.
 * @cssproperty --mp-color-on-accent - Button text.
 * @cssproperty --mp-color-success - Text of the "Current plan" state.
 * @cssproperty --mp-color-surface - Background of the "Current plan" state.
 * @cssproperty --mp-color-border - Outline of the "Current plan" state.
 * @cssproperty --mp-color-focus - Focus ring.
 * @cssproperty --mp-radius - Corner radius.
 * @cssproperty --mp-font - Font shorthand.
 */
export class MpUpgradeButton extends MarketplaceElement<UpgradeButtonStrings> {
  static override styles = [baseStyles, upgradeButtonStyles];
  /** `el.focus()` (a dialog giving the focus back, say) focuses the button inside. */
  static override shadowRootOptions: ShadowRootInit = { ...MarketplaceElement.shadowRootOptions, delegatesFocus: true };

  static override defaultStrings: UpgradeButtonStrings = { ...en.common, ...en['mp-upgrade-button'] };
  static override textSection = 'mp-upgrade-button';

  static override properties = {
    plan: {},
    feature: {},
    label: {},
    disabled: { type: Boolean, reflect: true },
    strings: STRINGS_PROPERTY,
    _outcome: { state: true, attribute: false },
  };

  /**
   * The plan to offer, e.g. `pro`; several qualifying plans separated by spaces or commas
   * (`pro business`), or as a property a list (`['pro', 'business']`), as on `<mp-gate>`: the
   * first is offered, and holding any of them is "Current plan".
   */
  declare plan: string | readonly string[] | undefined;
  /** The feature the user wants, passed on to the plan chooser. */
  declare feature: string | undefined;
  /** The label; shortcut for `strings.label` / `strings.planLabel` (`{plan}` is filled in). */
  declare label: string | undefined;
  /** Disables the button. */
  declare disabled: boolean;
  /** Overrides of the built-in texts, as a property or a JSON attribute. Keys: `label`, `planLabel`, `busy`, `current`, `renew`, `updatePayment`, `upgraded`, `dismissed`, `failed`, `notConnected`. */
  declare strings: Partial<UpgradeButtonStrings> | undefined;
  private declare _outcome: UpgradeOutcome | undefined;
  /**
   * What the button offers: `upgrade`; `current` when the user holds the plan; `renew` or
   * `updatePayment` when the user's own plan would give access if it had not lapsed.
   */
  private _offer: 'upgrade' | 'current' | 'renew' | 'updatePayment' = 'upgrade';
  /** The plans an `upgrade` offer names (`plansToOffer`): never the user's own when that cannot help. */
  private _plans: string[] | undefined;

  constructor() {
    super();
    this.disabled = false;
  }

  protected override willUpdate(changed: PropertyValues): void {
    super.willUpdate(changed);
    const before = this._offer;
    this._offer = this._currentOffer();
    // A failure is news about the offer that failed, and "Try again" on "Current plan" offers
    // nothing (the chooser may time out after the purchase was announced and reloaded).
    if (this._offer !== before || this._offer === 'current') this._failed = false;
    // The outcome was said in the language it happened in: another language does not say it again.
    if (this._translated) this._outcome = undefined;
  }

  private _currentOffer(): MpUpgradeButton['_offer'] {
    const requirement = { plan: parsePlanList(this.plan), feature: parseFeature(this.feature) };
    this._plans = requirement.plan;
    // In error the kit keeps the entitlement it had: "Current plan" stays what it was.
    const known = this.state === 'ready' || (this.state === 'error' && !!this._kit?.entitlement);
    if (!known || !this._kit) return 'upgrade';
    const decision = this._kit.access(requirement);
    this._plans = plansToOffer(requirement.plan, this._kit.entitlement, decision);
    // Without a plan or a feature any live plan is granted, which is no reason to say "Current plan".
    if (decision.granted) return requirement.plan || requirement.feature ? 'current' : 'upgrade';
    if (lapsedOwnPlan(this._kit.entitlement, requirement, decision)) return decision.reason === 'past_due' ? 'updatePayment' : 'renew';
    return 'upgrade';
  }

  override render() {
    const { state } = this;
    const plans = this._plans;
    const offer = this._offer;
    const current = offer === 'current';
    const loading = state === 'loading';
    const label = this._busy
      ? this._name('busy')
      : state === 'not-connected'
        ? this._name('notConnected')
        : this._failed
          ? this._name('failed')
          : offer !== 'upgrade'
            ? this._name(offer, { plan: this._planName(this._kit?.entitlement?.plan ?? '') })
            : plans
              ? this._name('planLabel', { plan: this._planNames(plans) }, this.label)
              : this._name('label', {}, this.label);
    // The current plan, like a kit that cannot act, is not `disabled` but `aria-disabled`: a button
    // that had the focus when the upgrade went through keeps it, instead of dropping it to the page's
    // start. The button is laid out as the page is; its label is written in its own language's direction.
    return html`<button
        part=${current ? 'base current' : 'base'}
        type="button"
        lang=${this._lang}
        dir=${this._dir}
        ?disabled=${this.disabled}
        aria-disabled=${current || this._unavailable ? 'true' : nothing}
        aria-busy=${this._busy || loading}
        @click=${this._handleClick}
      >
        ${this._busy || loading ? html`<span part="spinner" class="spinner" aria-hidden="true"></span>` : nothing}
        <span part="label" lang=${label.lang} dir=${label.dir}>${label.text}</span>
      </button>
      ${this._status(this._outcome ? this._text(this._outcome) : this._failureNews)}`;
  }

  private async _handleClick(event: Event) {
    // Like a disabled button, the current plan's does nothing, and its clicks do not reach the page.
    if (this._ignoreClick(event, this._offer === 'current' || this._unavailable)) return;
    const plan = this._offer === 'upgrade' ? this._plans?.[0] : this._kit?.entitlement?.plan;
    this._outcome = undefined;
    this._outcome = await this._upgrade(plan, parseFeature(this.feature));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'mp-upgrade-button': MpUpgradeButton;
  }
}

declare module '../base/texts.js' {
  interface ElementTexts {
    'mp-upgrade-button': UpgradeButtonStrings;
  }
}
