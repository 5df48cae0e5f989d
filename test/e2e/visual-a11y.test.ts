// What the eye needs on the pages around the elements: the simulator's dashboard and
// authorization page, the sample app in the dashboard, the site and the component gallery. Axe
// (contrast of text, names, roles) on each page in light and dark; reflow at 320 CSS px (WCAG
// 1.4.10, the width of 1280 px at 400% zoom); and the non-text contrast of focus rings and field
// edges (1.4.11), which axe does not check. Needs `npm run build` first.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { openDashboard, startDemoHarness, type DemoHarness } from '../support/demo-browser.js';
import { contrast } from '../support/contrast.js';
import { PHONE_320 } from '../support/browser.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let harness: DemoHarness;
before(async () => {
  harness = await startDemoHarness();
});
after(async () => {
  await harness?.close();
});

/** Axe's violations on the page or frame, one line each ("" when none). */
async function axeViolations(target: Page | Frame): Promise<string> {
  await target.evaluate(AXE); // by the debugger protocol: the pages' CSP does not apply
  const found = await target.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; nodes: Array<{ target: string[]; failureSummary?: string }> }> }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations.map((v) => `${v.id}: ${v.nodes.map((node) => `${node.target.join(' ')} (${node.failureSummary?.replace(/\s+/g, ' ')})`).join('; ')}`);
  });
  return found.join('\n');
}

const style = (locator: Locator, property: string) => locator.evaluate((el, name) => getComputedStyle(el).getPropertyValue(name), property);

async function scrollsSideways(page: Page | Frame): Promise<string | null> {
  const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  return scroll > client ? `scrollWidth ${scroll} > clientWidth ${client}` : null;
}

async function inContext<T>(viewport: { width: number; height: number }, run: (page: Page) => Promise<T>): Promise<T> {
  const context: BrowserContext = await harness.browser.newContext({ viewport });
  try {
    return await run(await context.newPage());
  } finally {
    await context.close();
  }
}

/** The site's sign-in, up to the simulator's authorization page. */
async function openAuthorization(page: Page): Promise<void> {
  await page.goto(harness.demo.urls.site);
  await Promise.all([
    page.waitForURL((url) => url.href.startsWith(`${harness.demo.urls.simulator}/oauth/authorize`)),
    page.locator('mp-sign-in-button').getByRole('button').click(),
  ]);
}

