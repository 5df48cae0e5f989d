// One test of the whole path, as the marketplace runs it: the simulator launches a user into your
// app (the page, then the session exchange, as the dashboard and the kit do), and the paid route
// follows the user's plan. `npm test` builds the page first. Docs: marketplace-app-kit's
// docs/guides/testing-your-app.md.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startTestSimulator } from 'marketplace-app-kit/testing';
import { simulatorSettings, startServer } from '../server.js';

let sim;
let server;

before(async () => {
  // Your plans, users and credentials, on a free port; then your server on its credentials.
  sim = await startTestSimulator({ config: fileURLToPath(new URL('../mpkit.config.json', import.meta.url)) });
  server = await startServer({ port: 0, settings: simulatorSettings(sim) });
  sim.configure({
    app_url: `${server.url}/`,
    webhook_url: `${server.url}/api/marketplace/webhooks`,
    redirect_uris: [`${server.url}/api/marketplace/oauth/callback`],
  });
});

after(async () => {
  await server?.close();
  await sim?.close();
});

test('the dashboard launches the app: the page, which only the dashboard may frame', async () => {
  const page = await fetch(await sim.launchUrl('usr_ada'));
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('content-security-policy'), `frame-ancestors ${new URL(sim.dashboardUrl).origin}`);
  assert.match(await page.text(), /<mp-gate feature="export">/);
});

test('the export follows the plan: refused on Free, allowed once the user buys Pro', async () => {
  const free = await sim.launchSession('usr_ada', { plan: 'free' });
  assert.equal(free.entitlement?.plan, 'free');
  assert.deepEqual(await (await free.fetch('/api/hello')).json(), { message: 'Hello, Ada Lovelace!' });
  assert.equal((await free.fetch('/api/export.csv')).status, 403);

  const pro = await sim.launchSession('usr_ada', { plan: 'pro_monthly' });
  assert.equal(pro.entitlement?.plan, 'pro_monthly');
  const csv = await pro.fetch('/api/export.csv');
  assert.equal(csv.status, 200);
  assert.match(await csv.text(), /^user,exported_at\nusr_ada,/);
});
