import { html, nothing, type PropertyValues } from 'lit';
import type { AccessDecision, AccessReason, AccessRequirement } from '../../shared/access.js';
import { MarketplaceElement, STRINGS_PROPERTY, type BaseStrings, type ShownText } from '../base/marketplace-element.js';
import { baseStyles } from '../base/base.styles.js';
import type { ElementText } from '../base/texts.js';
import { en } from '../locales/en.js';
import { lapsedOwnPlan, parseFeature, parsePlanList, plansToOffer } from '../base/plans.js';
import { MpAccessChangeEvent } from '../events.js';
import { gateStyles } from './gate.styles.js';

/** The look of a gate once the kit has decided: granted, or the kind of paywall it shows. */
export type GateAccess = 'granted' | 'locked' | 'expired' | 'past-due' | 'over-quota';

const LOOK: Record<AccessReason, GateAccess> = {
  granted: 'granted',
  none: 'locked',
  plan: 'locked',
  feature: 'locked',
  inactive: 'locked',
  expired: 'expired',
  cancelled: 'expired',
  past_due: 'past-due',
  over_quota: 'over-quota',
};

/**
 * Texts of the built-in paywall card. Placeholders: `{feature}` (the `feature` attribute, or
 * `thisFeature`), `{plan}` (the plans of the `plan` attribute, "pro or business"), `{current}`
 * (the user's plan), `{date}`, `{used}`, `{limit}`. `overQuotaText` may have plural forms, chosen
 * by `{limit}`.
 */
export type GateStrings = BaseStrings & {
  thisFeature: string;
  unlocked: string;
  lockedHeading: string;
  lockedText: string;
  lockedPlanText: string;
  expiredHeading: string;
  cancelledHeading: string;
  expiredText: string;
  ended: string;
  pastDueHeading: string;
  pastDueText: string;
  overQuotaHeading: string;
  overQuotaText: ElementText;
  signedOutHeading: string;
  signedOutText: string;
  errorHeading: string;
  errorText: string;
  refusedText: string;
  upgrade: string;
  renew: string;
  updatePayment: string;
  signIn: string;
  retry: string;
};

interface Card {
  heading: ShownText;
  text: ShownText;
  detail?: ShownText;
  /** The button, unless nothing the user does here can help. */
  action?: ShownText;
  run?: () => unknown;
}

/**
 * The kit's errors for a launch it refused (a dashboard origin not in `hostOrigins`, launch
 * parameters outside a frame, no context token). A refresh fails with the same error, so the
 * card offers no retry.
 */
const REFUSED_LAUNCH: ReadonlySet<string> = new Set(['ERR_HOST_NOT_ALLOWED', 'ERR_INVALID_INPUT']);

/**
 * @summary Shows its content only when the user's entitlement grants the `feature` and `plan`,
 * and a paywall otherwise. Gates only hide UI: check again on the server with `requireEntitlement`.
 * @tagname mp-gate
 *
 * @slot - Shown when access is granted.
 * @slot locked - Shown instead of the built-in paywall card when access is denied (locked, expired, past due, over quota, signed out).
 *
 * @fires {MpAccessChangeEvent} mp-access-change - The access decision changed; `granted` and `reason` (`checkAccess` reasons).
 * @fires {MpUpgradeRequestEvent} mp-upgrade-request - The card's upgrade action was chosen; cancelable.
 * @fires {MpUpgradeEvent} mp-upgrade - The plan chooser closed; `outcome`.
 * @fires {MpSignInRequestEvent} mp-sign-in-request - The card's sign-in action was chosen (signed out); cancelable.
 * @fires {MpErrorEvent} mp-error - An action of the card failed.
 *
 * @csspart base - The paywall card or the loading box.
 * @csspart card - The built-in paywall card.
 * @csspart loading - The box shown while loading or when not connected.
 * @csspart heading - The card's heading (`role="heading"`, at `heading-level`).
 * @csspart text - The card's explanation.
 * @csspart detail - The card's extra line: the end date of an expired plan, or that the card's action failed.
 * @csspart action - The card's button (upgrade, renew, update payment, sign in, retry).
 * @csspart status - The visually hidden live region announcing changes after the first decision.
 *
 * @cssproperty --mp-color-accent - Accent of the locked card and the action button.
 * @cssproperty --mp-color-danger - Accent of the expired, past-due and error cards.
 * @cssproperty --mp-color-warning - Accent of the over-quota card.
 * @cssproperty --mp-color-surface - Card background.
 * @cssproperty --mp-color-border - Card border.
 * @cssproperty --mp-gate-padding - Card padding.
 * @cssproperty --mp-color-on-accent - Action button text.
 * @cssproperty --mp-color-text - Card text.
 * @cssproperty --mp-color-muted - The loading box and the card's detail line.
 * @cssproperty --mp-color-focus - Focus ring of the action button.
 * @cssproperty --mp-radius - Corner radius of the card and its button.
 * @cssproperty --mp-font - Font shorthand.
 */
