// The demo's end-to-end harness: the servers started by `startDemo` (what `npm start` runs, on
// free ports), one Debian Chromium, and small helpers to reach the app inside the dashboard.
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { startDemo, type Demo, type StartDemoOptions } from '../../demo/launch.js';
import { PHONE_320, launchChromium } from './browser.js';
import { HANG_MS } from './waiting.js';

export interface DemoHarness {
  demo: Demo;
  browser: Browser;
  /** Lines the demo logged (webhooks received, errors), for failure messages. */
  logs: string[];
  /** POST `/_simulator/events`, as the dashboard's "Send a webhook event" does. */
  sendEvent(event: string, data: Record<string, unknown>): Promise<{ outcome: string; status: number | null }>;
  close(): Promise<void>;
}

export async function startDemoHarness(options: Omit<StartDemoOptions, 'ports' | 'log'> = {}): Promise<DemoHarness> {
  const logs: string[] = [];
  const demo = await startDemo({
    ...options,
    ports: { simulator: 0, backend: 0, vite: 0 },
    log: (line) => logs.push(line),
    viteLogLevel: 'error',
  });
  let browser: Browser;
  try {
    browser = await launchChromium();
  } catch (error) {
    await demo.close();
    throw error;
  }
  return {
    demo,
    browser,
    logs,
    async sendEvent(event, data) {
      const response = await fetch(`${demo.urls.simulator}/_simulator/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ event, data }),
      });
      if (!response.ok) throw new Error(`POST /_simulator/events answered ${response.status}: ${await response.text()}`);
      return (await response.json()) as { outcome: string; status: number | null };
    },
    async close() {
      await browser.close();
      await demo.close();
    },
  };
}

export interface DashboardOptions {
  user?: string;
  theme?: 'light' | 'dark';
  viewport?: { width: number; height: number };
  /** A 320 px phone (`PHONE_320`, its viewport in place of `viewport`). */
  phone?: boolean;
}

export interface OpenDashboard {
  context: BrowserContext;
  page: Page;
  /** The sample app inside the dashboard's iframe. */
  app: Frame;
  /** Errors thrown in any frame of the page. */
  errors: string[];
}

/** Opens the simulator's dashboard and waits until the embedded app's kit is ready. */
export async function openDashboard(harness: DemoHarness, options: DashboardOptions = {}): Promise<OpenDashboard> {
  const context = await harness.browser.newContext({
    viewport: options.viewport ?? { width: 1400, height: 900 },
    ...(options.phone ? PHONE_320 : {}),
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const url = new URL(harness.demo.urls.dashboard);
  if (options.user) url.searchParams.set('user', options.user);
  if (options.theme) url.searchParams.set('theme', options.theme);
  await page.goto(url.href);
  const frameElement = await page.waitForSelector('#app-frame');
  const app = await frameElement.contentFrame();
  if (!app) throw new Error('the dashboard has no app frame');
  await waitForKit(app, 'ready');
  return { context, page, app, errors };
}

/** Waits until the app's kit (window.fieldNotes.kit) reaches `state`; says where it is otherwise. */
export async function waitForKit(app: Frame, state: string, timeout = HANG_MS): Promise<void> {
  try {
    await app.waitForFunction((want) => window.fieldNotes?.kit.state === want, state, { timeout });
  } catch (error) {
    const now = await app
      .evaluate(() => ({ state: window.fieldNotes?.kit.state, error: window.fieldNotes?.kit.error?.message }))
      .catch(() => null);
    throw new Error(`the app's kit did not reach "${state}": ${JSON.stringify(now)}`, { cause: error });
  }
}

/** Status and body of a call to the app's own API through `kit.fetch`, from inside the app. */
export function callApi(app: Frame, path: string): Promise<{ status: number; body: string }> {
  return app.evaluate(async (target) => {
    const response = await window.fieldNotes.api(target);
    return { status: response.status, body: await response.text() };
  }, path);
}
