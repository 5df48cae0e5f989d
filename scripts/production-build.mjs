// The production build of the browser entries (docs/runtime.md, "Development and production
// builds"): a copy of tsc's output for runtime, elements, host and shared in dist/production/, with
// `shared/dev.js` replaced by `shared/dev-production.js` (DEV = false). The exports map gives it to
// bundlers that build for production (the `production` condition); a bundler then drops every
// `DEV ? '…' : ''` explanation. Run by `npm run build`, after tsc.
import { cpSync, existsSync, rmSync } from 'node:fs';
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
