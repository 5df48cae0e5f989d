// The starter as a new user gets it, from the packed package (`npm pack`, as npm would publish
// it): `mpkit init` from the installed tarball, `npm install` (the tarball, and Vite from the npm
// cache when it has it), the starter's own `npm test`, and `npm run dev` showing the app inside
// the simulator's dashboard in Chromium, where upgrading to "Pro" opens the gate and the plan
// badge says "Pro"; its page test (`npm run test:page`) in Chromium; a taken port said in one
// line. The docs' examples run in it too: the testing guides' backend tests (`<!-- runs in the
// starter -->`) and the embed guide's plain-JavaScript server (step 4) under `node`. Needs
// `npm run build` first, as `npm test` does.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, Frame } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { chromiumPath } from '../support/chromium.js';
import { exampleStartingWith, starterExamples } from '../support/docs.js';
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

/** A process of this test, its output so far, and its exit. */
function started(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { cwd, detached: true, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { text: '' };
  child.stdout!.on('data', (chunk: Buffer) => (out.text += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (out.text += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  /** Resolves with the first match of `pattern` in the output; rejects if the process exits first. */
  const printed = (pattern: RegExp, what: string) =>
    within(
      new Promise<RegExpExecArray>((resolve, reject) => {
        const look = () => {
          const found = pattern.exec(out.text);
          if (found) resolve(found);
        };
        look();
        child.stdout!.on('data', look);
        child.stderr!.on('data', look);
        void exited.then((code) => reject(new Error(`${command} ${args.join(' ')} exited (${code}) before ${what}:\n${out.text}`)));
      }),
      HANG_MS,
      `${command} ${args.join(' ')}: no ${what} within the hang guard:\n${out.text}`,
    );
  return { child, out, exited, printed };
}

/** A port held by this test until `close`, for what must find it taken. */
function takenPort(): Promise<{ port: number; server: Server }> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, server }));
  });
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

  it('runs the docs\' backend tests as they are written (simulator first, then the server on its values)', { timeout: NPM_TIMEOUT_MS }, async () => {
    assert.ok(app, 'the starter was installed');
    const examples = starterExamples();
    assert.ok(examples.length >= 2, `only ${examples.length} docs examples are marked to run in the starter`);
    for (const { path, code } of examples) writeFileSync(join(app, path), code);
    const { stdout } = await run(process.execPath, ['--test', ...examples.map((example) => example.path)], { cwd: app, timeout: NPM_TIMEOUT_MS, env: userEnv() }).catch(
      (error: { stdout?: string; stderr?: string }) => assert.fail(`The docs' examples fail in the starter (${examples.map(({ doc, line }) => `${doc}:${line}`).join(', ')}):\n${error.stdout}${error.stderr}`),
    );
    assert.match(stdout, new RegExp(`^# pass ${examples.length}$`, 'm'));
    assert.match(stdout, /^# fail 0$/m);
    for (const { path } of examples) rmSync(join(app, path));
  });

  it('runs the embed guide\'s server (step 4) with node, on .env: the page, its assets, the API behind a session', { timeout: 2 * HANG_MS }, async () => {
    assert.ok(app, 'the starter was built (npm test builds dist/)');
    writeFileSync(join(app, 'guide-server.js'), exampleStartingWith('docs/guides/embed-an-existing-app.md', '// server.js'));
    // .env as Go live, step 2 says: the example's values, and a session secret of one's own.
    const port = await freePort();
    writeFileSync(join(app, '.env'), readFileSync(join(app, '.env.example'), 'utf8').replace(/^SESSION_SECRET=$/m, `SESSION_SECRET=${randomBytes(32).toString('base64url')}`).replace(/^PORT=.*$/m, `PORT=${port}`));
    const server = started(process.execPath, ['guide-server.js'], app, userEnv());
    try {
      await server.printed(/Listening on port/, 'the listening line');
      const origin = `http://127.0.0.1:${port}`;
      const page = await fetch(`${origin}/`);
      assert.equal(page.status, 200);
      assert.equal(page.headers.get('content-security-policy'), 'frame-ancestors http://127.0.0.1:4010');
      const html = await page.text();
      assert.match(html, /<meta name="mp-host-origins" content="http:\/\/127\.0\.0\.1:4010"/);
      assert.match(html, /<meta name="mp-plan-names" content="\{&quot;free&quot;:&quot;Free&quot;/);
      const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(script, `the built page loads its script from /assets/:\n${html}`);
      const asset = await fetch(`${origin}${script}`);
      assert.equal(asset.status, 200);
      assert.match(asset.headers.get('content-type') ?? '', /^text\/javascript/);
      assert.equal((await fetch(`${origin}/api/hello`)).status, 401, 'the API needs a session');
    } finally {
      rmSync(join(app, 'guide-server.js'));
      rmSync(join(app, '.env'));
      if (server.child.exitCode === null && server.child.signalCode === null) process.kill(-server.child.pid!, 'SIGKILL');
      await server.exited;
    }
  });

  it('npm start (README, step 10): .env.example copied, a SESSION_SECRET of one\'s own, and it serves the built page', { timeout: 2 * HANG_MS }, async () => {
    assert.ok(app, 'the starter was built (npm test builds dist/)');
    const port = await freePort();
    const example = readFileSync(join(app, '.env.example'), 'utf8').replace(/^PORT=.*$/m, `PORT=${port}`);
    try {
      // As copied, SESSION_SECRET is empty: one line says so.
      writeFileSync(join(app, '.env'), example);
      const bare = started('npm', ['start', '--silent'], app, userEnv());
      assert.equal(await within(bare.exited, HANG_MS, `npm start did not stop:\n${bare.out.text}`), 1);
      assert.equal(bare.out.text, 'npm start: Missing in the environment: SESSION_SECRET. Copy .env.example to .env and fill it in.\n');

      writeFileSync(join(app, '.env'), example.replace(/^SESSION_SECRET=$/m, `SESSION_SECRET=${randomBytes(32).toString('base64url')}`));
      const server = started('npm', ['start', '--silent'], app, userEnv());
      try {
        // HOST=127.0.0.1 in .env.example: this machine only.
        await server.printed(new RegExp(`App listening on http://127\\.0\\.0\\.1:${port}\n`), 'the listening line');
        const page = await fetch(`http://127.0.0.1:${port}/`);
        assert.equal(page.status, 200);
        assert.match(await page.text(), /<meta name="mp-plan-names" content="\{&quot;free&quot;:&quot;Free&quot;/);
      } finally {
        if (server.child.exitCode === null && server.child.signalCode === null) process.kill(-server.child.pid!, 'SIGKILL');
        await server.exited;
      }
    } finally {
      rmSync(join(app, '.env'), { force: true });
    }
  });

  it('npm run test:page runs its page test in Chromium, on FakeKit', { timeout: NPM_TIMEOUT_MS }, async () => {
    assert.ok(app, 'the starter was installed');
    const { stdout } = await run('npm', ['run', 'test:page', '--silent'], { cwd: app, timeout: NPM_TIMEOUT_MS, env: userEnv({ CHROME_PATH: chromiumPath() }) }).catch(
      (error: { stdout?: string; stderr?: string }) => assert.fail(`npm run test:page failed:\n${error.stdout}${error.stderr}`),
    );
    assert.match(stdout, /1\/1 test files \| 2 passed, 0 failed/);
  });

  it('npm run dev with the simulator\'s port taken says so in one line, naming how to move it', { timeout: 2 * HANG_MS }, async () => {
    assert.ok(app, 'the starter was installed');
    const { port, server } = await takenPort();
    try {
      const dev = started('npm', ['run', 'dev', '--silent'], app, userEnv({ SIM_PORT: String(port), PORT: String(await freePort()) }));
      const code = await within(dev.exited, HANG_MS, `npm run dev did not stop on a taken port:\n${dev.out.text}`);
      assert.equal(code, 1);
      assert.equal(dev.out.text, `npm run dev: port ${port} (the simulator) is in use. Stop what runs there, or move the simulator: set "port" in mpkit.config.json, or SIM_PORT=4011 npm run dev.\n`);
    } finally {
      server.close();
    }
  });

  it('npm run dev shows the app in the dashboard; upgrading to Pro opens the gate', { timeout: 3 * HANG_MS }, async () => {
    assert.ok(app, 'the starter was installed');
    // Ports of its own, as the README says to move them: the defaults (4010, 3000) may be taken here.
    const port = await freePort();
    dev = spawn('npm', ['run', 'dev'], { cwd: app, detached: true, env: userEnv({ PORT: String(port), SIM_PORT: '0' }), stdio: ['ignore', 'pipe', 'pipe'] });
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
    assert.match((await page.textContent('#plan-list .plan[data-plan="pro_monthly"]')) ?? '', /Pro[\s\S]*\$12 \/ month[\s\S]*Everything in Free, and the CSV export/, 'the config file’s description');
    assert.match((await page.textContent('#plan-list .plan[data-plan="free"]')) ?? '', /^Free\$0No charge(Current plan)?$/, 'how a plan without a description is billed, and nothing invented');
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