export class MpGate extends MarketplaceElement<GateStrings> {
  static override styles = [baseStyles, gateStyles];

  static override defaultStrings: GateStrings = { ...en.common, ...en['mp-gate'] };
  static override textSection = 'mp-gate';

  static override properties = {
    feature: {},
    plan: {},
    metered: { type: Boolean },
    headingLevel: { type: Number, attribute: 'heading-level' },
    access: { reflect: true },
    strings: STRINGS_PROPERTY,
  };

  /** The feature identifier the entitlement must list, e.g. `export`. */
  declare feature: string | undefined;
  /**
   * The plan the user must hold; several qualifying plans separated by spaces or commas
   * (`pro business`), or as a property a list (`['pro', 'business']`).
   */
  declare plan: string | readonly string[] | undefined;
  /** Also lock when the usage quota is spent (`usage.api_calls >= usage.limit`). */
  declare metered: boolean;
  /** The level of the paywall card's heading for assistive technology, 1 to 6 (anything else: 2), to fit the page's outline. */
  declare headingLevel: number | undefined;
  /**
   * The decision's look: `granted`, `locked`, `expired`, `past-due` or `over-quota`; unset until decided. Set by the element; reflected.
   * @readonly
   */
  declare readonly access: GateAccess | undefined;
  /** Overrides of the built-in texts, as a property or a JSON attribute; see `GateStrings` for the keys and placeholders. */
  declare strings: Partial<GateStrings> | undefined;

  /**
   * The current decision (`checkAccess` through `kit.access`), or null while loading, in error or not connected.
   * @readonly
   */
  readonly decision: AccessDecision | null = null;
  private _announced: string | undefined;
  private _hadFocus = false;
  /** Set while the focus is away from the page since it left from inside the gate; aborts the wait for its return. */
  private _focusAway: AbortController | undefined;
  /** Once the gate has shown its first decided look, later changes are announced (the first is page content). */
  private _settled = false;
  /** What the gate's look says (the heading, `unlocked`, ...), to announce it only when it changes. */
  private _said = '';
  /** What the live region says: the last change of `_said` since the gate settled. */
  private _announcement: ShownText | undefined;
  /** The heading of the card rendered last; '' when no card was. */
  private _heading = '';
  /** The paywall card of the last locked look, kept (hidden) while access is granted; see `_body`. */
  private _lockedCard: unknown;
  /** `plan` as last read, and the plans it names. */
  private _planRead: MpGate['plan'];
  private _planList: string[] | undefined;

  constructor() {
    super();
    this.metered = false;
    this.addEventListener('focusout', this._handleFocusOut);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this._focusAway?.abort();
    this._focusAway = undefined;
  }

  private get _plans(): string[] | undefined {
    if (this.plan !== this._planRead) this._planList = parsePlanList((this._planRead = this.plan));
    return this._planList;
  }

  private get _feature(): string | undefined {
    return parseFeature(this.feature);
  }

  protected override willUpdate(changed: PropertyValues): void {
    super.willUpdate(changed);
    // The card's button, or page content in a slot (a button in the unlocked content); or the
    // focus left the page from inside the gate and has not come back (see `_handleFocusOut`).
    this._hadFocus = this.matches(':focus-within') || !!this._focusAway;
    const kit = this._kit;
    const decided = kit && (this.state === 'ready' || this.state === 'signed-out');
    // A framework may set the property to a text ("true"): read as before, by its truth.
    const requirement = { feature: this._feature, plan: this._plans, metered: Boolean(this.metered) };
    // Readonly to pages only: the element sets these itself.
    (this as { decision: AccessDecision | null }).decision = decided ? kit.access(requirement) : null;
    const before = this.access;
    (this as { access: GateAccess | undefined }).access = this.decision ? this._look(this.decision, requirement) : undefined;
    // A failure of the card's action is news about that card only.
    if (this.access !== before) this._failed = false;
  }

  /** The look for a decision. A lapsed plan that would not give access anyway is not worth renewing: that is an upgrade. */
  private _look(decision: AccessDecision, requirement: AccessRequirement): GateAccess {
    const look = LOOK[decision.reason];
    const lapsed = look === 'expired' || look === 'past-due';
    return lapsed && !lapsedOwnPlan(this._kit?.entitlement, requirement, decision) ? 'locked' : look;
  }

