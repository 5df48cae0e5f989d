import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, type TestContext } from 'node:test';
import { createMarketplaceClient } from '../../src/server/index.js';
import { Profile } from '../../src/shared/schemas.js';
import type { Simulator } from '../../src/simulator/index.js';
import { codeFor } from '../support/simulator-harness.js';
import { HANG_MS } from '../support/waiting.js';

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

function start(args: string[], nodeArgs: string[] = []): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, CLI, ...args], { stdio: 'pipe' });
}

/** Each test that keeps a simulator running: a hang guard, so that a regression fails instead of hanging. */
const RUNNING = { timeout: 3 * HANG_MS };

/**
 * Starts the CLI for one test and stops it however the test ends: `finally` covers a failed
 * assertion, the test's abort signal covers its timeout (a `finally` never runs after one).
 */
async function withCli(t: TestContext, args: string[], use: (child: ChildProcessWithoutNullStreams) => Promise<void>): Promise<void> {
  const child = start(args);
  const kill = () => child.kill('SIGKILL');
  t.signal.addEventListener('abort', kill, { once: true });
  try {
    await use(child);
  } finally {
    t.signal.removeEventListener('abort', kill);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  }
}

/** Runs the CLI to its end; one still running after a hang guard is stopped, so a test expecting an exit fails instead of hanging. */
async function run(args: string[], nodeArgs: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = start(args, nodeArgs);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  let timedOut = false;
  const deadline = setTimeout(() => ((timedOut = true), child.kill('SIGTERM')), HANG_MS);
  const [code] = await once(child, 'exit');
  clearTimeout(deadline);
  assert.ok(!timedOut, `mpkit ${args.join(' ')} was still running after ${HANG_MS / 1000} s: ${stdout}${stderr}`);
  return { code, stdout, stderr };
}

