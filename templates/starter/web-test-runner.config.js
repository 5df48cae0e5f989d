// `npm run test:page`: the page tests (test/page/) in Chromium, with @web/test-runner. It uses the
// Chrome or Chromium installed on this machine and downloads none: CHROME_PATH names it when it is
// not found on its own.
import { chromeLauncher } from '@web/test-runner';

export default {
  files: 'test/page/**/*.test.js',
  // Bare imports (marketplace-app-kit, lit, @open-wc/testing) from node_modules.
  nodeResolve: true,
  // Lit's development build (served here) says so in every page: nothing to act on in a test.
  filterBrowserLogs: ({ args }) => !String(args[0]).includes('Lit is in dev mode'),
  browsers: [
    chromeLauncher({
      launchOptions: {
        ...(process.env.CHROME_PATH ? { executablePath: process.env.CHROME_PATH } : {}),
        headless: true,
        // Chromium refuses to start as root (in a container, on CI) without it.
        args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
      },
    }),
  ],
};
