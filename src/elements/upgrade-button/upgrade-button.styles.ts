import { css } from 'lit';

export const upgradeButtonStyles = css`
  :host {
    display: inline-block;
  }
  button[part~='current'] {
    background: var(--_surface);
    color: var(--_success);
    box-shadow: inset 0 0 0 1px var(--_border);
    cursor: default;
  }
`;
