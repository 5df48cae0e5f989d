// The simulator's config file (mpkit.config.json, or --config FILE) and the plans and users it
// gives: one schema reads the file and checks startSimulator's options; a mistake is one
// ERR_CONFIG that names the file and the field; the plans reach the state, the control API, the
// events, the dashboard's catalogue and the plan names; mpkit simulate reads the file.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { isKitError } from '../../src/shared/errors.js';
import { loadSimulatorConfig, startSimulator, type Simulator, type SimulatorConfigFile } from '../../src/simulator/index.js';
import { FIXED, startTestSimulator } from '../support/simulator-harness.js';

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
/** tsx by its path: mpkit runs in directories without node_modules. */
const TSX = import.meta.resolve('tsx');

const PLANS: NonNullable<SimulatorConfigFile['plans']> = [
  { id: 'hobby', name: 'Hobby', kind: 'free', usageLimit: 50 },
  { id: 'pro_monthly', name: 'Pro', description: 'For notes worth exporting', kind: 'monthly', price: 9.5, currency: 'EUR', features: ['export'], usageLimit: 5_000 },
  { id: 'pro_annual', name: 'Pro (annual)', kind: 'annual', price: 90, features: ['export', 'reports'], usageLimit: 5_000 },
  { id: 'forever', name: 'Forever', kind: 'one-time', price: 199, features: ['export', 'reports', 'api'], usageLimit: 50_000 },
];

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'mpkit-config-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `content` (an object as JSON, or text as it is) to a file of the test's directory. */
function configFile(name: string, content: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(isKitError(error, 'ERR_CONFIG'), `expected ERR_CONFIG, got ${String(error)}`);
    return error.message;
  }
  return assert.fail('no error');
}

