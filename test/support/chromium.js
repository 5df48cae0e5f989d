// Where the tests find Debian's Chromium, and the flags it needs here: root needs --no-sandbox,
// the machine's closed network makes background services fail noisily, and parallel test pages
// must not be throttled.
import { existsSync } from 'node:fs';

export function chromiumPath() {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(Boolean);
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`Chromium not found (looked at ${candidates.join(', ')}). Run: bash test/setup/ensure-chromium.sh`);
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
  // Test pages run side by side in tabs of one browser: a tab in the background must keep its
  // timers and rendering at full speed, or axe runs and timeouts in it crawl.
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
];
