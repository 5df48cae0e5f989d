import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { localeChain, localeDirection, onTextsChanged, startLoading, textLanguage, waitForTexts } from './texts.js';

type Direction = 'ltr' | 'rtl';

/** What the controller needs of its element. */
export interface LocaleHost extends ReactiveControllerHost, Element {}

/**
 * The language of an element, followed live (docs/guides/locales.md): the locale its texts are
 * read for and the chain of packs that gives, the language and direction of its texts and of its
 * boxes, the hold of its first look in a locale while that locale's texts load, and a new render
 * whenever texts arrive. The element calls `hold()` from `scheduleUpdate` and `read()` from
 * `willUpdate`, so that its own `willUpdate` code sees this update's language.
 */
export class LocaleController implements ReactiveController {
  /** The element's own `lang` attribute, which picks the language of its texts over the user's. */
  ownLang: string | null = null;
  /** The locales the element's texts come from, best first (`localeChain`). */
  chain: readonly string[] = ['en'];
  /**
   * The language of the element's texts: `de` for a `de-AT` user, `en` where no pack has the user's
   * language. That of its plural forms and lists, and of the texts of its own `strings`.
   */
  lang = 'en';
  /** The direction of `lang`: the direction its texts are written in, and in which values are isolated. */
  textDir: Direction = 'ltr';
  /** The direction of the element's boxes: the closest `dir` above it (the page's), else `textDir`. */
  dir: Direction = 'ltr';
  /**
   * This update shows the element in another language than the one before did (the dashboard
   * switched, or the pack came late). The same look in another language is no news: live
   * regions say nothing new in such an update.
   */
  translated = false;

  private readonly _host: LocaleHost;
  private readonly _userLocale: () => string | undefined;
  /** The locale of the last update; undefined before the first. */
  private _shown: string | undefined;
  private _stopListening: (() => void) | undefined;

  /** @param userLocale The user's locale: the kit's, or undefined without a kit. */
  constructor(host: LocaleHost, userLocale: () => string | undefined) {
    this._host = host;
    this._userLocale = userLocale;
    host.addController(this);
  }

  /**
   * The locale of the element's texts: its own `lang` attribute (not an ancestor's: `<html lang>`
   * says what the page is written in, not what the user reads), else the user's, else the browser's.
   */
  get locale(): string {
    return this.ownLang || this._userLocale() || navigator.language;
  }

  hostConnected(): void {
    this._stopListening = onTextsChanged(() => this._host.requestUpdate());
  }

  hostDisconnected(): void {
    this._stopListening?.();
  }

  /**
   * For `scheduleUpdate`: holds the element's first update in a locale while that locale's texts
   * load, so that its first look, or its look after a locale change, is in the user's language
   * rather than English for a moment, `timeoutMs` at most. Later updates in the same locale are
   * not held, nor is any update for a load that already ran past its limit. Undefined when the
   * update may run now.
   */
  hold(timeoutMs: number): Promise<void> | undefined {
    if (this.locale === this._shown) return undefined;
    const deadline = performance.now() + timeoutMs;
    const wait = waitForTexts(this.locale, deadline);
    return wait && this._waitForLatest(wait, deadline);
  }

  /**
   * Waits for `wait`, then for the texts of the locale the element has by then: the locale may
   * change while its texts load (French, then Japanese). One limit for all: `deadline`.
   */
  private async _waitForLatest(wait: Promise<void>, deadline: number): Promise<void> {
    let next: Promise<void> | undefined = wait;
    while (next) {
      await next;
      next = performance.now() < deadline ? waitForTexts(this.locale, deadline) : undefined;
    }
  }

  /** For `willUpdate`: reads this update's locale, its chain, the languages and directions. */
  read(): void {
    const locale = this.locale;
    this.chain = localeChain(locale);
    // Rendered without its texts (they are late, or the locale changed at the last moment), the
    // element starts their load; `onTextsChanged` renders it again when they come.
    startLoading(this.chain);
    const lang = textLanguage(this.chain);
    this.translated = this._shown !== undefined && lang !== this.lang;
    this._shown = locale;
    this.lang = lang;
    this.textDir = localeDirection(lang);
    // Read from attributes, not computed styles, which would make each of a thousand gates
    // recalculate the page's styles.
    this.dir = declaredDir(this._host) || this.textDir;
  }
}

/**
 * The direction the closest `dir` attribute above `node` sets (`ltr` or `rtl`), across shadow
 * roots as the browser's own inheritance goes; '' when there is none, or it is `auto`.
 */
function declaredDir(node: Element): '' | Direction {
  const found = node.closest('[dir]');
  if (found) {
    const dir = found.getAttribute('dir')!.toLowerCase();
    return dir === 'ltr' || dir === 'rtl' ? dir : '';
  }
  const host = (node.getRootNode() as Partial<ShadowRoot>).host;
  return host ? declaredDir(host) : '';
}