describe('visual accessibility of the pages', () => {
  for (const theme of ['light', 'dark'] as const) {
    it(`axe finds nothing in the dashboard and the app inside it (${theme})`, async () => {
      const { context, page, app } = await openDashboard(harness, { user: 'usr_ada', theme });
      try {
        await app.locator(`html[data-theme="${theme}"]`).waitFor();
        await page.locator('#calls summary.ok').first().waitFor({ state: 'attached' }); // the log's colored lines are there
        assert.equal(await axeViolations(page), '', 'dashboard');
        assert.equal(await axeViolations(app), '', 'app');
      } finally {
        await context.close();
      }
    });

    it(`the dashboard's focus ring and field edges, and the app's field edges, have 3:1 (${theme})`, async () => {
      const { context, page, app } = await openDashboard(harness, { user: 'usr_ada', theme });
      try {
        const panel = await style(page.locator('aside.controls'), 'background-color');
        const field = page.locator('#entitlement-form input[name="plan"]');
        await field.focus();
        assert.equal(await field.evaluate((el) => el.matches(':focus-visible')), true);
        const ring = await style(field, 'outline-color');
        assert.ok(contrast(ring, panel) >= 3, `focus ring ${ring} on ${panel}: ${contrast(ring, panel).toFixed(2)}:1`);
        const edge = await style(field, 'border-top-color');
        assert.ok(contrast(edge, panel) >= 3, `field edge ${edge} on ${panel}: ${contrast(edge, panel).toFixed(2)}:1`);

        await app.locator(`html[data-theme="${theme}"]`).waitFor();
        const appField = app.locator('#note-form input[name="title"]');
        const card = await appField.evaluate((el) => getComputedStyle(el.closest('.card')!).backgroundColor);
        const appEdge = await style(appField, 'border-top-color');
        assert.ok(contrast(appEdge, card) >= 3, `app field edge ${appEdge} on ${card}: ${contrast(appEdge, card).toFixed(2)}:1`);
      } finally {
        await context.close();
      }
    });
  }

  it('axe finds nothing in the site, the gallery and the authorization page', async () => {
    await inContext({ width: 1280, height: 900 }, async (page) => {
      await page.goto(harness.demo.urls.gallery);
      await page.locator('mp-gate[access="locked"]').first().waitFor();
      assert.equal(await axeViolations(page), '', 'gallery');
      await page.goto(harness.demo.urls.site);
      await page.locator('mp-sign-in-button[state="signed-out"]').waitFor();
      assert.equal(await axeViolations(page), '', 'site');
      await openAuthorization(page);
      assert.equal(await axeViolations(page), '', 'authorization page');
    });
  });

  it('fit a 320 px wide screen without scrolling sideways: dashboard, gallery, authorization page', async () => {
    const { context, page } = await openDashboard(harness, { user: 'usr_ada', viewport: { width: 320, height: 800 } });
    try {
      assert.equal(await scrollsSideways(page), null, 'dashboard');
    } finally {
      await context.close();
    }
    await inContext({ width: 320, height: 800 }, async (narrow) => {
      await narrow.goto(harness.demo.urls.gallery);
      await narrow.locator('mp-gate[access="locked"]').first().waitFor();
      assert.equal(await scrollsSideways(narrow), null, 'gallery');
      await openAuthorization(narrow);
      assert.equal(await scrollsSideways(narrow), null, 'authorization page');
    });
  });

  it('a note with a long URL or e-mail address wraps in the app on a 320 px phone instead of widening it', async () => {
    const { context, app } = await openDashboard(harness, { user: 'usr_grace', phone: true });
    try {
      const email = 'maximiliane.wolfeschlegelsteinhausen-the-third@example-company.com'; // 66 characters, no space
      await app.locator('#note-form input[name="title"]').fill(`https://example.com/${'x'.repeat(50)}`);
      await app.locator('#note-form textarea[name="body"]').fill(`Ask ${email}`);
      await app.locator('#note-form button[type="submit"]').click();
      await app.locator('#notes').getByText(email).waitFor();
      assert.equal(await scrollsSideways(app), null, 'the app');
    } finally {
      await context.close();
    }
  });

  it("the site's user badge keeps a user's name and e-mail address whole on a 320 px phone", async () => {
    const context = await harness.browser.newContext(PHONE_320);
    try {
      const page = await context.newPage();
      await openAuthorization(page);
      await page.getByRole('radio', { name: /Katherine Johnson/ }).check();
      await Promise.all([
        page.waitForURL((url) => url.href.startsWith(harness.demo.urls.site)),
        page.getByRole('button', { name: 'Approve' }).click(),
      ]);
      const badge = page.locator('mp-user-badge');
      await badge.getByText('katherine@example.test').waitFor();
      // Lines of each text, counted by the tops of its rectangles: a word broken in two makes two.
      const lines = await badge.evaluate((el) =>
        ['name', 'email'].map((name) => {
          const range = document.createRange();
          range.selectNodeContents(el.shadowRoot!.querySelector(`[part~="${name}"]`)!);
          return `${name}: ${new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size}`;
        }),
      );
      assert.deepEqual(lines, ['name: 1', 'email: 1']);
      assert.equal(await scrollsSideways(page), null);
    } finally {
      await context.close();
    }
  });

  it("the app's cards fit inside its padding in the dashboard on a 320 px phone", async () => {
    const { context, app } = await openDashboard(harness, { user: 'usr_ada', phone: true });
    try {
      // 1280 px at 400% zoom, or a small phone: the dashboard leaves the app's iframe under 280 px.
      const { right, cards } = await app.evaluate(() => {
        const grid = document.querySelector('.app-grid')!;
        return {
          right: grid.getBoundingClientRect().right - parseFloat(getComputedStyle(grid).paddingRight),
          cards: [...grid.querySelectorAll('.card')].map((card) => card.getBoundingClientRect().right),
        };
      });
      for (const card of cards) assert.ok(card <= right + 0.5, `a card ends at ${card} px, past the grid's padding at ${right} px`);
    } finally {
      await context.close();
    }
  });
});
