// @web/test-runner in Debian's headless Chromium, with test files served through Vite in
// middleware mode: Vite pre-bundles the CommonJS @mixer/postmessage-rpc (and its eventemitter3),
// which plain nodeResolve cannot load (docs/development.md).
import { chromeLauncher } from '@web/test-runner-chrome';
import { createServer } from 'vite';
import { chromiumPath, chromiumArgs } from './support/chromium.js';

// Dates are shown in the browser's time zone; the tests expect the ones of UTC, whatever the
// machine's zone (Chromium takes it from TZ).
process.env.TZ = 'UTC';

const RUNNER_PATHS = /^\/(__web-dev-server|__wtr|__web-test-runner)|^\/$/;
/** @type {import('vite').ViteDevServer | undefined} */
let vite;

/** @type {import('@web/test-runner').TestRunnerConfig} */
export default {
  rootDir: '.',
  files: process.env.WTR_FILES ? process.env.WTR_FILES.split(',') : ['test/browser/**/*.test.ts', 'src/**/*.test.ts'],
  nodeResolve: false,
  // One page at a time: pages opened side by side sit in background tabs, where Chromium runs no
  // animation frames, and fixtures that wait for a frame then hang until the test times out.
  concurrency: 1,
  filterBrowserLogs: ({ args }) => !String(args[0]).includes('Lit is in dev mode'),
  // Hang guards only (docs/development.md, "Tests on a busy machine"): a test waits for what it needs, and
  // these stop one that hangs, generously enough that a machine with both cores busy never meets them.
  testFramework: { config: { timeout: 60_000 } },
  browserStartTimeout: 120_000,
  testsStartTimeout: 180_000,
  testsFinishTimeout: 600_000,
  // A failing assertion about a DOM node is reported as a failure, not as a file that never ends.
  testRunnerHtml: (testFramework) =>
    `<!doctype html><html><body><script type="module" src="/test/support/clonable-failures.js"></script><script type="module" src="${testFramework}"></script></body></html>`,
  browsers: [chromeLauncher({ launchOptions: { executablePath: chromiumPath(), headless: true, args: chromiumArgs } })],
  // Registered as config middleware so that it runs before the runner's own static file serving.
  middleware: [
    async (ctx, next) => {
      if (!vite || RUNNER_PATHS.test(ctx.path)) return next();
      const handled = await new Promise((resolve, reject) => {
        ctx.res.once('finish', () => resolve(true));
        vite.middlewares(ctx.req, ctx.res, (error) => (error ? reject(error) : resolve(false)));
      });
      if (handled) ctx.respond = false;
      else await next();
    },
  ],
  plugins: [
    {
      // `executeServerCommand('emulate-forced-colors', { active })`: Windows high contrast, which the
      // runner's own emulateMedia does not offer for Chrome.
      name: 'emulate-forced-colors',
      async executeCommand({ command, payload, session }) {
        if (command !== 'emulate-forced-colors') return undefined;
        const page = session.browser.getPage(session.id);
        const cdp = await page.createCDPSession();
        const value = /** @type {{ active?: boolean }} */ (payload)?.active ? 'active' : 'none';
        await cdp.send('Emulation.setEmulatedMedia', { features: [{ name: 'forced-colors', value }] });
        return true;
      },
    },
    {
      name: 'vite-middleware',
      async serverStart() {
        vite = await createServer({
          configFile: false,
          root: process.cwd(),
          logLevel: 'warn',
          appType: 'custom',
          server: { middlewareMode: true, hmr: false, ws: false },
          optimizeDeps: {
            // Everything to pre-bundle is listed and nothing else is discovered: a dependency found
            // in the middle of a run makes Vite re-optimize and invalidate modules already loaded,
            // which stalls the tests of a fresh clone (no .vite cache yet).
            include: ['@mixer/postmessage-rpc', 'zod/mini'],
            noDiscovery: true,
            // Lit stays unbundled so that the tests' helpers and our elements share one copy of it.
            exclude: ['@open-wc/testing', '@web/test-runner-commands', 'lit', 'lit-html', 'lit-element', '@lit/reactive-element'],
          },
          plugins: [
            {
              // @web/test-runner-commands talks to the runner over this socket module, which the
              // runner itself serves: Vite must leave the import alone.
              name: 'runner-socket-external',
              enforce: 'pre',
              resolveId: (id) => (id === '/__web-dev-server__web-socket.js' ? { id, external: true } : null),
            },
          ],
        });
      },
      async serverStop() {
        await vite?.close();
      },
    },
  ],
};
