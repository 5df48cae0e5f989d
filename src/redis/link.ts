/**
 * One way to send commands to Redis through whichever client the app has: node-redis (the `redis`
 * package, v4 or later) or ioredis. Neither is imported: both are optional peer dependencies, and
 * the client is recognised by shape. Every call has a timeout, a client that is not connected is
 * refused at once (nothing queues to run late), and every failure is one typed error,
 * `ERR_STORE_UNAVAILABLE`, whose message never quotes Redis (its reply is the `cause`), and which
 * the log hears of without one line per request (docs/redis.md "When Redis fails").
 */
import { createHash } from 'node:crypto';
import { MarketplaceKitError } from '../shared/errors.js';
import { StoreUnavailableError } from '../server/store-error.js';

/** A connected node-redis client (`createClient({ url })` from the `redis` package, v4 or later), as far as the stores use it. */
export interface NodeRedisClient {
  sendCommand(args: string[]): Promise<unknown>;
  readonly isReady: boolean;
  on(event: string, listener: (error: Error) => void): unknown;
}

/** An ioredis client (`new Redis(url)`), as far as the stores use it. */
export interface IoRedisClient {
  call(command: string, ...args: string[]): Promise<unknown>;
  readonly status: string;
  on(event: string, listener: (error: Error) => void): unknown;
}

/** Either client. */
export type RedisClient = NodeRedisClient | IoRedisClient;

/** A Lua script, with its SHA-1 so that it is sent in full only once per Redis. */
export interface Script {
  source: string;
  sha: string;
}

export function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

export interface RedisLink {
  /** Runs `script` with `keys` and `args`; its reply as Redis sent it. */
  run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

export interface LinkOptions {
  timeoutMs: number;
  /**
   * Told when Redis stops answering, and when it answers again: one line each, not one per request;
   * and of the errors Redis replies with (OOM, NOPERM, CROSSSLOT…), with their stack: one line per
   * kind every `REFUSAL_LOG_MS` at most, with the count of the others.
   */
  log: (line: string) => void;
}

/** How long the repeats of one kind of error reply are counted before the next line about it. */
export const REFUSAL_LOG_MS = 10_000;

export function redisLink(client: unknown, options: LinkOptions): RedisLink {
  const send = sender(client);
  let down = false;
  const failed = (why: string) => {
    if (down) return;
    down = true;
    options.log(`[marketplace-app-kit] Redis is unavailable (${why}): launches and webhooks are answered 503 with Retry-After until it answers again`);
  };
  const answered = () => {
    if (!down) return;
    down = false;
    options.log('[marketplace-app-kit] Redis answers again: the stores work as before');
  };
  /** Error replies lately told, by kind (the reply's first word): until when, and how many came since. */
  const refusals = new Map<string, { until: number; more: number }>();
  const refused = (reply: Error) => {
    const kind = /^[A-Z]+/.exec(reply.message)?.[0] ?? 'ERR';
    const now = Date.now();
    const told = refusals.get(kind);
    if (told !== undefined && now < told.until) {
      told.more += 1;
      return;
    }
    refusals.set(kind, { until: now + REFUSAL_LOG_MS, more: 0 });
    const more = told?.more ? ` (and ${told.more} more since the last line)` : '';
    options.log(
      `[marketplace-app-kit] Redis refused a command${more}: the requests that needed it are answered 503 with Retry-After; at most one line about ${kind} every ${REFUSAL_LOG_MS / 1000} s\n${reply.stack ?? reply.message}`,
    );
  };
  // A client with no 'error' listener would crash the process on the first lost connection.
  (client as RedisClient).on('error', (error: Error) => failed(error?.message ?? String(error)));

  async function call(args: string[]): Promise<unknown> {
    if (!send.ready()) {
      failed('not connected');
      throw new StoreUnavailableError('Redis is not connected: nothing was sent');
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError(`Redis did not answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    });
    try {
      const reply = await Promise.race([send.command(args), timeout]);
      answered();
      return reply;
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        failed(error.message);
        throw error;
      }
      if (isNoScript(error)) throw error;
      // Redis answered, with an error (out of memory under noeviction, an ACL, a key on another
      // Cluster node, a bug): not an outage, but still no answer.
      if (isReplyError(error)) {
        refused(error);
        throw new StoreUnavailableError('Redis refused a command: its reply is the cause', { cause: error });
      }
      failed((error as Error)?.message ?? String(error));
      throw new StoreUnavailableError('Redis failed: the client\'s error is the cause', { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async run(script, keys, args) {
      const tail = [String(keys.length), ...keys, ...args.map(String)];
      try {
        return await call(['EVALSHA', script.sha, ...tail]);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        // First use on this Redis (or after a restart): EVAL loads it for the next EVALSHA.
        return call(['EVAL', script.source, ...tail]);
      }
    },
  };
}

interface Sender {
  ready(): boolean;
  command(args: string[]): Promise<unknown>;
}

function sender(client: unknown): Sender {
  const candidate = client as Partial<NodeRedisClient & IoRedisClient> | null;
  if (candidate && typeof candidate.call === 'function' && typeof candidate.status === 'string' && typeof candidate.on === 'function') {
    const io = candidate as IoRedisClient;
    return { ready: () => io.status === 'ready', command: ([name, ...args]) => io.call(name!, ...args) };
  }
  if (candidate && typeof candidate.sendCommand === 'function' && 'isReady' in candidate && typeof candidate.on === 'function') {
    const node = candidate as NodeRedisClient;
    return { ready: () => node.isReady, command: (args) => node.sendCommand(args) };
  }
  throw new MarketplaceKitError(
    'ERR_CONFIG',
    'createRedisStores: client must be a node-redis client (createClient({ url }) from the redis package, v4 or later, connected) or an ioredis client',
  );
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** The classes of Redis's own error replies: ioredis's `ReplyError`, node-redis's `ErrorReply` (and its subclasses). */
const REPLY_ERROR_CLASSES = new Set(['ReplyError', 'ErrorReply']);

/** An error reply of Redis itself, as either client gives it (node-redis names its class, not the error). */
function isReplyError(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  for (let proto: unknown = Object.getPrototypeOf(error); proto !== null && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
    if (REPLY_ERROR_CLASSES.has((proto as { constructor?: { name?: string } }).constructor?.name ?? '')) return true;
  }
  return REPLY_ERROR_CLASSES.has(error.name);
}
