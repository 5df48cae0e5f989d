import { html, nothing, type PropertyValues } from 'lit';
import { MarketplaceElement, STRINGS_PROPERTY, type BaseStrings, type ShownText } from '../base/marketplace-element.js';
import { baseStyles } from '../base/base.styles.js';
import { en } from '../locales/en.js';
import type { Usage } from '../../shared/schemas.js';
import { MpUsageLevelEvent, type UsageLevel } from '../events.js';
import { usageMeterStyles } from './usage-meter.styles.js';

/** Placeholders: `{used}`, `{limit}` (formatted in the user's locale), `{percent}`. */
export type UsageMeterStrings = BaseStrings & {
  label: string;
  value: string;
  warningText: string;
  exceededText: string;
  /** Announced (not shown) when usage falls back below the warning threshold. */
  okText: string;
  none: string;
  signedOut: string;
};

/** The thresholds when none (or no number) is given. */
const DEFAULT_THRESHOLDS = { warning: 0.8, exceeded: 1 };

/**
 * A threshold given as a number, or as a string: the attribute, or a property set the way React 19
 * and Vue set it (`warning="0.9"`). Anything else is `fallback`: an empty or non-numeric string, a
 * removed attribute, `null`.
 */
function threshold(value: unknown, fallback: number): number {
  const parsed = typeof value === 'number' ? value : typeof value === 'string' && value.trim() ? Number(value) : NaN;
  return Number.isFinite(parsed) ? parsed : fallback;
}

/**
 * @summary API calls used against the plan's limit (`entitlement.usage`), with warning and
 * exceeded thresholds.
 * @tagname mp-usage-meter
 *
 * @fires {MpUsageLevelEvent} mp-usage-level - Usage crossed a threshold (also fired for the first reading); `level` is `ok`, `warning` or `exceeded`.
 *
 * @csspart base - The wrapper.
 * @csspart header - The line with the label and the figures.
 * @csspart label - "API calls".
 * @csspart value - "1,200 of 5,000".
 * @csspart track - The bar (`role="meter"`).
 * @csspart indicator - The filled part of the bar.
 * @csspart message - The warning or exceeded message.
 * @csspart status - The visually hidden live region that announces a new level.
 * @csspart notice - The loading, error, not-connected or no-data line.
 *
 * @cssproperty --mp-color-accent - Bar color below the warning threshold.
 * @cssproperty --mp-color-warning - Bar and message color from the warning threshold.
 * @cssproperty --mp-color-danger - Bar and message color once exceeded.
 * @cssproperty --mp-color-border - Track color.
 * @cssproperty --mp-meter-height - Bar height.
 * @cssproperty --mp-color-surface - Background.
 * @cssproperty --mp-color-text - Label and figures.
 * @cssproperty --mp-color-muted - The loading, error, not-connected or no-data line.
 * @cssproperty --mp-font - Font shorthand.
 */
export class MpUsageMeter extends MarketplaceElement<UsageMeterStrings> {
  static override styles = [baseStyles, usageMeterStyles];

  static override defaultStrings: UsageMeterStrings = { ...en.common, ...en['mp-usage-meter'] };
  static override textSection = 'mp-usage-meter';

  static override properties = {
    warning: {},
    exceeded: {},
    level: { reflect: true },
    strings: STRINGS_PROPERTY,
    _announcement: { state: true, attribute: false },
  };

  /**
   * Share of the limit (0–1) from which the meter warns; a numeric string counts too.
   * @default 0.8
   */
  declare warning: number | string;
  /**
   * Share of the limit (0–1) from which the meter shows the limit as reached; a numeric string counts too.
   * @default 1
   */
  declare exceeded: number | string;
  /**
   * `ok`, `warning` or `exceeded`; unset without usage data. Set by the element; reflected.
   * @readonly
   */
  declare readonly level: UsageLevel | undefined;
  /** Overrides of the built-in texts, as a property or a JSON attribute. Keys: `label`, `value`, `warningText`, `exceededText`, `none`, `signedOut`, `loading`, `error`, `notConnected`. */
  declare strings: Partial<UsageMeterStrings> | undefined;
  private declare _announcement: ShownText | undefined;
  /** The level last shown, and to whom; kept while the kit is in error. */
  private _shown: { user: string; level: UsageLevel } | undefined;

  constructor() {
    super();
    this.warning = DEFAULT_THRESHOLDS.warning;
    this.exceeded = DEFAULT_THRESHOLDS.exceeded;
    this._announcement = undefined;
  }

