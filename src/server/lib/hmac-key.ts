/**
 * HMAC-SHA256 keys imported once per secret and reused: importing a secret again for every token
 * or webhook delivery costs about as much as the HMAC itself (docs/server.md, "Speed").
 *
 * The cache is bounded and never keyed by a secret: each entry is found by a SHA-256 digest of
 * its secret behind a random salt of this process, so no secret is kept as a map key. A caller that passes the
 * same options object again (a webhook route's `secrets` list) skips even that digest: the key is
 * then found through that object, which holds the secret anyway, and only while it lives.
 */
import { createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** One secret's key in both forms: node:crypto's for `createHmac`, WebCrypto's on demand. */
export interface HmacKey {
  readonly node: KeyObject;
  /** The WebCrypto HMAC-SHA256 key (sign and verify), imported on first use. */
  web(): Promise<CryptoKey>;
}

/** A handful of secrets per process (one per purpose, two during a rotation): start over when full. */
const MAX_SECRETS = 16;
const salt = randomBytes(32);
const keys = new Map<string, HmacKey>();
const byHolder = new WeakMap<object, { secret: string; key: HmacKey }>();
const byList = new WeakMap<readonly string[], { secrets: readonly string[]; keys: HmacKey[] }>();

/** The key of `secret`, imported on its first use. */
export function hmacKey(secret: string): HmacKey {
  const id = createHash('sha256').update(salt).update(secret).digest('base64');
  let found = keys.get(id);
  if (found === undefined) {
    if (keys.size >= MAX_SECRETS) keys.clear();
    found = importKey(secret);
    keys.set(id, found);
  }
  return found;
}

/** `hmacKey(secret)`, remembered for `holder` (an options object) while it holds that same secret. */
export function hmacKeyFor(holder: object, secret: string): HmacKey {
  const held = byHolder.get(holder);
  if (held !== undefined && held.secret === secret) return held.key;
  const key = hmacKey(secret);
  byHolder.set(holder, { secret, key });
  return key;
}

/** The keys of each secret of `list`, remembered for the list while it holds the same secrets (a rotation's). */
export function hmacKeysFor(list: readonly string[]): HmacKey[] {
  const held = byList.get(list);
  if (held !== undefined && held.secrets.length === list.length && held.secrets.every((secret, i) => secret === list[i])) return held.keys;
  const keys = list.map(hmacKey);
  byList.set(list, { secrets: [...list], keys });
  return keys;
}

function importKey(secret: string): HmacKey {
  const node = createSecretKey(Buffer.from(secret, 'utf8'));
  let web: Promise<CryptoKey> | undefined;
  return {
    node,
    web: () => (web ??= crypto.subtle.importKey('raw', node.export(), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])),
  };
}
