// The sample app in the simulator's dashboard, driven by the keyboard only, with every change of
// every live region recorded (what a screen reader would be told): the upgrade from the paywall,
// and adding a note.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { openDashboard, startDemoHarness, type DemoHarness } from '../support/demo-browser.js';

let harness: DemoHarness;
before(async () => {
  harness = await startDemoHarness();
});
after(async () => {
  await harness?.close();
});

/**
 * Records every text change of every live region (role=status/alert, aria-live), shadow roots
 * included, looking every 25 ms; `__liveLooks` counts the looks.
 */
const recorder = `(() => { if (window.__live) return; const log = window.__live = []; const seen = new Map(); window.__liveLooks = 0;
  const walk = (root, out) => { for (const el of root.querySelectorAll('*')) { const r = el.getAttribute('role'), l = el.getAttribute('aria-live');
    if (r === 'status' || r === 'alert' || (l && l !== 'off')) out.push(el); if (el.shadowRoot) walk(el.shadowRoot, out); } };
  setInterval(() => { const out = []; walk(document, out); for (const el of out) { const t = el.textContent.trim();
    if (!seen.has(el)) { seen.set(el, t); continue; } if (seen.get(el) !== t) { seen.set(el, t);
      const host = el.getRootNode().host; log.push({ where: host ? host.localName : (el.id || el.localName), text: t }); } } window.__liveLooks++; }, 25); })();`;

const live = (app: Frame) => app.evaluate(() => (window as unknown as { __live: { where: string; text: string }[] }).__live);
/** Waits until the recorder has looked twice more: whatever changed before this call is in its log then. */
async function recorderCaughtUp(app: Frame): Promise<void> {
  const looks = await app.evaluate(() => (window as unknown as { __liveLooks: number }).__liveLooks);
  await app.waitForFunction((after) => (window as unknown as { __liveLooks: number }).__liveLooks >= after + 2, looks);
}
const focusInApp = (app: Frame) =>
  app.evaluate(() => {
    let a: Element | null = document.activeElement;
    const path: string[] = [];
    while (a) {
      path.push(a.localName + (a.id ? `#${a.id}` : '') + (a.getAttribute('part') ? `[${a.getAttribute('part')}]` : ''));
      a = a.shadowRoot?.activeElement ?? null;
    }
    return path.join(' > ');
  });

async function tabTo(page: Page, app: Frame, pattern: RegExp) {
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press('Tab');
    if (pattern.test(await focusInApp(app))) return;
  }
  throw new Error(`Tab never reached ${pattern}`);
}

describe('keyboard and live regions in the dashboard', () => {
  it('upgrades from the paywall by keyboard; the unlock is announced and the focus is kept', async () => {
    await harness.sendEvent('subscription.created', { user_id: 'usr_ada', plan: 'free' });
    const { context, page, app } = await openDashboard(harness, { user: 'usr_ada' });
    try {
      await app.evaluate(recorder);
      await recorderCaughtUp(app);
      await tabTo(page, app, /mp-gate > button\[action\]/);
      await page.keyboard.press(' ');
      await page.waitForSelector('dialog#upgrade[open]');
      // The focus lands on a plan, past the sentence that says why: the dialog's description reads it.
      const description = await page.evaluate(() => document.getElementById(document.querySelector('dialog#upgrade')!.getAttribute('aria-describedby') ?? '')?.textContent);
      assert.match(description ?? '', /export/);
      assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement).value), 'pro_monthly');
      await page.keyboard.press('Escape');
      await page.waitForFunction(() => !(document.querySelector('dialog#upgrade') as HTMLDialogElement).open);
      assert.match(await focusInApp(app), /mp-gate > button\[action\]/, 'Escape gives the focus back to Upgrade');
      // The button is busy until the dashboard's answer (cancelled) comes back over the bridge.
      await app.waitForFunction(() => document.querySelector('mp-gate')?.shadowRoot?.querySelector('[part~="action"]')?.getAttribute('aria-busy') === 'false');

      await page.keyboard.press('Enter');
      await page.waitForSelector('dialog#upgrade[open]');
      await page.keyboard.press('Tab'); // Cancel
      await page.keyboard.press('Tab'); // Confirm
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'upgrade-confirm');
      await page.keyboard.press('Enter');
      await app.waitForFunction(() => document.querySelector('mp-gate')?.getAttribute('access') === 'granted');
      await app.waitForFunction(() => document.activeElement?.localName === 'mp-gate');
      await app.waitForFunction(() => (window as unknown as { __live: { text: string }[] }).__live.some((e) => e.text === 'Unlocked'));
      assert.ok((await live(app)).some((e) => e.where === 'mp-gate' && e.text === 'Unlocked'), JSON.stringify(await live(app)));
      await page.keyboard.press('Tab');
      assert.equal(await focusInApp(app), 'button#export', 'the next Tab continues inside the unlocked content');
    } finally {
      await context.close();
    }
  });

  it('adding a note announces that, not the whole list again (the list is no live region)', async () => {
    const { context, page, app } = await openDashboard(harness, { user: 'usr_ada' });
    try {
      await app.locator('#notes li').first().waitFor();
      await app.evaluate(recorder);
      await recorderCaughtUp(app); // the live regions as they stand are known: only later changes are logged
      await tabTo(page, app, /^input$/);
      await page.keyboard.type('Keyboard note');
      await page.keyboard.press('Enter');
      await app.locator('#notes li', { hasText: 'Keyboard note' }).waitFor();
      await app.waitForFunction(() => (window as unknown as { __live: { text: string }[] }).__live.some((e) => e.text === 'Note added.'));
      await recorderCaughtUp(app); // the list changed before this: a read-out of it would be logged by now
      const said = await live(app);
      assert.ok(said.some((e) => e.text === 'Note added.'), JSON.stringify(said));
      const listReads = said.filter((e) => e.where === 'notes');
      assert.deepEqual(listReads, [], `the notes list was read out again: ${JSON.stringify(listReads).slice(0, 300)}`);
    } finally {
      await context.close();
    }
  });
});
