import { css } from 'lit';

/**
 * Shared by every element: design tokens, the button and the helpers below. Each `--mp-*`
 * custom property set on the page (or on the element) wins over the built-in light and dark
 * defaults, which live in private `--_*` properties so that `:host` never shadows the page's values.
 * A page that sets a color for one theme only can scope it: `[theme='dark'] { --mp-color-accent: … }`.
 */
export const baseStyles = css`
  :host {
    --_accent: var(--mp-color-accent, light-dark(#4338ca, #a5b4fc));
    --_on-accent: var(--mp-color-on-accent, light-dark(#fff, #111827));
    --_text: var(--mp-color-text, light-dark(#1f2937, #f9fafb));
    --_muted: var(--mp-color-muted, light-dark(#4b5563, #d1d5db));
    --_surface: var(--mp-color-surface, light-dark(#fff, #111827));
    --_border: var(--mp-color-border, light-dark(#d1d5db, #4b5563));
    --_danger: var(--mp-color-danger, light-dark(#b91c1c, #fca5a5));
    --_warning: var(--mp-color-warning, light-dark(#92400e, #fcd34d));
    --_success: var(--mp-color-success, light-dark(#166534, #86efac));
    --_focus: var(--mp-color-focus, light-dark(#6366f1, #a5b4fc));
    --_radius: var(--mp-radius, 6px);
    --_font: var(--mp-font, 14px/1.4 system-ui, sans-serif);
  }
  :host([hidden]) {
    display: none;
  }
  /* On the base part, not :host, so that slotted page content keeps the page's colors and
     color scheme. :where() keeps it weaker than the button rule for elements whose base is a
     button. light-dark() picks its second color under color-scheme: dark. */
  :where([part~='base']) {
    color-scheme: light;
    background: var(--_surface);
    color: var(--_text);
    font: var(--_font);
    /* A long plan, feature or user name wraps instead of widening the element past its container. */
    overflow-wrap: anywhere;
  }
  :host {
    max-width: 100%;
  }
  :host([theme='dark']) [part~='base'] {
    color-scheme: dark;
  }
  button {
    display: inline-flex;
    align-items: center;
    gap: 0.5em;
    max-width: 100%;
    padding: 0.5em 1em;
    /* Transparent, but drawn in forced colors (high contrast), where backgrounds are not. */
    border: 1px solid transparent;
    border-radius: var(--_radius);
    background: var(--_accent);
    color: var(--_on-accent);
    font: var(--_font);
    font-weight: 600;
    cursor: pointer;
  }
  button:focus-visible {
    outline: 2px solid var(--_focus);
    outline-offset: 2px;
  }
  /* Faded by its colors, as 60% opacity over the surface would look, not by opacity: a button
     turned off keeps the focus (aria-disabled), and opacity would fade its focus ring too. */
  button:disabled,
  button[aria-disabled='true'] {
    background: color-mix(in srgb, var(--_accent) 60%, var(--_surface));
    color: color-mix(in srgb, var(--_on-accent) 60%, var(--_surface));
    cursor: not-allowed;
  }
  /* Forced colors (high contrast) drop the faded colors above: draw a button that is turned off
     in GrayText, as the browser draws a disabled one, so aria-disabled looks off there too. */
  @media (forced-colors: active) {
    button:disabled,
    button[aria-disabled='true'] {
      color: GrayText;
      border-color: GrayText;
    }
    /* Else its gap is painted in the ring's system color, and a plain ring turning looks still. */
    .spinner {
      forced-color-adjust: none;
    }
  }
  button[aria-busy='true'] {
    cursor: progress;
  }
  .spinner {
    width: 1em;
    height: 1em;
    border: 2px solid currentColor;
    border-right-color: transparent;
    border-radius: 50%;
    flex: none; /* round, however the label beside it wraps */
    animation: spin 0.8s linear infinite;
  }
  @keyframes spin {
    to {
      transform: rotate(1turn);
    }
  }
  @media (prefers-reduced-motion: reduce) {
    .spinner {
      animation-duration: 3s;
    }
  }
  .muted {
    color: var(--_muted);
  }
  .sr-only {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
`;