describe('simulator config file', () => {
  it('reads the options, the plans and the users, with their defaults', () => {
    const file = configFile('good.json', {
      $schema: './node_modules/marketplace-app-kit/dist/mpkit.config.schema.json',
      appName: 'Field Notes',
      appUrl: 'http://127.0.0.1:3000/embed',
      ...FIXED,
      plans: PLANS,
      users: [{ id: 'usr_ada', name: 'Ada Lovelace', plan: 'hobby' }],
    });
    const options = loadSimulatorConfig(file);
    assert.equal('$schema' in options, false, 'the schema address is for editors only');
    assert.equal(options.appName, 'Field Notes');
    assert.equal(options.plans?.[3]?.kind, 'one_time', '"one-time" is read as one_time');
    assert.deepEqual(options.users, [{ id: 'usr_ada', name: 'Ada Lovelace', plan: 'hobby' }]);
  });

  const MISTAKES: Array<[string, unknown, RegExp]> = [
    ['a plan of an unknown kind', { plans: [{ id: 'x', name: 'X', kind: 'weekly', usageLimit: 1 }] }, /^bad\.json: plans\[0\]\.kind must be free, monthly, annual or one_time, got "weekly"$/],
    ['a plan without its usage limit', { plans: [{ id: 'x', name: 'X', kind: 'free' }] }, /^bad\.json: plans\[0\]\.usageLimit is required$/],
    ['a misspelt field', { plans: [{ id: 'x', name: 'X', kind: 'free', usage_limit: 1 }] }, /^bad\.json: plans\[0\] has an unknown field "usage_limit"$/],
    ['an unknown top-level field', { app_name: 'X' }, /^bad\.json: has an unknown field "app_name"$/],
    ['a plan id with a space', { plans: [{ id: 'pro plan', name: 'Pro', kind: 'monthly', usageLimit: 1 }] }, /^bad\.json: plans\[0\]\.id must be 1 to 100 letters.*got "pro plan"$/],
    ['a negative price', { plans: [{ id: 'x', name: 'X', kind: 'monthly', price: -1, usageLimit: 1 }] }, /^bad\.json: plans\[0\]\.price must be a number of at least 0, got -1$/],
    ['an empty plan description', { plans: [{ id: 'x', name: 'X', description: ' ', kind: 'free', usageLimit: 1 }] }, /^bad\.json: plans\[0\]\.description must be a non-empty text of at most 200 characters/],
    ['a lower-case currency', { plans: [{ id: 'x', name: 'X', kind: 'monthly', currency: 'usd', usageLimit: 1 }] }, /^bad\.json: plans\[0\]\.currency must be a three-letter currency code/],
    ['two plans with one id', { plans: [PLANS[0], { ...PLANS[1], id: 'hobby' }] }, /^bad\.json: plans\[1\]\.id repeats "hobby"/],
    ['a user on a plan the list lacks', { plans: PLANS, users: [{ id: 'usr_ada', name: 'Ada', plan: 'free' }] }, /^bad\.json: users\[0\]\.plan must be one of the plans \(hobby, pro_monthly, pro_annual, forever\) or null, got "free"$/],
    ['a user id of another shape', { users: [{ id: 'ada', name: 'Ada' }] }, /^bad\.json: users\[0\]\.id must be a user id of the form usr_<id>, got "ada"$/],
    ['an empty plan list', { plans: [] }, /^bad\.json: plans must hold at least one plan$/],
    ['a port as text', { port: '4010' }, /^bad\.json: port must be a number, got "4010"$/],
    ['an app id of another shape', { appId: 'notes' }, /^bad\.json: appId must look like app_<id>, got "notes"$/],
  ];
  for (const [what, content, message] of MISTAKES) {
    it(`refuses ${what}, naming the field`, () => {
      const file = configFile('bad.json', content);
      const text = configError(() => loadSimulatorConfig(file));
      assert.match(text.replace(file, 'bad.json'), message);
    });
  }

  it('refuses a missing file, text that is not JSON, and JSON that is not an object', () => {
    assert.match(configError(() => loadSimulatorConfig(join(dir, 'none.json'))), /none\.json: cannot read the config file .*there is no such file/);
    assert.match(configError(() => loadSimulatorConfig(configFile('text.json', '{ "appName": "X", }'))), /text\.json: not valid JSON/);
    assert.match(configError(() => loadSimulatorConfig(configFile('list.json', '[]'))), /list\.json: must hold one JSON object, got an array/);
  });

  it('is checked by startSimulator too: plans and users given as options', async () => {
    await assert.rejects(startSimulator({ port: 0, plans: [{ id: 'x', name: 'X', kind: 'free', usageLimit: -1 }] }), {
      code: 'ERR_CONFIG',
      message: 'startSimulator: plans[0].usageLimit must be a whole number of at least 0, got -1',
    });
  });
});

