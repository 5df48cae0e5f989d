import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkAccess, hasAccess, isOverQuota } from '../../src/shared/access.js';
import { NOW, accessCases } from '../support/access-cases.js';

describe('access rules', () => {
  for (const c of accessCases) {
    it(c.name, () => {
      const decision = checkAccess(c.entitlement, c.requirement, NOW);
      assert.equal(decision.reason, c.reason);
      assert.equal(decision.granted, c.reason === 'granted');
      assert.equal(hasAccess(c.entitlement, c.requirement, NOW), c.reason === 'granted');
    });
  }

  it('isOverQuota compares api_calls with limit', () => {
    const e = { user_id: 'usr_1', app_id: 'app_1', plan: 'p', features: [], usage: { api_calls: 4, limit: 5 } };
    assert.equal(isOverQuota(e), false);
    assert.equal(isOverQuota({ ...e, usage: { api_calls: 5, limit: 5 } }), true);
    assert.equal(isOverQuota(null), false);
  });
});
