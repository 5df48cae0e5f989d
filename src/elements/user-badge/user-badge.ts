import { html, type PropertyValues } from 'lit';
import { MarketplaceElement, STRINGS_PROPERTY, type BaseStrings } from '../base/marketplace-element.js';
import { baseStyles } from '../base/base.styles.js';
import { en } from '../locales/en.js';
import { userBadgeStyles } from './user-badge.styles.js';

/** What can stand as an initial: a grapheme with a letter, a digit or a pictograph (an emoji). */
const INITIAL = /[\p{L}\p{N}\p{Extended_Pictographic}]/u;

/** The texts of `<mp-user-badge>` (its `strings`); each key overrides one default. */
export type UserBadgeStrings = BaseStrings & {
  /** Shown when nobody is signed in. */
  signedOut: string;
};

/**
 * @summary The signed-in user: avatar, name and email (`kit.user`). Falls back to initials when
 * the avatar cannot be loaded.
 * @tagname mp-user-badge
 *
 * @csspart base - The badge.
 * @csspart avatar - The avatar image, or the initials in its place.
 * @csspart text - The name and email.
 * @csspart name - The user's name.
 * @csspart email - The user's email (hide it with `mp-user-badge::part(email) { display: none }`).
 * @csspart notice - The loading, signed-out, error or not-connected line.
 *
 * @cssproperty --mp-avatar-size - Avatar size.
 * @cssproperty --mp-color-surface - Badge background.
 * @cssproperty --mp-color-muted - Email color.
 * @cssproperty --mp-color-accent - Background of the initials, when the avatar cannot load.
 * @cssproperty --mp-color-on-accent - The initials.
 * @cssproperty --mp-color-text - Name color.
 * @cssproperty --mp-font - Font shorthand.
 */
export class MpUserBadge extends MarketplaceElement<UserBadgeStrings> {
  static override styles = [baseStyles, userBadgeStyles];

  static override defaultStrings: UserBadgeStrings = { ...en.common, ...en['mp-user-badge'] };
  static override textSection = 'mp-user-badge';

  static override properties = {
    strings: STRINGS_PROPERTY,
    _avatarFailed: { state: true, attribute: false },
  };

  /** Overrides of the built-in texts, as a property or a JSON attribute. Keys: `signedOut`, `loading`, `error`, `notConnected`. */
  declare strings: Partial<UserBadgeStrings> | undefined;
  private declare _avatarFailed: boolean;
  private _avatarUrl: string | undefined;

  constructor() {
    super();
    this._avatarFailed = false;
  }

  protected override willUpdate(changed: PropertyValues): void {
    super.willUpdate(changed);
    const url = this._kit?.user?.avatar_url;
    if (url !== this._avatarUrl) this._avatarFailed = false;
    this._avatarUrl = url;
  }

  /**
   * The first character, as users see it, of the name's first two words: a whole emoji or
   * accented letter, not half of one; upper-cased by the user's language rules.
   */
  private _initials(name: string): string {
    const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    const upper = (text: string) => {
      try {
        return text.toLocaleUpperCase(this._kit?.locale || undefined);
      } catch {
        return text.toUpperCase(); // a locale tag that is not valid
      }
    };
    // A word's first letter, digit or pictograph: not an invisible direction mark (names copied
    // from a right-to-left page often start with one) nor a quote or a dash.
    const initial = (word: string) => {
      for (const { segment } of graphemes.segment(word)) if (INITIAL.test(segment)) return segment;
      return '';
    };
    return name
      .split(/\s+/)
      .map(initial)
      .filter(Boolean)
      .slice(0, 2)
      .map(upper)
      .join('');
  }

  override render() {
    const user = this._kit?.user;
    if (this.state !== 'ready' || !user) return this._notice(this.state === 'signed-out' ? 'signedOut' : undefined);
    return html`<span part="base" dir=${this._dir}>
      ${this._avatarFailed
        ? html`<span part="avatar" aria-hidden="true"><span class="initials">${this._initials(user.name) || '?'}</span></span>`
        : html`<img part="avatar" src=${user.avatar_url} alt="" referrerpolicy="no-referrer" @error=${this._handleAvatarError} />`}
      <span part="text">
        <span part="name">${user.name.trim() || user.email}</span>
        <span part="email">${user.email}</span>
      </span>
    </span>`;
  }

  private _handleAvatarError() {
    this._avatarFailed = true;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'mp-user-badge': MpUserBadge;
  }
}

declare module '../base/texts.js' {
  interface ElementTexts {
    'mp-user-badge': UserBadgeStrings;
  }
}
