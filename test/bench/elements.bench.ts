// Elements at scale: a page of N elements (nine in ten <mp-gate> with slotted content, the rest
// badges, meters and upgrade buttons) on one FakeKit, in Debian's Chromium. Figures, in the page's
// clock: the first render (markup inserted -> every element's updateComplete), and one entitlement
// change (a plan switch that unlocks or locks every gate) -> every element updated, each also up
// to the layout that follows. Beside them, Chromium's style recalculations and layouts during the
// changes (CDP Performance.getMetrics). Time per element should not grow with N. SIZES=50,2000
// (environment) measures other sizes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'vite';
import { listen, stop } from '../support/runtime-harness.js';
import { launchChromium } from '../support/browser.js';
import { root } from '../support/bundles.js';
import { median, ms } from './stats.js';

export interface ElementsBenchCounts {
  sizes: number[];
  /** Pages built per size (first render), and plan switches on each. */
  pages: number;
  changes: number;
}
const COUNTS: ElementsBenchCounts = { sizes: process.env.SIZES ? process.env.SIZES.split(',').map(Number) : [50, 200, 500, 1000], pages: 3, changes: 6 };

type Bench = {
  build(n: number): Promise<{ render: number; layout: number }>;
  change(): Promise<{ update: number; layout: number; unlocked: boolean }>;
  count(): number;
};


export default async function elementsBench(counts: ElementsBenchCounts = COUNTS): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mp-elements-bench-'));
  await build({
    configFile: false,
    root,
    logLevel: 'silent',
    build: {
      outDir: dir,
      minify: true,
      lib: { entry: join(root, 'test/bench/elements-page.ts'), name: 'ElementsBench', formats: ['iife'], fileName: () => 'page.js' },
    },
  });
  const code = readFileSync(join(dir, 'page.js'), 'utf8');
  rmSync(dir, { recursive: true, force: true });
  const server = await listen((req, res) => {
    if (req.url === '/page.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(code);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>elements</title><script src="/page.js"></script></head><body></body></html>');
  });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = async () => {
      const { metrics: list } = await cdp.send('Performance.getMetrics');
      return Object.fromEntries(list.map((m) => [m.name, m.value]));
    };
    console.log('N elements: first render (-> layout) | one plan switch (-> layout; unlock, lock), medians | switch per element | per switch: style recalcs (their time), layouts');
    for (const n of counts.sizes) {
      const renders: number[] = [];
      const renderLayouts: number[] = [];
      const updates: number[] = [];
      const updateLayouts: number[] = [];
      const unlocks: number[] = [];
      const locks: number[] = [];
      let recalcs = 0;
      let layouts = 0;
      let recalcTime = 0;
      for (let p = 0; p < counts.pages; p++) {
        await page.goto(`${server.origin}/`);
        const first = await page.evaluate((size) => (window as unknown as { bench: Bench }).bench.build(size), n);
        renders.push(first.render);
        renderLayouts.push(first.layout);
        for (let c = 0; c < counts.changes; c++) {
          const before = await metrics();
          const change = await page.evaluate(() => (window as unknown as { bench: Bench }).bench.change());
          const after = await metrics();
          updates.push(change.update);
          (change.unlocked ? unlocks : locks).push(change.update);
          updateLayouts.push(change.layout);
          recalcs += after.RecalcStyleCount! - before.RecalcStyleCount!;
          layouts += after.LayoutCount! - before.LayoutCount!;
          recalcTime += after.RecalcStyleDuration! - before.RecalcStyleDuration!;
        }
      }
      const switches = counts.pages * counts.changes;
      const update = median(updates);
      console.log(
        `  ${String(n).padStart(4)}: first render ${ms(median(renders))} (${ms(median(renderLayouts))})` +
          ` | switch ${ms(update)} (${ms(median(updateLayouts))}; unlock ${ms(median(unlocks))}, lock ${ms(median(locks))}) | ${((update / n) * 1000).toFixed(0)} µs/element` +
          ` | ${(recalcs / switches).toFixed(1)} recalcs (${ms((recalcTime / switches) * 1000)}), ${(layouts / switches).toFixed(1)} layouts`,
      );
    }
  } finally {
    await browser.close();
    await stop(server.server);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await elementsBench();
