import { defineConfig } from 'vite';

// `vite build` emits the script-tag bundle: one self-contained classic script that registers the
// elements, exposes `window.MarketplaceKit` and starts the kit from its own tag's data-* attributes.
// The library entries (`.`, `./elements`, `./server`, `./host`) are emitted by `tsc` into dist/.
export default defineConfig({
  build: {
    outDir: 'dist/cdn',
    emptyOutDir: true,
    lib: {
      entry: 'src/cdn.ts',
      name: 'MarketplaceKit',
      formats: ['iife'],
      fileName: () => 'marketplace-app-kit.js',
    },
  },
});
