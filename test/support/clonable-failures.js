// Loaded before the test framework in every browser test page (web-test-runner.config.js).
//
// The runner sends each test's result to Node through `structuredClone`, and a chai failure whose
// actual or expected value is a DOM node (`expect(button).to.equal(null)`) cannot be cloned: the
// report is lost and the whole file "did not finish within 120000ms", with no word of which test
// failed (modernweb-dev/web#2967, open-wc/open-wc#2880). When a clone fails, this clones a copy
// in which nodes and functions are replaced by a description, so the failure is reported as one.
// The kit's own code does not use structuredClone.

const clone = globalThis.structuredClone;

/** A short text for a value that cannot be cloned. */
function describe(value) {
  if (value instanceof Element) {
    const html = value.outerHTML;
    return html.length > 200 ? `${html.slice(0, 200)}…` : html;
  }
  if (value instanceof Node) return `[${value.nodeName}]`;
  return `[function ${value.name || 'anonymous'}]`;
}

/** `value` with every node and function replaced by its description; cycles are kept. */
function clonable(value, seen = new Map()) {
  if (typeof value === 'function' || value instanceof Node) return describe(value);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return seen.get(value);
  const copy = Array.isArray(value) ? [] : {};
  seen.set(value, copy);
  if (value instanceof Error) Object.assign(copy, { name: value.name, message: value.message, stack: value.stack });
  for (const key of Object.keys(value)) copy[key] = clonable(value[key], seen);
  return copy;
}

globalThis.structuredClone = (value, options) => {
  try {
    return clone(value, options);
  } catch (error) {
    if (!(error instanceof DOMException && error.name === 'DataCloneError')) throw error;
    return clone(clonable(value), options);
  }
};
