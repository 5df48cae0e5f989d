// The starter as a new user gets it, from the packed package (`npm pack`, as npm would publish
// it): `mpkit init` from the installed tarball, `npm install` (the tarball, and Vite from the npm
// cache when it has it), the starter's own `npm test`, and `npm run dev` showing the app inside
// the simulator's dashboard in Chromium, where upgrading to "Pro" opens the gate and the plan
// badge says "Pro". Needs `npm run build` first, as `npm test` does.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, Frame } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { HANG_MS, within } from '../support/waiting.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
/** npm as a user runs it, quietly, from the cache when it can (the tests may run offline). */
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'];
const NPM_TIMEOUT_MS = 5 * 60_000;

let work: string;
let tarball: string;
let app: string;
let dev: ChildProcess | undefined;
let browser: Browser | undefined;

/** The environment of a user's shell: without this test runner's own marker, which would make the starter's `node --test` report to it instead of printing. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _runner, ...env } = process.env;
  return { ...env, NO_COLOR: '1', ...extra };
}

function npm(args: string[], cwd: string) {
  return run('npm', [...args, ...NPM_FLAGS], { cwd, timeout: NPM_TIMEOUT_MS, env: userEnv() });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'mpkit-starter-'));
  // The package as it would be published; its build is the one `npm test` made.
  await npm(['pack', '--ignore-scripts', '--pack-destination', work], root);
  const packed = readdirSync(work).find((file) => file.endsWith('.tgz'));
  assert.ok(packed, 'npm pack wrote no tarball');
  tarball = join(work, packed);
});

after(async () => {
  await browser?.close();
  // The dev process group: npm, dev.js and nothing else (started by this test).
  if (dev?.pid !== undefined && dev.exitCode === null && dev.signalCode === null) process.kill(-dev.pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

describe('the starter (mpkit init), from the packed package', () => {
  it('is written by the mpkit bin of the installed package', { timeout: NPM_TIMEOUT_MS }, async () => {
    const tools = join(work, 'tools');
    mkdirSync(tools);
    writeFileSync(join(tools, 'package.json'), '{ "private": true }');
    await npm(['install', tarball], tools);
    const { stdout } = await run(join(tools, 'node_modules/.bin/mpkit'), ['init', 'my-app'], { cwd: work });
    assert.match(stdout, /^Wrote My app to my-app\./);
    app = join(work, 'my-app');
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
    assert.equal(pkg.type, 'module');
    assert.match(pkg.dependencies['marketplace-app-kit'], /^\^\d+\.\d+\.\d+$/, 'an installed kit writes the published version');
    for (const file of ['.env.example', '.gitignore', 'server.js', 'dev.js', 'index.html', 'src/main.js', 'test/app.test.js']) readFileSync(join(app, file));
    const config = JSON.parse(readFileSync(join(app, 'mpkit.config.json'), 'utf8'));
    assert.match(config.clientId, /^client_/, 'fixed credentials, made once');
    assert.match(readFileSync(join(app, '.env.example'), 'utf8'), new RegExp(`MP_CLIENT_ID=${config.clientId}\n`), '.env.example holds the simulator’s values');
    // A second init never writes over an app.
    const again = await run(join(tools, 'node_modules/.bin/mpkit'), ['init', 'my-app'], { cwd: work }).catch((error: { code: number; stderr: string }) => error);
    assert.equal((again as { code: number }).code, 1);
    assert.match((again as { stderr: string }).stderr, /my-app is not empty/);
  });

  it('installs, and its own test passes: the simulator launches the app on Free and on Pro', { timeout: 2 * NPM_TIMEOUT_MS }, async () => {
    assert.ok(app, 'the starter was written');
    // Before the package is on npm, the tarball stands in for the published version.
    await npm(['install', tarball], app);
    const { stdout } = await npm(['test'], app);
    assert.match(stdout, /^# pass 2$/m);
    assert.match(stdout, /^# fail 0$/m);
  });

  it('npm run dev shows the app in the dashboard; upgrading to Pro opens the gate', { timeout: 3 * HANG_MS }, async () => {
    assert.ok(app, 'the starter was installed');
    // Ports of its own: the simulator's and the app's defaults (4010, 3000) may be taken here.
    const config = JSON.parse(readFileSync(join(app, 'mpkit.config.json'), 'utf8'));
    writeFileSync(join(app, 'mpkit.config.json'), JSON.stringify({ ...config, port: 0 }));
    const port = await freePort();
    dev = spawn('npm', ['run', 'dev'], { cwd: app, detached: true, env: userEnv({ PORT: String(port) }), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    dev.stdout!.on('data', (chunk: Buffer) => (output += chunk));
    dev.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    const dashboard = await within(
      new Promise<string>((resolve, reject) => {
        const look = () => {
          const found = /Dashboard\s+(http:\/\/127\.0\.0\.1:\d+\/dashboard)/.exec(output);
          if (found) resolve(found[1]!);
        };
        dev!.stdout!.on('data', look);
        dev!.once('exit', (code) => reject(new Error(`npm run dev exited (${code}):\n${output}`)));
      }),
      HANG_MS,
      `npm run dev printed no dashboard:\n${output}`,
    );
    assert.match(output, new RegExp(`Your app\\s+http://127\\.0\\.0\\.1:${port}/`));

    browser = await launchChromium();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(dashboard);
    assert.equal(await page.textContent('#app-title'), 'My app', 'the dashboard is titled with the app’s name');
    const frame = (await (await page.waitForSelector('#app-frame')).contentFrame()) as Frame;
    await frame.waitForFunction(() => document.querySelector('#greeting')?.textContent === 'Hello, Ada Lovelace!', undefined, { timeout: HANG_MS });
    const badge = () => frame.evaluate(() => document.querySelector('mp-plan-badge')?.shadowRoot?.textContent ?? '');
    assert.match(await badge(), /Free/);
    await frame.waitForFunction(() => document.querySelector('mp-gate')?.getAttribute('access') === 'locked');

    await frame.click('mp-gate [part="action"]');
    await page.waitForSelector('dialog#upgrade[open]');
    const plans = await page.$$eval('#plan-list .plan', (cards) => cards.map((card) => (card as HTMLElement).dataset.plan));
    assert.deepEqual(plans, ['free', 'pro_monthly', 'pro_annual'], 'the plan chooser offers the config file’s plans');
    assert.match((await page.textContent('#plan-list .plan[data-plan="pro_monthly"]')) ?? '', /Pro[\s\S]*\$12 \/ month/);
    await page.check('input[value="pro_monthly"]');
    await page.click('#upgrade-confirm');

    await frame.waitForFunction(() => document.querySelector('mp-gate')?.getAttribute('access') === 'granted', undefined, { timeout: HANG_MS });
    assert.ok(await frame.isVisible('#export'), 'the export button shows');
    const shown = await badge();
    assert.match(shown, /\bPro\b/, 'the badge names the plan');
    assert.doesNotMatch(shown, /pro_monthly/, 'not by its id');
    assert.deepEqual(errors, []);

    process.kill(-dev.pid!, 'SIGINT');
    const code = await within(new Promise<number | null>((resolve) => dev!.once('exit', (exitCode) => resolve(exitCode))), HANG_MS, 'npm run dev did not stop on Ctrl-C');
    assert.ok(code === 0 || code === null, `npm run dev exited with ${code}:\n${output}`);
  });
});
