import { html, nothing, type PropertyValues } from 'lit';
import { MarketplaceElement, STRINGS_PROPERTY, type BaseStrings } from '../base/marketplace-element.js';
import { baseStyles } from '../base/base.styles.js';
import { en } from '../locales/en.js';
import { planBadgeStyles } from './plan-badge.styles.js';

/**
 * One text per status, plus `none`, `signedOut`, and `until` (placeholder `{date}`). A status the
 * kit does not know (`paused`) shows as it is, unless `strings` has a text for it.
 */
export type PlanBadgeStrings = BaseStrings & {
  active: string;
  trialing: string;
  past_due: string;
  cancelled: string;
  expired: string;
  none: string;
  signedOut: string;
  until: string;
};

/** The badge's texts that are no status: a status with one of these names shows as it is. */
const OTHER_TEXTS: ReadonlySet<string> = new Set(['none', 'signedOut', 'until', 'loading', 'error', 'notConnected', 'failed']);

/**
 * @summary The user's plan and the entitlement's status ("Pro · Active · until Dec 21, 2026").
 * A passed `expires_at` shows as expired, as the access rules decide.
 * @tagname mp-plan-badge
 *
 * @csspart base - The badge.
 * @csspart plan - The plan name.
 * @csspart status - The status.
 * @csspart expiry - The end date, when the entitlement has one and is live.
 * @csspart notice - The loading, signed-out, error or not-connected line.
 *
 * @cssproperty --mp-color-success - Status color when active.
 * @cssproperty --mp-color-warning - Status color when trialing.
 * @cssproperty --mp-color-danger - Status color when past due, cancelled or expired.
 * @cssproperty --mp-color-border - Badge border.
 * @cssproperty --mp-color-muted - Status color without an entitlement or with an unknown status, and the expiry date.
 * @cssproperty --mp-color-surface - Badge background.
 * @cssproperty --mp-color-text - Plan name color.
 * @cssproperty --mp-font - Font shorthand.
 */
export class MpPlanBadge extends MarketplaceElement<PlanBadgeStrings> {
  static override styles = [baseStyles, planBadgeStyles];

  static override defaultStrings: PlanBadgeStrings = { ...en.common, ...en['mp-plan-badge'] };
  static override textSection = 'mp-plan-badge';

  static override properties = {
    status: { reflect: true },
    strings: STRINGS_PROPERTY,
  };

  /**
   * The status shown: the entitlement's status (`expired` for an active or trialing one whose `expires_at` has passed), or `none`. Set by the element; reflected.
   * @readonly
   */
  declare readonly status: string | undefined;
  /** Overrides of the built-in texts, as a property or a JSON attribute. Keys: one per status (a status the kit does not know, such as `paused`, too), `none`, `signedOut`, `until`, `loading`, `error`, `notConnected`. */
  declare strings: (Partial<PlanBadgeStrings> & { [status: string]: string | undefined }) | undefined;

  protected override willUpdate(changed: PropertyValues): void {
    super.willUpdate(changed);
    const kit = this._kit;
    const entitlement = kit?.entitlement;
    // Readonly to pages only: the element sets it itself.
    (this as { status: string | undefined }).status =
      this.state !== 'ready' || !kit ? undefined : !entitlement ? 'none' : kit.access({}).reason === 'expired' ? 'expired' : entitlement.status;
  }

  override render() {
    const entitlement = this._kit?.entitlement;
    const status = this.status;
    if (!status) return this._notice(this.state === 'signed-out' ? 'signedOut' : undefined);
    // Laid out as the page is; each text is written in its own language's direction.
    if (!entitlement) {
      const none = this._text('none');
      return html`<span part="base" lang=${this._lang} dir=${this._dir}><span part="status" lang=${none.lang} dir=${none.dir}>${none.text}</span></span>`;
    }
    // A status the kit does not know shows as it is, unless `strings` or the class's `defaultStrings`
    // name it; a status named like one of the badge's other texts (`failed`, `until`) is a status.
    const named = OTHER_TEXTS.has(status) ? undefined : this._text(status as keyof PlanBadgeStrings);
    const said = named?.text ? named : undefined;
    const date = this._date(entitlement.expires_at);
    const until = (status === 'active' || status === 'trialing') && date ? this._text('until', { date }) : undefined;
    return html`<span part="base" lang=${this._lang} dir=${this._dir}>
      <span part="plan">${this._planName(entitlement.plan)}</span>
      <span part="status" lang=${said?.lang ?? nothing} dir=${said?.dir ?? nothing}>${said?.text ?? status}</span>
      ${until ? html`<span part="expiry" lang=${until.lang} dir=${until.dir}>${until.text}</span>` : nothing}
    </span>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'mp-plan-badge': MpPlanBadge;
  }
}

declare module '../base/texts.js' {
  interface ElementTexts {
    'mp-plan-badge': PlanBadgeStrings;
  }
}
