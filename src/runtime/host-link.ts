/**
 * The app's end of the host bridge, loaded when the kit first needs it: in the task after start-up
 * inside the dashboard, or at the first host call. `@mixer/postmessage-rpc` and the protocol's
 * schemas are thus not part of what a page must load and compile before the kit is ready, and a
 * page on the developer's own site never loads them. Bundlers emit this module as its own chunk.
 */
import { openBridge, type Bridge, type BridgeOptions, type HandlerTable, type MessagePeer, type MessageSource } from '../shared/bridge.js';

export interface HostLinkOptions {
  self: MessageSource;
  peer: () => MessagePeer | null;
  /** The dashboard's origin, exactly. */
  origin: string;
  handlers: HandlerTable<'app'>;
  timeoutMs: number | undefined;
  /** The dashboard started its end over (see `BridgeOptions`). */
  onPeerRestart: () => void;
  /** The kit's timers, for the calls' timeouts. */
  timers: BridgeOptions<'app'>['timers'];
}

/** Opens the app's end of the bridge to the dashboard. */
export function openHostLink(options: HostLinkOptions): Bridge<'app'> {
  return openBridge({ ...options, side: 'app' });
}
