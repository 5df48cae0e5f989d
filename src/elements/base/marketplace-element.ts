import { LitElement, adoptStyles, html, type CSSResultGroup, type PropertyDeclarations, type PropertyValues, type TemplateResult } from 'lit';
import { MarketplaceKitError, isKitError, type ErrorCode } from '../../shared/errors.js';
import { DEV } from '../../shared/dev.js';
import { MAX_TIMER_MS } from '../../shared/options.js';
import type { Theme } from '../../shared/schemas.js';
import type { Kit, KitState, UpgradeOutcome } from '../../runtime/types.js';
import { MpErrorEvent, MpSignInRequestEvent, MpUpgradeEvent, MpUpgradeRequestEvent } from '../events.js';
import { baseStyles } from './base.styles.js';
import { isolated } from './bidi.js';
import { formatter } from './intl.js';
import { LocaleController } from './locale-controller.js';
import { findText, type ShownText, type TextValues } from './text-lookup.js';
import { read } from './texts.js';
import { en } from '../locales/en.js';
import { getKit, onKitsChanged } from '../../runtime/registry.js';

export type { ShownText, TextValues } from './text-lookup.js';

/** What an element shows: the kit's state, or `not-connected` when no kit was found in time. */
export type ElementState = KitState | 'not-connected';

/** Texts every element has. Placeholders such as `{plan}` are filled in at render time. */
export type BaseStrings = {
  loading: string;
  error: string;
  notConnected: string;
  /** Shown and announced when an action of the element (sign-in, upgrade, retry) failed. */
  failed: string;
};

const NOT_FOUND: ErrorCode = 'ERR_KIT_NOT_FOUND';

/**
 * The `strings` property of every element: texts as an object, or a JSON attribute. An attribute
 * that is not a JSON object is ignored with a warning (the built-in texts stay), instead of
 * throwing from inside the browser's attribute callback.
 */
export const STRINGS_PROPERTY = {
  converter: {
    fromAttribute(value: string | null): Record<string, unknown> | undefined {
      if (value === null) return undefined;
      try {
        const parsed: unknown = JSON.parse(value);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
      } catch {
        // Reported below.
      }
      console.warn(`[marketplace-app-kit] ${DEV ? 'The strings attribute is not a JSON object of texts, so the built-in texts are used' : 'strings'}: ${value.slice(0, 100)}`);
      return undefined;
    },
  },
};
let warned = false;
/** The once-per-page warning that an upgrade outside the dashboard has nowhere to go. */
let upgradeWarned = false;
/** Per document, what live regions said in the current task, and which element said it. */
const newsThisTask = new WeakMap<Document, Map<string, Element>>();

/**
 * The shared base of every `mp-*` element: finds the kit (or takes the one set on `kit`),
 * re-renders on every kit change, reflects `theme` and `state`, formats with the kit's locale and
 * runs the sign-in and upgrade actions with their cancelable request events. `S` is the element's
 * texts; each element declares its own `strings` property (overrides of `S`).
 *
 * @attr lang - The HTML attribute, observed: on the element itself it picks the language of its texts over the user's (`de`); above it, it does not (docs/guides/locales.md).
 */
export class MarketplaceElement<S extends BaseStrings = BaseStrings> extends LitElement {
  static override styles: CSSResultGroup = baseStyles;

  /**
   * How long an element without a kit waits for `createKit` before it shows "not connected" and
   * logs the `ERR_KIT_NOT_FOUND` warning (once per page).
   */
  static kitTimeoutMs = 1000;

  /**
   * How long an element holds its first update in a locale (its first look, or its look after a
   * locale change) while that locale's texts load. A pack slower than that shows the fallback's
   * texts (English) meanwhile, and its own once it is here; no element waits for it again.
   */
  static localeTimeoutMs = 3000;

  /**
   * The built-in English texts, the last fallback of every lookup. Other languages come from the
   * locale packs (`registerLocale`, docs/guides/locales.md).
   */
  static defaultStrings: BaseStrings = en.common;

