// Builds bundles of the package's sources with Vite, as an app's bundler would, for the size report
// (test/bench/size.ts) and for the tests of what the runtime pulls in (test/node/runtime-bundle.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type InlineConfig, type Rolldown } from 'vite';
import { collapseTemplates, productionBuild } from '../../vite.config.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));
/** Lit and the elements: none of them may end up in the runtime entry. */
export const BROWSER_UI = /\/node_modules\/(lit|lit-html|lit-element|@lit\/[^/]+)\/|\/src\/elements\//;
/** The host bridge's library: never in the code a page loads before the kit is ready. */
export const HOST_BRIDGE = /\/node_modules\/@mixer\/postmessage-rpc\//;

export interface Bundle {
  bytes: number;
  gzip: number;
  modules: string[];
  /** The entry and the chunks it imports statically, if the bundle has more than one chunk. */
  startUp?: Bundle;
  /**
   * Measures the start-up chunks together with the chunk whose module is `facade` (imported
   * dynamically) and what it imports statically: what a page loads when start-up imports it.
   */
  startUpWith?: (facade: RegExp) => Bundle;
  /** Files other than chunks the build emits (the script tag's bridge file), by name. */
  files: Map<string, Bundle>;
}

const measureCode = (code: string, modules: string[] = []): Bundle => ({
  bytes: Buffer.byteLength(code),
  gzip: gzipSync(code, { level: 9 }).length,
  modules,
  files: new Map(),
});
const measure = (chunks: Rolldown.OutputChunk[]): Bundle =>
  measureCode(
    chunks.map((chunk) => chunk.code).join('\n'),
    chunks.flatMap((chunk) => chunk.moduleIds),
  );

/** `from` and every chunk it imports statically, transitively, added to `found`. */
function withStaticImports(chunks: Rolldown.OutputChunk[], from: Rolldown.OutputChunk | undefined, found = new Set<Rolldown.OutputChunk>()): Set<Rolldown.OutputChunk> {
  const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const visit = (chunk: Rolldown.OutputChunk | undefined) => {
    if (!chunk || found.has(chunk)) return;
    found.add(chunk);
    for (const name of chunk.imports) visit(byName.get(name));
  };
  visit(from);
  return found;
}

/** Builds with `config` into a temporary directory and gives the code of all its chunks, joined. */
export async function bundleCode(config: InlineConfig): Promise<{ code: string }> {
  const outDir = mkdtempSync(join(tmpdir(), 'mpkit-size-'));
  try {
    const result = (await build({ root, logLevel: 'silent', ...config, build: { ...config.build, outDir, emptyOutDir: true, copyPublicDir: false } })) as
      | Rolldown.RolldownOutput
      | Rolldown.RolldownOutput[];
    const chunks = [result].flat().flatMap((out) => out.output).filter((item) => item.type === 'chunk');
    return { code: chunks.map((chunk) => chunk.code).join('\n') };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** Builds with `config` into a temporary directory and measures all chunks together and, when split, the start-up ones. */
export async function bundle(config: InlineConfig): Promise<Bundle> {
  const outDir = mkdtempSync(join(tmpdir(), 'mpkit-size-'));
  try {
    const result = (await build({
      root,
      logLevel: 'silent',
      ...config,
      build: { ...config.build, outDir, emptyOutDir: true, copyPublicDir: false },
    })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
    const output = (Array.isArray(result) ? result : [result]).flatMap((out) => out.output);
    const chunks = output.filter((item) => item.type === 'chunk');
    const files = new Map(
      output
        .filter((item) => item.type === 'asset' && item.fileName.endsWith('.js'))
        .map((item) => [item.fileName, measureCode(String((item as Rolldown.OutputAsset).source))] as const),
    );
    const whole = { ...measure(chunks), files };
    if (chunks.length === 1) return whole;
    const entry = chunks.find((chunk) => chunk.isEntry);
    const startUp = withStaticImports(chunks, entry);
    return {
      ...whole,
      startUp: measure([...startUp]),
      startUpWith: (facade) => {
        const chunk = chunks.find((candidate) => candidate.facadeModuleId !== null && facade.test(candidate.facadeModuleId));
        if (!chunk) throw new Error(`no chunk for ${facade}`);
        return measure([...withStaticImports(chunks, chunk, new Set(startUp))]);
      },
    };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/**
 * An ES library build of `entry`, fully minified as an app's production build would be, with the
 * package's production build of the browser entries (the `production` export condition).
 */
export function libraryBuild(entry: string, external?: (id: string) => boolean): InlineConfig {
  return {
    configFile: false,
    plugins: [collapseTemplates(), productionBuild()],
    build: {
      minify: true,
      lib: { entry: join(root, entry), formats: ['es'], fileName: 'entry' },
      // As in an app's build, the entry may export more than its module does: modules it shares with
      // its chunks stay in it, instead of chunks of their own (what a library build's strict
      // entry signature would force).
      rolldownOptions: { ...(external ? { external } : {}), preserveEntrySignatures: 'allow-extension', output: { minify: true, comments: false } },
    },
  };
}