describe('a simulator on the config file’s plans', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startTestSimulator({
      appName: 'Field Notes',
      plans: PLANS,
      users: [
        { id: 'usr_ada', name: 'Ada Lovelace', plan: 'hobby', apiCalls: 3 },
        { id: 'usr_grace', name: 'Grace Hopper', email: 'grace@navy.example', plan: 'pro_monthly', status: 'trialing', expiresInDays: 14 },
        { id: 'usr_bob', name: 'Bob <Tables>' },
      ],
    });
  });
  after(() => sim?.close());

  it('serves the plans as its catalogue, with display prices, and gives their names', () => {
    const { plans, app_name } = sim.state();
    assert.equal(app_name, 'Field Notes');
    assert.deepEqual(
      plans.map((plan) => [plan.id, plan.name, plan.description, plan.kind, plan.price, plan.limit, plan.periodDays]),
      [
        // The description given, or how the plan is billed: nothing the file did not say.
        ['hobby', 'Hobby', 'No charge', 'free', '$0', 50, null],
        ['pro_monthly', 'Pro', 'For notes worth exporting', 'monthly', '€9.50 / month', 5_000, 30],
        ['pro_annual', 'Pro (annual)', 'Billed yearly', 'annual', '$90 / year', 5_000, 365],
        ['forever', 'Forever', 'Paid once', 'one_time', '$199 once', 50_000, null],
      ],
    );
    assert.deepEqual(sim.planNames, { hobby: 'Hobby', pro_monthly: 'Pro', pro_annual: 'Pro (annual)', forever: 'Forever' });
    assert.deepEqual(sim.plans.map((plan) => plan.id), ['hobby', 'pro_monthly', 'pro_annual', 'forever']);
  });

  it('starts its users on their plans', () => {
    assert.deepEqual(sim.users.map((user) => [user.id, user.email]), [
      ['usr_ada', 'ada@example.test'],
      ['usr_grace', 'grace@navy.example'],
      ['usr_bob', 'bob@example.test'],
    ]);
    const ada = sim.entitlement('usr_ada');
    assert.deepEqual([ada?.plan, ada?.status, ada?.features, ada?.usage, ada?.expires_at], ['hobby', 'active', [], { api_calls: 3, limit: 50 }, null]);
    const grace = sim.entitlement('usr_grace');
    assert.equal(grace?.status, 'trialing');
    const days = (Date.parse(grace!.expires_at!) - Date.now()) / 86_400_000;
    assert.ok(days > 13.9 && days <= 14, `Grace's trial ends in ${days} days`);
    assert.equal(sim.entitlement('usr_bob'), null);
  });

  it('escapes a user’s name in the avatar it draws', async () => {
    const svg = await (await fetch(`${sim.siteUrl}/avatars/usr_bob.svg`)).text();
    assert.match(svg, /aria-label="B&lt;"/);
    assert.doesNotMatch(svg, /<T/);
  });

  it('sells its plans: subscription.created gives the plan’s features, limit and period', async () => {
    const outcome = await sim.sendEvent('subscription.created', { user_id: 'usr_ada', plan: 'pro_annual' });
    assert.deepEqual(outcome.entitlement?.features, ['export', 'reports']);
    assert.equal(outcome.entitlement?.usage.limit, 5_000);
    assert.equal(outcome.entitlement?.usage.api_calls, 3, 'usage carries over');
    const days = (Date.parse(outcome.entitlement!.expires_at!) - Date.now()) / 86_400_000;
    assert.ok(days > 364.9 && days <= 365, `the annual plan ends in ${days} days`);
  });

  it('asks for one of its plans to give a user without an entitlement one', async () => {
    const url = `${sim.siteUrl}/_simulator/users/usr_bob/entitlement`;
    const put = (body: unknown) => fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const refused = await put({ plan: 'free' });
    assert.equal(refused.status, 400);
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, /give a plan \(hobby, pro_monthly, pro_annual, forever\)/);
    const given = await put({ plan: 'forever' });
    assert.equal(given.status, 200);
    assert.deepEqual(((await given.json()) as { features: string[] }).features, ['export', 'reports', 'api']);
  });
});

describe('the built-in users on plans of one’s own', () => {
  it('start each on the first plan of the kind they had, or on none', async () => {
    const sim = await startTestSimulator({ plans: [PLANS[1]!, PLANS[2]!] });
    try {
      const plans = Object.fromEntries(sim.users.map((user) => [user.id, sim.entitlement(user.id)?.plan ?? null]));
      assert.deepEqual(plans, { usr_ada: null, usr_grace: 'pro_monthly', usr_alan: 'pro_annual', usr_katherine: null, usr_linus: null });
      assert.equal(sim.entitlement('usr_grace')?.status, 'trialing');
    } finally {
      await sim.close();
    }
  });
});

