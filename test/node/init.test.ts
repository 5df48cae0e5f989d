// `mpkit init <dir>` from this repository: the files it writes, the names it derives, the config
// the simulator reads, and what it refuses. The starter run for real (installed from the packed
// package, its test, npm run dev in Chromium) is test/e2e/starter.test.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { appName, init, packageName, STARTER_TOOLS } from '../../src/init/index.js';
import { loadSimulatorConfig } from '../../src/simulator/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CLI = `${root}src/cli.ts`;
const TSX = import.meta.resolve('tsx');

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'mpkit-init-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('mpkit init', () => {
  it('writes the starter: a module package on the kit, the server, the page, the test, and a simulator config the simulator reads', async () => {
    const target = join(dir, 'Field Notes');
    const message = await init(target);
    assert.match(message, /npm install\n {2}npm run dev/);
    for (const file of ['package.json', 'mpkit.config.json', '.env.example', '.gitignore', 'README.md', 'server.js', 'dev.js', 'index.html', 'src/main.js', 'src/style.css', 'test/app.test.js', 'test/page/elements.test.js', 'web-test-runner.config.js']) {
      assert.ok(existsSync(join(target, file)), `${file} is written`);
    }
    const pkg = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'field-notes');
    assert.equal(pkg.type, 'module');
    assert.equal(pkg.dependencies['marketplace-app-kit'], `file:${root.replace(/\/$/, '')}`, 'from a clone, the clone itself');
    assert.ok(pkg.devDependencies.vite, 'Vite builds the page');
    // The tools at the ranges this package is tested with: they come from the npm cache when the kit was installed.
    const kit = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    for (const [name, range] of Object.entries(STARTER_TOOLS)) assert.equal(range, kit.devDependencies[name], `${name}: the kit's own range`);
    assert.deepEqual(pkg.devDependencies, STARTER_TOOLS);
    assert.deepEqual(Object.keys(pkg.scripts), ['dev', 'build', 'start', 'test', 'test:page']);

    const options = loadSimulatorConfig(join(target, 'mpkit.config.json'));
    assert.equal(options.appName, 'Field notes');
    assert.deepEqual(options.plans?.map((plan) => [plan.id, plan.name]), [['free', 'Free'], ['pro_monthly', 'Pro'], ['pro_annual', 'Pro (annual)']]);
    const env = readFileSync(join(target, '.env.example'), 'utf8');
    for (const [name, value] of [['MP_CLIENT_ID', options.clientId], ['MP_CLIENT_SECRET', options.clientSecret], ['MP_API_KEY', options.testApiKey], ['MP_WEBHOOK_SECRET', options.webhookSecret]]) {
      assert.ok(value, `${name} is fixed in the config`);
      assert.match(env, new RegExp(`^${name}=${value}$`, 'm'), `${name} in .env.example is the simulator's`);
    }
    assert.doesNotMatch(readFileSync(join(target, 'index.html'), 'utf8'), /__APP_NAME__/);
    assert.match(readFileSync(join(target, '.gitignore'), 'utf8'), /^\.env$/m);
  });

  it('makes credentials of its own for each starter', async () => {
    await init(join(dir, 'one'));
    await init(join(dir, 'two'));
    const secret = (name: string) => loadSimulatorConfig(join(dir, name, 'mpkit.config.json')).clientSecret;
    assert.notEqual(secret('one'), secret('two'));
  });

  it('never writes into a directory that holds something', async () => {
    const taken = join(dir, 'taken');
    mkdirSync(taken);
    writeFileSync(join(taken, 'notes.txt'), 'mine');
    await assert.rejects(init(taken), { code: 'ERR_CONFIG', message: `${taken} is not empty: give mpkit init a new or empty directory` });
    assert.deepEqual(readFileSync(join(taken, 'notes.txt'), 'utf8'), 'mine');
  });

  it('derives a package name npm accepts and a display name', () => {
    assert.equal(packageName('/x/My App!'), 'my-app');
    assert.equal(packageName('/x/.hidden'), 'hidden');
    assert.equal(packageName('/x/!!!'), 'marketplace-app');
    assert.equal(appName('field-notes'), 'Field notes');
  });

  it('is a command of mpkit: without a directory it says how to call it (exit 2)', async () => {
    const error = (await promisify(execFile)(process.execPath, ['--import', TSX, CLI, 'init'], { cwd: dir }).catch((e: unknown) => e)) as { code: number; stderr: string };
    assert.equal(error.code, 2);
    assert.match(error.stderr, /^mpkit: mpkit init needs a directory, as in: mpkit init my-app\n/);
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', TSX, CLI, 'init', 'from-cli'], { cwd: dir });
    assert.match(stdout, /^Wrote From cli to from-cli\./);
  });
});
