// `npm start` as a new user runs it (after `npm run build`, which `npm test` does before the e2e
// suites): demo/start.ts prints the URLs, serves them, names a port that is taken, and stops on Ctrl-C.
import assert from 'node:assert/strict';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { spawnStart, type StartProcess } from '../support/demo-process.js';

const started: StartProcess[] = [];
after(() => {
  for (const child of started) child.kill('SIGKILL');
});

function start(env: Record<string, string>): StartProcess {
  const child = spawnStart(env);
  started.push(child);
  return child;
}

const FREE = { DEMO_SIMULATOR_PORT: '0', DEMO_BACKEND_PORT: '0', DEMO_VITE_PORT: '0' };

describe('npm start (demo/start.ts)', () => {
  it('prints the three URLs, serves them, and stops cleanly on Ctrl-C', async () => {
    const child = start(FREE);
    const output = await child.waitForOutput(/Developer-site page.*\n/);
    const url = (label: string) => {
      const match = output.match(new RegExp(`${label}\\s+(http://127\\.0\\.0\\.1:\\d+\\S*)`));
      assert.ok(match, `no ${label} URL in:\n${output}`);
      return match[1]!;
    };
    const dashboard = url('Dashboard with the sample app');
    const gallery = url('Component gallery');
    const site = url('Developer-site page \\(sign-in\\)');

    const dashboardPage = await fetch(dashboard);
    assert.equal(dashboardPage.status, 200);
    assert.match(await dashboardPage.text(), /<iframe|app-frame|Field Notes/i);
    const galleryPage = await fetch(gallery);
    assert.equal(galleryPage.status, 200);
    assert.match(await galleryPage.text(), /src="\.\/gallery\.ts"/);
    const sitePage = await fetch(site);
    assert.equal(sitePage.status, 200);
    const siteHtml = await sitePage.text();
    assert.match(siteHtml, /src="\/cdn\/marketplace-app-kit\.js"/);
    const home = await fetch(url('Start page'));
    assert.equal(home.status, 200);
    assert.match(await home.text(), new RegExp(`href="${dashboard}"`), 'the start page does not link the dashboard');
    const bundle = await fetch(new URL('/cdn/marketplace-app-kit.js', site));
    assert.equal(bundle.status, 200);
    assert.match(bundle.headers.get('content-type') ?? '', /javascript/);

    // The app page may only be framed by the simulator's dashboard.
    const app = await fetch(new URL('/app.html', site));
    assert.equal(app.status, 200);
    assert.match(app.headers.get('content-security-policy') ?? '', new RegExp(`frame-ancestors[^;]*${new URL(dashboard).origin}`));
    // It is opened with ?mp_context=…: what it loads must not be sent that address.
    assert.equal(app.headers.get('referrer-policy'), 'no-referrer');
    // Under every other spelling a static server takes for the same file, too.
    for (const spelling of ['//app.html', '/%61pp.html', '/./app.html']) {
      const headers = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
        const { hostname, port } = new URL(site);
        httpGet({ hostname, port, path: spelling }, (answer) => {
          answer.resume();
          resolve(answer.headers);
        }).on('error', reject);
      });
      assert.match(String(headers['content-security-policy'] ?? ''), /frame-ancestors/, spelling);
      assert.equal(headers['referrer-policy'], 'no-referrer', spelling);
    }

    const code = await child.interrupt();
    assert.equal(code, 0, child.output());
    assert.match(child.output(), /Stopped\./);
    await assert.rejects(fetch(gallery), 'the Vite server still answers after Ctrl-C');
    await assert.rejects(fetch(dashboard), 'the simulator still answers after Ctrl-C');
  });

  for (const ttl of ['0', '901', '1.5']) {
    it(`refuses DEMO_SESSION_TTL=${ttl} with a message, before starting anything`, async () => {
      const child = start({ ...FREE, DEMO_SESSION_TTL: ttl });
      const code = await child.exited;
      assert.equal(code, 1, child.output());
      assert.match(child.output(), new RegExp(`DEMO_SESSION_TTL=${ttl.replace('.', '\\.')} is not valid: it must be a whole number of seconds from 1 to 900`));
      assert.doesNotMatch(child.output(), /\n\s+at /, 'a stack trace instead of a message');
      assert.doesNotMatch(child.output(), /is running/);
    });
  }

  for (const [service, variable, name] of [
    ['backend', 'DEMO_BACKEND_PORT', 'sample app backend'],
    ['vite', 'DEMO_VITE_PORT', 'Vite dev server'],
    ['simulator', 'DEMO_SIMULATOR_PORT', 'marketplace simulator'],
  ] as const) {
    it(`names the ${service} port when it is taken, and how to change it`, async () => {
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      const port = (blocker.address() as { port: number }).port;
      try {
        const child = start({ ...FREE, [variable]: String(port) });
        const code = await child.exited;
        assert.equal(code, 1, child.output());
        assert.match(child.output(), new RegExp(`Port ${port} \\(${name}\\) is already in use`));
        assert.match(child.output(), new RegExp(`${variable}=<port> npm start`));
        assert.doesNotMatch(child.output(), /\n\s+at /, 'a stack trace instead of a message');
      } finally {
        blocker.close();
      }
    });
  }
});
