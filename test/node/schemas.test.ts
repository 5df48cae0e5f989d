import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MarketplaceKitError } from '../../src/shared/errors.js';
import { Profile, isKnownEvent, parseOrThrow, parseWebhookDelivery } from '../../src/shared/schemas.js';
import { schemaCases, schemaTable } from '../support/schema-cases.js';

describe('shared schemas', () => {
  for (const c of schemaCases) {
    it(`${c.schema}: ${c.name}`, () => {
      assert.equal(schemaTable[c.schema]!.safeParse(c.value).success, c.valid);
    });
  }

  it('parseOrThrow names what failed and where, with a stable code', () => {
    assert.throws(
      () => parseOrThrow(Profile, { id: 'usr_1' }, 'whoami response', 'ERR_RESPONSE_INVALID', 200),
      (error: unknown) =>
        error instanceof MarketplaceKitError &&
        error.code === 'ERR_RESPONSE_INVALID' &&
        error.status === 200 &&
        /^Invalid whoami response at email/.test(error.message),
    );
  });

  it('parseWebhookDelivery keeps unknown kinds as generic events and checks known kinds strictly', () => {
    const generic = parseWebhookDelivery({ event: 'app.installed', timestamp: 't', data: { a: 1 } });
    assert.equal(isKnownEvent(generic), false);
    assert.deepEqual(generic.data, { a: 1 });
    const known = parseWebhookDelivery({ event: 'user.revoked', timestamp: 't', data: { user_id: 'usr_9' } });
    assert.ok(isKnownEvent(known) && known.event === 'user.revoked' && known.data.user_id === 'usr_9');
    assert.throws(
      () => parseWebhookDelivery({ event: 'user.revoked', timestamp: 't', data: { user_id: 'nobody' } }),
      (error: unknown) => error instanceof MarketplaceKitError && error.code === 'ERR_WEBHOOK_BODY_INVALID',
    );
  });
});
