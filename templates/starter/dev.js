// `npm run dev`: the local marketplace (from mpkit.config.json) and your app, wired together.
// Open the dashboard it prints: your app runs inside it. Edits to index.html and src/ reload the
// page; edits to server.js or mpkit.config.json need a restart (Ctrl-C, npm run dev).
import { existsSync } from 'node:fs';
import { loadSimulatorConfig, startSimulator } from 'marketplace-app-kit/simulator';
import { createServer as createViteServer } from 'vite';
import { simulatorSettings, startServer } from './server.js';

// A SESSION_SECRET of your own in .env keeps sessions across restarts (optional here).
if (existsSync('.env')) process.loadEnvFile('.env');

const config = loadSimulatorConfig('mpkit.config.json');
// The app's address: mpkit.config.json's appUrl, on the port of PORT when it is set.
const appUrl = new URL(config.appUrl ?? 'http://127.0.0.1:3000/');
if (process.env.PORT) appUrl.port = process.env.PORT;
const port = Number(appUrl.port || 80);

const sim = await startSimulator({ ...config, appUrl: appUrl.href });
let server;
try {
  server = await startServer({
    port,
    settings: simulatorSettings(sim),
    vite: (httpServer) => createViteServer({ server: { middlewareMode: true, hmr: { server: httpServer } }, appType: 'custom' }),
  });
} catch (error) {
  await sim.close();
  throw error;
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

const stop = async () => {
  await server.close();
  await sim.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
