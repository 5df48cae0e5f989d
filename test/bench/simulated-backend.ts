// The app backend the browser benchmarks launch against (launch.bench.ts, runtime.bench.ts): a
// real createAppBackend on the simulator's credentials, behind toNodeHandler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createAppBackend, toNodeHandler } from '../../src/server/index.js';
import type { Simulator } from '../../src/simulator/index.js';

export interface SimulatedBackend {
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** From now on errors are no news: a launch still under way when a series ends fails once the simulator is closed. */
  quiet(): void;
}

export function simulatedBackend(sim: Simulator, dashboardOrigin: string): SimulatedBackend {
  let closing = false;
  const handle = toNodeHandler(
    createAppBackend({
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      siteUrl: sim.siteUrl,
      apiKey: sim.liveApiKey,
      webhookSecret: sim.webhookSecret,
      sessionSecret: 'bench-session-secret-0123456789-0123456789',
      hostOrigins: [dashboardOrigin],
      // One user launches the app (and exchanges bare context tokens) dozens to hundreds of times
      // within minutes; the default cap, 34 per five minutes, is for real users.
      maxExchangesPerUser: Infinity,
      onError: (error) => {
        if (!closing) console.error(error);
      },
    }),
  );
  return {
    handle,
    quiet: () => {
      closing = true;
    },
  };
}