/** Runs `each` on every case, four at a time: a process per case all at once is 19 tsx start-ups. */
async function fourAtATime<T>(cases: T[], each: (item: T) => Promise<void>): Promise<void> {
  const queue = [...cases];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await each(item);
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

/** Resolves with stdout once it holds `until`. */
function readUntil(child: ChildProcessWithoutNullStreams, until: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      if (until.test(text)) resolve(text);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before printing ${until}: ${text}`)));
  });
}

describe('mpkit CLI', () => {
  it('--json prints exactly one JSON line once ready; Ctrl-C stops it cleanly', RUNNING, async (t) => {
    const args = ['simulate', '--port', '0', '--json', '--app-url', 'http://127.0.0.1:5999/', '--redirect-uri', 'http://127.0.0.1:5999/cb', '--redirect-uri', 'http://127.0.0.1:5999/cb2'];
    await withCli(t, args, async (child) => {
      const output = await readUntil(child, /\n/);
      const lines = output.trimEnd().split('\n');
      assert.equal(lines.length, 1);
      const info = JSON.parse(lines[0]!);
      assert.deepEqual(Object.keys(info), ['site_url', 'base_url', 'dashboard_url', 'client_id', 'client_secret', 'test_api_key', 'live_api_key', 'webhook_secret', 'app_name', 'plans', 'users']);
      assert.match(info.site_url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(info.base_url, `${info.site_url}/api/v1`);
      assert.equal(info.dashboard_url, `${info.site_url}/dashboard`);
      assert.match(info.test_api_key, /^test_/);
      assert.match(info.live_api_key, /^live_/);
      for (const user of info.users) Profile.parse(user);

      const whoami = await fetch(`${info.base_url}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': info.test_api_key } });
      assert.equal(whoami.status, 200);
      const config = await (await fetch(`${info.site_url}/_simulator/config`)).json();
      assert.deepEqual(config.redirect_uris, ['http://127.0.0.1:5999/cb', 'http://127.0.0.1:5999/cb2']);

      let rest = '';
      child.stdout.on('data', (chunk) => (rest += chunk));
      child.kill('SIGINT');
      const [code] = await once(child, 'exit');
      assert.equal(code, 0);
      assert.equal(rest, '');
      await assert.rejects(fetch(`${info.site_url}/dashboard`));
    });
  });

  it('prints the URLs and the made-up credentials for people, and uses fixed ones when given', RUNNING, async (t) => {
    await withCli(t, ['simulate', '--port', '0', '--client-id', 'client_fixed', '--test-api-key', 'test_fixed'], async (child) => {
      const output = await readUntil(child, /Ctrl-C/);
      for (const label of ['Site URL', 'Dashboard', 'Client ID', 'Client Secret', 'Test API key', 'Live API key', 'Webhook secret']) {
        assert.match(output, new RegExp(label));
      }
      // Each credential says where it came from: a flag, or made up for this run.
      assert.match(output, /^Credentials:\n/m);
      assert.match(output, /Client ID\s+client_fixed {2}\(fixed by --client-id\)\n/);
      assert.match(output, /Test API key\s+test_fixed {2}\(fixed by --test-api-key\)\n/);
      assert.match(output, /Client Secret\s+secret_\S+ {2}\(made up for this run\)\n/);
      assert.match(output, /usr_grace\s+Grace Hopper, pro_monthly \(trialing\)/);
      child.kill('SIGTERM');
      assert.deepEqual(await once(child, 'exit'), [0, null]);
    });
  });

  it('uses every credential and URL it is given', RUNNING, async (t) => {
    const fixed = {
      'client-id': 'client_cli',
      'client-secret': 'secret_cli_0123456789',
      'test-api-key': 'test_cli_key',
      'live-api-key': 'live_cli_key',
      'webhook-secret': 'whsec_cli_0123456789',
    };
    const flags = Object.entries(fixed).flatMap(([flag, value]) => [`--${flag}`, value]);
    await withCli(t, ['simulate', '--port', '0', '--json', ...flags, '--app-url', 'http://127.0.0.1:5999/embed', '--webhook-url', 'http://127.0.0.1:5998/hooks'], async (child) => {
      const info = JSON.parse(await readUntil(child, /\n/));
      assert.deepEqual(
        [info.client_id, info.client_secret, info.test_api_key, info.live_api_key, info.webhook_secret],
        Object.values(fixed),
      );
      const live = await fetch(`${info.base_url}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': 'live_cli_key' } });
      assert.equal(live.status, 200);
      assert.deepEqual(await (await fetch(`${info.site_url}/_simulator/config`)).json(), {
        app_url: 'http://127.0.0.1:5999/embed',
        webhook_url: 'http://127.0.0.1:5998/hooks',
        redirect_uris: ['http://127.0.0.1:5999/api/marketplace/oauth/callback'],
      });
    });
  });

  it('tries port 4010 when no --port is given, and says what to do when it is taken', async () => {
    // Hold 4010 so the outcome does not depend on this machine: if something else has it already,
    // the simulator meets the same EADDRINUSE.
    const holder = createServer();
    await new Promise<void>((resolve) => {
      holder.once('error', () => resolve());
      holder.listen(4010, '127.0.0.1', () => resolve());
    });
    try {
      const { code, stdout, stderr } = await run(['simulate', '--json']);
      assert.equal(code, 1);
      assert.equal(stdout, '');
      assert.equal(stderr, 'mpkit: port 4010 is in use (is another simulator running?): pick another with --port, or --port 0 for a free one.\n');
    } finally {
      if (holder.listening) await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('--rate-limit N answers the N+1st API call of a minute with 429', RUNNING, async (t) => {
    await withCli(t, ['simulate', '--port', '0', '--json', '--rate-limit', '2'], async (child) => {
      const info = JSON.parse(await readUntil(child, /\n/));
      const call = () => fetch(`${info.base_url}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': info.test_api_key } });
      assert.deepEqual([(await call()).status, (await call()).status], [200, 200]);
      const refused = await call();
      assert.equal(refused.status, 429);
      assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/);
      // The limit is for every kind of caller, the live key included.
      const live = () => fetch(`${info.base_url}/whoami?user_id=usr_ada`, { headers: { 'x-api-key': info.live_api_key } });
      assert.deepEqual([(await live()).status, (await live()).status, (await live()).status], [200, 200, 429]);
    });
  });

  it('--rate-limit N limits OAuth access tokens too, and each API call is logged as a line', RUNNING, async (t) => {
    const callback = 'http://127.0.0.1:9/callback';
    const args = ['simulate', '--port', '0', '--rate-limit', '2', '--client-id', 'client_cli', '--client-secret', 'secret_cli_0123456789', '--redirect-uri', callback];
    await withCli(t, args, async (child) => {
      const output = await readUntil(child, /Ctrl-C/);
      const siteUrl = /Site URL\s+(\S+)/.exec(output)![1]!;
      const logged = readUntil(child, /\b200 POST \/api\/oauth\/token\b/);
      const sim = { siteUrl, clientId: 'client_cli' } as Simulator;
      const client = createMarketplaceClient({ siteUrl, clientId: 'client_cli', clientSecret: 'secret_cli_0123456789' });
      const { accessToken } = await client.exchangeCode({ code: await codeFor(sim, { redirectUri: callback }), redirectUri: callback });
      await logged;
      const call = async () => (await fetch(`${siteUrl}/api/v1/whoami`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
      assert.deepEqual([await call(), await call(), await call()], [200, 200, 429]);
    });
  });

  it('--help shows the usage for mpkit and mpkit simulate', async () => {
    for (const args of [['--help'], ['simulate', '--help'], ['-h']]) {
      const { code, stdout } = await run(args);
      assert.equal(code, 0);
      assert.match(stdout, /^Usage: mpkit simulate \[options\]/);
      for (const flag of ['--port', '--app-url', '--redirect-uri', '--webhook-url', '--rate-limit', '--json', '--version']) assert.ok(stdout.includes(flag), flag);
    }
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const args of [['--version'], ['simulate', '-v']]) {
      const { code, stdout, stderr } = await run(args);
      assert.deepEqual({ code, stdout, stderr }, { code: 0, stdout: `${version}\n`, stderr: '' }, args.join(' '));
    }
  });

  it('says what to do when the port needs privileges mpkit lacks', async () => {
    // listen() fails as it would for a port below 1024 without privileges: no other user, no root needed.
    const eacces = `import net from 'node:net';
net.Server.prototype.listen = function () {
  const error = Object.assign(new Error('listen EACCES: permission denied 127.0.0.1:80'), { code: 'EACCES', syscall: 'listen' });
  process.nextTick(() => this.emit('error', error));
  return this;
};`;
    const { code, stdout, stderr } = await run(['simulate', '--port', '80'], ['--import', `data:text/javascript,${encodeURIComponent(eacces)}`]);
    assert.deepEqual(
      { code, stdout, stderr },
      { code: 1, stdout: '', stderr: 'mpkit: port 80 needs privileges mpkit lacks (below 1024, it usually does): pick one from 1024 up with --port, or --port 0 for a free one.\n' },
    );
  });

  it('answers a bad flag, value or command with one line, a pointer to --help and exit code 2', async () => {
    const cases: [string[], string][] = [
      [['simulate', '--bogus'], "Unknown option '--bogus'."],
      [['simulate', '--port', 'eighty'], '--port must be a whole number from 0 to 65535, not "eighty".'],
      [['simulate', '--port', '70000'], '--port must be a whole number from 0 to 65535, not "70000".'],
      [['simulate', '--port', '65536'], '--port must be a whole number from 0 to 65535, not "65536".'],
      // A negative number is the flag's value, refused as such (parseArgs alone calls it ambiguous).
      [['simulate', '--port', '-1'], '--port must be a whole number from 0 to 65535, not "-1".'],
      [['simulate', '--port=-1'], '--port must be a whole number from 0 to 65535, not "-1".'],
      [['simulate', '--rate-limit', '-5'], '--rate-limit must be a whole number, 1 or more, not "-5".'],
      // Only a flag that takes a value takes the negative number: after --json it is an option of its own.
      [['simulate', '--json', '-1'], "Unknown option '-1'."],
      [['simulate', '--app-url', 'not-a-url'], '--app-url must be an absolute http(s) URL, not "not-a-url".'],
      [['simulate', '--redirect-uri', 'javascript:alert(1)'], '--redirect-uri must be an absolute http(s) URL, not "javascript:alert(1)".'],
      [['simulate', '--webhook-url', 'ftp://x'], '--webhook-url must be an absolute http(s) URL, not "ftp://x".'],
      [['simulate', '--rate-limit', '0'], '--rate-limit must be a whole number, 1 or more, not "0".'],
      [['simulate', '--rate-limit', '5/min'], '--rate-limit must be a whole number, 1 or more, not "5/min".'],
      [['simulate', 'extra'], 'Unexpected argument "extra".'],
      [['simulate', '--client-id='], '--client-id must not be empty.'],
      [['simulate', '--webhook-secret', ''], '--webhook-secret must not be empty.'],
      [['simulate', '--test-api-key='], '--test-api-key must not be empty.'],
      [['launch'], 'Unknown command "launch".'],
      [[], 'Missing command.'],
    ];
    await fourAtATime(cases, async ([args, message]) => {
      const { code, stderr, stdout } = await run(args);
      assert.deepEqual({ code, stderr, stdout }, { code: 2, stderr: `mpkit: ${message}\nRun mpkit --help for usage.\n`, stdout: '' }, args.join(' '));
    });
    // A flag that takes a value, given none, is still one line.
    const missing = await run(['simulate', '--app-url', '--json']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^mpkit: Option '--app-url' argument is ambiguous\. [^\n]*\nRun mpkit --help for usage\.\n$/);
  });

  it('answers a value the simulator refuses with one line naming the flag, and exit code 1', async () => {
    const cases: [string[], string][] = [
      // The key itself is not repeated: it may be a real one.
      [['simulate', '--test-api-key', 'live_realLookingSecret123'], '--test-api-key must start with test_'],
      [['simulate', '--live-api-key', 'test_realLookingSecret123'], '--live-api-key must start with live_'],
      [['simulate', '--live-api-key', 'live_'], '--live-api-key must go on after live_: the prefix alone is no key'],
      [['simulate', '--app-url', 'http://127.0.0.1:3000/#top'], '--app-url must be an absolute http(s) URL without a fragment, got "http://127.0.0.1:3000/#top"'],
      [['simulate', '--webhook-url', 'http://127.0.0.1:3000/h#x'], '--webhook-url must be an absolute http(s) URL without a fragment, got "http://127.0.0.1:3000/h#x"'],
      [['simulate', '--redirect-uri', 'http://127.0.0.1:3000/cb', '--redirect-uri', 'http://127.0.0.1:3000/cb#x'], '--redirect-uri must be an absolute http(s) URL without a fragment, got "http://127.0.0.1:3000/cb#x"'],
    ];
    await fourAtATime(cases, async ([args, message]) => {
      const { code, stderr, stdout } = await run(args);
      assert.deepEqual({ code, stderr, stdout }, { code: 1, stderr: `mpkit: ${message}\n`, stdout: '' }, args.join(' '));
    });
  });

  it('logs a delivery that Ctrl-C cuts short as stopped by the shutdown', RUNNING, async (t) => {
    let arrived!: () => void;
    const waiting = new Promise<void>((resolve) => (arrived = resolve));
    const receiver = createHttpServer(() => arrived());
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    t.after(() => {
      receiver.closeAllConnections();
      receiver.close();
    });
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await withCli(t, ['simulate', '--port', '0', '--webhook-url', hook], async (child) => {
      const output = await readUntil(child, /Ctrl-C/);
      const siteUrl = /Site URL\s+(\S+)/.exec(output)![1]!;
      let rest = '';
      child.stdout.on('data', (chunk) => (rest += chunk));
      const event = fetch(`${siteUrl}/_simulator/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'subscription.created', data: { user_id: 'usr_ada', plan: 'pro_monthly' } }),
      }).catch(() => undefined);
      await waiting;
      child.kill('SIGINT');
      assert.deepEqual(await once(child, 'exit'), [0, null]);
      await event;
      assert.match(rest, /webhook subscription\.created stopped: the simulator is shutting down \(1 attempt\)\n/);
      assert.doesNotMatch(rest, /aborted/);
      assert.match(rest, /Simulator stopped\.\n$/);
    });
  });
});

/** The "Scripts" snippet of docs/simulator.md, run as a shell script in a directory of its own where `./node_modules/.bin/mpkit` is this CLI. */
describe('the docs snippet for scripts', () => {
  const doc = readFileSync(new URL('../../docs/simulator.md', import.meta.url), 'utf8');
  const snippet = /```sh\n(# Scripts:[\s\S]*?)```/.exec(doc)?.[1];

  async function runSnippet(t: TestContext, port: number, prepare: (dir: string) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
    assert.ok(snippet, 'docs/simulator.md: no sh block starting with "# Scripts:"');
    assert.match(snippet, /mpkit simulate /);
    const dir = mkdtempSync(join(tmpdir(), 'mpkit-snippet-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
    const tsx = import.meta.resolve('tsx');
    writeFileSync(join(dir, 'node_modules/.bin/mpkit'), `#!/bin/sh\nexec "${process.execPath}" --import "${tsx}" "${CLI}" "$@"\n`, { mode: 0o755 });
    prepare(dir);
    // Where the snippet stopped, the script tells what it read and stops the simulator.
    const script = `${snippet.replace('mpkit simulate ', `mpkit simulate --port ${port} `)}\necho "site=$MP_SITE_URL"\nkill $!\nwait $!\n`;
    const child = spawn('bash', ['-c', script], { cwd: dir, stdio: 'pipe' });
    const kill = () => child.kill('SIGKILL');
    t.signal.addEventListener('abort', kill, { once: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    t.signal.removeEventListener('abort', kill);
    return { code, stdout, stderr };
  }

  it('reads the sim.json of this run, never one left by an earlier run', RUNNING, async (t) => {
    for (let run = 0; run < 3; run++) {
      const { code, stdout, stderr } = await runSnippet(t, 0, (dir) => writeFileSync(join(dir, 'sim.json'), JSON.stringify({ site_url: 'http://stale.invalid' })));
      assert.equal(code, 0, stderr);
      assert.match(stdout, /^site=http:\/\/127\.0\.0\.1:\d+\n$/);
    }
  });

  it('stops with an error when mpkit cannot start, instead of waiting forever', RUNNING, async (t) => {
    const holder = createServer();
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    t.after(() => holder.close());
    const { code, stdout, stderr } = await runSnippet(t, (holder.address() as AddressInfo).port, () => {});
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.match(stderr, /^mpkit: port \d+ is in use[^\n]*\nmpkit simulate failed\n$/);
  });
});
