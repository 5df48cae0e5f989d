import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startTestSimulator } from '../support/simulator-harness.js';
import { BUILT_IN_LOCALES } from '../../src/elements/locales/tags.js';

async function dashboardOf(options: Parameters<typeof startTestSimulator>[0]) {
  const sim = await startTestSimulator(options);
  try {
    const response = await fetch(sim.dashboardUrl);
    return { status: response.status, csp: response.headers.get('content-security-policy') ?? '', html: await response.text(), siteUrl: sim.siteUrl };
  } finally {
    await sim.close();
  }
}

describe('simulator dashboard page (HTTP)', () => {
  it('offers in its locale menu a locale of every language the elements have texts in', async () => {
    const { html } = await dashboardOf({ appUrl: 'http://127.0.0.1:5999/embed', hostBundle: new URL(import.meta.url) });
    const menu = /<select id="locale">([\s\S]*?)<\/select>/.exec(html)?.[1] ?? '';
    const offered = [...menu.matchAll(/<option value="([^"]+)"/g)].map((match) => new Intl.Locale(match[1]!).maximize());
    const missing = BUILT_IN_LOCALES.filter((tag) => {
      const wanted = new Intl.Locale(tag).maximize();
      return !offered.some((locale) => locale.language === wanted.language && locale.script === wanted.script);
    });
    assert.deepEqual(missing, []);
    assert.ok(offered.length >= BUILT_IN_LOCALES.length, menu);
  });

  it('allows framing only the app origin and loads the host bridge bundle', async () => {
    // Any existing file stands in for the bundle, so this test does not need a build.
    const { status, csp, html } = await dashboardOf({ appUrl: 'http://127.0.0.1:5999/embed', hostBundle: new URL(import.meta.url) });
    assert.equal(status, 200);
    assert.match(csp, /frame-src http:\/\/127\.0\.0\.1:5999;/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /script-src 'self' 'nonce-[^']+'/);
    assert.match(html, /<script src="\/_simulator\/host\.js"><\/script>/);
    assert.doesNotMatch(html, /id="notice"/);
  });

  it('serves its own script, the type-checked dashboard-app.ts as the build made it (needs npm run build)', async () => {
    const sim = await startTestSimulator({ appUrl: 'http://127.0.0.1:5999/embed', hostBundle: new URL(import.meta.url) });
    try {
      const html = await (await fetch(sim.dashboardUrl)).text();
      assert.match(html, /<script src="\/_simulator\/host\.js"><\/script>\n<script src="\/_simulator\/dashboard\.js"><\/script>/);
      assert.doesNotMatch(html, /<script nonce=/, 'no inline script: the page runs only files');
      const script = await fetch(`${sim.siteUrl}/_simulator/dashboard.js`);
      assert.equal(script.status, 200);
      assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
      const text = await script.text();
      assert.match(text, /connectApp/);
      assert.match(text, /\/_simulator\/stream/);
      assert.equal((await fetch(`${sim.siteUrl}/_simulator/dashboard.js`, { method: 'POST' })).status, 405);
    } finally {
      await sim.close();
    }
  });

  it('names the hostBundle file removed after the start, on the dashboard and in the 404 of its script', async () => {
    // A missing file is refused at start (ERR_CONFIG); one removed later (a rebuild) is named here.
    // The package's own bundle missing (before a build) says "run npm run build"; a path the
    // developer gave is named instead, as that advice would not find the mistake.
    const dir = mkdtempSync(join(tmpdir(), 'mp-host-bundle-'));
    const bundle = join(dir, 'marketplace-host.js');
    writeFileSync(bundle, '');
    const sim = await startTestSimulator({ appUrl: 'http://127.0.0.1:5999/', hostBundle: bundle });
    try {
      rmSync(dir, { recursive: true });
      const html = await (await fetch(sim.dashboardUrl)).text();
      assert.ok(html.includes(`<code>${bundle}</code> (the hostBundle option) was not found`), html);
      assert.doesNotMatch(html, /_simulator\/host\.js/);
      const script = await fetch(`${sim.siteUrl}/_simulator/host.js`);
      assert.equal(script.status, 404);
      assert.deepEqual(await script.json(), { error: { code: 'host_bundle_missing', message: `${bundle} (the hostBundle option) is missing.` } });
    } finally {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('explains what to do without an app URL, and refuses to frame an app on its own origin', async () => {
    // Any existing file stands in for the host bridge bundle, so this test does not need a build.
    const hostBundle = new URL(import.meta.url);
    const none = await dashboardOf({ hostBundle });
    assert.match(none.html, /No app URL configured/);
    assert.match(none.csp, /frame-src 'none'/);
    const sim = await startTestSimulator({ hostBundle });
    try {
      sim.configure({ app_url: `${sim.siteUrl}/app` });
      const html = await (await fetch(sim.dashboardUrl)).text();
      assert.match(html, /must run on another origin/);
      assert.match((await fetch(sim.dashboardUrl)).headers.get('content-security-policy') ?? '', /frame-src 'none'/);
    } finally {
      await sim.close();
    }
  });

  it('sends pages reached through localhost to the 127.0.0.1 origin the context tokens name', async () => {
    const sim = await startTestSimulator();
    try {
      const port = new URL(sim.siteUrl).port;
      const response = await fetch(`http://localhost:${port}/dashboard?user=usr_ada`, { redirect: 'manual' });
      assert.equal(response.status, 302);
      assert.equal(response.headers.get('location'), `${sim.dashboardUrl}?user=usr_ada`);
      const root = await fetch(`${sim.siteUrl}/`, { redirect: 'manual' });
      assert.equal(root.headers.get('location'), '/dashboard');
    } finally {
      await sim.close();
    }
  });
});
