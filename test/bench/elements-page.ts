// The page of the elements benchmark (test/bench/elements.bench.ts), bundled with Vite as an IIFE:
// every element, and a FakeKit registered as the page's kit. `window.bench` builds a page of N
// elements and times a first render and entitlement changes, in the page's own clock.
import '../../src/elements/define.js';
import type { LitElement } from 'lit';
import { FakeKit, sampleEntitlement, sampleUser } from '../../src/testing/fake-kit.js';

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

const elements = () => [...container!.querySelectorAll<LitElement>('*')].filter((el) => el.localName.startsWith('mp-'));
const settled = async () => {
  // Until no element has a pending update (an update may request another).
  for (let round = 0; round < 5; round++) await Promise.all(elements().map((el) => el.updateComplete));
};

const api = {
  /** Builds N elements (locked: a basic plan) and returns ms to all rendered, and then to the first layout. */
  async build(n: number): Promise<{ render: number; layout: number }> {
    container?.remove();
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
  async change(): Promise<{ update: number; layout: number; unlocked: boolean }> {
    const next = kit.entitlement?.plan === 'pro' ? BASIC : PRO;
    const start = performance.now();
    kit.setEntitlement(next);
    await settled();
    const update = performance.now() - start;
    void document.body.offsetHeight;
    return { update, layout: performance.now() - start, unlocked: next === PRO };
  },
  count: () => elements().length,
};

(window as unknown as { bench: typeof api }).bench = api;