describe('mpkit simulate and the config file', () => {
  /** Runs `mpkit simulate --port 0` in `cwd` until its output holds `until`, then stops it. */
  async function outputUntil(cwd: string, args: string[], until: string): Promise<string> {
    const child = spawn(process.execPath, ['--import', TSX, CLI, 'simulate', '--port', '0', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    let errors = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
    const exited = once(child, 'exit');
    while (!output.includes(until)) {
      const result = await Promise.race([once(child.stdout, 'data').then(() => null), exited.then(([code]) => code)]);
      if (result !== null) assert.fail(`mpkit exited (${String(result)}): ${errors}`);
    }
    child.kill('SIGINT');
    await exited;
    return output;
  }
  /** Its JSON line (`--json`). */
  const jsonLine = async (cwd: string, args: string[]) => JSON.parse(await outputUntil(cwd, ['--json', ...args], '\n')) as Record<string, unknown>;
  /** Its banner, for people. */
  const banner = (cwd: string) => outputUntil(cwd, [], 'Ctrl-C');

  it('reads mpkit.config.json from the working directory, and --config FILE; flags win over the file', { timeout: 60_000 }, async () => {
    const project = mkdtempSync(join(dir, 'project-'));
    writeFileSync(join(project, 'mpkit.config.json'), JSON.stringify({ appName: 'Field Notes', ...FIXED, plans: PLANS }));
    const found = await jsonLine(project, []);
    assert.equal(found.app_name, 'Field Notes');
    assert.equal(found.client_id, FIXED.clientId);
    assert.deepEqual((found.plans as Array<{ id: string }>).map((plan) => plan.id), ['hobby', 'pro_monthly', 'pro_annual', 'forever']);

    const other = configFile('other.json', { appName: 'Other app', clientId: 'client_other' });
    const given = await jsonLine(project, ['--config', other, '--client-id', 'client_flag']);
    assert.equal(given.app_name, 'Other app');
    assert.equal(given.client_id, 'client_flag');
    assert.deepEqual((given.plans as Array<{ id: string }>).map((plan) => plan.id), ['free', 'pro_monthly', 'pro_annual', 'lifetime']);
  });

  it('says the credentials the file fixes are fixed, and which ones are made up for this run', { timeout: 60_000 }, async () => {
    const project = mkdtempSync(join(dir, 'project-'));
    writeFileSync(join(project, 'mpkit.config.json'), JSON.stringify({ ...FIXED, liveApiKey: 'live_fixed_key' }));
    const fixed = await banner(project);
    assert.match(fixed, /^Credentials \(fixed by mpkit\.config\.json: the same on every run\):\n {2}Client ID {7}client_/m);
    assert.doesNotMatch(fixed, /for this run/);

    const { liveApiKey: _made, ...some } = { ...FIXED, liveApiKey: 'live_fixed_key' };
    writeFileSync(join(project, 'mpkit.config.json'), JSON.stringify(some));
    const mixed = await banner(project);
    assert.match(mixed, /^Credentials:\n/m);
    assert.match(mixed, new RegExp(`Client ID {7}${FIXED.clientId} {2}\\(fixed by mpkit\\.config\\.json\\)\n`));
    assert.match(mixed, /Live API key {4}live_\S+ {2}\(made up for this run\)\n/);
  });

  it('stops on a bad config with one line that names the file and the field (exit 1)', async () => {
    const file = configFile('wrong.json', { plans: [{ id: 'x', name: 'X', kind: 'weekly', usageLimit: 1 }] });
    const run = promisify(execFile)(process.execPath, ['--import', TSX, CLI, 'simulate', '--config', file]);
    const error = (await run.then(() => assert.fail('mpkit started'), (e: unknown) => e)) as { code: number; stderr: string };
    assert.equal(error.code, 1);
    assert.equal(error.stderr, `mpkit: ${file}: plans[0].kind must be free, monthly, annual or one_time, got "weekly"\n`);
  });

  it('names the file’s field when the simulator refuses a value the file gave', async () => {
    const file = configFile('url.json', { appUrl: 'http://127.0.0.1:3000/#app' });
    const run = promisify(execFile)(process.execPath, ['--import', TSX, CLI, 'simulate', '--config', file]);
    const error = (await run.then(() => assert.fail('mpkit started'), (e: unknown) => e)) as { code: number; stderr: string };
    assert.equal(error.code, 1);
    assert.match(error.stderr, new RegExp(`^mpkit: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: appUrl must be an absolute http\\(s\\) URL without a fragment`));
  });
});
