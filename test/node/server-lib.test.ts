// The server module's small building blocks, on their own: what the handlers' tests reach only
// through one path each.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { getEventListeners, once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import * as z from 'zod/mini';
import { MarketplaceKitError, isKitError, type ErrorCode } from '../../src/shared/errors.js';
import { createMemoryReplayStore, jsonResponse, toErrorResponse, toNodeHandler } from '../../src/server/index.js';
import { linkSignals } from '../../src/server/lib/abort.js';
import { readLimited } from '../../src/server/lib/body.js';
import { readCookie, readCookies } from '../../src/server/lib/cookies.js';
import { ExpiringMap } from '../../src/server/lib/expiring-map.js';
import { lazyRequest, unreadBody } from '../../src/server/lib/lazy-request.js';
import { LinkedHeaders } from '../../src/server/lib/linked-headers.js';
import { hmacKey, hmacKeyFor } from '../../src/server/lib/hmac-key.js';
import { readJsonAnswer, parseRetryAfter, send, MAX_RETRY_AFTER_MS } from '../../src/server/lib/http.js';
import { optionsObject } from '../../src/server/lib/options-object.js';
import { TextResponse } from '../../src/server/lib/text-response.js';
import { Pacer } from '../../src/server/lib/pacer.js';
import { MarketplaceApiError } from '../../src/server/api-error.js';
import { systemClock } from '../../src/server/lib/clock.js';
import { nowOption, wholeSecondsOption } from '../../src/server/lib/time-options.js';
import { NOW, createVirtualClock } from '../support/server-http.js';
import { HANG_MS } from '../support/waiting.js';

describe('isKitError', () => {
  it('tells kit errors by code, and narrows code to the one asked for (checked by tsc)', () => {
    const error: unknown = new MarketplaceApiError('ERR_TIMEOUT', 'whoami', 'slow');
    assert.equal(isKitError(new Error('x')), false);
    assert.equal(isKitError(error, 'ERR_HTTP'), false);
    if (!isKitError(error, 'ERR_TIMEOUT')) assert.fail('a kit error of the code asked for');
    const timeout: 'ERR_TIMEOUT' = error.code;
    // @ts-expect-error: narrowed to ERR_TIMEOUT, the code can be no other.
    assert.notEqual(error.code === 'ERR_HTTP', true);
    assert.equal(timeout, 'ERR_TIMEOUT');
    if (!isKitError(error)) assert.fail('a kit error without a code asked for');
    const any: ErrorCode = error.code;
    assert.equal(any, 'ERR_TIMEOUT');
  });
});

describe('linkSignals', () => {
  it('aborts with the reason of the source that aborted first', () => {
    const caller = new AbortController();
    const timeout = new AbortController();
    const linked = linkSignals(caller.signal, timeout.signal);
    assert.equal(linked.signal.aborted, false);
    const reason = new Error('caller gave up');
    caller.abort(reason);
    timeout.abort(new Error('later'));
    assert.equal(linked.signal.aborted, true);
    assert.equal(linked.signal.reason, reason);
  });

  it('is aborted at once, with its reason, when a source already is', () => {
    const reason = new Error('already');
    const linked = linkSignals(new AbortController().signal, AbortSignal.abort(reason));
    assert.equal(linked.signal.aborted, true);
    assert.equal(linked.signal.reason, reason);
  });

  it('leaves no listener on a long-lived source once disposed, or once a source aborted', () => {
    const longLived = new AbortController().signal;
    for (let i = 0; i < 100; i += 1) linkSignals(longLived, new AbortController().signal).dispose();
    assert.equal(getEventListeners(longLived, 'abort').length, 0);

    const other = new AbortController();
    const linked = linkSignals(longLived, other.signal);
    assert.equal(getEventListeners(longLived, 'abort').length, 1);
    other.abort();
    assert.equal(linked.signal.aborted, true);
    assert.equal(getEventListeners(longLived, 'abort').length, 0, 'aborting detaches from the other sources too');
  });
});

