import { css } from 'lit';

export const gateStyles = css`
  :host {
    display: block;
  }
  /* One of the two slots shows, by the access decided (gate.ts, _body): the content's when it is
     granted, the locked one (the card, or the page's locked content) otherwise. */
  :host(:not([access='granted'])) slot:not([name]),
  :host([access='granted']) slot[name='locked'] {
    display: none;
  }
  /* The gate takes the focus itself when the look that had it went away (after an upgrade, say). */
  :host(:focus-visible) {
    outline: 2px solid var(--_focus);
    outline-offset: 4px;
    border-radius: var(--_radius);
  }
  [part~='card'] {
    display: grid;
    gap: 0.5em;
    justify-items: start;
    padding: var(--mp-gate-padding, 1.25em);
    border: 1px solid var(--_border);
    border-inline-start: 4px solid var(--_tone, var(--_accent));
    border-radius: var(--_radius);
  }
  :host([access='expired']),
  :host([access='past-due']),
  :host([state='error']) {
    --_tone: var(--_danger);
  }
  :host([access='over-quota']) {
    --_tone: var(--_warning);
  }
  [part~='heading'] {
    margin: 0;
    font-weight: 600;
    font-size: 1.1em;
  }
  [part~='text'],
  [part~='detail'] {
    margin: 0;
  }
  [part~='loading'] {
    display: block;
    min-height: 3em;
    padding: var(--mp-gate-padding, 1.25em);
    border-radius: var(--_radius);
  }
`;
