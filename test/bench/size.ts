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
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type InlineConfig, type Rolldown } from 'vite';
import { collapseTemplates } from '../../vite.config.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const KB = 1000;
const SCRIPT_TAG_BUDGET = 20 * KB;
const RUNTIME_BUDGET = 10 * KB;
/** Lit and the elements: none of them may end up in the runtime entry. */
const BROWSER_UI = /\/node_modules\/(lit|lit-html|lit-element|@lit\/[^/]+)\/|\/src\/elements\//;

const REFERENCE = 'Shopify App Bridge 3 34 KB · zod (full) 27 KB · Lit 6.2 KB · zod/mini 5.6 KB · @mixer/postmessage-rpc 2.9 KB';

interface Bundle {
  bytes: number;
  gzip: number;
  modules: string[];
  /** The entry and the chunks it imports statically, if the bundle has more than one chunk. */
  startUp?: Bundle;
}

const measure = (chunks: Rolldown.OutputChunk[]): Bundle => {
  const code = chunks.map((chunk) => chunk.code).join('\n');
  return { bytes: Buffer.byteLength(code), gzip: gzipSync(code, { level: 9 }).length, modules: chunks.flatMap((chunk) => chunk.moduleIds) };
};

/** The entry chunk and every chunk it imports statically, transitively. */
function startUpChunks(chunks: Rolldown.OutputChunk[]): Rolldown.OutputChunk[] {
  const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const found = new Set<Rolldown.OutputChunk>();
  const visit = (chunk: Rolldown.OutputChunk | undefined) => {
    if (!chunk || found.has(chunk)) return;
    found.add(chunk);
    for (const name of chunk.imports) visit(byName.get(name));
  };
  visit(chunks.find((chunk) => chunk.isEntry));
  return [...found];
}

async function bundle(config: InlineConfig): Promise<Bundle> {
  const outDir = mkdtempSync(join(tmpdir(), 'mpkit-size-'));
  try {
    const result = (await build({
      root,
      logLevel: 'silent',
      ...config,
      build: { ...config.build, outDir, emptyOutDir: true, copyPublicDir: false },
    })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
    const chunks = (Array.isArray(result) ? result : [result]).flatMap((out) => out.output).filter((item) => item.type === 'chunk');
    const whole = measure(chunks);
    return chunks.length > 1 ? { ...whole, startUp: measure(startUpChunks(chunks)) } : whole;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** An ES library build of `entry`, fully minified as an app's production build would be. */
function libraryBuild(entry: string, external?: (id: string) => boolean): InlineConfig {
  return {
    configFile: false,
    plugins: [collapseTemplates()],
    build: {
      minify: true,
      lib: { entry: join(root, entry), formats: ['es'], fileName: 'entry' },
      rolldownOptions: { ...(external ? { external } : {}), output: { minify: true, comments: false } },
    },
  };
}

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

  console.log('Size budget (minified, gzip level 9, 1 KB = 1,000 bytes)');
  let ok = line('script tag: dist/cdn/marketplace-app-kit.js', scriptTag, SCRIPT_TAG_BUDGET);
  ok = line('runtime: marketplace-app-kit (src/runtime)', runtime, RUNTIME_BUDGET) && ok;
  const leaked = runtime.modules.filter((id) => BROWSER_UI.test(id)).map((id) => id.replace(root, ''));
  console.log(`  runtime pulls in Lit or an element: ${leaked.length ? `YES (${leaked.join(', ')})` : 'no'}`);
  ok = leaked.length === 0 && ok;
  const startUp = runtime.startUp ?? runtime;
  line('  of which loaded before the kit is ready', startUp);
  const bridgeEarly = startUp.modules.some((id) => id.includes('/node_modules/@mixer/postmessage-rpc/'));
  console.log(`  start-up code pulls in the host bridge: ${bridgeEarly ? 'YES' : 'no'}`);
  ok = !bridgeEarly && ok;
  console.log('For information:');
  line('elements alone (Lit and src/shared external)', elements);
  line('Lit 3 (lit/index.js)', lit);
  line('floor: zod/mini + postmessage-rpc, least use', floor);
  console.log(`  reference (esbuild, minified, gzip -9): ${REFERENCE}`);
  return ok;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = (await report()) ? 0 : 1;
}
