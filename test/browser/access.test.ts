import { expect } from '@open-wc/testing';
import { checkAccess } from '../../src/shared/access.js';
import { NOW, accessCases } from '../support/access-cases.js';

describe('access rules in the browser', () => {
  for (const c of accessCases) {
    it(c.name, () => {
      expect(checkAccess(c.entitlement, c.requirement, NOW)).to.deep.equal({ granted: c.reason === 'granted', reason: c.reason });
    });
  }
});
