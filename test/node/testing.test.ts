// marketplace-app-kit/testing as an app's tests use it: the signers make what the kit verifies,
// the test simulator starts from a config file and launches a user on a plan into a real
// createAppBackend, and a browser bundle of the entry holds FakeKit alone (no Node module).
// The entry is imported by name, through the package's exports map: `npm run build` first.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAppBackend, jsonResponse, toErrorResponse, toNodeHandler, verifyContextToken, verifySessionToken, verifyWebhook } from 'marketplace-app-kit/server';
import {
  isKitError,
  signContextToken,
  signSessionToken,
  startTestSimulator,
  webhookDelivery,
  webhookRequest,
  type TestSimulator,
} from 'marketplace-app-kit/testing';
import { bundle, root } from '../support/bundles.js';

const SECRET = 'whsec_0123456789abcdef';
const user = { id: 'usr_ada', email: 'ada@example.test', name: 'Ada Lovelace', avatar_url: 'https://avatars.example/ada.svg' };

describe('marketplace-app-kit/testing: signers', () => {
  it('signs webhook deliveries that verifyWebhook accepts, and a backend handles as a Request', async () => {
    const { body, headers } = webhookDelivery({ secret: SECRET, event: 'user.revoked', data: { user_id: 'usr_ada' } });
    const delivery = await verifyWebhook(body, headers['x-service-signature'], { secret: SECRET });
    assert.deepEqual([delivery.event, delivery.data], ['user.revoked', { user_id: 'usr_ada' }]);
    await assert.rejects(verifyWebhook(body, headers['x-service-signature'], { secret: 'whsec_another' }), { code: 'ERR_WEBHOOK_SIGNATURE_MISMATCH' });

    const events: string[] = [];
    const backend = createAppBackend({
      siteUrl: 'http://127.0.0.1:9',
      clientId: 'client_test',
      clientSecret: 'secret_test_0123456789abcdef',
      apiKey: 'test_key',
      webhookSecret: SECRET,
      sessionSecret: 'a session secret of at least 32 characters',
      hostOrigins: ['http://127.0.0.1:9'],
      onEvent: (received) => void events.push(received.event),
    });
    const request = () => webhookRequest('http://app.test/api/marketplace/webhooks', { secret: SECRET, event: 'user.authorized', data: { user_id: 'usr_ada' } });
    assert.equal((await backend(request())).status, 200);
    assert.deepEqual(events, ['user.authorized']);
  });

  it('stamps a delivery with the time it is given, which the receiver judges', async () => {
    const old = webhookDelivery({ secret: SECRET, event: 'user.revoked', data: { user_id: 'usr_ada' }, now: Date.now() - 3_600_000 });
    await assert.rejects(verifyWebhook(old.body, old.headers['x-service-signature'], { secret: SECRET }), { code: 'ERR_WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE' });
    assert.throws(() => webhookDelivery({ secret: SECRET, event: '', data: {} }), { code: 'ERR_CONFIG' });
  });

  it('signs context tokens and sessions that the server module verifies', async () => {
    const context = await signContextToken({ clientId: 'client_1', clientSecret: 'secret_1', issuer: 'https://marketplace.example', host: 'https://dashboard.example', appId: 'app_1', user });
    const claims = await verifyContextToken(context, { clientId: 'client_1', clientSecret: 'secret_1', issuer: 'https://marketplace.example' });
    assert.equal(claims.sub, 'usr_ada');
    const secret = 'a session secret of at least 32 characters';
    const { token } = await signSessionToken({ secret, audience: 'client_1', user, appId: 'app_1', host: null });
    assert.equal((await verifySessionToken(token, { secret, audience: 'client_1' })).userId, 'usr_ada');
  });
});

