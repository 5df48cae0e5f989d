/**
 * `marketplace-app-kit/elements`: importing it registers every `mp-*` element (see `define.ts`).
 * The classes are exported as well, to extend them or to read their `defaultStrings`.
 *
 * @example
 * import { createKit } from 'marketplace-app-kit';
 * import 'marketplace-app-kit/elements';
 * await createKit({ backend: '/api/marketplace', hostOrigins: ['https://dashboard.example'] });
 */
export { defineElements, elements } from './define.js';
export { MarketplaceElement, type BaseStrings, type ElementState } from './base/marketplace-element.js';
export { MpGate, type GateAccess, type GateStrings } from './gate/gate.js';
export { MpPlanBadge, type PlanBadgeStrings } from './plan-badge/plan-badge.js';
export { MpSignInButton, type SignInButtonStrings } from './sign-in-button/sign-in-button.js';
export { MpUpgradeButton, type UpgradeButtonStrings } from './upgrade-button/upgrade-button.js';
export { MpUsageMeter, type UsageMeterStrings } from './usage-meter/usage-meter.js';
export { MpUserBadge, type UserBadgeStrings } from './user-badge/user-badge.js';
export { registerLocale, loadLocale, localeDirection, type ElementText, type ElementTexts, type LocaleLoader, type LocaleTexts, type PluralText } from './base/texts.js';
export { BUILT_IN_LOCALES, type BuiltInLocale } from './locales/tags.js';
export type { LocalePack } from './locales/en.js';
export * from './events.js';
