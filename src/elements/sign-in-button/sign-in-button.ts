import { html, nothing, type PropertyValues } from 'lit';
import { MarketplaceElement, STRINGS_PROPERTY, type BaseStrings } from '../base/marketplace-element.js';
import { baseStyles } from '../base/base.styles.js';
import { en } from '../locales/en.js';
import { signInButtonStyles } from './sign-in-button.styles.js';

/** The texts of `<mp-sign-in-button>` (its `strings`); each key overrides one default. */
export type SignInButtonStrings = BaseStrings & {
  /** The button's label. */
  label: string;
  /** The label while sign-in is under way (the button is then `aria-busy`). */
  busy: string;
};

/**
 * @summary "Sign in with Marketplace": on the developer's own site it navigates the page to the
 * app backend's OAuth start; inside the dashboard it asks the dashboard to open the page at top
 * level (both through `kit.signIn(returnTo)`).
 * @tagname mp-sign-in-button
 *
 * @fires {MpSignInRequestEvent} mp-sign-in-request - Before sign-in starts; cancelable (`preventDefault()` stops it). `returnTo` says where the user comes back to.
 * @fires {MpErrorEvent} mp-error - Sign-in could not start; `error.code` says why.
 *
 * @csspart base - The button.
 * @csspart spinner - The progress indicator shown while busy.
 * @csspart label - The label.
 * @csspart status - The visually hidden live region that announces a failed sign-in.
 *
 * @cssproperty --mp-color-accent - Button background.
 * @cssproperty --mp-color-on-accent - Button text.
 * @cssproperty --mp-color-focus - Focus ring.
 * @cssproperty --mp-color-surface - What the button fades into while it is off (loading, not connected).
 * @cssproperty --mp-radius - Corner radius.
 * @cssproperty --mp-font - Font shorthand.
 */
export class MpSignInButton extends MarketplaceElement<SignInButtonStrings> {
  static override styles = [baseStyles, signInButtonStyles];
  /** `el.focus()` (a dialog giving the focus back, say) focuses the button inside. */
  static override shadowRootOptions: ShadowRootInit = { ...MarketplaceElement.shadowRootOptions, delegatesFocus: true };

  static override defaultStrings: SignInButtonStrings = { ...en.common, ...en['mp-sign-in-button'] };
  static override textSection = 'mp-sign-in-button';

  static override properties = {
    label: {},
    returnTo: { attribute: 'return-to' },
    disabled: { type: Boolean, reflect: true },
    strings: STRINGS_PROPERTY,
  };

  /** The label; shortcut for `strings.label`. */
  declare label: string | undefined;
  /** Where the user lands after signing in (same origin). Defaults to the current page. */
  declare returnTo: string | undefined;
  /** Disables the button. */
  declare disabled: boolean;
  /** Overrides of the built-in texts, as a property or a JSON attribute. Keys: `label`, `busy`, `failed`, `notConnected`. */
  declare strings: Partial<SignInButtonStrings> | undefined;

  constructor() {
    super();
    this.disabled = false;
  }

  protected override willUpdate(changed: PropertyValues): void {
    const state = this.state;
    super.willUpdate(changed);
    // A failure is news about the session it happened in: a sign-in made since (through a gate's
    // card, in another tab) leaves it behind, as another kit does (`_attach`).
    if (this.state !== state) this._failed = false;
  }

  override render() {
    // An empty label counts as none: a button needs an accessible name.
    const label = this._busy
      ? this._name('busy')
      : this.state === 'not-connected'
        ? this._name('notConnected')
        : this._failed
          ? this._name('failed')
          : this._name('label', {}, this.label);
    // Laid out as the page is; the label is written in its own language's direction.
    return html`<button
      part="base"
      type="button"
      lang=${this._lang}
      dir=${this._dir}
      ?disabled=${this.disabled}
      aria-disabled=${this._unavailable ? 'true' : nothing}
      aria-busy=${this._busy || this.state === 'loading'}
      @click=${this._handleClick}
    >
      ${this._busy || this.state === 'loading' ? html`<span part="spinner" class="spinner" aria-hidden="true"></span>` : nothing}
      <span part="label" lang=${label.lang} dir=${label.dir}>${label.text}</span>
    </button>${this._status(this._failureNews)}`;
  }

  private _handleClick(event: Event) {
    if (this._ignoreClick(event, this._unavailable)) return;
    void this._signIn(this.returnTo || undefined);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'mp-sign-in-button': MpSignInButton;
  }
}

declare module '../base/texts.js' {
  interface ElementTexts {
    'mp-sign-in-button': SignInButtonStrings;
  }
}
