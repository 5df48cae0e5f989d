/**
 * HMAC-SHA256 keys imported once per secret and reused: importing a secret again for every
 * session token or webhook delivery costs about as much as the HMAC itself. One bounded cache
 * holds both forms: the node:crypto `KeyObject` (for `createHmac`) and the WebCrypto `CryptoKey`
 * (for jose, which re-imports a `KeyObject` on every call on Node 20).
 */
import { createSecretKey, type KeyObject } from 'node:crypto';

const MAX_SECRETS = 16;
const keys = new Map<string, { node: KeyObject; web?: Promise<CryptoKey> }>();

function entry(secret: string): { node: KeyObject; web?: Promise<CryptoKey> } {
  let found = keys.get(secret);
  if (!found) {
    // A handful of secrets per process (one per purpose, two during a rotation): start over when full.
    if (keys.size >= MAX_SECRETS) keys.clear();
    found = { node: createSecretKey(Buffer.from(secret, 'utf8')) };
    keys.set(secret, found);
  }
  return found;
}

/** The `KeyObject` of `secret`, for `createHmac('sha256', hmacKey(secret))`. */
export function hmacKey(secret: string): KeyObject {
  return entry(secret).node;
}

/** The WebCrypto HMAC-SHA256 key of `secret` (sign and verify), for jose. */
export function hmacCryptoKey(secret: string): Promise<CryptoKey> {
  const found = entry(secret);
  found.web ??= crypto.subtle.importKey('raw', found.node.export(), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  return found.web;
}