  /**
   * The section of the locale packs the element's texts come from (`'mp-gate'`): each built-in
   * element names its own, which a subclass registered under another tag inherits. Unset, the
   * element's tag (`<mp-trial-banner>`: `'mp-trial-banner'`).
   */
  static textSection: string | undefined = undefined;

  static override properties: PropertyDeclarations = {
    kit: { attribute: false },
    theme: { reflect: true },
    state: { reflect: true },
    // `attribute: false` is implied by `state`; spelled out so the manifest lists no attribute.
    _busy: { state: true, attribute: false },
    _failed: { state: true, attribute: false },
  };

  /** The kit to read. By default the one `createKit` registered (found even if created later). */
  declare kit: Kit | null;
  /**
   * `light` or `dark`, taken from `kit.theme` and reflected so page CSS can match `[theme='dark']`.
   * With a kit, the kit's theme wins; set it yourself only where no kit is found (a static preview).
   */
  declare theme: Theme;
  /**
   * What the element shows: `loading`, `ready`, `signed-out`, `error` or `not-connected`. Set by the element; reflected.
   * @readonly
   */
  declare readonly state: ElementState;
  /** True while an action started by this element (sign-in, upgrade, retry) is under way. */
  protected declare _busy: boolean;
  /** True when the element's last action failed (an `mp-error` told the page why), until the next one starts. */
  protected declare _failed: boolean;

  /** The kit in use: `kit` when set, else the registered one. */
  protected _kit: Kit | null = null;
  private _unsubscribe: (() => void) | undefined;
  private _stopWatching: (() => void) | undefined;
  private _timer: ReturnType<typeof setTimeout> | undefined;
  private _expiryTimer: ReturnType<typeof setTimeout> | undefined;
  /** The `expires_at` the expiry timer is set for ('' for none); undefined when it must be set again. */
  private _timedFor: string | undefined;
  private _noKit = false;
  /** The element's language and direction, read at each update. */
  private readonly _locales = new LocaleController(this, () => (this.kit ?? this._kit ?? getKit())?.locale);
  /** The failure was said before the language changed: the live region does not say it again. */
  private _failureSaid = false;
  /** Aborted when the element lets go of its kit, which ends a wait for the page to navigate away. */
  private _navigationWait: AbortController | undefined;

  constructor() {
    super();
    this.kit = null;
    this.theme = 'light';
    this.state = 'loading';
    this._busy = false;
    this._failed = false;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this._stopWatching = onKitsChanged(() => this._attach());
    this._attach();
    // Back in the page: render what changed while it was out (it did not render then).
    this.requestUpdate();
    // A node moved in one step (`other.append(el)`) is connected again before its disconnect runs,
    // which stopped the timer; nothing else re-renders it, so the timer is set again here.
    this._timedFor = undefined;
    this._renderAtExpiry(this._kit?.entitlement?.expires_at);
    this._restoreStyles();
  }

  /**
   * A shadow root's adopted style sheets do not apply in another document (a same-origin iframe's,
   * a Picture-in-Picture window's): Chromium empties `adoptedStyleSheets` there. Back in its own
   * document they are adopted again if they did not come back by themselves; in another one, where
   * a constructed sheet cannot be shared, copies built by that document's own `CSSStyleSheet` are.
   * Constructed sheets, unlike `<style>` elements, need no nonce under a strict `style-src`.
   */
  private _restoreStyles(): void {
    const root = this.shadowRoot;
    if (root && root.adoptedStyleSheets.length === 0) this._adoptStyles(root);
  }

  /** An element first rendered in another document: Lit's adoption of its styles throws there. */
  protected override createRenderRoot(): HTMLElement | DocumentFragment {
    try {
      return super.createRenderRoot();
    } catch (error) {
      // The shadow root is attached; only the styles could not be adopted.
      if (!this.shadowRoot) throw error;
      this._adoptStyles(this.shadowRoot);
      return this.shadowRoot;
    }
  }