  protected override updated(): void {
    this._settled ||= this.state !== 'loading' && this.state !== 'not-connected';
    this._keepFocus();
    const decision = this.decision;
    const key = decision && decision.reason;
    if (decision && key !== this._announced) {
      const change = new MpAccessChangeEvent(decision);
      this.dispatchEvent(change);
    }
    this._announced = key ?? undefined;
  }

  override render() {
    // One outer template for every look: the live region stays the same node, so a screen reader
    // announces its new text (a live region just inserted is often not read).
    const heading = this._heading;
    const [body, said] = this._body();
    // Only a change is news: a render for another reason (a theme, a usage count) says nothing new,
    // and neither does the failure line giving way to the same card as its action runs again, nor
    // the same look in another language (`_translated`).
    const saying = said?.text ?? '';
    if (saying !== this._said) {
      if (this._settled) this._announcement = this._translated || (saying === heading && heading === this._heading) ? undefined : this._news(said);
      this._said = saying;
    }
    return html`${body}${this._status(this._announcement)}`;
  }

  /**
   * What the gate shows, and what its live region says. The card is laid out as the page is (its
   * `dir`); each of its texts is written in the direction of its own language.
   */
  private _body(): [unknown, ShownText | undefined] {
    const state = this.state;
    this._heading = '';
    if (state === 'loading' || state === 'not-connected') {
      const notice = this._text(state === 'loading' ? 'loading' : 'notConnected');
      return [html`<div part="base loading" class="muted" aria-busy=${state === 'loading'} lang=${notice.lang} dir=${notice.dir}>${notice.text}</div>`, notice];
    }
    const granted = !!this.decision?.granted;
    let said: ShownText | undefined;
    if (granted) said = this._text('unlocked');
    else {
      const card = this._card();
      const { heading, text, action } = card;
      this._heading = heading.text;
      if (this._failed) card.detail = this._text('failed');
      const detail = card.detail;
      said = this._failed ? detail : heading;
      const content = html`<div part="base card" role="group" aria-labelledby="heading" lang=${this._lang} dir=${this._dir}>
        <p part="heading" id="heading" role="heading" aria-level=${this._headingLevel} lang=${heading.lang} dir=${heading.dir}>${heading.text}</p>
        <p part="text" lang=${text.lang} dir=${text.dir}>${text.text}</p>
        ${detail ? html`<p part="detail" class="muted" lang=${detail.lang} dir=${detail.dir}>${detail.text}</p>` : nothing}
        ${card.run && action
          ? html`<button part="action" type="button" aria-busy=${this._busy} lang=${action.lang} dir=${action.dir} @click=${card.run}>
              ${this._busy ? html`<span class="spinner" aria-hidden="true"></span>` : nothing}${action.text}
            </button>`
          : nothing}
      </div>`;
      if (state === 'error') return [content, said];
      this._lockedCard = content;
      // Page content in the `locked` slot says what it says: the hidden card's heading is not announced.
      if (this.querySelector(':scope > [slot="locked"]')) said = undefined;
    }
    // Locked and unlocked are the same nodes: the content's slot stays while access is denied, and
    // the card while it is granted, each not displayed (so neither seen, focused nor read) by the
    // styles that read the reflected `access` (gate.styles.ts). An entitlement change builds no
    // card or slot and sets no attribute of its own (docs/benchmarks.md, "Elements").
    return [html`<slot></slot>${this._lockedCard ? html`<slot name="locked">${this._lockedCard}</slot>` : nothing}`, said];
  }

  private get _headingLevel(): number {
    const level = Number(this.headingLevel);
    return Number.isInteger(level) && level >= 1 && level <= 6 ? level : 2;
  }

