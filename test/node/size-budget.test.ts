// The size budgets in `npm test` (so CI fails when one is exceeded): the same measurement as
// `npm run size` (test/bench/size.ts), built fresh from the sources.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measureSizes } from '../bench/size.js';

describe('size budgets (npm run size)', () => {
  it('what loads before the kit is ready, all runtime chunks and the script tag stay within their budgets', async () => {
    const result = await measureSizes();
    assert.deepEqual(result.over, [], `over budget:\n${result.lines.join('\n')}`);
  });
});
