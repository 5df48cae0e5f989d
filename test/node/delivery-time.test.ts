import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deliveryTime } from '../../src/server/lib/delivery-time.js';
import { hasRealDay } from '../../src/shared/schemas.js';

/** What a delivery's timestamp means, said plainly: the form, a day that exists, and Date.parse's time. */
const FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const reference = (timestamp: string) => (FORM.test(timestamp) && hasRealDay(timestamp) ? Date.parse(timestamp) : Number.NaN);

/** Deterministic pseudo-random numbers, so that a failure can be run again. */
function random(seed: number) {
  let state = seed;
  return (below: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state % below;
  };
}

const pad = (value: number, width: number) => String(value).padStart(width, '0');

describe('deliveryTime reads a delivery timestamp as Date.parse does, once', () => {
  it('on the edges of every field', () => {
    const cases = [
      '2026-05-01T12:00:00Z',
      '2026-05-01T12:00:00.1Z',
      '2026-05-01T12:00:00.123456789Z',
      '2026-05-01T12:00:00.1234567890Z',
      '2026-05-01T12:00:00.Z',
      '2026-05-01T24:00:00Z',
      '2026-05-01T24:00:00.000Z',
      '2026-05-01T24:00:00.0001Z',
      '2026-05-01T24:00:00.5Z',
      '2026-05-01T24:00:01Z',
      '2026-05-01T24:01:00Z',
      '2026-05-01T25:00:00Z',
      '2026-05-01T23:60:00Z',
      '2026-05-01T23:59:60Z',
      '2026-05-01T12:00:00+14:00',
      '2026-05-01T12:00:00-00:00',
      '2026-05-01T12:00:00+23:59',
      '2026-05-01T12:00:00+24:00',
      '2026-05-01T12:00:00+23:60',
      '2026-05-01T12:00:00+0200',
      '2026-02-29T12:00:00Z',
      '2028-02-29T12:00:00Z',
      '2100-02-29T12:00:00Z',
      '2000-02-29T12:00:00Z',
      '2026-04-31T12:00:00Z',
      '2026-00-10T12:00:00Z',
      '2026-13-10T12:00:00Z',
      '2026-05-00T12:00:00Z',
      '0000-01-01T00:00:00Z',
      '0099-12-31T23:59:59Z',
      '0100-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999Z',
      '+002026-05-01T12:00:00Z',
      '2026-05-01 12:00:00Z',
      '2026-05-01T12:00:00',
      '2026-05-01',
      '2026-05-01T12:00Z',
      '２026-05-01T12:00:00Z',
      '2026-05-01T12:00:00z',
      '',
    ];
    for (const timestamp of cases) assert.equal(deliveryTime(timestamp), reference(timestamp), timestamp);
  });

  it('on 50,000 timestamps, valid and mutated', () => {
    const next = random(20_260_501);
    const alphabet = '0123456789-:T.Z+z ';
    for (let i = 0; i < 50_000; i++) {
      let timestamp =
        `${pad(next(10_000), 4)}-${pad(next(14), 2)}-${pad(next(33), 2)}T${pad(next(26), 2)}:${pad(next(62), 2)}:${pad(next(62), 2)}` +
        (next(3) === 0 ? `.${String(next(1_000_000_000)).slice(0, 1 + next(9))}` : '') +
        [`Z`, `+${pad(next(25), 2)}:${pad(next(61), 2)}`, `-${pad(next(25), 2)}:${pad(next(61), 2)}`][next(3)];
      // Every other one mutated: a character replaced, dropped or added.
      if (i % 2 === 1) {
        const at = next(timestamp.length + 1);
        const character = alphabet[next(alphabet.length)]!;
        const edit = next(3);
        timestamp = timestamp.slice(0, at) + (edit === 1 ? '' : character) + timestamp.slice(edit === 2 ? at : at + 1);
      }
      assert.equal(deliveryTime(timestamp), reference(timestamp), timestamp);
    }
  });
});
