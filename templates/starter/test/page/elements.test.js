// A page test: the elements of index.html in Chromium, on FakeKit (no server, no simulator), in
// the states a user can be in. `npm run test:page` runs it (web-test-runner.config.js). Docs:
// marketplace-app-kit's docs/guides/testing-your-app.md.
import { expect, fixture, html } from '@open-wc/testing';
import { FakeKit, sampleEntitlement, sampleUser } from 'marketplace-app-kit/testing';
import 'marketplace-app-kit/elements';

// Your plans' names, as in mpkit.config.json.
const planNames = { free: 'Free', pro_monthly: 'Pro', pro_annual: 'Pro (annual)' };
let kit;

beforeEach(() => {
  // Ada on the free plan, as the page's kit (what createKit makes in the app).
  kit = new FakeKit().setSession(sampleUser, sampleEntitlement({ plan: 'free', features: [] })).setPlanNames(planNames).register();
});
afterEach(() => kit.destroy());

it('shows the export to Pro users only', async () => {
  const gate = await fixture(html`<mp-gate feature="export"><button id="export">Export to CSV</button></mp-gate>`);
  expect(gate.access).to.equal('locked');

  kit.setEntitlement(sampleEntitlement({ plan: 'pro_monthly', features: ['export'] }));
  await gate.updateComplete;
  expect(gate.access).to.equal('granted');
});

it('names the plan as your plans do, not by its id', async () => {
  kit.setEntitlement(sampleEntitlement({ plan: 'pro_monthly', features: ['export'] }));
  const badge = await fixture(html`<mp-plan-badge></mp-plan-badge>`);
  expect(badge.shadowRoot.textContent).to.contain('Pro');
  expect(badge.shadowRoot.textContent).not.to.contain('pro_monthly');
});
