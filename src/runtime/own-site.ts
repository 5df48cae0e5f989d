/**
 * The rest of the start-up outside the dashboard (session-own-site.ts): what it does with the
 * answer. A chunk of its own, loaded while the start-up request is on its way; a page inside the
 * dashboard never loads it. The upkeep is upkeep-own-site.ts, loaded after start-up.
 */
import { DEV } from '../shared/dev.js';
import { MarketplaceKitError } from '../shared/errors.js';
import { prepareSessionSchema } from '../shared/schemas.js';
import type { ServedSession } from './backend.js';
import type { OwnSiteSession } from './session-own-site.js';

/**
 * Start-up once the request left: `request` is the reading of the cookie session (null: refused
 * launch); `generation`, the session's when it left (a sign-out meanwhile drops its outcome).
 */
export async function startOwnSite(session: OwnSiteSession, request: Promise<ServedSession | null> | null, generation: number): Promise<void> {
  const { env, store } = session.ctx;
  const { launch } = session;
  if (launch.kind === 'rejected' || !request) {
    // A configuration mistake as often as an attack (hostOrigins not matching the dashboard):
    // said in the console too, where the developer looks first.
    const { error } = launch as Extract<typeof launch, { kind: 'rejected' }>;
    console.error(`[marketplace-app-kit] ${error.code}: ${error.message}`);
    return store.set({ state: 'error', error });
  }
  // On the developer's own site the browser's preferences are the theme and locale, live.
  session.stopPreferences = env.observePreferences(() => store.set({ theme: env.defaultTheme, locale: env.defaultLocale }));
  session.watchWake();
  prepareSessionSchema();
  try {
    const response = await session.unlessForgotten(generation, request);
    if (response) session.accept(response);
    else if (launch.signInError) {
      session.signedOut(new MarketplaceKitError('ERR_OAUTH', DEV ? `Sign-in did not complete (${launch.signInError})` : '', { upstreamCode: launch.signInError }));
    } else session.signedOut();
  } catch (error) {
    if (generation === session.generation) session.failed(error);
  }
  session.prefetch();
}
