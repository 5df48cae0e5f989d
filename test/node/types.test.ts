// The "typed APIs" promise, checked as an app sees it: test/support/types/ holds page code
// (browser.ts: runtime, elements, host) and backend code (node.ts: server, simulator) written from
// the docs, each in its own strict project that imports the package by name, so tsc reads the
// built declarations (dist/*.d.ts) through the exports map. Idiomatic use must compile with no
// cast; each mistake is marked `// @ts-expect-error`, so a type that stops refusing it (an option
// loosened to `any`, a `readonly` dropped) fails here as "Unused '@ts-expect-error' directive".
// Needs `npm run build` first, as `npm test` does.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));

async function typeCheck(project: string): Promise<void> {
  const tsc = `${root}node_modules/typescript/bin/tsc`;
  const run = promisify(execFile)(process.execPath, [tsc, '-p', `${root}test/support/types/${project}`], { cwd: root });
  const { stdout } = await run.catch((error: { stdout?: string }) => assert.fail(`tsc found errors:\n${error.stdout ?? String(error)}`));
  assert.equal(stdout.trim(), '');
}

describe('public types', () => {
  it('are built', () => {
    for (const entry of ['runtime', 'elements', 'host', 'server', 'simulator']) {
      assert.ok(existsSync(`${root}dist/${entry}/index.d.ts`), `dist/${entry}/index.d.ts is missing (run npm run build)`);
    }
  });

  it('take the docs’ page code without casts and refuse its mistakes (runtime, elements, host)', async () => {
    await typeCheck('tsconfig.browser.json');
  });

  it('take the docs’ backend code without casts and refuse its mistakes (server, simulator)', async () => {
    await typeCheck('tsconfig.node.json');
  });
});
