import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, defineConfig, parseSync, type Plugin, type Rolldown } from 'vite';

// `vite build` emits the browser bundles that are served as plain files (no bundler on the
// other side). The library entries (`.`, `./elements`, `./server`, `./host`) are emitted by
// `tsc` into dist/.
//   vite build             -> dist/cdn/marketplace-app-kit.js: runtime + all elements, global
//                             `MarketplaceKit`, started from its own <script> tag's data-* attributes;
//                             the production build (errors carry their code and docs/errors.md);
//                             and beside it dist/cdn/locales/<tag>.js, the elements' locale packs as
//                             ES modules, which the script imports from next to itself on demand.
//   vite build --mode cdn-dev -> dist/cdn/marketplace-app-kit.dev.js: the same for development, with
//                             the long explanations of errors and warnings (docs/script-tag.md).
//   vite build --mode host -> dist/cdn/marketplace-host.js: the dashboard side of the bridge, global
//                             `MarketplaceHost` (served by the simulator's dashboard).
//   vite build --mode dashboard -> dist/cdn/marketplace-dashboard.js: the simulator dashboard's own
//                             script (src/simulator/dashboard-app.ts), which uses `MarketplaceHost`.
export default defineConfig(({ mode }) => {
  const host = mode === 'host';
  const dev = mode === 'cdn-dev';
  if (mode === 'dashboard') {
    return {
      build: {
        outDir: 'dist/cdn',
        emptyOutDir: false,
        lib: { entry: 'src/simulator/dashboard-app.ts', name: 'MarketplaceDashboard', formats: ['iife'], fileName: () => 'marketplace-dashboard.js' },
      },
    };
  }
  return {
    // The script tag for production leaves the long explanations to the development one.
    plugins: host ? [collapseTemplates()] : [collapseTemplates(), ...(dev ? [] : [productionBuild()]), bridgeFile(dev), staticChunks(), localePacks()],
    // Its locale packs are files of their own next to it, loaded by URL (loaders-cdn.ts).
    resolve: host ? {} : { alias: [{ find: /^\.\.\/locales\/loaders\.js$/, replacement: src('elements/locales/loaders-cdn.ts') }] },
    build: {
      outDir: 'dist/cdn',
      emptyOutDir: false,
      lib: {
        entry: host ? 'src/host/index.ts' : 'src/cdn.ts',
        name: host ? 'MarketplaceHost' : 'MarketplaceKit',
        formats: ['iife'],
        fileName: () => (host ? 'marketplace-host.js' : dev ? 'marketplace-app-kit.dev.js' : 'marketplace-app-kit.js'),
      },
    },
  };
});

/**
 * Builds for production, as a bundler does through the exports map's `production` condition:
 * `src/shared/dev.ts` is replaced by `dev-production.ts` (DEV = false), so the long explanations
 * of errors and warnings drop out (docs/runtime.md#development-and-production-builds).
 */
export function productionBuild(): Plugin {
  const dev = fileURLToPath(new URL('src/shared/dev.ts', import.meta.url));
  const production = fileURLToPath(new URL('src/shared/dev-production.ts', import.meta.url));
  return {
    name: 'mpkit:production',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      if (!/(^|\/)dev\.js$/.test(source)) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      return resolved?.id === dev ? production : null;
    },
    transform(code, id) {
      return id.startsWith(src('')) ? { code: inlineDev(code), map: null } : null;
    },
  };
}

const src = (path: string) => fileURLToPath(new URL(`src/${path}`, import.meta.url));

/**
 * The script tag's host bridge, a file of its own beside it (`marketplace-app-kit-bridge.js`, or
 * `.dev.js`): most pages that use the script tag are not inside the dashboard, and the bridge is
 * the largest part they would load for nothing. Inside the dashboard the script imports it once
 * the kit has started (src/runtime/host-link-script-tag.ts replaces host-link-loader.ts).
 *
 * The file is the bridge's own code (host-link.ts, shared/bridge.ts, @mixer/postmessage-rpc) as an
 * ES module. What it shares with the script (zod, the error class, the schemas' helpers) it does not
 * carry: each such import becomes a read of what the script handed over on a global, so the page
 * holds one copy, and an error made in the file is a `MarketplaceKitError` of the script's.
 */
