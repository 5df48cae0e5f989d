// For `npm run size`: the least the runtime could take from the two libraries the design requires,
// one zod/mini object of one string and one postmessage-rpc endpoint, bundled like the runtime.
import { RPC } from '@mixer/postmessage-rpc';
import { object, string } from 'zod/mini';

export const schema = object({ value: string() });
export const connect = (target: Window) => new RPC({ target, serviceId: 'floor', origin: 'https://dashboard.example' });
