// The server module's small building blocks, on their own: what the handlers' tests reach only
// through one path each.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { MarketplaceKitError } from '../../src/shared/errors.js';
import { createMemoryReplayStore } from '../../src/server/index.js';
import { linkSignals } from '../../src/server/lib/abort.js';
import { readCookie, readCookies } from '../../src/server/lib/cookies.js';
import { optionsObject } from '../../src/server/lib/options-object.js';
import { wholeSecondsOption } from '../../src/server/lib/whole-seconds.js';

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
    assert.equal(wholeSecondsOption(undefined, 'expiresIn', 300), 300);
    assert.equal(wholeSecondsOption(1, 'expiresIn', 300), 1);
    assert.equal(wholeSecondsOption(300, 'expiresIn', 300), 300);
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
      assert.throws(() => wholeSecondsOption(value, 'expiresIn', 300), {
        code: 'ERR_CONFIG',
        message: `expiresIn must be a whole number of seconds from 1 to 300, ${given}`,
      });
    }
  });
});

describe('numeric options', () => {
  it('quote a string in the message, as an unparsed process.env value is one', () => {
    assert.throws(() => createMemoryReplayStore({ maxEntries: '50000' as unknown as number }), {
      code: 'ERR_CONFIG',
      message: /must be a finite number of at least 1, got "50000"$/,
    });
  });
});