describe('marketplace-app-kit/testing: simulator helpers', () => {
  let dir: string;
  let sim: TestSimulator;
  let app: Server;
  let appUrl: string;
  const received: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mpkit-testing-'));
    const config = join(dir, 'mpkit.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        appName: 'Field Notes',
        port: 4010, // not taken by a test simulator: it takes a free port
        clientId: 'client_notes',
        clientSecret: 'secret_notes_0123456789abcdef',
        testApiKey: 'test_notes_0123456789',
        webhookSecret: SECRET,
        plans: [
          { id: 'free', name: 'Free', kind: 'free', usageLimit: 100 },
          { id: 'pro_monthly', name: 'Pro', kind: 'monthly', price: 12, features: ['export'], usageLimit: 10_000 },
        ],
        users: [{ id: 'usr_ada', name: 'Ada Lovelace', plan: 'free' }],
      }),
    );
    // The app first, on a free port: the simulator needs its address.
    app = createServer();
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    sim = await startTestSimulator({ config, appUrl: `${appUrl}/embed` });
    const backend = createAppBackend({
      siteUrl: sim.siteUrl,
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      apiKey: sim.testApiKey,
      webhookSecret: sim.webhookSecret,
      sessionSecret: 'a session secret of at least 32 characters',
      hostOrigins: [new URL(sim.dashboardUrl).origin],
      onEvent: (delivery) => void received.push(delivery.event),
    });
    app.on(
      'request',
      toNodeHandler(async (request) => {
        const { pathname } = new URL(request.url);
        if (pathname.startsWith(`${backend.basePath}/`)) return backend(request);
        if (pathname === '/api/export') {
          try {
            await backend.requireEntitlement(request, { feature: 'export' });
            return jsonResponse({ exported: true });
          } catch (error) {
            return toErrorResponse(error);
          }
        }
        return new Response('Not found', { status: 404 });
      }),
    );
  });
  after(async () => {
    await sim?.close();
    await new Promise((resolve) => app?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts from the config file, on a free port', () => {
    assert.equal(sim.appName, 'Field Notes');
    assert.equal(sim.clientId, 'client_notes');
    assert.notEqual(new URL(sim.siteUrl).port, '4010');
    assert.deepEqual(sim.planNames, { free: 'Free', pro_monthly: 'Pro' });
  });

  it('gives the address the dashboard loads for a user', async () => {
    const url = new URL(await sim.launchUrl('usr_ada', { theme: 'dark', locale: 'fr-FR', path: '/embed/reports?x=1' }));
    assert.equal(`${url.origin}${url.pathname}`, `${appUrl}/embed/reports`);
    assert.equal(url.searchParams.get('x'), '1');
    assert.equal(url.searchParams.get('mp_host'), new URL(sim.dashboardUrl).origin);
    assert.deepEqual([url.searchParams.get('mp_theme'), url.searchParams.get('mp_locale')], ['dark', 'fr-FR']);
    const claims = await verifyContextToken(url.searchParams.get('mp_context')!, { clientId: sim.clientId, clientSecret: sim.clientSecret, issuer: sim.siteUrl });
    assert.equal(claims.sub, 'usr_ada');
  });

  it('launches a user on a plan into the app: the backend sees the plan, its cache dropped by the webhook', async () => {
    const free = await sim.launchSession('usr_ada');
    assert.equal(free.entitlement?.plan, 'free');
    assert.equal((await free.fetch('/api/export')).status, 403);

    const pro = await sim.launchSession('usr_ada', { plan: 'pro_monthly' });
    assert.equal(pro.entitlement?.plan, 'pro_monthly');
    assert.deepEqual(pro.entitlement?.features, ['export']);
    assert.ok(received.includes('subscription.created'), 'the app received the purchase');
    assert.equal((await pro.fetch('/api/export')).status, 200);
  });

  it('says what is wrong: a plan the simulator lacks, a backend that refuses', async () => {
    await assert.rejects(sim.launchSession('usr_ada', { plan: 'pro' }), (error) => isKitError(error, 'ERR_INVALID_INPUT') && /its plans: free, pro_monthly/.test(error.message));
    await assert.rejects(sim.launchSession('usr_ada', { backend: '/nowhere' }), (error) => isKitError(error, 'ERR_HTTP') && error.status === 404);
  });
});

describe('marketplace-app-kit/testing in a browser bundle', () => {
  it('resolves to FakeKit alone: nothing of Node, the server or the simulator', async () => {
    // A project outside the repository with the package "installed", bundled as an app's page.
    const project = mkdtempSync(join(tmpdir(), 'mpkit-testing-bundle-'));
    try {
      mkdirSync(join(project, 'node_modules'));
      symlinkSync(root, join(project, 'node_modules/marketplace-app-kit'), 'dir');
      writeFileSync(join(project, 'page.js'), "import { FakeKit } from 'marketplace-app-kit/testing';\nwindow.kit = new FakeKit();\n");
      const built = await bundle({ configFile: false, root: project, build: { lib: { entry: join(project, 'page.js'), formats: ['es'], fileName: 'page' } } });
      const kit = built.modules.filter((id) => id.includes('/dist/'));
      assert.ok(kit.some((id) => id.endsWith('/dist/testing/fake-kit.js')), `FakeKit is bundled: ${kit.join(', ')}`);
      assert.deepEqual(kit.filter((id) => /\/dist\/(server|simulator)\/|\/dist\/testing\/(index|simulator|signers)\.js$/.test(id)), []);
      assert.deepEqual(built.modules.filter((id) => id.startsWith('node:') || id.includes('__vite-browser-external')), []);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('gives Node the signers and the simulator helpers instead', async () => {
    const node = await import('marketplace-app-kit/testing');
    assert.equal(typeof node.startTestSimulator, 'function');
    assert.equal('FakeKit' in node, false, 'FakeKit is browser code');
  });
});
