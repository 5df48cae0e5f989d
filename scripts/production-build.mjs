// The production build of the browser entries (docs/runtime.md#development-and-production-builds):
// a copy of tsc's output for runtime, elements, host and shared in dist/production/, with
// `shared/dev.js` replaced by `shared/dev-production.js` (DEV = false), and in every module
// `import { DEV } from '…/dev.js'` replaced by `const DEV = false;` on the same line (as
// `inlineDev` in vite.config.ts does): a bundler folds a constant of the module itself before it
// splits chunks, so it drops every `DEV ? '…' : ''` explanation and the helpers only they use. The
// exports map gives this copy to bundlers that build for production (the `production` condition).
// Run by `npm run build`, after tsc.
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const target = `${dist}production/`;
if (!existsSync(`${dist}shared/dev-production.js`)) throw new Error('dist/shared/dev-production.js is missing: run tsc first');
rmSync(target, { recursive: true, force: true });
for (const part of ['runtime', 'elements', 'host', 'shared']) {
  cpSync(`${dist}${part}`, `${target}${part}`, { recursive: true, filter: (file) => !file.endsWith('.d.ts') && !file.endsWith('.d.ts.map') });
}
cpSync(`${dist}shared/dev-production.js`, `${target}shared/dev.js`);
cpSync(`${dist}shared/dev-production.js.map`, `${target}shared/dev.js.map`);
const IMPORT_DEV = /^import \{ DEV \} from '(\.\.?\/)+(shared\/)?dev\.js';$/m;
for (const name of readdirSync(target, { recursive: true, encoding: 'utf8' })) {
  if (!name.endsWith('.js')) continue;
  const code = readFileSync(`${target}${name}`, 'utf8');
  if (IMPORT_DEV.test(code)) writeFileSync(`${target}${name}`, code.replace(IMPORT_DEV, 'const DEV = false;'));
}