describe('cookies', () => {
  it('reads a cookie by its whole name only, every value in the order sent, the first by default', () => {
    const header = 'x__Host-mp_session=planted; __Host-mp_session=first; other=1; __Host-mp_session = second ';
    assert.deepEqual(readCookies(header, '__Host-mp_session'), ['first', 'second']);
    assert.equal(readCookie(header, '__Host-mp_session'), 'first');
    assert.equal(readCookie(header, 'mp_session'), undefined);
    assert.equal(readCookie(null, 'mp_session'), undefined);
    assert.deepEqual(readCookies('novalue; mp_session', 'mp_session'), [], 'a part without "=" is no cookie');
  });
});

describe('optionsObject', () => {
  it('passes an object through, and answers anything else with ERR_CONFIG naming the function', () => {
    const options = { siteUrl: 'https://mp.example' };
    assert.equal(optionsObject(options, 'createMarketplaceClient'), options);
    for (const value of [undefined, null, 'https://mp.example', 42, true]) {
      assert.throws(
        () => optionsObject(value, 'createMarketplaceClient'),
        (error: unknown) => error instanceof MarketplaceKitError && error.code === 'ERR_CONFIG' && /createMarketplaceClient needs its options object/.test(error.message),
        String(value),
      );
    }
  });
});

describe('wholeSecondsOption', () => {
  it('takes whole seconds from 1 to max, max when not given, and refuses anything else without clamping', () => {
    assert.equal(wholeSecondsOption(undefined, 'ttlSeconds', 300), 300);
    assert.equal(wholeSecondsOption(1, 'ttlSeconds', 300), 1);
    assert.equal(wholeSecondsOption(300, 'ttlSeconds', 300), 300);
    const refused: Array<[unknown, string]> = [
      [0, 'got 0'],
      [301, 'got 301'],
      [1.5, 'got 1.5'],
      [Number.NaN, 'got NaN'],
      [Infinity, 'got Infinity'],
      ['60', 'got "60"'],
      [null, 'got null'],
    ];
    for (const [value, given] of refused) {
      assert.throws(() => wholeSecondsOption(value, 'ttlSeconds', 300), {
        code: 'ERR_CONFIG',
        message: `ttlSeconds must be a whole number of seconds from 1 to 300, ${given}`,
      });
    }
  });
});

describe('nowOption', () => {
  it('takes ms since the epoch or a Date, the current time when not given, and refuses anything else', () => {
    assert.equal(nowOption(0, 'now'), 0);
    assert.equal(nowOption(8.64e15, 'now'), 8.64e15);
    assert.equal(nowOption(1_767_225_600_000, 'now'), 1_767_225_600_000);
    assert.equal(nowOption(new Date('2026-01-01T00:00:00Z'), 'now'), 1_767_225_600_000);
    const before = Date.now();
    const taken = nowOption(undefined, 'now');
    assert.ok(taken >= before && taken <= Date.now(), `${taken} is not the current time`);
    const refused: Array<[unknown, string]> = [
      [Number.NaN, 'got NaN'],
      [Infinity, 'got Infinity'],
      [-1, 'got -1'],
      [8.64e15 + 1, 'got 8640000000000001'],
      [new Date('soon'), 'got Invalid Date'],
      ['1767225600000', 'got "1767225600000"'],
      [true, 'got true'],
      [null, 'got null'],
    ];
    for (const [value, given] of refused) {
      assert.throws(() => nowOption(value, 'verifyWebhook: now'), {
        code: 'ERR_CONFIG',
        message: `verifyWebhook: now must be a time in ms since the epoch or a Date, ${given}`,
      });
    }
  });
});

describe('numeric options', () => {
  it('quote a string in the message, as an unparsed process.env value is one', () => {
    assert.throws(() => createMemoryReplayStore({ maxEntries: '50000' as unknown as number }), {
      code: 'ERR_CONFIG',
      message: /must be a finite number of at least 2, got "50000"$/,
    });
  });
});

