import { expect } from '@open-wc/testing';
import { schemaCases, schemaTable } from '../support/schema-cases.js';

describe('shared schemas in the browser (zod/mini)', () => {
  for (const c of schemaCases) {
    it(`${c.schema}: ${c.name}`, () => {
      expect(schemaTable[c.schema]!.safeParse(c.value).success).to.equal(c.valid);
    });
  }
});