export function bridgeFile(dev: boolean): Plugin {
  const KEY = 'marketplace-app-kit.script-tag-shared';
  const HANDOVER = '\0mpkit:bridge-handover';
  const own = new Set([src('runtime/host-link.ts'), src('shared/bridge.ts'), src('shared/dev.ts'), src('shared/dev-production.ts')]);
  const loader = src('runtime/host-link-script-tag.ts');
  let file = '';
  /** For each module the file takes from the script: its id and the names it takes (imported, local). */
  let taken: { id: string; names: [string, string][] }[] = [];
  return {
    name: 'mpkit:bridge-file',
    enforce: 'pre',
    async buildStart() {
      const result = (await build({
        configFile: false,
        logLevel: 'silent',
        plugins: [
          ...(dev ? [] : [productionBuild()]),
          {
            name: 'mpkit:bridge-file-externals',
            enforce: 'pre',
            async resolveId(source, importer, options) {
              if (!importer) return null;
              if (source === 'zod/mini') return { id: source, external: true };
              const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
              return resolved && resolved.id.startsWith(src('')) && !own.has(resolved.id) ? { id: resolved.id, external: true } : null;
            },
          },
        ],
        build: {
          write: false,
          minify: true,
          lib: { entry: src('runtime/host-link.ts'), formats: ['es'], fileName: 'bridge' },
          rolldownOptions: { output: { minify: true, comments: false } },
        },
      })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
      const chunk = [result].flat().flatMap((output) => output.output).find((item): item is Rolldown.OutputChunk => item.type === 'chunk' && item.isEntry);
      if (!chunk) throw new Error('bridgeFile: the bridge build made no entry chunk');
      taken = [];
      const edits: { start: number; end: number; text: string }[] = [];
      for (const node of parseSync('bridge.js', chunk.code).program.body) {
        if (node.type !== 'ImportDeclaration') continue;
        const source = node.source.value;
        const id = source === 'zod/mini' ? source : resolve(dirname(src('runtime/host-link.ts')), source);
        const names: [string, string][] = node.specifiers.map((specifier) => {
          if (specifier.type !== 'ImportSpecifier') throw new Error(`bridgeFile: ${source} must be imported by name, not as ${specifier.type}`);
          const imported = specifier.imported.type === 'Identifier' ? specifier.imported.name : specifier.imported.value;
          return [imported, specifier.local.name];
        });
        const index = taken.push({ id, names }) - 1;
        const binding = names.map(([imported, local]) => (imported === local ? local : `${imported}:${local}`)).join(',');
        edits.push({ start: node.start, end: node.end, text: `const{${binding}}=globalThis[Symbol.for(${JSON.stringify(KEY)})][${index}];` });
      }
      let code = chunk.code;
      for (const edit of edits.sort((a, b) => b.start - a.start)) code = code.slice(0, edit.start) + edit.text + code.slice(edit.end);
      file = code;
    },
    resolveId(source, importer) {
      if (source === HANDOVER) return HANDOVER;
      if (source === './host-link-loader.js' && importer?.endsWith('/src/runtime/environment.ts')) return loader;
      return null;
    },
    load(id) {
      if (id !== HANDOVER) return null;
      const imports = taken.map(({ id: from, names }, index) => `import { ${names.map(([imported], n) => `${imported} as m${index}_${n}`).join(', ')} } from ${JSON.stringify(from)};`);
      const modules = taken.map(({ names }, index) => `{ ${names.map(([imported], n) => `${JSON.stringify(imported)}: m${index}_${n}`).join(', ')} }`);
      // The first copy of the script on a page keeps its kit (src/cdn.ts), so it hands over too.
      return `${imports.join('\n')}\nglobalThis[Symbol.for(${JSON.stringify(KEY)})] ??= [${modules.join(', ')}];\n`;
    },
    transform(code, id) {
      return id === loader ? { code: `import ${JSON.stringify(HANDOVER)};\n${code}`, map: null } : null;
    },
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: dev ? 'marketplace-app-kit-bridge.dev.js' : 'marketplace-app-kit-bridge.js', source: file });
    },
  };
}

/**
 * The script tag is one file: the runtime's chunks (the bridge, the session's upkeep, the own
 * site's start-up) are imported statically there. A dynamic import inlined into one file gets a
 * wrapper that runs its modules on first use, and so does every module it shares with the rest
 * (zod's among them), which costs about a kilobyte gzipped.
 */
