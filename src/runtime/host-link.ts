/**
 * The app's end of the host bridge, loaded when the kit first needs it: in the task after start-up
 * inside the dashboard, or at the first host call (host-connection.ts). `@mixer/postmessage-rpc`,
 * the protocol's schemas and what the kit does with the open bridge (the dashboard's calls, the
 * document's height) are thus not part of what a page must load and compile before the kit is
 * ready, and a page on the developer's own site never loads them. Bundlers emit this module as
 * its own chunk.
 */
import { DEV } from '../shared/dev.js';
import { openBridge, type Bridge } from '../shared/bridge.js';
import type { Theme } from '../shared/schemas.js';
import type { KitEnvironment } from './environment.js';
import { normalizeLocale } from './launch.js';
import type { HostBridge, UpgradeOutcome } from './types.js';

/** The kit's connection to the dashboard, as the open bridge works with it (host-connection.ts). */
export interface HostLinkContext {
  readonly env: KitEnvironment;
  /** The dashboard's origin, exactly. */
  readonly origin: string;
  /** Each call's timeout; undefined: the bridge's default. */
  readonly timeoutMs: number | undefined;
  readonly autoResize: boolean;
  /** `kit.host` (null once the kit is destroyed). */
  readonly host: HostBridge | null;
  applyTheme(theme: Theme): void;
  applyLocale(locale: string): void;
  /** The dashboard's `entitlementsChanged`: reload the entitlement (the reload is `announced`). */
  entitlementsChanged(): void;
  /** The reload the dashboard's last `entitlementsChanged` started. */
  readonly announced: { reload: Promise<void> };
  /** Reloads the entitlement. */
  refresh(): Promise<void>;
}

/**
 * After the dashboard's plan chooser closed (`kit.upgrade()`): once the user upgraded, the
 * entitlement is reloaded (not after a sign-out: the next launch shows the new plan).
 * `announced`: the reload the dashboard had announced when the chooser opened.
 */
export async function afterUpgrade(link: HostLinkContext, announced: HostLinkContext['announced'], outcome: UpgradeOutcome, signedIn: () => boolean): Promise<void> {
  if (outcome !== 'upgraded' || !signedIn()) return;
  // The dashboard announced a change while its chooser was open: that reload (most likely of the
  // purchase) is the one to wait for, since another one now would wait out the backend's refresh
  // interval (5 s). If it failed, the kit reloads once more all the same.
  const reload = link.announced !== announced ? link.announced.reload.catch(() => link.refresh()) : link.refresh();
  // The user did upgrade: a reload that fails must not turn that into a failure. It is said in the
  // console; the next refresh (the dashboard's entitlementsChanged, say) shows the plan.
  await reload.catch((error: unknown) => console.error(DEV ? '[marketplace-app-kit] The entitlement could not be reloaded after the upgrade:' : '[marketplace-app-kit]', error));
}

/** Opens the app's end of the bridge to the dashboard; `stop` ends the height reports. */
export function openHostLink(link: HostLinkContext): { bridge: Bridge<'app'>; stop: () => void } {
  const { env } = link;
  // What the dashboard must be told again when it starts its end over (set below).
  let restated = () => {};
  const bridge = openBridge({
    side: 'app',
    self: env.self,
    peer: () => env.parent,
    origin: link.origin,
    timeoutMs: link.timeoutMs,
    timers: env,
    onPeerRestart: () => restated(),
    handlers: {
      themeChanged: ({ theme }) => link.applyTheme(theme),
      localeChanged: ({ locale }) => {
        const tag = normalizeLocale(locale, null);
        // Refused, so the dashboard hears that its value was not used.
        if (!tag) throw new Error(DEV ? `locale ${JSON.stringify(locale.slice(0, 40))} is not a BCP 47 language tag` : 'locale refused');
        link.applyLocale(tag);
      },
      // Answered at once; the reload runs on its own (a failure leaves the last known entitlement).
      entitlementsChanged: () => link.entitlementsChanged(),
    },
  });
  if (!link.autoResize) return { bridge, stop: () => {} };
  // The height sent last, or -1 once the last call failed; how many were sent.
  let last = -1;
  let sent = 0;
  const report = (height: number) => {
    if (height === last) return;
    last = height;
    const call = ++sent;
    // Resizing is best effort: a dashboard that does not answer must not break the app. Only the
    // last call's failure counts: an older one (to an end since gone) says nothing of it.
    link.host?.resize(height).catch(() => {
      if (sent === call) last = -1;
    });
  };
  let stop: () => void;
  try {
    stop = env.observeHeight(report);
  } catch {
    // No ResizeObserver here: no automatic resizing, but the bridge and `host.resize()` work.
    return { bridge, stop: () => {} };
  }
  // A dashboard that connects late lets the first heights time out: once it has answered the
  // handshake, the height goes again (the observer says nothing until it changes).
  bridge.ready.then(() => last === -1 && link.host && report(env.measureHeight()), () => undefined);
  // A dashboard that started over on this frame knows no height at all.
  restated = () => {
    last = -1;
    report(env.measureHeight());
  };
  return { bridge, stop };
}
