#!/usr/bin/env node
/**
 * `mpkit`: the kit's command line. `mpkit simulate` starts the local marketplace simulator
 * (docs/decisions.md#simulator) and prints where it runs and its credentials; `mpkit init <dir>`
 * writes a starter app (docs/guides/embed-an-existing-app.md).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { isKitError } from './shared/errors.js';
import { CONFIG_FILE, loadSimulatorConfig, startSimulator, type Simulator, type SimulatorEvent, type SimulatorOptions } from './simulator/index.js';
import { resolveOptions } from './simulator/options.js';

const USAGE = `Usage: mpkit simulate [options]
       mpkit init <dir>

mpkit simulate starts a local marketplace on 127.0.0.1: authorization page, token endpoint,
/whoami, /entitlements, signed webhooks, and a dashboard that embeds your app. It reads
${CONFIG_FILE} from the current directory when there is one: the app's name, its plans,
fixed credentials and users. Flags win over the file.

mpkit init <dir> writes a starter app into <dir> (a new or empty directory).

Options:
  --config FILE         Read the simulator's settings from FILE (default: ${CONFIG_FILE}, if present)
  --port N              Port to listen on (default 4010; 0 picks a free port)
  --app-url URL         Your app's embed URL, shown in the dashboard's iframe
  --redirect-uri URL    A registered OAuth Redirect URI (repeat for several; matched exactly)
                        Default: <app origin>/api/marketplace/oauth/callback
  --webhook-url URL     Where webhook deliveries go
                        Default: <app origin>/api/marketplace/webhooks
  --client-id ID        Use this Client ID instead of a made-up one
  --client-secret S     Use this Client Secret instead of a made-up one
  --test-api-key KEY    Use this test_ API key instead of a made-up one
  --live-api-key KEY    Use this live_ API key instead of a made-up one
  --webhook-secret S    Use this webhook secret instead of a made-up one
  --rate-limit N        Allow N API requests per minute for each key kind (test, live)
                        and for each user's OAuth tokens together, to see your app
                        meet 429s (default: test 100, live 1000, per user 1000)
  --json                Print one JSON line with URLs and credentials once ready, nothing else
  -h, --help            Show this help
  -v, --version         Show the version of marketplace-app-kit

Commands:
  mpkit simulate        Start the simulator
  mpkit init <dir>      Write a starter app into <dir>
`;

const OPTIONS = {
  config: { type: 'string' },
  port: { type: 'string' },
  'app-url': { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'webhook-url': { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  'test-api-key': { type: 'string' },
  'live-api-key': { type: 'string' },
  'webhook-secret': { type: 'string' },
  'rate-limit': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** The flag behind each option mpkit sets, so that a refused value is named as the user wrote it. */
const FLAGS: Record<string, string> = {
  port: '--port',
  appUrl: '--app-url',
  redirectUris: '--redirect-uri',
  webhookUrl: '--webhook-url',
  clientId: '--client-id',
  clientSecret: '--client-secret',
  testApiKey: '--test-api-key',
  liveApiKey: '--live-api-key',
  webhookSecret: '--webhook-secret',
  'rateLimits.test': '--rate-limit',
  'rateLimits.live': '--rate-limit',
  'rateLimits.bearer': '--rate-limit',
};

/** `redirectUris[1]` → `--redirect-uri`: the value in the message says which one. */
function flagOf(option: string): string {
  return FLAGS[option.replace(/\[\d+\]$/, '')] ?? option;
}

class UsageError extends Error {}

function fail(message: string): never {
  throw new UsageError(message);
}

function parsePort(value: string | undefined): number {
  if (value === undefined) return 4010;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) fail(`--port must be a whole number from 0 to 65535, not "${value}".`);
  return port;
}

function parseRateLimit(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || !Number.isSafeInteger(limit)) fail(`--rate-limit must be a whole number, 1 or more, not "${value}".`);
  return limit;
}