  /** What the paywall card says and does in the current state. */
  private _card(): Card {
    const kit = this._kit;
    const entitlement = kit?.entitlement;
    const plans = plansToOffer(this._plans, entitlement, this.decision);
    // Each value is made only if a text of the card has its placeholder.
    const values = {
      feature: () => this._feature ?? this._t('thisFeature'),
      plan: () => (plans ? this._planNames(plans) : ''),
      current: () => (entitlement ? this._planName(entitlement.plan) : ''),
      date: () => this._date(entitlement?.expires_at),
      used: () => this._number(entitlement?.usage.api_calls ?? 0),
      limit: () => this._number(entitlement?.usage.limit ?? 0),
    };
    const t = (key: keyof GateStrings) => this._text(key, values);
    // The card's button: a blank text counts as none.
    const name = (key: keyof GateStrings) => this._name(key, values);
    const upgrade = (plan: string | undefined) => () => this._upgrade(plan, this._feature);
    if (this.state === 'error') {
      if (REFUSED_LAUNCH.has(kit?.error?.code ?? '')) return { heading: t('errorHeading'), text: t('refusedText') };
      return { heading: t('errorHeading'), text: t('errorText'), action: name('retry'), run: this._handleRetry };
    }
    if (this.state === 'signed-out') {
      return { heading: t('signedOutHeading'), text: t('signedOutText'), action: name('signIn'), run: () => this._signIn() };
    }
    switch (this.access) {
      case 'expired':
        return {
          heading: t(this.decision?.reason === 'cancelled' ? 'cancelledHeading' : 'expiredHeading'),
          text: t('expiredText'),
          ...(this.decision?.reason === 'expired' && values.date() ? { detail: t('ended') } : {}),
          action: name('renew'),
          run: upgrade(entitlement?.plan ?? plans?.[0]),
        };
      case 'past-due':
        return { heading: t('pastDueHeading'), text: t('pastDueText'), action: name('updatePayment'), run: upgrade(entitlement?.plan) };
      case 'over-quota':
        // The user holds one of the plans listed (the plan check passed), and the others may give
        // no more usage: the chooser is asked for the feature only, to offer a plan with more.
        return {
          heading: t('overQuotaHeading'),
          text: this._text('overQuotaText', values, entitlement?.usage.limit ?? 0),
          action: name('upgrade'),
          run: upgrade(undefined),
        };
      default:
        return { heading: t('lockedHeading'), text: t(plans ? 'lockedPlanText' : 'lockedText'), action: name('upgrade'), run: upgrade(plans?.[0]) };
    }
  }

  /**
   * When the card's button or the unlocked content had the focus and the new look removed or
   * replaced it (access granted after an upgrade, a retry that ended in a paywall, a plan that
   * lapsed), the focus goes to the new card's button, or to the gate itself, instead of falling
   * back to the page's start.
   */
  private _keepFocus(): void {
    if (!this._hadFocus) return;
    // The gate's own document: it may have been moved into an iframe's or a Picture-in-Picture window's.
    const doc = this.ownerDocument;
    const inside = this.shadowRoot?.activeElement;
    if (inside) {
      // The card's button, hidden with the card as access is granted, keeps the focus until the browser notices.
      if (inside.checkVisibility()) return;
    } else {
      const active = doc.activeElement;
      // Page content whose slot is no longer rendered keeps the focus until the browser notices.
      const hidden = active && this.contains(active) && typeof active.checkVisibility === 'function' && !active.checkVisibility();
      if (active && active !== doc.body && !hidden) return; // the page moved the focus elsewhere itself
    }
    // Inside the dashboard the plan chooser has the focus, in the parent page: it is left there,
    // and the gate takes it when it comes back (`_handleFocusOut`).
    if (doc.hasFocus()) this._takeFocus();
  }

  /**
   * The focus leaving the gate may be leaving the page: to the dashboard's plan chooser, which the
   * gate's upgrade opened. The browser then shows this page's focus on its body, and an upgrade
   * that unlocks the gate meanwhile removes the button that had it. So when the page gets the
   * focus back and it is still on the body, the gate takes it (the new card's button, or itself).
   * Known a task later, when `document.hasFocus()` has changed.
   */
  private _handleFocusOut = () => {
    setTimeout(() => {
      const doc = this.ownerDocument;
      if (doc.hasFocus() || this._focusAway || !this.isConnected) return;
      const away = new AbortController();
      this._focusAway = away;
      const back = () => {
        away.abort();
        this._focusAway = undefined;
        if (doc.activeElement === doc.body) this._takeFocus();
      };
      doc.defaultView?.addEventListener('focus', back, { signal: away.signal });
    });
  };

  /** Moves the focus into the gate: to the card's button, else to the gate itself. */
  private _takeFocus(): void {
    // The card's button, unless page content in the `locked` slot replaces the card, or the card
    // is hidden (access is granted).
    const action = this.shadowRoot?.querySelector<HTMLElement>('[part~="action"]');
    if (action?.checkVisibility()) {
      action.focus({ preventScroll: true });
      if (this.shadowRoot!.activeElement === action) return;
    }
    if (this.hasAttribute('tabindex')) return this.focus({ preventScroll: true });
    // The gate takes the focus for once: the attribute goes with it, or at once if it did not take.
    this.tabIndex = -1;
    this.focus({ preventScroll: true });
    if (this.ownerDocument.activeElement === this) this.addEventListener('blur', () => this.removeAttribute('tabindex'), { once: true });
    else this.removeAttribute('tabindex');
  }

  private _handleRetry = () => {
    const kit = this._actionKit;
    if (kit && !this._busy) void this._run(() => kit.refresh());
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'mp-gate': MpGate;
  }
}

declare module '../base/texts.js' {
  interface ElementTexts {
    'mp-gate': GateStrings;
  }
}
