import { fileURLToPath } from 'node:url';
import { defineConfig, parseSync, type Plugin } from 'vite';

// `vite build` emits the browser bundles that are served as plain files (no bundler on the
// other side). The library entries (`.`, `./elements`, `./server`, `./host`) are emitted by
// `tsc` into dist/.
//   vite build             -> dist/cdn/marketplace-app-kit.js: runtime + all elements, global
//                             `MarketplaceKit`, started from its own <script> tag's data-* attributes;
//                             the production build (errors carry their code and docs/errors.md).
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
    plugins: host ? [collapseTemplates()] : [collapseTemplates(), ...(dev ? [] : [productionBuild()]), staticChunks()],
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
 * of errors and warnings drop out (docs/runtime.md, "Development and production builds").
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
