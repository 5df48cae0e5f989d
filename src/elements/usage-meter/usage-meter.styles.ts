import { css } from 'lit';

export const usageMeterStyles = css`
  :host {
    display: block;
    --_fill: var(--_accent);
  }
  :host([level='warning']) {
    --_fill: var(--_warning);
  }
  :host([level='exceeded']) {
    --_fill: var(--_danger);
  }
  [part~='base'] {
    display: grid;
    gap: 0.35em;
  }
  [part~='header'] {
    display: flex;
    justify-content: space-between;
    gap: 1em;
  }
  [part~='track'] {
    height: var(--mp-meter-height, 0.5em);
    border-radius: 999px;
    background: var(--_border);
    /* 3:1 against the surface (WCAG 1.4.11), so that the meter's whole length shows. */
    border: 1px solid var(--_muted);
    overflow: hidden;
  }
  [part~='indicator'] {
    height: 100%;
    background: var(--_fill);
  }
  [part~='message'] {
    color: var(--_fill);
    font-weight: 600;
  }
  [part~='message']:empty {
    display: none;
  }
  /* Forced colors (high contrast) drop backgrounds: outline the track, paint the fill in Highlight. */
  @media (forced-colors: active) {
    [part~='track'] {
      border-color: CanvasText;
    }
    [part~='indicator'] {
      forced-color-adjust: none;
      background: Highlight;
    }
  }
`;
