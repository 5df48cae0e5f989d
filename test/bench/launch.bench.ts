// First launch of an app in the simulator's dashboard, in Debian's Chromium on loopback: from the
// app frame's navigation to the kit being ready, in a fresh browser context each time (nothing
// cached). Three app pages, taken in turn in the same run, so that a busy machine weighs on all
// three alike (docs/benchmarks.md#runtime-and-size):
//
//   baseline     an inline script that only posts the launch's context to POST /session and reads
//                the answer: what no kit can beat;
//   script tag   the set-up docs/script-tag.md recommends: the early exchange script
//                (`earlyLaunchScript`) inline in <head>, then dist/cdn/marketplace-app-kit.js with
//                its data-* attributes (the production build, as `npm run build` makes it);
//   bundled      the set-up docs/runtime.md recommends: the early exchange inline, then the app's
//                bundle (Vite's production build of a page that calls createKit), its start-up
//                chunks preloaded (`<link rel="modulepreload">`).
//
// "Ready" is the frame's own clock (performance.now(), whose zero is the frame's navigation start)
// when the answer was read (baseline) or the kit became ready. The target: at most 1.3 times the
// baseline for both. Printed: each page's median, its ratio to the baseline's median, and the
// median of the ratios round by round (each round launches the three pages back to back, so a
// moment when the machine is busy weighs on one round's three launches alike).
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Rolldown } from 'vite';
import { earlyLaunchScript } from '../../src/server/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import { launchChromium } from '../support/browser.js';
import { html, listen, stop } from '../support/runtime-harness.js';
import { collapseTemplates, productionBuild } from '../../vite.config.js';
import { simulatedBackend } from './simulated-backend.js';
import { median, ms, type Figure } from './stats.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** How many launches of each page: `npm run bench` uses these; test/e2e/bench-smoke.test.ts one. */
export interface LaunchBenchCounts {
  samples: number;
}
const COUNTS: LaunchBenchCounts = { samples: 12 };
const TARGET = 1.3;
const PAGES = ['baseline', 'script tag', 'bundled'] as const;
type PageName = (typeof PAGES)[number];

/** The script tag and the bundled app, built for production into `dir`. */
async function buildApps(dir: string, options: { backend: string; hostOrigins: string[] }) {
  await build({ root, logLevel: 'silent', configFile: join(root, 'vite.config.ts'), mode: 'production', build: { outDir: join(dir, 'cdn'), emptyOutDir: true } });
  // The app: one module that starts the kit, as an app's entry does.
  const entry = join(dir, 'app-entry.ts');
  writeFileSync(
    entry,
    `import { createKit } from ${JSON.stringify(join(root, 'src/runtime/index.ts'))};
createKit(${JSON.stringify(options)}).then((kit) => { if (kit.state === 'ready') window.readyAt = performance.now(); });\n`,
  );
  const output = (await build({
    root,
    logLevel: 'silent',
    configFile: false,
    plugins: [collapseTemplates(), productionBuild()],
    build: { outDir: join(dir, 'bundle'), emptyOutDir: true, modulePreload: false, rolldownOptions: { input: entry, output: { entryFileNames: '[name]-[hash].js' } } },
  })) as Rolldown.RolldownOutput;
  const chunks = output.output.filter((item) => item.type === 'chunk');
  const main = chunks.find((chunk) => chunk.isEntry)!;
  return { main: main.fileName, preload: main.imports };
}

const json = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** The three app pages. */
function pages(options: { backend: string; hostOrigins: string[] }, app: { main: string; preload: string[] }): Record<PageName, string> {
  const early = `<script>${earlyLaunchScript(options)}</script>`;
  return {
    baseline: `<script>
const launch = new URLSearchParams(location.search);
fetch(${json(`${options.backend}/session`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ context: launch.get('mp_context'), host: launch.get('mp_host') }) })
  .then((answer) => answer.json()).then(() => { window.readyAt = performance.now(); });
</script><p>baseline</p>`,
    'script tag': `${early}<script src="/cdn/marketplace-app-kit.js" data-backend="${options.backend}" data-host-origins="${options.hostOrigins.join(' ')}"></script>
<script>
const kit = MarketplaceKit.getKit();
const ready = () => { if (kit.state === 'ready' && window.readyAt === undefined) window.readyAt = performance.now(); };
kit.subscribe(ready);
ready();
</script><mp-user-badge></mp-user-badge><mp-gate feature="export"><button>Export</button></mp-gate>`,
    bundled: `${early}${app.preload.map((chunk) => `<link rel="modulepreload" href="/bundle/${chunk}">`).join('')}<script type="module" src="/bundle/${app.main}"></script><p>bundled</p>`,
  };
}

