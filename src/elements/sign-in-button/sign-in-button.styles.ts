import { css } from 'lit';

export const signInButtonStyles = css`
  :host {
    display: inline-block;
  }
`;