  /** Used share of the limit; a limit of 0 counts as spent, as in `isOverQuota`. */
  private get _ratio(): number | undefined {
    const usage = this._kit?.entitlement?.usage;
    if (this.state !== 'ready' || !usage) return undefined;
    return usage.limit > 0 ? usage.api_calls / usage.limit : usage.api_calls >= usage.limit ? 1 : 0;
  }

  protected override willUpdate(changed: PropertyValues): void {
    super.willUpdate(changed);
    const ratio = this._ratio;
    const exceeded = threshold(this.exceeded, DEFAULT_THRESHOLDS.exceeded);
    const warning = threshold(this.warning, DEFAULT_THRESHOLDS.warning);
    (this as { level: UsageLevel | undefined }).level = ratio === undefined ? undefined : ratio >= exceeded ? 'exceeded' : ratio >= warning ? 'warning' : 'ok';
    const user = this._kit?.user?.id;
    if (this.level) {
      // Announced: a new level after the first one (that one is page content), not every new
      // percentage nor the same level in another language. The level shown before an error
      // counts: the limit reached meanwhile is news.
      const before = user && this._shown?.user === user ? this._shown.level : undefined;
      this._announcement = before && this.level !== before && !this._translated ? this._news(this._levelText()) : undefined;
      if (user) this._shown = { user, level: this.level };
    } else {
      // No figures: nothing old to say when they return. Signed out, the next user starts afresh.
      this._announcement = undefined;
      if (!user) this._shown = undefined;
    }
  }

  protected override updated(changed: PropertyValues): void {
    if (!changed.has('level') || !this.level) return;
    const crossed = new MpUsageLevelEvent(this.level);
    this.dispatchEvent(crossed);
  }

  /** The figures the texts show. */
  private _values(usage: Usage, ratio: number) {
    return {
      used: this._number(usage.api_calls),
      limit: this._number(usage.limit),
      // Rounded down: 99.6% is not yet "100%".
      percent: this._percent(Math.floor(ratio * 100 + 1e-9) / 100),
    };
  }

  /** The warning or exceeded message, if the level has one. */
  private _message(): ShownText | undefined {
    return this.level === 'ok' ? undefined : this._levelText();
  }

  /** What the level says: the warning or exceeded message, or (announced only) that usage is back below the warning. */
  private _levelText(): ShownText | undefined {
    const usage = this._kit?.entitlement?.usage;
    const ratio = this._ratio;
    const key = this.level === 'exceeded' ? 'exceededText' : this.level === 'warning' ? 'warningText' : 'okText';
    return usage && ratio !== undefined ? this._text(key, this._values(usage, ratio)) : undefined;
  }

  override render() {
    // The live region stays in place whatever the element shows, so that a level reached while
    // the kit was in error is announced when the figures return.
    return html`${this._figures()}${this._status(this._announcement)}`;
  }

  private _figures() {
    const usage = this._kit?.entitlement?.usage;
    const ratio = this._ratio;
    if (!usage || ratio === undefined) return this._notice(this.state === 'ready' ? 'none' : this.state === 'signed-out' ? 'signedOut' : undefined);
    const values = this._values(usage, ratio);
    const value = this._text('value', values);
    // A label left blank (the page names the meter in its own words) still names the meter.
    const label = this._text('label');
    const named = label.text.trim() !== '';
    const message = this._message();
    // Laid out as the page is; each text is written in its own language's direction. The
    // indicator's width is a `.style` property binding (CSSOM), which a strict CSP allows, unlike a
    // `style` attribute.
    return html`<div part="base" lang=${this._lang} dir=${this._dir}>
      <div part="header">
        <span part="label" id="label" lang=${label.lang} dir=${label.dir}>${label.text}</span>
        <span part="value" lang=${value.lang} dir=${value.dir}>${value.text}</span>
      </div>
      <div
        part="track"
        role="meter"
        aria-labelledby=${named ? 'label' : nothing}
        aria-label=${named ? nothing : this._name('label').text}
        aria-valuemin="0"
        aria-valuemax=${usage.limit}
        aria-valuenow=${Math.min(usage.api_calls, usage.limit)}
        aria-valuetext=${value.text}
      >
        <div part="indicator" .style=${`width:${Math.min(ratio, 1) * 100}%`}></div>
      </div>
      <div part="message" lang=${message?.lang ?? nothing} dir=${message?.dir ?? nothing}>${message?.text ?? nothing}</div>
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'mp-usage-meter': MpUsageMeter;
  }
}

declare module '../base/texts.js' {
  interface ElementTexts {
    'mp-usage-meter': UsageMeterStrings;
  }
}
