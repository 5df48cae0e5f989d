import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccessDeniedError, assertAccess } from '../../src/server/access.js';
import { checkAccess, hasAccess, isOverQuota, type AccessRequirement } from '../../src/shared/access.js';
import { isKitError } from '../../src/shared/errors.js';
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

  it('hasAccess decides at the time it is given, not by the real clock', () => {
    const e = { user_id: 'usr_1', app_id: 'app_1', plan: 'p', status: 'active', features: [], usage: { api_calls: 0, limit: 5 } };
    assert.equal(hasAccess({ ...e, expires_at: '2999-01-01T00:00:00Z' }, {}, Date.parse('3000-01-01T00:00:00Z')), false);
    assert.equal(hasAccess({ ...e, expires_at: '2000-01-01T00:00:00Z' }, {}, Date.parse('1999-01-01T00:00:00Z')), true);
  });

  it('refuses a requirement it cannot read with ERR_CONFIG, whatever the entitlement, instead of granting access', () => {
    const e = { user_id: 'usr_1', app_id: 'app_1', plan: 'pro', status: 'active', features: ['basic'], usage: { api_calls: 0, limit: 5 } };
    const unreadable: unknown[] = [
      'export',
      ['export'],
      null,
      { features: ['export'] },
      { Feature: 'export' },
      { feature: 'export', extra: undefined },
      { feature: 1 },
      { plan: null },
      { plan: ['pro', 2] },
      { metered: 'yes' },
    ];
    for (const requirement of unreadable) {
      for (const entitlement of [e, null]) {
        assert.throws(
          () => checkAccess(entitlement, requirement as AccessRequirement, NOW),
          (error: unknown) => isKitError(error, 'ERR_CONFIG') && /feature \(a text\)/.test(error.message),
          `${JSON.stringify(requirement)} with ${entitlement ? 'an' : 'no'} entitlement`,
        );
      }
    }
    assert.deepEqual(checkAccess(e, { feature: 'export', plan: undefined, metered: undefined }, NOW), { granted: false, reason: 'feature' });
    assert.deepEqual(checkAccess(e, undefined, NOW), { granted: true, reason: 'granted' });
  });

  it('isOverQuota compares api_calls with limit', () => {
    const e = { user_id: 'usr_1', app_id: 'app_1', plan: 'p', features: [], usage: { api_calls: 4, limit: 5 } };
    assert.equal(isOverQuota(e), false);
    assert.equal(isOverQuota({ ...e, usage: { api_calls: 5, limit: 5 } }), true);
    assert.equal(isOverQuota(null), false);
  });
});

describe('assertAccess (server side, same rules)', () => {
  for (const c of accessCases) {
    it(`${c.name}: ${c.reason === 'granted' ? 'passes' : `throws 403 ${c.reason}`}`, () => {
      if (c.reason === 'granted') {
        assertAccess(c.entitlement, c.requirement, NOW);
        return;
      }
      assert.throws(
        () => assertAccess(c.entitlement, c.requirement, NOW),
        (error: unknown) => {
          assert.ok(error instanceof AccessDeniedError, `expected AccessDeniedError, got ${String(error)}`);
          assert.equal(error.code, 'ERR_ACCESS_DENIED');
          assert.equal(error.status, 403);
          assert.equal(error.reason, c.reason);
          return true;
        },
      );
    });
  }

  it('refuses a metered call at the usage limit with reason over_quota, and lets one below it through', () => {
    const e = { user_id: 'usr_1', app_id: 'app_1', plan: 'pro', features: ['export'], usage: { api_calls: 5, limit: 5 } };
    assertAccess({ ...e, usage: { api_calls: 4, limit: 5 } }, { metered: true }, NOW);
    assertAccess(e, {}, NOW); // unmetered: the quota does not matter
    assert.throws(
      () => assertAccess(e, { metered: true }, NOW),
      (error: unknown) => {
        assert.ok(error instanceof AccessDeniedError);
        assert.equal(error.status, 403);
        assert.equal(error.reason, 'over_quota');
        assert.deepEqual(error.toJSON(), { error: { code: 'ERR_ACCESS_DENIED', message: 'Access denied: the usage limit is reached', reason: 'over_quota' } });
        return true;
      },
    );
  });
});
