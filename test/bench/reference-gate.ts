// The reference of the gates benchmark (test/bench/elements.bench.ts): the least a Lit element can do
// to gate content on an entitlement. It listens to a kit and shows its default slot when the kit
// grants the feature and plan, its `locked` slot otherwise; no paywall card, texts, live region,
// focus care or events. `<mp-gate>` re-rendering within 2× of it on one entitlement change is
// issue 39's goal for the elements.
import { LitElement, html } from 'lit';
import type { Kit } from '../../src/runtime/types.js';

export class ReferenceGate extends LitElement {
  static override properties = { feature: {}, plan: {} };

  declare feature: string | undefined;
  declare plan: string | undefined;
  /** Set before the element is connected (before its upgrade, as a plain property). */
  declare kit: Kit;
  private _unsubscribe: (() => void) | undefined;

  override connectedCallback(): void {
    super.connectedCallback();
    this._unsubscribe = this.kit.subscribe(() => this.requestUpdate());
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this._unsubscribe?.();
  }

  override render() {
    const granted = this.kit.access({ feature: this.feature, plan: this.plan }).granted;
    return granted ? html`<slot></slot>` : html`<slot name="locked"></slot>`;
  }
}
