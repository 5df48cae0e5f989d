/** Debian's headless Chromium for the end-to-end tests and benchmarks (never a downloaded browser). */
import { chromium, type Browser } from 'playwright-core';
import { HANG_MS } from './waiting.js';

// chromium.js is plain JS without declarations; a computed specifier keeps its import typed by hand.
const { chromiumPath, chromiumArgs } = (await import(new URL('./chromium.js', import.meta.url).href)) as {
  chromiumPath: () => string;
  chromiumArgs: string[];
};

/**
 * Launches Chromium. Every context and page it opens waits up to `HANG_MS` by default: a wait
 * for an element or a function is a hang guard, and Playwright's own 30 s is short of one.
 */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs, headless: true });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(HANG_MS);
    return context;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (options) => {
    const page = await newPage(options);
    page.context().setDefaultTimeout(HANG_MS);
    return page;
  };
  return browser;
}

/** A 320 px touch phone (or 1280 px at 400% zoom): twice as many device pixels as CSS pixels, the meta viewport honoured. */
export const PHONE_320 = { viewport: { width: 320, height: 640 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true } as const;
