import { css } from 'lit';

export const userBadgeStyles = css`
  :host {
    display: inline-block;
  }
  [part~='base'] {
    display: inline-flex;
    align-items: center;
    gap: 0.6em;
    padding-block: 0.25em;
    padding-inline: 0.25em 0.75em;
    border-radius: 999px;
  }
  [part~='avatar'] {
    display: grid;
    place-items: center;
    width: var(--mp-avatar-size, 2em);
    height: var(--mp-avatar-size, 2em);
    border-radius: 50%;
    object-fit: cover;
    background: var(--_accent);
    color: var(--_on-accent);
    font-weight: 600;
    /* Initials as wide as "MW" stay in the circle, on one line, even with a user's wider spacing. */
    white-space: nowrap;
  }
  .initials {
    font-size: 0.8em;
  }
  [part~='text'] {
    display: grid;
    line-height: 1.2;
  }
  [part~='name'] {
    font-weight: 600;
  }
  [part~='email'] {
    color: var(--_muted);
    font-size: 0.9em;
  }
  [part~='notice'] {
    padding: 0.25em 0.75em;
  }
`;