function parseUrl(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // Reported below.
  }
  return fail(`${flag} must be an absolute http(s) URL, not "${value}".`);
}

/**
 * `--port -1` as `--port=-1`: no flag looks like a negative number, so the value is meant, and its
 * own check then says what is wrong with it (parseArgs would call it ambiguous).
 */
function negativeValuesJoined(args: string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const takesValue = arg.startsWith('--') && OPTIONS[arg.slice(2) as keyof typeof OPTIONS]?.type === 'string';
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

type Parsed =
  | { command: 'help' }
  | { command: 'version' }
  | { command: 'init'; dir: string }
  | { command: 'simulate'; json: boolean; configFile: string | undefined; simulator: SimulatorOptions };

function options(args: string[]): Parsed {
  let parsed;
  try {
    parsed = parseArgs({ args: negativeValuesJoined(args), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's advice on positionals that start with '-' means nothing here (mpkit takes none).
    fail((error as Error).message.replace(/\. To specify a positional argument[\s\S]*$/, '.').replace(/\n/g, ' '));
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: 'help' };
  if (values.version) return { command: 'version' };
  const [command, ...extra] = positionals;
  if (command === undefined) fail('Missing command.');
  if (command === 'init') {
    const flag = Object.keys(values)[0];
    if (flag !== undefined) fail(`mpkit init takes no options, got --${flag}.`);
    if (extra.length === 0) fail('mpkit init needs a directory, as in: mpkit init my-app');
    if (extra.length > 1) fail(`Unexpected argument "${extra[1]}".`);
    return { command: 'init', dir: extra[0]! };
  }
  if (command !== 'simulate') fail(`Unknown command "${command}".`);
  if (extra.length > 0) fail(`Unexpected argument "${extra[0]}".`);
  const simulator: SimulatorOptions = {};
  if (values.port !== undefined) simulator.port = parsePort(values.port);
  const appUrl = parseUrl(values['app-url'], '--app-url');
  const webhookUrl = parseUrl(values['webhook-url'], '--webhook-url');
  if (appUrl) simulator.appUrl = appUrl;
  if (webhookUrl) simulator.webhookUrl = webhookUrl;
  if (values['redirect-uri']) simulator.redirectUris = values['redirect-uri'].map((uri) => parseUrl(uri, '--redirect-uri')!);
  // An empty value (`--client-id=$CLIENT_ID` with the variable unset) is refused, not replaced by
  // a made-up credential that the app's .env then does not match.
  for (const flag of ['client-id', 'client-secret', 'webhook-secret', 'test-api-key', 'live-api-key', 'config'] as const) {
    if (values[flag] !== undefined && !values[flag].trim()) fail(`--${flag} must not be empty.`);
  }
  if (values['client-id']) simulator.clientId = values['client-id'];
  if (values['client-secret']) simulator.clientSecret = values['client-secret'];
  if (values['webhook-secret']) simulator.webhookSecret = values['webhook-secret'];
  if (values['test-api-key']) simulator.testApiKey = values['test-api-key'];
  if (values['live-api-key']) simulator.liveApiKey = values['live-api-key'];
  if (values['rate-limit'] !== undefined) {
    const limit = parseRateLimit(values['rate-limit']);
    simulator.rateLimits = { test: limit, live: limit, bearer: limit };
  }
  // Without --config, the file of the working directory, when there is one.
  const configFile = values.config ?? (existsSync(CONFIG_FILE) ? CONFIG_FILE : undefined);
  return { command: 'simulate', json: values.json ?? false, configFile, simulator };
}

/**
 * The options from the config file with the flags over them, and how to name each option in a
 * message: by its flag when a flag gave it, by the file and its field when the file did.
 */
function merged(
  configFile: string | undefined,
  flags: SimulatorOptions,
): { simulator: SimulatorOptions; nameOf: (option: string) => string; sourceOf: (option: string) => string | null } {
  const file: SimulatorOptions = configFile ? loadSimulatorConfig(configFile) : {};
  const simulator: SimulatorOptions = { ...file, ...flags, port: flags.port ?? file.port ?? 4010 };
  if (flags.rateLimits && file.rateLimits) simulator.rateLimits = { ...file.rateLimits, ...flags.rateLimits };
  const fromFlags = new Set(Object.keys(flags));
  const nameOf = (option: string) => {
    const top = option.replace(/[[.].*$/, '');
    if (fromFlags.has(top) && FLAGS[option.replace(/\[\d+\]$/, '')]) return flagOf(option);
    return configFile && top in file ? `${configFile}: ${option}` : option;
  };
  /** The flag or the file that gave a top-level option, or null when neither did. */
  const sourceOf = (option: string) => (fromFlags.has(option) ? flagOf(option) : configFile && option in file ? configFile : null);
  return { simulator, nameOf, sourceOf };
}

/** The credentials the banner shows, by option name and label. */
const CREDENTIALS = [
  ['clientId', 'Client ID'],
  ['clientSecret', 'Client Secret'],
  ['testApiKey', 'Test API key'],
  ['liveApiKey', 'Live API key'],
  ['webhookSecret', 'Webhook secret'],
] as const;

/**
 * Where each credential came from: the config file, a flag, or made up for this run. Fixed ones
 * are the same on every run; made-up ones change with each start, so an app's .env cannot keep them.
 */
function credentialsBlock(sim: Simulator, sourceOf: (option: string) => string | null): string {
  const rows = CREDENTIALS.map(([option, label]) => ({ label, value: sim[option], source: sourceOf(option) }));
  const sources = new Set(rows.map((row) => row.source));
  const line = ({ label, value }: { label: string; value: string }) => `  ${label.padEnd(16)}${value}`;
  if (sources.size === 1) {
    const [source] = sources;
    const heading = source === null ? `Credentials for this run (made up; fix them in ${CONFIG_FILE} or with flags to keep them):` : `Credentials (fixed by ${source}: the same on every run):`;
    return `${heading}\n${rows.map(line).join('\n')}`;
  }
  return `Credentials:\n${rows.map((row) => `${line(row)}  (${row.source === null ? 'made up for this run' : `fixed by ${row.source}`})`).join('\n')}`;
}

function banner(sim: Simulator, configFile: string | undefined, sourceOf: (option: string) => string | null): string {
  const { config } = sim.state();
  const rows = (pairs: [string, string][]) => pairs.map(([label, value]) => `  ${label.padEnd(16)}${value}`).join('\n');
  const users = sim.users
    .map((user) => {
      const e = sim.entitlement(user.id);
      return `  ${user.id.padEnd(16)}${user.name}, ${e ? `${e.plan} (${e.status})` : 'no entitlement'}`;
    })
    .join('\n');
  const plans = sim.plans.map((plan) => `  ${plan.id.padEnd(16)}${plan.name}, ${plan.price}${plan.features.length ? ` (${plan.features.join(', ')})` : ''}`).join('\n');
  return `Marketplace simulator running. Nothing here touches a real service.

${rows([
  ['App', sim.appName],
  ['Config file', configFile ?? `(none: ${CONFIG_FILE} or --config FILE)`],
  ['Site URL', sim.siteUrl],
  ['API base URL', sim.baseUrl],
  ['Dashboard', sim.dashboardUrl],
  ['App URL', config.app_url ?? '(none: pass --app-url)'],
  ['Redirect URIs', config.redirect_uris.join(', ') || '(none: pass --redirect-uri)'],
  ['Webhook URL', config.webhook_url ?? '(none: pass --webhook-url)'],
])}

${credentialsBlock(sim, sourceOf)}

Plans:
${plans}

Users:
${users}

Control API: ${sim.siteUrl}/_simulator/state  ·  Press Ctrl-C to stop.
`;
}

/** `stopping`: Ctrl-C was pressed, so a delivery that ends now was cut short, not failed by the receiver. */
function logLine(event: SimulatorEvent, stopping: boolean): string | null {
  const time = new Date().toISOString().slice(11, 19);
  switch (event.type) {
    case 'api_call': {
      const call = event.data;
      return `${time}  ${call.status} ${call.method} ${call.path} (${call.auth}${call.user_id ? `, ${call.user_id}` : ''})`;
    }
    case 'delivery': {
      const d = event.data;
      const attempts = `${d.attempts.length} attempt${d.attempts.length === 1 ? '' : 's'}`;
      if (stopping && d.outcome === 'failed') return `${time}  webhook ${d.event} stopped: the simulator is shutting down (${attempts})`;
      const last = d.attempts.at(-1);
      const answer = last ? (last.status ?? last.error) : 'no webhook URL';
      return `${time}  webhook ${d.event} ${d.outcome} (${answer}, ${attempts})`;
    }
    case 'entitlement':
      return `${time}  entitlement of ${event.data.user_id}: ${event.data.entitlement ? `${event.data.entitlement.plan} (${event.data.entitlement.status})` : 'none'}`;
    case 'config':
      return `${time}  config changed`;
  }
}

/** The library's messages name the function (`startSimulator: …`) and its options: here, mpkit is speaking. */
function startError(error: Error, port: number | undefined): string {
  switch ((error.cause as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return `port ${port} is in use (is another simulator running?): pick another with --port, or --port 0 for a free one.`;
    case 'EACCES':
      return `port ${port} needs privileges mpkit lacks (below 1024, it usually does): pick one from 1024 up with --port, or --port 0 for a free one.`;
    default:
      return error.message.replace(/^startSimulator: /, '');
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = options(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`mpkit: ${error.message}\nRun mpkit --help for usage.\n`);
    return 2;
  }
  if (parsed.command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (parsed.command === 'version') {
    // The package's own package.json: one level above both src/cli.ts and dist/cli.js.
    const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(`${version}\n`);
    return 0;
  }
  if (parsed.command === 'init') {
    const { init } = await import('./init/index.js');
    try {
      process.stdout.write(await init(parsed.dir));
      return 0;
    } catch (error) {
      if (!isKitError(error, 'ERR_CONFIG')) throw error;
      process.stderr.write(`mpkit: ${error.message}\n`);
      return 1;
    }
  }
  let sim: Simulator;
  let simulator: SimulatorOptions = parsed.simulator;
  let sourceOf: (option: string) => string | null = () => null;
  try {
    const options = merged(parsed.configFile, parsed.simulator);
    simulator = options.simulator;
    sourceOf = options.sourceOf;
    // The same checks startSimulator makes, first with the names the user wrote (flags, file fields).
    resolveOptions(simulator, options.nameOf);
    sim = await startSimulator(simulator);
  } catch (error) {
    if (!isKitError(error, 'ERR_CONFIG')) throw error;
    process.stderr.write(`mpkit: ${startError(error, simulator.port)}\n`);
    return 1;
  }
  // Listen for Ctrl-C before announcing readiness: a script may signal as soon as it reads the line.
  let stopping = false;
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      stopping = true;
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  if (parsed.json) {
    process.stdout.write(
      `${JSON.stringify({
        site_url: sim.siteUrl,
        base_url: sim.baseUrl,
        dashboard_url: sim.dashboardUrl,
        client_id: sim.clientId,
        client_secret: sim.clientSecret,
        test_api_key: sim.testApiKey,
        live_api_key: sim.liveApiKey,
        webhook_secret: sim.webhookSecret,
        app_name: sim.appName,
        plans: sim.plans,
        users: sim.users,
      })}\n`,
    );
  } else {
    process.stdout.write(banner(sim, parsed.configFile, sourceOf));
    sim.subscribe((event) => {
      const line = logLine(event, stopping);
      if (line) process.stdout.write(`${line}\n`);
    });
  }
  await stopped;
  await sim.close();
  if (!parsed.json) process.stdout.write('Simulator stopped.\n');
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
