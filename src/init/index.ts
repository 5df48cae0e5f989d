/**
 * `mpkit init <dir>`: writes a starter app (templates/starter/) into a new or empty directory: a
 * node:http server on `marketplace-app-kit/server`, one Vite page with the elements, a simulator
 * config with credentials of its own (the same on every run), `.env.example`, one test that
 * launches the app through the simulator and one page test in Chromium. The guide around it: docs/guides/embed-an-existing-app.md.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MarketplaceKitError } from '../shared/errors.js';
import { randomToken } from '../server/oauth.js';

/** The starter's files, beside src/ and dist/ in the package (the same path from both). */
const TEMPLATE = fileURLToPath(new URL('../../templates/starter/', import.meta.url));
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Files stored under another name: npm leaves `.gitignore` out of a package, and dotfiles are easy to lose. */
const RENAMED: Record<string, string> = { gitignore: '.gitignore', 'env.example': '.env.example' };

/**
 * The starter's tools, at the ranges this package is built and tested with (its devDependencies):
 * Vite builds the page; @web/test-runner and @open-wc/testing run its page test in Chromium.
 */
export const STARTER_TOOLS: Readonly<Record<string, string>> = { vite: '^8.3.8', '@web/test-runner': '^1.0.0', '@open-wc/testing': '^5.0.0' };

/** A package name npm accepts, from the directory's name: `My App!` → `my-app`. */
export function packageName(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '');
  return name.slice(0, 214) || 'marketplace-app';
}

/** The app's display name, from the package name: `field-notes` → `Field notes`. */
export function appName(name: string): string {
  const words = name.replace(/[-_.]+/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : 'My app';
}

/**
 * How the starter depends on this package: the published version when it runs from an install
 * (npx, node_modules), or this very directory when it runs from a clone, as before the package is
 * on npm.
 */
function kitDependency(version: string): string {
  return PACKAGE_ROOT.split(sep).includes('node_modules') ? `^${version}` : `file:${PACKAGE_ROOT.replace(/[\\/]$/, '')}`;
}

/** The simulator's config: the app, three plans, three users and credentials made up once, here. */
function simulatorConfig(name: string, credentials: Record<string, string>): string {
  const config = {
    $schema: './node_modules/marketplace-app-kit/dist/mpkit.config.schema.json',
    appName: name,
    appUrl: 'http://127.0.0.1:3000/',
    port: 4010,
    ...credentials,
    plans: [
      { id: 'free', name: 'Free', kind: 'free', usageLimit: 100 },
      { id: 'pro_monthly', name: 'Pro', description: 'Everything in Free, and the CSV export', kind: 'monthly', price: 12, features: ['export'], usageLimit: 10000 },
      { id: 'pro_annual', name: 'Pro (annual)', description: 'Pro, paid for a year', kind: 'annual', price: 120, features: ['export'], usageLimit: 10000 },
    ],
    users: [
      { id: 'usr_ada', name: 'Ada Lovelace', plan: 'free' },
      { id: 'usr_grace', name: 'Grace Hopper', plan: 'pro_monthly', status: 'trialing', expiresInDays: 14 },
      { id: 'usr_alan', name: 'Alan Turing', plan: 'pro_annual', apiCalls: 8120 },
      { id: 'usr_linus', name: 'Linus Pauling', plan: null },
    ],
  };
  // One plan or user a line: the file reads as a table.
  return `${JSON.stringify(config, null, 2).replace(/\{\n\s+("id"[\s\S]*?)\n\s+\}/g, (_, body: string) => `{ ${body.replace(/\n\s+/g, ' ')} }`)}\n`;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

/**
 * Writes the starter into `dir` (made if missing; refused if it holds anything) and answers what
 * to do next.
 *
 * @example
 * process.stdout.write(await init('my-app'));
 */
export async function init(dir: string): Promise<string> {
  const target = resolve(dir);
  if (existsSync(target) && (!statSync(target).isDirectory() || readdirSync(target).length > 0)) {
    throw new MarketplaceKitError('ERR_CONFIG', `${dir} is not empty: give mpkit init a new or empty directory`);
  }
  const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
  const name = packageName(target);
  const display = appName(name);
  const credentials = {
    clientId: randomToken('client_', 12),
    clientSecret: randomToken('secret_', 32),
    testApiKey: randomToken('test_'),
    liveApiKey: randomToken('live_'),
    webhookSecret: randomToken('whsec_', 24),
  };
  const fill = (text: string) =>
    text
      .replaceAll('__APP_NAME__', display)
      .replaceAll('__CLIENT_ID__', credentials.clientId)
      .replaceAll('__CLIENT_SECRET__', credentials.clientSecret)
      .replaceAll('__TEST_API_KEY__', credentials.testApiKey)
      .replaceAll('__WEBHOOK_SECRET__', credentials.webhookSecret);

  mkdirSync(target, { recursive: true });
  for (const file of files(TEMPLATE)) {
    const path = relative(TEMPLATE, file);
    const out = join(target, RENAMED[path] ?? path);
    mkdirSync(join(out, '..'), { recursive: true });
    writeFileSync(out, fill(readFileSync(file, 'utf8')));
  }
  writeFileSync(join(target, 'mpkit.config.json'), simulatorConfig(display, credentials));
  const pkg = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: '>=20.12' },
    scripts: {
      dev: 'node dev.js',
      build: 'vite build',
      start: 'node server.js',
      test: 'vite build --logLevel warn && node --test test/app.test.js',
      'test:page': 'wtr',
    },
    dependencies: { 'marketplace-app-kit': kitDependency(version) },
    devDependencies: { ...STARTER_TOOLS },
  };
  writeFileSync(join(target, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);

  // As the user wrote it.
  const shown = dir;
  return `Wrote ${display} to ${shown}.

  cd ${shown}
  npm install
  npm run dev         the local marketplace with your app inside: open the dashboard it prints
  npm test            the simulator launches your app, on the free plan and on Pro
  npm run test:page   the page's elements in Chromium, on FakeKit

Your plans and test users are in mpkit.config.json; the server is server.js; the page is
index.html and src/main.js.
`;
}