/**
 * Runs the launches and prints them; returns each page's figure for `npm run bench`'s summary
 * (the baseline's median time over the page's, so 1/1.3 = 0.77 is the target).
 */
export default async function launchBench(counts: LaunchBenchCounts = COUNTS): Promise<Figure[]> {
  // The simulator's dashboard serves its own scripts from dist/ (`npm run build`).
  for (const file of ['marketplace-host.js', 'marketplace-dashboard.js']) {
    if (!existsSync(join(root, 'dist/cdn', file))) throw new Error(`dist/cdn/${file} is missing: run npm run build first`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'mp-launch-bench-'));
  let handler: ((req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void) | null = null;
  const app = await listen((req, res) => handler?.(req, res));
  const sim = await startSimulator({ appUrl: `${app.origin}/baseline`, webhookUrl: `${app.origin}/api/marketplace/webhooks` });
  const dashboardOrigin = new URL(sim.dashboardUrl).origin;
  const options = { backend: '/api/marketplace', hostOrigins: [dashboardOrigin] };
  const backend = simulatedBackend(sim, dashboardOrigin);
  const built = await buildApps(dir, options);
  const html_ = pages(options, built);
  const files = new Map<string, string>();
  for (const sub of ['cdn', 'bundle']) {
    for (const name of readdirSync(join(dir, sub), { recursive: true, encoding: 'utf8' })) {
      if (name.endsWith('.js')) files.set(`/${sub}/${name}`, readFileSync(join(dir, sub, name), 'utf8'));
    }
  }
  handler = (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.startsWith('/api/marketplace/')) return backend.handle(req, res);
    const file = files.get(path);
    if (file !== undefined) {
      // A bundler's output, named by content: cacheable for good (each launch's context is fresh anyway).
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable' });
      return void res.end(file);
    }
    const page = PAGES.find((name) => path === `/${name.replace(' ', '-')}`);
    if (page) return html(res, html_[page]);
    res.writeHead(404).end();
  };
  const browser = await launchChromium();
  try {
    const launchOnce = async (page: PageName): Promise<number> => {
      sim.configure({ app_url: `${app.origin}/${page.replace(' ', '-')}` });
      const context = await browser.newContext();
      try {
        const tab = await context.newPage();
        await tab.goto(sim.dashboardUrl);
        const frame = await (await tab.waitForSelector('#app-frame')).contentFrame();
        if (!frame) throw new Error('no app frame');
        // Polled every 100 ms, not every animation frame: the frame shares its main thread with the
        // dashboard, and per-frame polling would be measured along. The time is the page's own.
        await frame.waitForFunction(() => (window as unknown as { readyAt?: number }).readyAt !== undefined, undefined, { polling: 100 });
        return await frame.evaluate(() => (window as unknown as { readyAt: number }).readyAt);
      } finally {
        await context.close();
      }
    };
    // One warm-up round (JIT, the backend's entitlement cache), then the samples, in turn.
    for (const page of PAGES) await launchOnce(page);
    const times: Record<PageName, number[]> = { baseline: [], 'script tag': [], bundled: [] };
    for (let i = 0; i < counts.samples; i++) for (const page of PAGES) times[page].push(await launchOnce(page));
    const baseline = median(times.baseline);
    const figures: Figure[] = [];
    console.log(`First launch in the simulator's dashboard (Chromium, loopback, a fresh browser context each), frame navigation -> ready, median of ${counts.samples}:`);
    for (const page of PAGES) {
      const middle = median(times[page]);
      const ratio = middle / baseline;
      const paired = median(times[page].map((time, round) => time / times.baseline[round]!));
      const verdict =
        page === 'baseline'
          ? ''
          : `  ${ratio.toFixed(2)}x the baseline, ${paired.toFixed(2)}x round by round (target <= ${TARGET}x: ${Math.max(ratio, paired) <= TARGET ? 'met' : 'NOT met'})`;
      console.log(`  ${page.padEnd(11)} ${ms(middle).padStart(9)}  (min ${ms(Math.min(...times[page]))}, max ${ms(Math.max(...times[page]))})${verdict}`);
      if (page !== 'baseline') {
        figures.push({ name: `first launch, ${page}, against a page that only posts the context`, ratio: 1 / ratio, target: Math.round(100 / TARGET) / 100, detail: `${paired.toFixed(2)}x the baseline round by round` });
      }
    }
    return figures;
  } finally {
    backend.quiet();
    await browser.close();
    await sim.close();
    await stop(app.server);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await launchBench();
