// The page of the elements benchmark (test/bench/elements.bench.ts), bundled with Vite as an IIFE:
// every element, the reference gate (reference-gate.ts), and a FakeKit registered as the page's
// kit. `window.bench` builds a page of N elements and times a first render and entitlement
// changes, in the page's own clock; `window.bench.gates` does the same for N gates, or N
// reference gates on a kit of their own.
import '../../src/elements/define.js';
import type { LitElement } from 'lit';
import { ReferenceGate } from './reference-gate.js';
import { FakeKit, sampleEntitlement, sampleUser } from '../../src/testing/fake-kit.js';

// Defined here: the package's `sideEffects` list would let the bundler drop a module that only defines it.
customElements.define('reference-gate', ReferenceGate);

const BASIC = sampleEntitlement({ plan: 'basic', features: ['reports'] });
const PRO = sampleEntitlement({ plan: 'pro', features: ['reports', 'export'] });

const kit = new FakeKit().setSession(sampleUser, BASIC).register();
let container: HTMLElement | null = null;

/** A page's worth of markup: mostly gates with slotted content, one in ten a badge, meter or button. */
function markup(n: number): string {
  const others = ['<mp-plan-badge></mp-plan-badge>', '<mp-usage-meter></mp-usage-meter>', '<mp-user-badge></mp-user-badge>', '<mp-upgrade-button plan="pro"></mp-upgrade-button>'];
  let out = '';
  for (let i = 0; i < n; i++) {
    out +=
      i % 10 === 9
        ? others[Math.floor(i / 10) % others.length]
        : `<section><mp-gate plan="pro" feature="export"><p>Report ${i}: <button type="button">Export</button></p></mp-gate></section>`;
  }
  return out;
}

/** What a switch cost: ms to every element updated, and to the layout that follows. */
interface Switch {
  update: number;
  layout: number;
  unlocked: boolean;
}

/** Plan switches of the page's kit or of `referenceKit`, timed until `which` elements are updated and laid out. */
async function timeSwitch(switched: FakeKit, which: () => LitElement[]): Promise<Switch> {
  const next = switched.entitlement?.plan === 'pro' ? BASIC : PRO;
  const start = performance.now();
  switched.setEntitlement(next);
  for (let round = 0; round < 5; round++) await Promise.all(which().map((el) => el.updateComplete));
  const update = performance.now() - start;
  void document.body.offsetHeight;
  return { update, layout: performance.now() - start, unlocked: next === PRO };
}

/** The reference gates' own kit: the page's kit is `<mp-gate>`'s. */
const referenceKit = new FakeKit().setSession(sampleUser, BASIC);
let gateBox: HTMLElement | null = null;

/** N gates alone on the page, `<mp-gate>` or the reference, with the same content, locked; then one plan switch at a time. */
const gates = {
  async build(n: number, tag: 'mp-gate' | 'reference-gate'): Promise<void> {
    container?.remove();
    gateBox?.remove();
    kit.setEntitlement(BASIC);
    referenceKit.setEntitlement(BASIC);
    gateBox = document.createElement('main');
    // The reference has no paywall of its own: it gets one of the same parts as the gate's card
    // (heading, text, button) in its locked slot, so that both show as much when they lock.
    const paywall = tag === 'reference-gate' ? '<div slot="locked"><p>Unlock export</p><p>Upgrade your plan to use export.</p><button type="button">Upgrade</button></div>' : '';
    let markup = '';
    for (let i = 0; i < n; i++) markup += `<section><${tag} plan="pro" feature="export"><p>Report ${i}: <button type="button">Export</button></p>${paywall}</${tag}></section>`;
    gateBox.innerHTML = markup;
    // Set before they are connected, so before their upgrade: the reference reads it on connecting.
    for (const el of gateBox.querySelectorAll('reference-gate')) (el as ReferenceGate).kit = referenceKit;
    document.body.append(gateBox);
    const all = [...gateBox.querySelectorAll<LitElement>(tag)];
    for (let round = 0; round < 5; round++) await Promise.all(all.map((el) => el.updateComplete));
    void document.body.offsetHeight;
  },
  switch(): Promise<Switch> {
    const all = [...gateBox!.querySelectorAll<LitElement>('mp-gate, reference-gate')];
    return timeSwitch(all[0]?.localName === 'reference-gate' ? referenceKit : kit, () => all);
  },
};

const elements = () => [...container!.querySelectorAll<LitElement>('*')].filter((el) => el.localName.startsWith('mp-'));
const settled = async () => {
  // Until no element has a pending update (an update may request another).
  for (let round = 0; round < 5; round++) await Promise.all(elements().map((el) => el.updateComplete));
};

const api = {
  /** Builds N elements (locked: a basic plan) and returns ms to all rendered, and then to the first layout. */
  async build(n: number): Promise<{ render: number; layout: number }> {
    container?.remove();
    gateBox?.remove();
    kit.setEntitlement(BASIC);
    container = document.createElement('main');
    const start = performance.now();
    container.innerHTML = markup(n);
    document.body.append(container);
    await settled();
    const render = performance.now() - start;
    void document.body.offsetHeight;
    return { render, layout: performance.now() - start };
  },
  /** One plan switch (unlocking or locking every gate): ms to every element updated, and to the next layout. */
  change: (): Promise<Switch> => timeSwitch(kit, elements),
  count: () => elements().length,
  gates,
};

(window as unknown as { bench: typeof api }).bench = api;
