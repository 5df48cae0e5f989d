import { expect } from '@open-wc/testing';
import * as z from 'zod/mini';
import { BRIDGE_PACKET, BRIDGE_PROTOCOL } from '../../../src/shared/bridge.js';
import { Usage, describeFailure, length, matches } from '../../../src/shared/schemas.js';

// The shared schemas use refinements where zod has dedicated checks (minLength, maxLength, regex,
// int, nonnegative, maximum), to keep those checks' code out of the browser bundle. zod's own checks
// are the oracle here: both must accept and refuse exactly the same values.

const accepts = (schema: z.ZodMiniType, value: unknown) => schema.safeParse(value).success;

function expectSameVerdicts(ours: z.ZodMiniType, oracle: z.ZodMiniType, values: unknown[], label: string) {
  for (const value of values) {
    expect(accepts(ours, value), `${label}: ${JSON.stringify(value)}`).to.equal(accepts(oracle, value));
  }
}

/** Strings around `limit` characters: plain, emoji (surrogate pairs), lone and reversed surrogates. */
function stringsAround(limit: number): string[] {
  const strings: string[] = [];
  for (let n = Math.max(0, limit - 2); n <= limit + 2; n++) {
    strings.push('a'.repeat(n), '😀'.repeat(n), 'a😀'.repeat(n).slice(0, n), '\uD800'.repeat(n), '\uDC00\uD800'.repeat(n));
    strings.push(`${'😀'.repeat(n)}\uD83D`, `${'a'.repeat(n)}😀`);
  }
  return strings;
}

describe('schema refinements match zod\'s own checks', () => {
  it('length(min, max) counts characters as minLength and maxLength do (code points)', () => {
    for (const [min, max] of [[0, 0], [0, 1], [1, 1], [1, 2], [2, 3], [3, 5], [2, 35], [1, Infinity], [3, Infinity]] as const) {
      const ours = z.string().check(length(min, max));
      const checks = [...(min > 0 ? [z.minLength(min)] : []), ...(max === Infinity ? [] : [z.maxLength(max)])];
      const oracle = z.string().check(...checks);
      const values = [...stringsAround(min), ...(max === Infinity ? [] : stringsAround(max)), 'x'.repeat(400), null, 7];
      expectSameVerdicts(ours, oracle, values, `length(${min}, ${max})`);
    }
  });

  it('matches(pattern) accepts what z.regex(pattern) does, also with a stateful pattern', () => {
    for (const pattern of [/^usr_[A-Za-z0-9_-]{1,64}$/, /^bearer$/i, /a/g, /^\/(?![/\\])[^\s]*$/]) {
      const ours = z.string().check(matches(pattern, 'no'));
      const oracle = z.string().check(z.regex(pattern));
      const values = ['usr_1', 'usr_', `usr_${'x'.repeat(65)}`, 'Bearer', 'a', 'aa', 'ba', '/path', '//host', '/\\x', '', 42];
      // Twice each: a /g pattern remembers where it stopped unless reset.
      expectSameVerdicts(ours, oracle, [...values, ...values], String(pattern));
    }
  });

  it('counts (usage) are what z.int() with z.nonnegative() accepts', () => {
    const oracle = z.object({ api_calls: z.number().check(z.int(), z.nonnegative()), limit: z.number().check(z.int(), z.nonnegative()) });
    const numbers = [0, -0, 1, 7, -1, 1.5, 0.1, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), Number.MAX_VALUE, NaN, Infinity, -Infinity, '1', null];
    expectSameVerdicts(Usage, oracle, numbers.map((api_calls) => ({ api_calls, limit: 10 })), 'Usage');
  });

  it('bridge heights and packet ids are what nonnegative/maximum and int() accept', () => {
    const packet = BRIDGE_PACKET;
    const heights = [0, -0, 1, 0.5, 999_999.5, 1_000_000, 1_000_000.5, 1_000_001, -1, -1e-9, NaN, Infinity, '5'];
    const heightOracle = z.object({ height: z.number().check(z.nonnegative(), z.maximum(1_000_000)) });
    expectSameVerdicts(BRIDGE_PROTOCOL.resize.params, heightOracle, heights.map((height) => ({ height })), 'resize');
    const ids = [0, -1, 3, 2.5, 2 ** 53 - 1, 2 ** 53, NaN, Infinity, '1'];
    const idOracle = z.object({ id: z.number().check(z.int()) });
    const shell = { type: 'method', serviceID: 'marketplace-app-bridge' };
    for (const id of ids) expect(accepts(packet, { ...shell, id }), `id ${id}`).to.equal(accepts(idOracle, { id }));
  });
});

describe('BRIDGE_PROTOCOL', () => {
  it('names each method once, with who calls it', () => {
    const by = (direction: string) => Object.entries(BRIDGE_PROTOCOL).filter(([, method]) => method.direction === direction).map(([name]) => name);
    expect(by('app-to-host')).to.deep.equal(['getContext', 'resize', 'navigate', 'openExternal', 'openUpgrade', 'toast', 'setTitle']);
    expect(by('host-to-app')).to.deep.equal(['themeChanged', 'localeChanged', 'entitlementsChanged']);
  });
});

describe('describeFailure', () => {
  it('names what failed, where, and why', () => {
    const toast = BRIDGE_PROTOCOL.toast.params.safeParse({ message: '' });
    expect(!toast.success && describeFailure('toast params', toast.error)).to.equal('Invalid toast params at message: expected 1 to 1000 characters');
    const root = z.string().safeParse(5);
    expect(!root.success && describeFailure('title', root.error)).to.match(/^Invalid title: /);
  });
});
