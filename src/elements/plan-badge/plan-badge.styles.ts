import { css } from 'lit';

export const planBadgeStyles = css`
  /* An unknown status gives no access (fail closed), so only a known live one is green. */
  :host {
    display: inline-block;
    --_tone: var(--_muted);
  }
  :host([status='active']) {
    --_tone: var(--_success);
  }
  :host([status='past_due']),
  :host([status='expired']),
  :host([status='cancelled']) {
    --_tone: var(--_danger);
  }
  :host([status='trialing']) {
    --_tone: var(--_warning);
  }
  [part~='base'] {
    display: inline-flex;
    flex-wrap: wrap;
    align-items: baseline;
    gap: 0 0.5em;
    padding: 0.2em 0.75em;
    border: 1px solid var(--_border);
    border-radius: 999px;
  }
  [part~='plan'] {
    font-weight: 600;
  }
  [part~='status'] {
    color: var(--_tone);
    font-weight: 600;
  }
  [part~='expiry'] {
    color: var(--_muted);
  }
`;
