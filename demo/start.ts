/**
 * `npm start`: builds the kit (the sample backend imports `marketplace-app-kit/server`, which the
 * package's exports map resolves to dist/), then starts the demo and prints where to go.
 *
 * Ports: DEMO_SIMULATOR_PORT (4010), DEMO_BACKEND_PORT (4020), DEMO_VITE_PORT (4030).
 * DEMO_SESSION_TTL: lifetime of the sample backend's app sessions, in seconds (1–900).
 * DEMO_REDIS_URL: run the sample backend as two instances sharing the kit's state on this Redis
 * (redis://127.0.0.1:6379), behind a round-robin proxy on the backend's port.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DemoPorts, DemoService } from './launch.js';

const required = ['../dist/server/index.js', '../dist/simulator/index.js', '../dist/cdn/marketplace-app-kit.js', '../dist/cdn/marketplace-host.js', '../dist/cdn/marketplace-dashboard.js'];
const missing = required.filter((path) => !existsSync(fileURLToPath(new URL(path, import.meta.url))));
if (missing.length > 0) {
  console.error(`The kit is not built (missing ${missing.join(', ')}). Run: npm run build (npm start does it for you).`);
  process.exit(1);
}

// Imported after the check: they load marketplace-app-kit/server and /simulator from dist/.
const { DEFAULT_PORTS, PORT_ENV, PortInUseError, startDemo } = await import('./launch.js');
const { MAX_SESSION_TTL_SECONDS } = await import('marketplace-app-kit/server');

/** A whole number from the environment within [min, max]; anything else stops with a message, not a stack trace. */
function envInteger(name: string, fallback: number | undefined, min: number, max: number, what: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    console.error(`\n  ${name}=${raw} is not valid: it must be ${what} from ${min} to ${max}.\n`);
    process.exit(1);
  }
  return value;
}

const ports = Object.fromEntries(
  (Object.keys(DEFAULT_PORTS) as DemoService[]).map((service) => [
    service,
    envInteger(PORT_ENV[service], DEFAULT_PORTS[service], 0, 65535, 'a port number (0 picks a free port)'),
  ]),
) as DemoPorts;
const sessionTtlSeconds = envInteger('DEMO_SESSION_TTL', undefined, 1, MAX_SESSION_TTL_SECONDS, 'a whole number of seconds');
// DEMO_REDIS_URL: the sample backend runs as two instances on this Redis, behind a round-robin proxy.
const redisUrl = process.env.DEMO_REDIS_URL || undefined;
if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
  console.error(`\n  DEMO_REDIS_URL=${redisUrl} is not valid: it must be a redis:// URL, e.g. redis://127.0.0.1:6379.\n`);
  process.exit(1);
}

let demo: Awaited<ReturnType<typeof startDemo>>;
try {
  demo = await startDemo({ ports, ...(sessionTtlSeconds === undefined ? {} : { sessionTtlSeconds }), ...(redisUrl === undefined ? {} : { redisUrl }) });
} catch (error) {
  if (error instanceof PortInUseError) {
    console.error(`\n  ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}

const { urls } = demo;
console.log(`
  marketplace-app-kit demo is running (Ctrl-C stops it)

  ▸ Dashboard with the sample app   ${urls.dashboard}
  ▸ Component gallery               ${urls.gallery}
  ▸ Developer-site page (sign-in)   ${urls.site}

    Start page                      ${urls.home}
    Simulator control API           ${urls.simulator}/_simulator/state
    Sample app backend              ${urls.backend}  (proxied at ${urls.vite}/api)${redisUrl === undefined ? '' : `
                                    two instances on ${redisUrl}, round-robin: each request logs which one served it`}
    Test users                      ${demo.simulator.users.map((user) => user.name).join(', ')}
`);

let stopping = false;
async function stop(signal: string) {
  if (stopping) {
    console.log('Forced exit.');
    process.exit(130);
  }
  stopping = true;
  console.log(`\n${signal}: stopping the demo…`);
  await demo.close();
  console.log('Stopped.');
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