describe('send: redirects', () => {
  for (const status of [307, 308]) {
    it(`does not follow a ${status} (the client_secret is not re-POSTed to its target): the answer is a typed error`, async () => {
      const seen: string[] = [];
      const server = createServer((request, response) => {
        seen.push(`${request.method} ${request.url}`);
        request.resume();
        if (request.url === '/oauth/token') {
          response.writeHead(status, { location: '/elsewhere' }).end();
        } else {
          response.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"stolen"}');
        }
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const { port } = server.address() as AddressInfo;
        const answer = await send({ fetch, timeoutMs: HANG_MS, clock: systemClock }, 'token', `http://127.0.0.1:${port}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=authorization_code&client_secret=s3cret',
        });
        assert.equal(answer.status, status);
        assert.throws(
          () => readJsonAnswer(answer, 'token', z.object({ access_token: z.string() }), Date.now()),
          (error: unknown) => error instanceof MarketplaceApiError && error.code === 'ERR_HTTP' && error.status === status,
        );
        assert.deepEqual(seen, ['POST /oauth/token'], 'the redirect target received no request');
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });
  }
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(1994, 10, 6, 8, 49, 0);

  it('reads an HTTP date in the past as no wait at all (0 ms, never negative)', () => {
    assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:48:00 GMT', now), 0);
    assert.equal(parseRetryAfter('Sunday, 06-Nov-94 08:48:00 GMT', now), 0);
    assert.equal(parseRetryAfter('Sun Nov  6 08:48:00 1994', now), 0);
    assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now), 37_000);
    // Padded, as a header value handed over by something other than fetch may be.
    assert.equal(parseRetryAfter(' 5 ', now), 5_000);
    assert.equal(parseRetryAfter(' Sun, 06 Nov 1994 08:49:37 GMT ', now), 37_000);
    assert.equal(parseRetryAfter('Sun, 06 Nov 1994 09:49:37 GMT', now), MAX_RETRY_AFTER_MS);
  });

  it('reads the asctime form as GMT, whatever the time zone of the machine', () => {
    const saved = process.env.TZ;
    try {
      for (const tz of ['America/New_York', 'Asia/Tokyo', 'UTC']) {
        process.env.TZ = tz;
        if (tz !== 'UTC') assert.notEqual(new Date(now).getTimezoneOffset(), 0, `TZ=${tz} took effect`);
        assert.equal(parseRetryAfter('Sun Nov  6 08:49:37 1994', now), 37_000, tz);
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
});

describe('Pacer', () => {
  it('keeps the longer of two 429 pauses: 30 s then 5 s sends nothing before 30 s', async () => {
    const clock = createVirtualClock(NOW);
    const pacer = new Pacer(10, 60_000, clock);
    pacer.pauseUntil(NOW + 30_000);
    pacer.pauseUntil(NOW + 5_000);
    const release = await pacer.acquire();
    assert.equal(clock.now(), NOW + 30_000);
    release();
  });

  it('gives no slot to a caller that aborted while queued: the next caller gets it at once', async () => {
    const clock = createVirtualClock(NOW);
    const pacer = new Pacer(1, 60_000, clock);
    const controller = new AbortController();
    const aborted = pacer.acquire(controller.signal);
    controller.abort(new Error('caller gave up'));
    await assert.rejects(aborted, /caller gave up/);
    const release = await pacer.acquire();
    assert.deepEqual([clock.now(), clock.sleeps], [NOW, []], 'the slot was free');
    release();
  });

  it('holds a slot one window after its first release: a second release does not move that on', async () => {
    const clock = createVirtualClock(NOW);
    const pacer = new Pacer(1, 1000, clock);
    const release = await pacer.acquire();
    release();
    clock.advance(500);
    release();
    clock.advance(500);
    (await pacer.acquire())();
    assert.deepEqual([clock.now(), clock.sleeps], [NOW + 1000, []], 'free one window after the first release');
  });
});

describe('readLimited', () => {
  const tooLarge = () => new Error('too large');
  async function* chunks(...sizes: number[]) {
    for (const size of sizes) yield new Uint8Array(size).fill(7);
  }

  it('accepts a body of exactly the limit, declared and streamed', async () => {
    assert.equal((await readLimited(chunks(2, 2), '4', 4, tooLarge)).byteLength, 4);
    assert.equal((await readLimited(chunks(4), null, 4, tooLarge)).byteLength, 4);
    assert.equal((await readLimited(chunks(1, 3), undefined, 4, tooLarge)).byteLength, 4);
  });

  it('refuses one byte more, declared (before reading) or streamed', async () => {
    let read = false;
    async function* watched() {
      read = true;
      yield new Uint8Array(1);
    }
    await assert.rejects(readLimited(watched(), '5', 4, tooLarge), /too large/);
    assert.equal(read, false, 'a declared length over the limit is refused before reading');
    // …and the stream is released unread: a fetch answer's connection closes.
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({ cancel: () => void (cancelled = true) });
    await assert.rejects(readLimited(stream as unknown as AsyncIterable<Uint8Array>, '5', 4, tooLarge), /too large/);
    assert.equal(cancelled, true);
    await assert.rejects(readLimited(chunks(2, 3), null, 4, tooLarge), /too large/);
    await assert.rejects(readLimited(chunks(4, 1), '4', 4, tooLarge), /too large/, 'a body longer than its declared length is cut at the limit');
  });
});

describe('hmacKey', () => {
  const secret = 'sécret-ünïcode-✓-密钥';

  it('keys a non-ASCII secret by its UTF-8 bytes, as node:crypto and WebCrypto do with the string', async () => {
    const body = 'payload';
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
    assert.equal(createHmac('sha256', secret).update(body).digest('hex'), expected, 'node:crypto reads a string key as UTF-8');
    assert.equal(createHmac('sha256', hmacKey(secret).node).update(body).digest('hex'), expected);
    const web = await hmacKey(secret).web();
    const signature = new Uint8Array(await crypto.subtle.sign('HMAC', web, new TextEncoder().encode(body)));
    assert.equal(Buffer.from(signature).toString('hex'), expected);
    assert.equal(await crypto.subtle.verify('HMAC', web, signature, new TextEncoder().encode(body)), true, 'sign then verify round-trips');
    assert.equal(await hmacKey(secret).web(), web, 'imported once');
  });

  it('imports each secret once, keeps a bounded number of them, and finds a holder’s key while it holds that secret', () => {
    const first = hmacKey('secret-number-0');
    assert.equal(hmacKey('secret-number-0'), first, 'the same key for the same secret');
    assert.notEqual(hmacKey('secret-number-1'), first);
    for (let i = 1; i <= 16; i++) hmacKey(`secret-number-${i}`);
    assert.notEqual(hmacKey('secret-number-0'), first, 'forgotten once 16 others came after it: the cache is bounded');

    const options = { secret: 'holder-secret-a' };
    const a = hmacKeyFor(options, options.secret);
    assert.equal(hmacKeyFor(options, options.secret), a);
    assert.equal(a, hmacKey('holder-secret-a'));
    options.secret = 'holder-secret-b';
    const b = hmacKeyFor(options, options.secret);
    assert.notEqual(b, a, 'a holder whose secret changed gets the new secret’s key');
    assert.equal(createHmac('sha256', b.node).update('x').digest('hex'), createHmac('sha256', 'holder-secret-b').update('x').digest('hex'));
  });
});

describe('ExpiringMap (the caches that forget their oldest keys)', () => {
  it('keeps at most maxEntries keys, or one more when odd, and the newest', () => {
    for (const maxEntries of [4, 5, 100]) {
      const map = new ExpiringMap<number>(maxEntries);
      for (let i = 0; i < 1_000; i++) {
        map.set(`k${i}`, i, NOW + 60_000);
        if (i % 7 === 3) map.delete(`k${i - 2}`); // deletes land in either generation
        assert.ok(map.size <= maxEntries + (maxEntries % 2), `maxEntries ${maxEntries}: ${map.size} keys after ${i + 1}`);
      }
      assert.equal(map.get('k999', NOW), 999);
      assert.ok(map.size >= Math.floor(maxEntries / 2), `maxEntries ${maxEntries}: only ${map.size} keys kept`);
    }
  });
});

describe('TextResponse (the kit’s JSON answers)', () => {
  it('is a Response whose body readers, body stream and clone give its text, once', async () => {
    const make = () => new TextResponse('{"a":1}', { status: 201, headers: { 'content-type': 'application/json' } });
    const response = make();
    assert.ok(response instanceof Response);
    assert.deepEqual([response.status, response.headers.get('content-type'), response.bodyUsed], [201, 'application/json', false]);
    assert.deepEqual(await response.json(), { a: 1 });
    assert.equal(response.bodyUsed, true);
    await assert.rejects(response.text(), TypeError, 'a body is read once');
    assert.throws(() => response.clone(), TypeError);

    const streamed = make();
    assert.equal(await new Response(streamed.body).text(), '{"a":1}', 'its body is a stream of the text');
    assert.equal(streamed.bodyUsed, true);
    await assert.rejects(streamed.arrayBuffer(), TypeError);

    const original = make();
    const copy = original.clone();
    assert.equal(await copy.text(), '{"a":1}');
    assert.equal(new TextDecoder().decode(await original.arrayBuffer()), '{"a":1}');
    assert.equal((await make().blob()).type, 'application/json');
    assert.equal(TextResponse.take(make()), '{"a":1}');
    const taken = make();
    TextResponse.take(taken);
    assert.equal(taken.bodyUsed, true, 'taken is used');
    assert.equal(TextResponse.take(taken), undefined);
    assert.throws(() => new TextResponse('x', { status: 204 }), TypeError);
  });

  it('is written by toNodeHandler as it is, its body never made a stream', async () => {
    class Untouchable extends TextResponse {
      override get body(): never {
        throw new Error('the adapter asked for the body stream');
      }
    }
    const server = createServer(toNodeHandler(async () => new Untouchable('{"ok":true}', { headers: { 'content-type': 'application/json' } })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      assert.deepEqual([answer.status, await answer.text(), answer.headers.get('content-length')], [200, '{"ok":true}', '11']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('lazyRequest (what toNodeHandler hands a handler)', () => {
  const parts = (body: string | null) => ({
    href: 'http://127.0.0.1:3000/api/notes?x=1',
    method: body === null ? 'GET' : 'POST',
    headers: [['content-type', 'application/json'], ['x-trace', 'a']] as Array<[string, string]>,
    body: body === null ? null : (Buffer.from(body) as Buffer<ArrayBuffer>),
  });

  it('passes for a Request everywhere: its own readers, clone, new Request(request) and a copy with other headers', async () => {
    const request = lazyRequest(parts('{"a":1}'));
    assert.ok(request instanceof Request);
    assert.deepEqual([request.method, request.url, request.headers.get('x-trace')], ['POST', 'http://127.0.0.1:3000/api/notes?x=1', 'a']);
    assert.equal(unreadBody(request)?.byteLength, 7, 'nothing needed the real Request yet');
    const copy = new Request(request, { headers: { 'x-trace': 'b' } });
    assert.deepEqual([copy.method, copy.url, copy.headers.get('x-trace'), await copy.text()], ['POST', request.url, 'b', '{"a":1}']);
    assert.equal(unreadBody(request), undefined, 'made once something needed it');
    assert.equal(request.bodyUsed, true, 'the copy took the body, as it does from a real Request');

    const other = lazyRequest(parts('{"b":2}'));
    assert.deepEqual(await other.clone().json(), { b: 2 });
    assert.deepEqual(await other.json(), { b: 2 });
    assert.ok(other.signal instanceof AbortSignal);
    assert.equal(await Promise.resolve(other), other, 'not a thenable');
    assert.equal(typeof (await Request.prototype.arrayBuffer.call(lazyRequest(parts('xyz')))).byteLength, 'number');
  });

  it('keeps headers set before the real Request is made', async () => {
    const request = lazyRequest(parts(null));
    request.headers.set('x-added', 'yes');
    assert.equal(new Request(request).headers.get('x-added'), 'yes');
    assert.equal(request.body, null);
    assert.equal('clone' in request && 'method' in request, true);
  });

  it('keeps one headers object before and after the real Request is made: a change through an earlier reference is not lost', async () => {
    const request = lazyRequest(parts('{"a":1}'));
    const headers = request.headers;
    headers.set('x-before', '1');
    const copy = request.clone(); // the real Request is made now
    assert.equal(copy.headers.get('x-before'), '1');
    headers.set('x-after', '2');
    headers.append('x-trace', 'b');
    assert.equal(request.headers, headers, 'the same object');
    assert.deepEqual([request.headers.get('x-after'), request.headers.get('x-trace')], ['2', 'a, b']);
    const later = request.clone();
    assert.deepEqual([later.headers.get('x-after'), later.headers.get('x-trace')], ['2', 'a, b'], 'the real Request has the change');
    assert.deepEqual([...headers].map(([name]) => name), ['content-type', 'x-after', 'x-before', 'x-trace']);
    headers.delete('x-before');
    assert.equal(request.clone().headers.has('x-before'), false);
    assert.equal(await request.text(), '{"a":1}');
  });

  it('keeps what a middleware adds to the request (assignment, defineProperty), before and after the real Request is made', async () => {
    for (const madeFirst of [false, true]) {
      const request = lazyRequest(parts('{"a":1}')) as Request & Record<string, unknown>;
      if (madeFirst) request.clone();
      Object.defineProperty(request, 'user', { value: { id: 'usr_1' } }); // not configurable, not writable
      Object.defineProperty(request, 'session', { value: 's', configurable: true, enumerable: true, writable: true });
      request.tag = 'x';
      // A getter a middleware adds reads the request it was added to, as on a real one.
      Object.defineProperty(request, 'line', { get(this: Request) { return `${this.method} ${new URL(this.url).pathname}`; } });
      assert.equal(request.line, 'POST /api/notes', `made first: ${madeFirst}`);
      assert.deepEqual(request.user, { id: 'usr_1' }, `made first: ${madeFirst}`);
      assert.deepEqual(Object.getOwnPropertyDescriptor(request, 'user'), { value: { id: 'usr_1' }, writable: false, enumerable: false, configurable: false });
      assert.deepEqual(Object.keys(request), ['session', 'tag']);
      assert.ok('user' in request && 'tag' in request && 'clone' in request);
      assert.throws(() => {
        request.user = 'other';
      }, TypeError);
      assert.throws(() => {
        (request as { method: string }).method = 'PUT';
      }, TypeError, 'a getter of Request stays read-only, as on a real one');
      assert.equal(delete request.session, true);
      assert.deepEqual(Object.keys(request), ['tag']);
      assert.equal(unreadBody(request)?.byteLength, madeFirst ? undefined : 7, 'tags alone make no Request');
      assert.equal(request.session, undefined);
      assert.equal(await request.text(), '{"a":1}');
    }
  });

  it('reaches the backend with its body whole when a middleware copies the Request first', async () => {
    const seen: string[] = [];
    const server = createServer(
      toNodeHandler(async (request) => {
        const copy = new Request(request, { headers: { ...Object.fromEntries(request.headers), 'x-seen': '1' } });
        seen.push(copy.headers.get('x-seen')!);
        return new Response(await copy.text());
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, { method: 'POST', body: 'the body' });
      assert.deepEqual([answer.status, await answer.text(), seen], [200, 'the body', ['1']]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('LinkedHeaders.of (a request\'s headers, copied into the Headers on first need)', () => {
  const pairs: Array<[string, string]> = [
    ['host', 'app.example'],
    ['x-b', '1'],
    ['x-b', '2'],
    ['set-cookie', 'a=1'],
    ['set-cookie', 'b=2'],
  ];

  it('reads as a Headers made of the same pairs would, before and after the copy', () => {
    const model = new Headers(pairs);
    const copied = LinkedHeaders.of(pairs);
    copied.has('host'); // anything but get copies the pairs in
    for (const headers of [LinkedHeaders.of(pairs), copied]) {
      for (const name of ['host', 'HOST', 'X-B', 'set-cookie', 'x-none']) assert.equal(headers.get(name), model.get(name), name);
      assert.throws(() => headers.get('bad name'), TypeError, 'a name Headers refuses');
      assert.deepEqual([...headers], [...model]);
      assert.deepEqual(headers.getSetCookie(), ['a=1', 'b=2']);
      assert.ok(headers instanceof Headers);
    }
  });

  it('reads pairs a middleware changed (a name in capitals, a value to trim, a number) as Headers would', () => {
    const changed = [
      ['X-Tenant', 'acme'],
      ['x-pad', '  v\t'],
      ['x-count', 3 as unknown as string],
    ] as Array<[string, string]>;
    const headers = LinkedHeaders.of(changed);
    const model = new Headers(changed);
    for (const name of ['x-tenant', 'x-pad', 'x-count']) assert.equal(headers.get(name), model.get(name), name);
    assert.throws(() => LinkedHeaders.of([['x-bad', 'a\nb']]), TypeError, 'refused as Headers refuses it');
  });

  it('keeps every pair through a change, and hands all of them to a Request made with it', () => {
    const headers = LinkedHeaders.of(pairs);
    headers.set('x-trace', 't');
    headers.delete('host');
    assert.deepEqual([...headers.keys()], ['set-cookie', 'set-cookie', 'x-b', 'x-trace']);
    const request = new Request('https://app.example/', { headers: LinkedHeaders.of(pairs) });
    assert.equal(request.headers.get('x-b'), '1, 2');
    assert.match(inspect(LinkedHeaders.of(pairs)), /'x-b': '1, 2'/, 'inspect shows every header');
  });
});

describe('jsonResponse’s lazy answers', () => {
  it('pass for a Response: status, headers, body readers, clone, new Response(null, answer)', async () => {
    const answer = jsonResponse({ a: 1 }, { status: 201 });
    assert.ok(answer instanceof Response);
    assert.deepEqual([answer.status, answer.ok, answer.statusText, answer.headers.get('content-type')], [201, true, '', 'application/json; charset=utf-8']);
    assert.deepEqual(await answer.clone().json(), { a: 1 });
    assert.deepEqual(await answer.json(), { a: 1 });
    assert.equal(answer.bodyUsed, true);
    const head = new Response(null, jsonResponse({ b: 2 }, { status: 404, headers: { 'x-extra': '1' } }));
    assert.deepEqual([head.status, head.headers.get('x-extra'), head.headers.get('cache-control')], [404, '1', 'no-store']);
    assert.equal(await new Response(jsonResponse({ c: 3 }).body).text(), '{"c":3}');
    assert.throws(() => jsonResponse({}, { status: 204 }), TypeError);
  });

  it('keep one headers object before and after the real Response is made, and what is added to them', async () => {
    for (const given of [undefined, { 'x-given': '1' }]) {
      const answer = jsonResponse({ a: 1 }, given === undefined ? {} : { headers: given }) as Response & Record<string, unknown>;
      const headers = answer.headers;
      Object.defineProperty(answer, 'tag', { value: 'kept' });
      assert.deepEqual(await answer.clone().json(), { a: 1 }); // the real Response is made now
      headers.set('x-late', 'yes');
      assert.equal(answer.headers, headers);
      assert.equal(answer.tag, 'kept');
      assert.deepEqual([answer.headers.get('x-late'), new Response(null, answer).headers.get('x-late'), answer.clone().headers.get('x-late')], ['yes', 'yes', 'yes']);
      assert.equal(answer.headers.get('x-given'), given === undefined ? null : '1');
    }
  });

  it('are written by toNodeHandler with the headers set on them after they were made', async () => {
    const server = createServer(
      toNodeHandler(async (request) => {
        const answer = new URL(request.url).pathname === '/error' ? toErrorResponse(new MarketplaceKitError('ERR_RATE_LIMITED', 'wait', { status: 429, retryAfterMs: 2000 })) : jsonResponse({ ok: true });
        answer.headers.set('x-added', 'later');
        return answer;
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const ok = await fetch(`${base}/`);
      assert.deepEqual([ok.status, ok.headers.get('x-added'), ok.headers.get('cache-control'), await ok.text()], [200, 'later', 'no-store', '{"ok":true}']);
      const limited = await fetch(`${base}/error`);
      assert.deepEqual([limited.status, limited.headers.get('retry-after'), limited.headers.get('x-added'), (await limited.json()).error.code], [429, '2', 'later', 'ERR_RATE_LIMITED']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
