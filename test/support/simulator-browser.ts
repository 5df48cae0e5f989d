/** Launches Debian's headless Chromium for the simulator's end-to-end tests (never downloads one). */
import { chromium, type Browser } from 'playwright-core';

// chromium.js is plain JS without declarations; a computed specifier keeps its import typed by hand.
const { chromiumPath, chromiumArgs } = (await import(new URL('./chromium.js', import.meta.url).href)) as {
  chromiumPath: () => string;
  chromiumArgs: string[];
};

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs, headless: true });
}

/** A 320 px touch phone (or 1280 px at 400% zoom): twice as many device pixels as CSS pixels, the meta viewport honoured. */
export const PHONE_320 = { viewport: { width: 320, height: 640 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true } as const;
