import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MarketplaceKitError } from '../../src/shared/errors.js';
import { EntitlementShort, Profile, Theme, isKnownEvent, parseOrThrow, parseWebhookDelivery } from '../../src/shared/schemas.js';
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
        error.message === 'Invalid whoami response at email: expected string',
    );
  });

  it('says what was expected where zod/mini says only "Invalid input"', () => {
    const message = (schema: Parameters<typeof parseOrThrow>[0], value: unknown) => {
      try {
        parseOrThrow(schema, value, 'answer');
      } catch (error) {
        return (error as Error).message;
      }
      assert.fail('expected a refusal');
    };
    assert.equal(message(Profile, null), 'Invalid answer: expected object');
    assert.equal(message(Theme, 'blue'), 'Invalid answer: expected "light" or "dark"');
    const short = { user_id: 'usr_1', app_id: 'app_1', plan: 'pro', features: [], usage: { api_calls: 0, limit: 5 } };
    assert.equal(message(EntitlementShort, { ...short, status: 'active' }), 'Invalid answer at status: expected no value');
    assert.equal(message(EntitlementShort, { ...short, features: ['export', 7] }), 'Invalid answer at features: expected a list of features of 0 to 100 characters each');
    assert.equal(message(EntitlementShort, { ...short, usage: { api_calls: '1', limit: 5 } }), 'Invalid answer at usage.api_calls: expected a whole number, 0 or more');
    assert.equal(message(Profile, { id: 'usr_1', email: 'a@b.c', name: 'n', avatar_url: 'ftp://x' }), 'Invalid answer at avatar_url: expected an http(s) URL', 'a refinement keeps its own message');
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
