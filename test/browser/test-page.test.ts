import { expect } from '@open-wc/testing';

// The test page's own set-up (test/support/clonable-failures.js, loaded by the runner's HTML):
// without it a failing assertion about a DOM node ends its whole file in a 120 s timeout.
describe('the test page', () => {
  it('clones a failure report that holds DOM nodes and functions, with descriptions in their place', () => {
    const button = document.createElement('button');
    button.setAttribute('part', 'action');
    const failure = new Error('expected <button> to equal null');
    const report = { error: Object.assign(failure, { actual: button, expected: null, check: function check() {} }), text: document.createTextNode('x') };
    const copy = structuredClone(report) as { error: { message: string; actual: unknown; expected: unknown; check: unknown }; text: unknown };
    expect([copy.error.message, copy.error.actual, copy.error.expected, copy.error.check, copy.text]).to.deep.equal([
      'expected <button> to equal null',
      '<button part="action"></button>',
      null,
      '[function check]',
      '[#text]',
    ]);
  });

  it('still refuses what is not a clone failure, and clones everything else as the platform does', () => {
    expect(() => structuredClone(undefined, { transfer: [1 as unknown as Transferable] })).to.throw(TypeError);
    const date = new Date(0);
    expect(structuredClone({ date, list: [1, 2] })).to.deep.equal({ date, list: [1, 2] });
  });
});
