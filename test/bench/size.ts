// The size budgets (docs/benchmarks.md#runtime-and-size). `npm run size` prints them and exits
// non-zero when one is exceeded; `npm test` runs the same check (test/node/size-budget.test.ts), so
// CI fails too; `npm run bench` prints them. Each bundle is built fresh from the sources with Vite
// (into a temp dir), minified, for production (the exports map's `production` condition, as an
// app's production build resolves it), and gzipped with zlib level 9. 1 KB = 1,000 bytes, as Vite
// prints it.
//
//   before ready: what a page loads before the kit is ready, with the package's `.` entry
//                 (src/runtime/index.ts) bundled as a user's bundler would: the entry and the chunks
//                 it imports statically; on the developer's own site also the own-site chunk (and
//                 what it imports), which start-up imports there. At most 12.5 KB on either path;
//                 it must not include the host bridge (@mixer/postmessage-rpc).
//   runtime:      all the chunks of that bundle together, at most 17 KB (not met yet: held under
//                 the ceiling in CEILINGS); no Lit, no element.
//   script tag:   dist/cdn/marketplace-app-kit.js as `vite build` makes it (runtime + Lit + all
//                 elements, English texts built in), at most 30 KB. Printed beside it: its bridge
//                 file, which only a page inside the dashboard imports, after start-up.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BROWSER_UI, HOST_BRIDGE, bundle, libraryBuild, root, type Bundle } from '../support/bundles.js';

const KB = 1000;
/** The budgets of issue 40. */
export const BUDGETS = { beforeReady: 12.5 * KB, runtime: 17 * KB, scriptTag: 30 * KB };
/**
 * Where a budget is not met yet, the ceiling this check holds instead, so that nothing grows
 * meanwhile (docs/benchmarks.md#runtime-and-size, says by how much and what would meet it).
 */
export const CEILINGS: Partial<Record<keyof typeof BUDGETS, number>> = { runtime: 18 * KB };

const REFERENCE = 'Shopify App Bridge 3 34 KB · zod (full) 27 KB · Lit 6.2 KB · zod/mini 5.6 KB · @mixer/postmessage-rpc 2.9 KB';

const kb = (bytes: number) => `${(bytes / KB).toFixed(2)} KB`;

export interface SizeReport {
  ok: boolean;
  /** What is over its budget, one line each. */
  over: string[];
  lines: string[];
  sizes: { beforeReady: number; beforeReadyOwnSite: number; runtime: number; scriptTag: number; bridgeFile: number };
}

/** Builds and measures every bundle; `ok` is false when one is over its budget. */
export async function measureSizes(): Promise<SizeReport> {
  const scriptTag = await bundle({ configFile: join(root, 'vite.config.ts'), mode: 'production' });
  const runtime = await bundle(libraryBuild('src/runtime/index.ts'));
  const elements = await bundle(libraryBuild('src/elements/index.ts', (id) => /^(lit|@lit)(\/|$)/.test(id) || id.includes('/src/shared/')));
  const lit = await bundle(libraryBuild('node_modules/lit/index.js'));
  const floor = await bundle(libraryBuild('test/bench/size-floor.ts'));
  const ownCode = await bundle(libraryBuild('src/runtime/index.ts', (id) => /^(zod|@mixer\/postmessage-rpc)(\/|$)/.test(id)));

  const lines: string[] = [];
  const over: string[] = [];
  const line = (name: string, measured: Bundle, budget?: keyof typeof BUDGETS) => {
    let limit = '';
    if (budget !== undefined) {
      const target = BUDGETS[budget];
      const ceiling = CEILINGS[budget];
      const met = measured.gzip <= target;
      const held = met || (ceiling !== undefined && measured.gzip <= ceiling);
      if (!held) over.push(`${name}: ${kb(measured.gzip)} > ${kb(ceiling ?? target)}`);
      limit = ` / ${kb(target)} ${met ? 'ok' : held ? `NOT MET (held under ${kb(ceiling!)})` : 'OVER BUDGET'}`;
    }
    lines.push(`  ${name.padEnd(52)} ${kb(measured.bytes).padStart(9)} min  ${kb(measured.gzip).padStart(8)} gzip${limit}`);
  };
  const check = (name: string, failed: boolean, detail: string) => {
    if (failed) over.push(`${name}: ${detail}`);
    lines.push(`  ${name}: ${failed ? `YES (${detail})` : 'no'}`);
  };

  lines.push('Size budgets (minified, production build, gzip level 9, 1 KB = 1,000 bytes)');
  const startUp = runtime.startUp ?? runtime;
  const ownSite = runtime.startUpWith?.(/\/src\/runtime\/own-site\.ts$/) ?? runtime;
  line('before ready, inside the dashboard', startUp, 'beforeReady');
  line("before ready, on the developer's own site", ownSite, 'beforeReady');
  const bridgeEarly = [...startUp.modules, ...ownSite.modules].filter((id) => HOST_BRIDGE.test(id));
  check('start-up code pulls in the host bridge', bridgeEarly.length > 0, bridgeEarly.join(', '));
  line('runtime: marketplace-app-kit, all chunks', runtime, 'runtime');
  const leaked = runtime.modules.filter((id) => BROWSER_UI.test(id)).map((id) => id.replace(root, ''));
  check('runtime pulls in Lit or an element', leaked.length > 0, leaked.join(', '));
  line('script tag: dist/cdn/marketplace-app-kit.js', scriptTag, 'scriptTag');
  const bridgeFile = scriptTag.files.get('marketplace-app-kit-bridge.js');
  if (!bridgeFile) over.push('script tag: no marketplace-app-kit-bridge.js beside it');
  else line('  its bridge file, inside the dashboard only', bridgeFile);
  lines.push('For information:');
  line('elements alone, English (Lit, src/shared external)', elements.startUp ?? elements);
  line('Lit 3 (lit/index.js)', lit);
  line('floor: zod/mini + postmessage-rpc, least use', floor);
  line('runtime without zod and postmessage-rpc', ownCode);
  lines.push(`  reference (esbuild, minified, gzip -9): ${REFERENCE}`);
  return {
    ok: over.length === 0,
    over,
    lines,
    sizes: { beforeReady: startUp.gzip, beforeReadyOwnSite: ownSite.gzip, runtime: runtime.gzip, scriptTag: scriptTag.gzip, bridgeFile: bridgeFile?.gzip ?? NaN },
  };
}

/** Builds and measures every bundle, prints the table, and returns false when over budget. */
export async function report(): Promise<boolean> {
  const result = await measureSizes();
  for (const text of result.lines) console.log(text);
  if (!result.ok) console.log(`Over budget:\n${result.over.map((text) => `  ${text}`).join('\n')}`);
  return result.ok;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = (await report()) ? 0 : 1;
}
