// The size budget. `npm run size` prints it and exits non-zero when over; `npm run bench` prints
// it too. Each bundle is built fresh from the sources with Vite (into a temp dir), minified, and
// gzipped with zlib level 9. 1 KB = 1,000 bytes, as Vite prints it.
//
//   script tag: dist/cdn/marketplace-app-kit.js as `vite build` makes it (runtime + Lit + all
//               elements) <= 20 KB
//   runtime:    the package's `.` entry (src/runtime/index.ts) bundled for the browser as a
//               user's bundler would, all its chunks together, <= 10 KB, and it must not pull in
//               Lit or any element. Printed beside it: what a page loads before the kit is ready
//               (the entry and the chunks it imports statically), which must not include the host
//               bridge (@mixer/postmessage-rpc): that chunk is loaded inside the dashboard only,
//               after start-up.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BROWSER_UI, HOST_BRIDGE, bundle, libraryBuild, root, type Bundle } from '../support/bundles.js';

const KB = 1000;
const SCRIPT_TAG_BUDGET = 20 * KB;
const RUNTIME_BUDGET = 10 * KB;

const REFERENCE = 'Shopify App Bridge 3 34 KB · zod (full) 27 KB · Lit 6.2 KB · zod/mini 5.6 KB · @mixer/postmessage-rpc 2.9 KB';

const kb = (bytes: number) => `${(bytes / KB).toFixed(1)} KB`;

function line(name: string, measured: Bundle, budget?: number): boolean {
  const ok = budget === undefined || measured.gzip <= budget;
  const limit = budget === undefined ? '' : ` / ${kb(budget)} ${ok ? 'ok' : 'OVER BUDGET'}`;
  console.log(`  ${name.padEnd(44)} ${kb(measured.bytes).padStart(9)} min  ${kb(measured.gzip).padStart(8)} gzip${limit}`);
  return ok;
}

/** Builds and measures every bundle, prints the table, and returns false when over budget. */
export async function report(): Promise<boolean> {
  const scriptTag = await bundle({ configFile: join(root, 'vite.config.ts'), mode: 'production' });
  const runtime = await bundle(libraryBuild('src/runtime/index.ts'));
  const elements = await bundle(libraryBuild('src/elements/index.ts', (id) => /^(lit|@lit)(\/|$)/.test(id) || id.includes('/src/shared/')));
  const lit = await bundle(libraryBuild('node_modules/lit/index.js'));
  const floor = await bundle(libraryBuild('test/bench/size-floor.ts'));
  const ownCode = await bundle(libraryBuild('src/runtime/index.ts', (id) => /^(zod|@mixer\/postmessage-rpc)(\/|$)/.test(id)));

  console.log('Size budget (minified, gzip level 9, 1 KB = 1,000 bytes)');
  let ok = line('script tag: dist/cdn/marketplace-app-kit.js', scriptTag, SCRIPT_TAG_BUDGET);
  ok = line('runtime: marketplace-app-kit (src/runtime)', runtime, RUNTIME_BUDGET) && ok;
  const leaked = runtime.modules.filter((id) => BROWSER_UI.test(id)).map((id) => id.replace(root, ''));
  console.log(`  runtime pulls in Lit or an element: ${leaked.length ? `YES (${leaked.join(', ')})` : 'no'}`);
  ok = leaked.length === 0 && ok;
  const startUp = runtime.startUp ?? runtime;
  line('  of which loaded before the kit is ready', startUp);
  const bridgeEarly = startUp.modules.some((id) => HOST_BRIDGE.test(id));
  console.log(`  start-up code pulls in the host bridge: ${bridgeEarly ? 'YES' : 'no'}`);
  ok = !bridgeEarly && ok;
  console.log('For information:');
  line('elements alone (Lit and src/shared external)', elements);
  line('Lit 3 (lit/index.js)', lit);
  line('floor: zod/mini + postmessage-rpc, least use', floor);
  line('runtime without zod and postmessage-rpc', ownCode);
  console.log(`  reference (esbuild, minified, gzip -9): ${REFERENCE}`);
  return ok;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = (await report()) ? 0 : 1;
}