export function staticChunks(): Plugin {
  return {
    name: 'mpkit:static-chunks',
    enforce: 'pre',
    transform(code, id) {
      if (!/\/src\/runtime\/[^/]+\.ts$/.test(id)) return null;
      const specifiers: string[] = [];
      const out = code.replace(/(?<!typeof )\bimport\((['"])(\.\/[\w.-]+\.js)\1\)/g, (_, _quote: string, specifier: string) => {
        let index = specifiers.indexOf(specifier);
        if (index < 0) index = specifiers.push(specifier) - 1;
        return `Promise.resolve(__mpkit_chunk${index})`;
      });
      if (specifiers.length === 0) return null;
      const imports = specifiers.map((specifier, index) => `import * as __mpkit_chunk${index} from '${specifier}';`).join('');
      return { code: imports + out, map: null };
    },
  };
}

/**
 * `import { DEV } from '…/dev.js'` becomes `const DEV = false;` (on the same line, so a source map
 * stays right). A constant of the module itself is folded before the bundle is split into chunks:
 * an explanation's helper used only under `DEV` (describeFailure) then leaves every chunk, where
 * an imported constant is folded only by the minifier, chunk by chunk, after the exports between
 * chunks were fixed. scripts/production-build.mjs does the same to dist/production.
 */
export function inlineDev(code: string): string {
  return code.replace(/^import \{ DEV \} from '(\.\.?\/)+(shared\/)?dev\.js';$/m, 'const DEV = false;');
}

/**
 * Emits `locales/<tag>.js` beside the script-tag bundle: each built-in locale pack but English
 * (src/elements/locales/), minified, as an ES module whose default export is the pack. A classic
 * script may `import()` modules, and an IIFE build cannot split chunks, so they are built apart.
 */
function localePacks(): Plugin {
  return {
    name: 'mpkit:locale-packs',
    apply: 'build',
    async generateBundle() {
      const dir = fileURLToPath(new URL('src/elements/locales/', import.meta.url));
      const packs = readdirSync(dir).filter((file) => /^[a-z]{2,3}(-[A-Z]{2})?\.ts$/.test(file) && file !== 'en.ts');
      const result = (await build({
        configFile: false,
        logLevel: 'silent',
        build: {
          write: false,
          minify: true,
          lib: { entry: Object.fromEntries(packs.map((file) => [file.slice(0, -3), join(dir, file)])), formats: ['es'], fileName: (_format, name) => `locales/${name}.js` },
          rolldownOptions: { output: { minify: true, comments: false } },
        },
      })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
      for (const output of [result].flat()) {
        for (const item of output.output) if (item.type === 'chunk') this.emitFile({ type: 'asset', fileName: item.fileName, source: item.code });
      }
    },
  };
}

/**
 * The minifier leaves template literals alone, so the elements' `css` and `html` templates keep
 * their indentation. This collapses it (and drops CSS comments) in our own element sources, to
 * keep the script tag within its size budget. Element layouts use flex and grid, where
 * whitespace-only text between tags renders nothing, so removing it changes no rendering.
 */
export function collapseTemplates(): Plugin {
  return {
    name: 'mpkit:collapse-templates',
    enforce: 'pre',
    transform(code, id) {
      if (!/\/src\/elements\/.*\.ts$/.test(id)) return null;
      const edits: { start: number; end: number; text: string }[] = [];
      const visit = (node: unknown): void => {
        if (!node || typeof node !== 'object') return;
        if (Array.isArray(node)) return node.forEach(visit);
        const n = node as { type?: string; tag?: { type: string; name?: string }; quasi?: { quasis: { start: number; value: { raw: string } }[] } };
        const tag = n.type === 'TaggedTemplateExpression' && n.tag?.type === 'Identifier' ? n.tag.name : undefined;
        if ((tag === 'css' || tag === 'html') && n.quasi) {
          for (const quasi of n.quasi.quasis) {
            // A quasi's span starts with its opening delimiter (` or }); the raw text follows.
            const start = quasi.start + 1;
            const raw = quasi.value.raw;
            if (code.slice(start, start + raw.length) !== raw) continue;
            edits.push({ start, end: start + raw.length, text: tag === 'css' ? collapseCss(raw) : collapseHtml(raw) });
          }
        }
        for (const [key, value] of Object.entries(node)) if (key !== 'parent') visit(value);
      };
      visit(parseSync(id, code, { lang: 'ts' }).program);
      if (edits.length === 0) return null;
      let out = code;
      for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
      return { code: out, map: null };
    },
  };
}

const collapseCss = (css: string) =>
  css
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([{};,])\s*/g, '$1')
    .replace(/:\s+/g, ':');

// Indentation next to a tag goes; a line break between attributes becomes one space.
const collapseHtml = (html: string) =>
  html
    .replace(/>\s*\n\s*/g, '>')
    .replace(/\s*\n\s*</g, '<')
    .replace(/\s*\n\s*/g, ' ');
