// The sample app's backend (demo/backend.ts), which app developers copy: Request in, Response out,
// against the simulator as its marketplace. It imports `marketplace-app-kit/server` by name, so
// it runs on the build (`npm test` builds first).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSampleBackend, type SampleBackend } from '../../demo/backend.js';
import { signSessionToken, signWebhookBody } from '../../src/server/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startTestSimulator } from '../support/simulator-harness.js';

const APP = 'http://127.0.0.1:5173';
const SESSION_SECRET = 'demo-session-secret-0123456789-abcdefghij';

let sim: Simulator;
let sample: SampleBackend;
const logged: string[] = [];

/** The sample backend on the simulator's credentials, with the marketplace at `siteUrl`. */
const sampleAt = (siteUrl: string) =>
  createSampleBackend({
    siteUrl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    apiKey: sim.testApiKey,
    webhookSecret: sim.webhookSecret,
    hostOrigins: [sim.siteUrl],
    publicOrigin: APP,
    sessionSecret: SESSION_SECRET,
    log: (line) => void logged.push(line),
  });

before(async () => {
  sim = await startTestSimulator();
  sample = sampleAt(sim.siteUrl);
});
after(() => sim.close());

/** A session of `userId`, as the backend mints it, issued `agoMs` before now. */
async function session(userId: string, agoMs = 0): Promise<string> {
  const user = sim.users.find((candidate) => candidate.id === userId)!;
  const { token } = await signSessionToken({ secret: SESSION_SECRET, audience: sim.clientId, user, appId: sim.appId, host: sim.siteUrl, now: Date.now() - agoMs });
  return token;
}

const api = (path: string, token: string, init: RequestInit = {}) =>
  sample.handle(new Request(`${APP}/api${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } }));

async function deliver(event: string, data: Record<string, unknown>): Promise<number> {
  const body = JSON.stringify({ event, timestamp: new Date().toISOString(), data });
  const answer = await sample.handle(
    new Request(`${APP}/api/marketplace/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, sim.webhookSecret) } }),
  );
  return answer.status;
}

describe('sample backend (demo/backend.ts)', () => {
  it('refuses a session issued before the user revoked access, and takes one from a later launch', async () => {
    const before = await session('usr_alan', 5_000);
    assert.equal((await api('/notes', before)).status, 200);
    assert.equal(await deliver('user.revoked', { user_id: 'usr_alan' }), 200);
    for (const path of ['/notes', '/activity']) {
      const refused = await api(path, before);
      assert.equal(refused.status, 401, path);
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'ERR_SESSION_REVOKED');
    }
    const note = JSON.stringify({ title: 'after the revoke' });
    const written = await api('/notes', before, { method: 'POST', body: note, headers: { 'content-type': 'application/json', 'content-length': String(note.length) } });
    assert.equal(written.status, 401);
    // The marketplace launched the app again: a session issued from then on is the user's new start.
    await new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() % 1_000) + 5));
    const later = await session('usr_alan');
    const notes = (await (await api('/notes', later)).json()) as { notes: { title: string }[] };
    assert.deepEqual(notes.notes.map((note) => note.title), ['Welcome to Field Notes']);
  });

  it('exports CSV with every field quoted, so no cell a spreadsheet splits off starts a formula', async () => {
    await sim.sendEvent('subscription.created', { user_id: 'usr_katherine', plan: 'lifetime' });
    const token = await session('usr_katherine');
    const body = JSON.stringify({ title: '=HYPERLINK("x")', body: 'total;=1+1;@SUM(2+2)' });
    const posted = await api('/notes', token, { method: 'POST', body, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } });
    assert.equal(posted.status, 201);
    const csv = await (await api('/notes/export.csv', token)).text();
    const [header, first] = csv.split('\r\n');
    assert.equal(header, '"created_at","title","body"');
    assert.match(first!, /^"[^"]+","'=HYPERLINK\(""x""\)","total;=1\+1;@SUM\(2\+2\)"$/);
  });

  it('logs a marketplace failure on its own routes (a 5xx the kit\'s onError does not see there)', async () => {
    const broken = sampleAt('http://127.0.0.1:9'); // nothing listens there
    const token = await session('usr_katherine');
    const before = logged.length;
    const answer = await broken.handle(new Request(`${APP}/api/notes/export.csv`, { headers: { authorization: `Bearer ${token}` } }));
    assert.equal(answer.status, 502);
    assert.match(logged.slice(before).join('\n'), /^502 on GET \/api\/notes\/export\.csv: MarketplaceApiError/m);
  });
});
