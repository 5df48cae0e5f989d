// What each element offers to pages, in one table: the manifest test (test/e2e/cdn-manifest.test.ts)
// checks custom-elements.json against it, and the elements' style test
// (src/elements/base/every-look.test.ts) checks the custom properties against the CSS each
// element actually renders. The element pages under docs/elements/ are generated from the manifest (test/node/docs-sync.test.ts).

export interface ElementApi {
  /** Beside `theme`, `state` and `strings`, which every element has. */
  attributes: string[];
  slots?: string[];
  parts: string[];
  events?: string[];
  cssProperties: string[];
}

export const ELEMENT_API: Record<string, ElementApi> = {
  'mp-sign-in-button': {
    attributes: ['label', 'return-to', 'disabled'],
    parts: ['base', 'spinner', 'label', 'status'],
    events: ['mp-sign-in-request', 'mp-error'],
    cssProperties: ['--mp-color-accent', '--mp-color-on-accent', '--mp-color-focus', '--mp-color-surface', '--mp-radius', '--mp-font'],
  },
  'mp-gate': {
    attributes: ['feature', 'plan', 'metered', 'heading-level', 'access'],
    slots: ['', 'locked'],
    parts: ['base', 'card', 'loading', 'heading', 'text', 'detail', 'action', 'status'],
    events: ['mp-access-change', 'mp-upgrade-request', 'mp-upgrade', 'mp-sign-in-request', 'mp-error'],
    cssProperties: [
      '--mp-color-accent',
      '--mp-color-on-accent',
      '--mp-color-text',
      '--mp-color-muted',
      '--mp-color-danger',
      '--mp-color-warning',
      '--mp-color-surface',
      '--mp-color-border',
      '--mp-color-focus',
      '--mp-radius',
      '--mp-font',
      '--mp-gate-padding',
    ],
  },
  'mp-upgrade-button': {
    attributes: ['plan', 'feature', 'label', 'disabled'],
    parts: ['base', 'current', 'spinner', 'label', 'status'],
    events: ['mp-upgrade-request', 'mp-upgrade', 'mp-error'],
    cssProperties: [
      '--mp-color-accent',
      '--mp-color-on-accent',
      '--mp-color-success',
      '--mp-color-surface',
      '--mp-color-border',
      '--mp-color-focus',
      '--mp-radius',
      '--mp-font',
    ],
  },
  'mp-usage-meter': {
    attributes: ['warning', 'exceeded', 'level'],
    parts: ['base', 'header', 'label', 'value', 'track', 'indicator', 'message', 'status', 'notice'],
    events: ['mp-usage-level'],
    cssProperties: [
      '--mp-color-accent',
      '--mp-color-warning',
      '--mp-color-danger',
      '--mp-color-border',
      '--mp-color-surface',
      '--mp-color-text',
      '--mp-color-muted',
      '--mp-font',
      '--mp-meter-height',
    ],
  },
  'mp-user-badge': {
    attributes: [],
    parts: ['base', 'avatar', 'text', 'name', 'email', 'notice'],
    cssProperties: ['--mp-avatar-size', '--mp-color-surface', '--mp-color-text', '--mp-color-muted', '--mp-color-accent', '--mp-color-on-accent', '--mp-font'],
  },
  'mp-plan-badge': {
    attributes: ['status'],
    parts: ['base', 'plan', 'status', 'expiry', 'notice'],
    cssProperties: [
      '--mp-color-success',
      '--mp-color-warning',
      '--mp-color-danger',
      '--mp-color-border',
      '--mp-color-muted',
      '--mp-color-surface',
      '--mp-color-text',
      '--mp-font',
    ],
  },
};
