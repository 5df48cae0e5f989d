import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, defineConfig, parseSync, type Plugin, type Rolldown } from 'vite';

// `vite build` emits the browser bundles that are served as plain files (no bundler on the
// other side). The library entries (`.`, `./elements`, `./server`, `./host`) are emitted by
// `tsc` into dist/.
//   vite build             -> dist/cdn/marketplace-app-kit.js: runtime + all elements, global
//                             `MarketplaceKit`, started from its own <script> tag's data-* attributes;
//                             and beside it dist/cdn/locales/<tag>.js, the elements' locale packs as
//                             ES modules, which the script imports from next to itself on demand.
//   vite build --mode host -> dist/cdn/marketplace-host.js: the dashboard side of the bridge, global
//                             `MarketplaceHost` (served by the simulator's dashboard).
//   vite build --mode dashboard -> dist/cdn/marketplace-dashboard.js: the simulator dashboard's own
//                             script (src/simulator/dashboard-app.ts), which uses `MarketplaceHost`.
export default defineConfig(({ mode }) => {
  const host = mode === 'host';
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
    plugins: host ? [collapseTemplates()] : [collapseTemplates(), localePacks()],
    resolve: host
      ? {}
      : {
          alias: [
            // The script tag is one file: the bridge is imported statically, not as a chunk (host-link-loader.ts).
            { find: /^\.\/host-link-loader\.js$/, replacement: fileURLToPath(new URL('src/runtime/host-link-static.ts', import.meta.url)) },
            // Its locale packs are files of their own next to it, loaded by URL (loaders-cdn.ts).
            { find: /^\.\.\/locales\/loaders\.js$/, replacement: fileURLToPath(new URL('src/elements/locales/loaders-cdn.ts', import.meta.url)) },
          ],
        },
    build: {
      outDir: 'dist/cdn',
      emptyOutDir: false,
      lib: {
        entry: host ? 'src/host/index.ts' : 'src/cdn.ts',
        name: host ? 'MarketplaceHost' : 'MarketplaceKit',
        formats: ['iife'],
        fileName: () => (host ? 'marketplace-host.js' : 'marketplace-app-kit.js'),
      },
    },
  };
});

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
