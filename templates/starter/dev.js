// `npm run dev`: the local marketplace (from mpkit.config.json) and your app, wired together.
// Open the dashboard it prints: your app runs inside it. Edits to index.html and src/ reload the
// page; edits to server.js or mpkit.config.json need a restart (Ctrl-C, npm run dev).
//
// Ports: the simulator listens on mpkit.config.json's "port" (4010), or SIM_PORT; your app on the
// port of mpkit.config.json's "appUrl" (3000), or PORT. Both can be set in .env, or on the command
// line: SIM_PORT=4011 PORT=3001 npm run dev.
import { existsSync } from 'node:fs';
import { loadSimulatorConfig, startSimulator } from 'marketplace-app-kit/simulator';
import { createServer as createViteServer } from 'vite';
import { simulatorSettings, startServer } from './server.js';

/** One line that says what to do, instead of a stack trace. */
function stop(message) {
  console.error(`npm run dev: ${message}`);
  process.exit(1);
}

/** A port from the environment: a whole number from 0 (any free port) to 65535. */
function portFrom(name) {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value) || Number(value) > 65535) stop(`${name} must be a port number from 0 to 65535, not "${value}".`);
  return Number(value);
}

// A SESSION_SECRET of your own in .env keeps sessions across restarts (optional here).
if (existsSync('.env')) process.loadEnvFile('.env');

let config;
try {
  config = loadSimulatorConfig('mpkit.config.json');
} catch (error) {
  // A mistake in the file: its message names the field (mpkit.config.json: plans[1].kind must be …).
  stop(error.message);
}
// The app's address: mpkit.config.json's appUrl, on the port of PORT when it is set.
const appUrl = new URL(config.appUrl ?? 'http://127.0.0.1:3000/');
const appPort = portFrom('PORT');
if (appPort !== undefined) appUrl.port = String(appPort);
const simPort = portFrom('SIM_PORT') ?? config.port ?? 4010;

let sim;
try {
  sim = await startSimulator({ ...config, port: simPort, appUrl: appUrl.href });
} catch (error) {
  if (error.cause?.code !== 'EADDRINUSE') stop(error.message);
  stop(`port ${simPort} (the simulator) is in use. Stop what runs there, or move the simulator: set "port" in mpkit.config.json, or SIM_PORT=4011 npm run dev.`);
}
let server;
try {
  server = await startServer({
    port: Number(appUrl.port || 80),
    settings: simulatorSettings(sim),
    vite: (httpServer) => createViteServer({ server: { middlewareMode: true, hmr: { server: httpServer } }, appType: 'custom' }),
  });
} catch (error) {
  await sim.close();
  stop(`${error.message}.`);
}

console.log(`
  ${sim.appName} is running inside the local marketplace.

  ▸ Dashboard     ${sim.dashboardUrl}
    Your app      ${server.url}/ (open it from the dashboard: it needs the launch)
    Simulator     ${sim.siteUrl}/_simulator/state
    Users         ${sim.users.map((user) => user.name).join(', ')}
    Plans         ${sim.plans.map((plan) => `${plan.name} (${plan.price})`).join(', ')}

  Ctrl-C stops both.
`);

const close = async () => {
  await server.close();
  await sim.close();
  process.exit(0);
};
process.once('SIGINT', close);
process.once('SIGTERM', close);