  /** Adopts the element's styles in `root`: Lit's own sheets at home, copies in another document. */
  private _adoptStyles(root: ShadowRoot): void {
    const styles = (this.constructor as typeof LitElement).elementStyles;
    try {
      adoptStyles(root, styles);
    } catch {
      // A document without a window (DOMParser's) renders nothing: nothing to style.
      const Sheet = root.ownerDocument.defaultView?.CSSStyleSheet;
      if (!Sheet) return;
      root.adoptedStyleSheets = styles.map((style) => {
        const copy = new Sheet();
        copy.replaceSync(style instanceof CSSStyleSheet ? Array.from(style.cssRules, (rule) => rule.cssText).join('\n') : style.cssText);
        return copy;
      });
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this._stopWatching?.();
    clearTimeout(this._expiryTimer);
    this._timedFor = undefined;
    this._attach();
  }

  /**
   * The language of the element's texts (`de` for a `de-AT` user, `en` where no pack has the
   * user's language): the `lang` of its boxes, the language of plural forms and lists, and of its
   * `strings`. A text that fell back to another language (English) is marked as such (`_text`).
   */
  protected get _lang(): string {
    return this._locales.lang;
  }

  /** The direction of the element's boxes: the closest `dir` above it (the page's), else that of `_lang`. */
  protected get _dir(): 'ltr' | 'rtl' {
    return this._locales.dir;
  }

  /**
   * This update shows the element in another language than the one before (the dashboard
   * switched, a pack came late): the same look in another language is no news, so live regions
   * say nothing new in it.
   */
  protected get _translated(): boolean {
    return this._locales.translated;
  }

  /** `lang` too: the element's own sets the language of its texts. */
  static override get observedAttributes(): string[] {
    return [...super.observedAttributes, 'lang'];
  }

  override attributeChangedCallback(name: string, old: string | null, value: string | null): void {
    super.attributeChangedCallback(name, old, value);
    if (name !== 'lang') return;
    this._locales.ownLang = value;
    this.requestUpdate();
  }

  /**
   * Holds the first update in a locale while its texts load (`localeTimeoutMs` at most), so that
   * the element shows its first look, or a new locale, in the user's language rather than English
   * for a moment. Awaited by `updateComplete`.
   */
  protected override scheduleUpdate(): void | Promise<unknown> {
    const hold = this._locales.hold((this.constructor as typeof MarketplaceElement).localeTimeoutMs);
    return hold ? hold.then(() => super.scheduleUpdate()) : super.scheduleUpdate();
  }

  /** Out of the page an element does not render: it keeps its look until it is back (see `_attach`). */
  protected override shouldUpdate(changed: PropertyValues): boolean {
    return this.isConnected && super.shouldUpdate(changed);
  }

  protected override willUpdate(changed: PropertyValues): void {
    // A framework that sets the JSON of the attribute as the property (React 19 does with
    // strings='{…}') gets what the attribute would give, warning included.
    const self = this as { strings?: unknown };
    if (typeof self.strings === 'string') self.strings = STRINGS_PROPERTY.converter.fromAttribute(self.strings);
    if (changed.has('kit')) this._attach();
    const kit = this._kit;
    if (kit) this.theme = kit.theme;
    (this as { state: ElementState }).state = kit ? kit.state : this._noKit ? 'not-connected' : 'loading';
    this._renderAtExpiry(kit?.entitlement?.expires_at);
    this._locales.read();
    if (this._translated && this._failed) this._failureSaid = true;
  }

  /**
   * An entitlement that ends while the page is open changes what the elements show (a gate locks,
   * a badge says expired) without any change of the kit: render again at that moment.
   */
  private _renderAtExpiry(expiresAt: string | null | undefined): void {
    // Set again only for another end: a thousand gates re-timing at each render cost more than rendering.
    const at = (this.isConnected && expiresAt) || '';
    if (at === this._timedFor) return;
    clearTimeout(this._expiryTimer);
    this._timedFor = at;
    const left = at ? Date.parse(at) - Date.now() : NaN;
    // setTimeout takes at most MAX_TIMER_MS (about 24.8 days); a later end is timed again then.
    if (left > 0) {
      this._expiryTimer = setTimeout(() => {
        this._timedFor = undefined;
        this.requestUpdate();
      }, Math.min(left + 1, MAX_TIMER_MS));
    }
  }

  /**
   * Subscribes to the kit to use now (never a destroyed one) and starts the not-found timer. A
   * disconnected element lets go of its kit's updates and does not render, so it keeps its look:
   * taken out of the page for a while (a tab panel, a keep-alive cache, a moved node), it comes
   * back to the same look, and its return is no change (no second `mp-access-change`, nothing
   * announced again).
   */
  private _attach(): void {
    clearTimeout(this._timer);
    if (!this.isConnected) {
      this._letGo();
      return;
    }
    const candidate = this.kit ?? getKit();
    const kit = candidate && !candidate.destroyed ? candidate : null;
    if (kit !== this._kit || (kit && !this._unsubscribe)) {
      this._letGo();
      // A failed action is news about the kit it failed with.
      if (kit !== this._kit) this._failed = false;
      this._kit = kit;
      if (kit) this._noKit = false;
      this._unsubscribe = kit?.subscribe(() => this.requestUpdate());
      this.requestUpdate();
    }
    if (kit) return;
    this._timer = setTimeout(() => {
      this._noKit = true;
      this.requestUpdate();
      if (warned) return;
      warned = true;
      console.warn(`[marketplace-app-kit] ${NOT_FOUND}${DEV ? `: <${this.localName}> found no kit. Call createKit() (if you did, it failed: see its error) or set .kit (marketplace-app-kit: docs/elements.md#how-elements-find-the-kit).` : ''}`);
    }, (this.constructor as typeof MarketplaceElement).kitTimeoutMs);
  }

  /** Stops the kit's updates to this element, and any wait for the page to navigate away. */
  private _letGo(): void {
    this._navigationWait?.abort();
    this._unsubscribe?.();
    this._unsubscribe = undefined;
  }

  /** The kit an action may use: none out of the page. */
  protected get _actionKit(): Kit | null {
    return this.isConnected ? this._kit : null;
  }

  /**
   * True while the kit cannot act (it is starting, or there is none). Action buttons then say so
   * with `aria-disabled` rather than `disabled`, so a button that has the focus when its kit goes
   * away keeps it instead of dropping it to the start of the page; `_ignoreClick` drops their clicks.
   */
  protected get _unavailable(): boolean {
    return this.state === 'loading' || this.state === 'not-connected';
  }

  /**
   * For the click handler of an `aria-disabled` button: when `ignore`, stops the click before it
   * reaches the page, as a disabled button's would be. Returns `ignore`.
   */
  protected _ignoreClick(event: Event, ignore: boolean): boolean {
    if (ignore) event.stopPropagation();
    return ignore;
  }

  /**
   * A text with `{name}` placeholders filled in, from the first that has one: the element's
   * `strings`, the locale packs of the user's locale and its fallbacks (`localeChain`: each one's
   * section for the element, `textSection`, then its `common`), the class's `defaultStrings`. A
   * text with plural forms takes the one `count` needs. A value is isolated from the sentence when
   * its direction may differ (`isolated`).
   */
  protected _t(key: keyof S & string, values: TextValues = {}, count?: number): string {
    return this._text(key, values, count).text;
  }

  /**
   * Like `_t`, with the language and direction the text is written in: those of `_lang`, or
   * English where the text fell back to it. The node that shows the text declares them.
   */
  protected _text(key: keyof S & string, values: TextValues = {}, count?: number): ShownText {
    return this._find(key, values, count, [read((this as { strings?: unknown }).strings, key)], false);
  }

  /**
   * Like `_text`, for a text that names a button, which needs a name: an override that is blank
   * once filled in (`""`, spaces, `"{plan}"` without a plan) counts as none. `label` (an element's
   * `label` attribute) comes before `strings[key]`, and is read the same way.
   */
  protected _name(key: keyof S & string, values: TextValues = {}, label?: string): ShownText {
    return this._find(key, values, undefined, [label, read((this as { strings?: unknown }).strings, key)], true);
  }

  private _find(key: string, values: TextValues, count: number | undefined, overrides: unknown[], nonBlank: boolean): ShownText {
    const element = this.constructor as typeof MarketplaceElement;
    const { chain, lang } = this._locales;
    return findText({ key, overrides, lang, chain, section: element.textSection ?? this.localName, defaults: element.defaultStrings, values, count, nonBlank });
  }

  /** A plan as the user reads it: its name from `kit.planNames` (own keys only), else its id. */
  protected _planName(plan: string): string {
    const names = this._kit?.planNames;
    const name = names && Object.hasOwn(names, plan) ? names[plan] : undefined;
    return typeof name === 'string' && name ? name : plan;
  }

  /**
   * Plans as the user reads them: `Pro or Business`. The "or" belongs to the sentence around it, so
   * it is in the language of the texts (`_lang`); figures and dates follow the user's locale.
   */
  protected _planNames(plans: readonly string[]): string {
    // Each name on its own, so that one plan cannot reorder the "or" and the others. One plan is
    // isolated where it is put in a sentence, as any value.
    if (plans.length === 1) return this._planName(plans[0]!);
    const rtl = this._locales.textDir === 'rtl';
    return formatter(Intl.ListFormat, this._lang, { type: 'disjunction' }).format(plans.map((plan) => isolated(this._planName(plan), rtl)));
  }

  /** A number in the user's locale: `1,200`, `1.200`, `١٬٢٠٠`. */
  protected _number(value: number): string {
    return formatter(Intl.NumberFormat, this._kit?.locale || undefined).format(value);
  }

  /** A share (0.8) as a percentage in the user's locale: `80%`, `80 %`, `٨٠٪`. */
  protected _percent(share: number): string {
    return formatter(Intl.NumberFormat, this._kit?.locale || undefined, { style: 'percent' }).format(share);
  }

  /** A date such as `Dec 21, 2026`, or '' when there is none (lifetime access) or it is unreadable. */
  protected _date(iso: string | null | undefined): string {
    const time = iso ? Date.parse(iso) : NaN;
    return Number.isNaN(time) ? '' : formatter(Intl.DateTimeFormat, this._kit?.locale || undefined, { dateStyle: 'medium' }).format(time);
  }

  /**
   * The one-line look of the states without data: `key`'s text, or loading, error or not connected.
   * Not a live region: a page of badges would otherwise announce "Not signed in" once for each.
   */
  protected _notice(key?: keyof S & string): TemplateResult {
    const notice = this._text(key ?? (this.state === 'not-connected' ? 'notConnected' : this.state === 'error' ? 'error' : 'loading'));
    return html`<span part="base notice" class="muted" lang=${notice.lang} dir=${notice.dir}>${notice.text}</span>`;
  }

  /**
   * `news` for this element's live region, or undefined when another element of its document
   * already said the same text in this task: one kit change (an upgrade) announces "Unlocked" once, not once
   * for every gate on the page. Different texts are all said. A live region nobody can hear
   * (inside a hidden tab panel, say) does not speak for the others. Only the element that would
   * speak first asks whether it can be heard, which makes the browser compute the page's styles:
   * a thousand gates asking in turn took most of their time.
   */
  protected _news(news: ShownText | undefined): ShownText | undefined {
    const text = news?.text;
    if (!text) return undefined;
    const doc = this.ownerDocument;
    let said = newsThisTask.get(doc);
    if (!said) {
      newsThisTask.set(doc, (said = new Map()));
      setTimeout(() => newsThisTask.delete(doc));
    }
    const by = said.get(text);
    if (by) return by === this ? news : undefined;
    const region = this.renderRoot.querySelector('[role="status"]');
    if (!region || region.checkVisibility({ visibilityProperty: true })) said.set(text, this);
    return news;
  }

  /** The failure of the element's last action, for its live region: said once, not again in another language. */
  protected get _failureNews(): ShownText | undefined {
    return this._failed && !this._failureSaid ? this._text('failed') : undefined;
  }

  /** The element's visually hidden live region, saying `said` in its language. */
  protected _status(said: ShownText | undefined): TemplateResult {
    return html`<span part="status" class="sr-only" role="status" lang=${said?.lang ?? this._lang} dir=${said?.dir ?? this._locales.textDir}>${said?.text ?? ''}</span>`;
  }

  /**
   * Fires the cancelable `mp-sign-in-request`, then `kit.signIn(returnTo)`. On the developer's own
   * site the page is then navigating away, so the element stays busy until it has gone.
   */
  protected async _signIn(returnTo: string = location.href): Promise<void> {
    const kit = this._actionKit;
    const request = new MpSignInRequestEvent(returnTo);
    if (!kit || this._busy || !this.dispatchEvent(request)) return;
    await this._run(async () => {
      await kit.signIn(returnTo);
      if (kit.embedded || kit !== this._kit || !this.isConnected) return;
      this._navigationWait = new AbortController();
      await navigationOver(this._navigationWait.signal);
    });
  }

  /** Fires the cancelable `mp-upgrade-request`, then `kit.upgrade(...)` and `mp-upgrade` with the outcome. */
  protected async _upgrade(plan?: string, feature?: string): Promise<UpgradeOutcome | undefined> {
    const kit = this._actionKit;
    const request = new MpUpgradeRequestEvent(plan, feature);
    if (!kit || this._busy || !this.dispatchEvent(request)) return undefined;
    if (!kit.embedded && !upgradeWarned) {
      upgradeWarned = true;
      console.warn(
        `[marketplace-app-kit] ERR_NOT_EMBEDDED${
          DEV
            ? `: <${this.localName}> cannot upgrade here: the plan chooser is the dashboard's. ` +
              'On your own site, listen for mp-upgrade-request, call event.preventDefault() and send the user to your pricing page (marketplace-app-kit: docs/elements/mp-upgrade-button.md).'
            : ''
        }`,
      );
    }
    return this._run(async () => {
      const outcome = await kit.upgrade({ ...(plan ? { plan } : {}), ...(feature ? { feature } : {}) });
      const done = new MpUpgradeEvent(outcome, plan, feature);
      this.dispatchEvent(done);
      return outcome;
    });
  }

  /** Runs an action with the busy flag set; a failure becomes an `mp-error` event and the `failed` text. */
  protected async _run<T>(action: () => Promise<T>): Promise<T | undefined> {
    this._busy = true;
    this._failed = false;
    this._failureSaid = false;
    try {
      return await action();
    } catch (error) {
      const failed = new MpErrorEvent(asKitError(error));
      this.dispatchEvent(failed);
      this._failed = true;
      return undefined;
    } finally {
      this._busy = false;
    }
  }
}

/**
 * How long an element waits, busy, for the page to leave after `kit.signIn()` navigated it.
 * The page usually goes first; this is for a navigation that never happens (the user stopped it).
 */
export const SIGN_IN_NAVIGATION_MS = 10_000;

/**
 * Resolves when a navigation the page started is over without the page gone: the page is back from
 * the back-forward cache (`pageshow`), or `SIGN_IN_NAVIGATION_MS` passed; or when `cancel` aborts
 * (the element left the page or changed kit).
 */
function navigationOver(cancel: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const listening = new AbortController();
    const over = () => {
      listening.abort();
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(over, SIGN_IN_NAVIGATION_MS);
    addEventListener('pageshow', over, { signal: listening.signal });
    cancel.addEventListener('abort', over, { signal: listening.signal });
  });
}

/**
 * What `mp-error` carries: kit errors as they are, anything else (a page's own handler that threw,
 * a browser exception) as `ERR_ACTION_FAILED` with the original as `cause`, so listeners can
 * always switch on `error.code`.
 */
function asKitError(error: unknown): MarketplaceKitError {
  if (isKitError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new MarketplaceKitError('ERR_ACTION_FAILED', DEV ? `The element's action failed: ${message}` : '', { cause: error });
}
