// Where the tests find Debian's Chromium, and the flags it needs here: root needs --no-sandbox,
// and the machine's closed network makes background services fail noisily.
import { existsSync } from 'node:fs';

export function chromiumPath() {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(Boolean);
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`Chromium not found (looked at ${candidates.join(', ')}). Run: bash test/setup/ensure-tools.sh`);
  return found;
}

export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // The end-to-end tests open several pages and frames in one browser: a page that is not in
  // front must keep its timers and rendering at full speed, or its timeouts crawl. (The browser
  // tests run one page at a time anyway: see test/web-test-runner.config.js.)
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
];
