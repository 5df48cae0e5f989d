import type { ElementText } from '../base/texts.js';

/**
 * The built-in English texts, by section: `common` for every element, then each element's own
 * (which may replace a common one, as the gate's `loading`). Every other pack has exactly these
 * keys (`LocalePack`; test/node/locales.test.ts checks keys and placeholders too). Placeholders
 * in braces are filled in by the element; the texts each element's `*Strings` type documents.
 */
export const en = {
  common: {
    loading: 'Loading…',
    error: 'Unavailable',
    notConnected: 'Not connected to Marketplace',
    failed: 'That did not work. Please try again.',
  },
  'mp-gate': {
    loading: 'Checking access…',
    thisFeature: 'this feature',
    unlocked: 'Unlocked',
    lockedHeading: 'Unlock {feature}',
    lockedText: 'Upgrade your plan to use {feature}.',
    lockedPlanText: 'Included in the {plan} plan.',
    expiredHeading: 'Your {current} plan has expired',
    cancelledHeading: 'Your {current} plan was cancelled',
    expiredText: 'Renew to use {feature} again.',
    ended: 'Ended {date}',
    pastDueHeading: 'Payment past due',
    pastDueText: 'Update your payment details to keep using {feature}.',
    overQuotaHeading: 'Usage limit reached',
    overQuotaText: {
      one: 'You have used {used} of {limit} API call. Upgrade for a higher limit.',
      other: 'You have used {used} of {limit} API calls. Upgrade for a higher limit.',
    },
    signedOutHeading: 'Sign in to use {feature}',
    signedOutText: 'Sign in with your Marketplace account.',
    errorHeading: 'Could not check your access',
    errorText: 'Please try again.',
    refusedText: 'Open this app from the marketplace dashboard.',
    upgrade: 'Upgrade',
    renew: 'Renew',
    updatePayment: 'Update payment',
    signIn: 'Sign in',
    retry: 'Try again',
  },
  'mp-upgrade-button': {
    label: 'Upgrade',
    planLabel: 'Upgrade to {plan}',
    busy: 'Opening plans…',
    current: 'Current plan',
    renew: 'Renew {plan}',
    updatePayment: 'Update payment',
    upgraded: 'Upgrade complete',
    dismissed: 'No change to your plan',
    failed: 'Could not open the plans. Try again.',
  },
  'mp-usage-meter': {
    label: 'API calls',
    value: '{used} of {limit}',
    warningText: 'Approaching your limit ({percent})',
    exceededText: 'Limit reached',
    okText: 'Back within your limit ({used} of {limit})',
    none: 'No usage data',
    signedOut: 'Sign in to see your usage',
  },
  'mp-plan-badge': {
    active: 'Active',
    trialing: 'Trial',
    past_due: 'Past due',
    cancelled: 'Cancelled',
    expired: 'Expired',
    none: 'No plan',
    signedOut: 'Not signed in',
    until: 'until {date}',
  },
  'mp-user-badge': {
    signedOut: 'Not signed in',
  },
  'mp-sign-in-button': {
    label: 'Sign in with Marketplace',
    busy: 'Signing in…',
    failed: 'Could not start sign-in. Try again.',
  },
} satisfies Record<string, Record<string, ElementText>>;

/** A complete pack: every section and key of the English one, each an `ElementText`. */
export type LocalePack = { readonly [S in keyof typeof en]: { readonly [K in keyof (typeof en)[S]]: ElementText } };
