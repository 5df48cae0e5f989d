// The real browser under the kit (browserEnvironment in src/runtime/environment.ts): what the fake
// environment of the other tests stands for.
import { expect } from '@open-wc/testing';
import { browserEnvironment } from '../../../src/runtime/environment.js';
import { tick, until } from '../../support/runtime-fakes.js';

describe('the real browser environment (browserEnvironment)', () => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));

  it('reports the document\'s height as it changes, and nothing more once stopped', async () => {
    const env = browserEnvironment();
    const filler = document.createElement('div');
    document.body.append(filler);
    const heights: number[] = [];
    const stop = env.observeHeight((height) => heights.push(height));
    try {
      filler.style.height = '4321px';
      await until(() => heights.includes(env.measureHeight()));
      expect(env.measureHeight()).to.be.at.least(4321);
      stop();
      const seen = heights.length;
      filler.style.height = '6543px';
      await frame();
      await tick();
      expect(heights.length).to.equal(seen, 'no height after stop()');
    } finally {
      stop();
      filler.remove();
    }
  });

  it('reports the page being shown again (visibilitychange), and nothing more once stopped', () => {
    const env = browserEnvironment();
    let calls = 0;
    const stop = env.observeWake(() => calls++);
    try {
      document.dispatchEvent(new Event('visibilitychange'));
      expect(calls).to.equal(1);
      stop();
      document.dispatchEvent(new Event('visibilitychange'));
      expect(calls).to.equal(1, 'none after stop()');
    } finally {
      stop();
    }
  });

  it('scrubs the URL without touching history.state, which a router of the app may keep there', () => {
    const env = browserEnvironment();
    const original = location.href;
    const state = history.state as unknown;
    try {
      history.replaceState({ route: 'reports' }, '', original);
      env.replaceUrl(`${location.pathname}?scrubbed=1`);
      expect(location.search).to.equal('?scrubbed=1');
      expect(history.state).to.deep.equal({ route: 'reports' });
    } finally {
      history.replaceState(state, '', original);
    }
  });

  it('times with the page\'s own clock and timers: a cleared timer never fires, a timeout signal aborts as TimeoutError', async () => {
    const env = browserEnvironment();
    expect(Math.abs(env.now() - Date.now())).to.be.below(1_000);
    let fired = 0;
    const cleared = env.setTimeout(() => fired++, 0);
    env.clearTimeout(cleared);
    await new Promise<void>((resolve) => env.setTimeout(resolve, 1));
    expect(fired).to.equal(0);
    const signal = env.timeoutSignal(1);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    expect((signal.reason as DOMException).name).to.equal('TimeoutError');
  });
});
