import { expect } from '@open-wc/testing';
import { FakeKit, sampleEntitlement, sampleUser } from '../../src/testing/fake-kit.js';

// FakeKit is documented for app developers' own tests: it must behave as the real kit does where
// docs/testing.md says it does.
describe('FakeKit', () => {
  it('notifies subscribers once per setter that changed something, and not for one that did not', () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement());
    let heard = 0;
    kit.subscribe(() => heard++);
    kit.setTheme('dark');
    kit.setTheme('dark');
    kit.setLocale('en-US');
    expect(heard).to.equal(1);
    kit.setSignedOut();
    kit.setSignedOut();
    expect(heard).to.equal(2);
    // By value: the same session or error again, in new objects, is no change either.
    kit.setSession(sampleUser, sampleEntitlement());
    kit.setSession({ ...sampleUser }, sampleEntitlement());
    kit.setError();
    kit.setError();
    expect(heard).to.equal(4);
  });

  it('decides access with its entitlement in every state, as the real kit does (which keeps it through an error)', () => {
    const kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'pro', features: ['export'] })).setError();
    expect([kit.has('export'), kit.hasPlan('pro'), kit.access({ feature: 'export' }).granted]).to.deep.equal([true, true, true]);
    kit.setSignedOut();
    expect(kit.has('export')).to.equal(false);
  });

  it("rejects upgrade() with ERR_NOT_EMBEDDED on a developer's own site, as the real kit does", async () => {
    const kit = new FakeKit().setSession();
    kit.embedded = false;
    kit.scriptUpgrade({ outcome: 'upgraded' });
    const failure = await kit.upgrade({ plan: 'pro' }).then(
      () => null,
      (error: { code?: string }) => error,
    );
    expect(failure?.code).to.equal('ERR_NOT_EMBEDDED');
    expect(kit.calls.upgrade).to.deep.equal([{ plan: 'pro' }], 'the request is recorded all the same');
    kit.embedded = true;
    expect(await kit.upgrade()).to.equal('upgraded', 'the script is still there for the next call');
  });
});
