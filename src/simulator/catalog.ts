/**
 * The simulator's made-up marketplace: its plans (the four plan kinds of docs/marketplace.md#plans) and its users
 * (docs/marketplace.md#profile), each with a starting entitlement (docs/marketplace.md#entitlement). Nothing here is a real account.
 */
import { MarketplaceKitError } from '../shared/errors.js';
import type { Entitlement, Profile } from '../shared/schemas.js';

/** The marketplace's plan kinds (docs/marketplace.md#plans). */
export type PlanKind = 'free' | 'monthly' | 'annual' | 'one_time';

/** A plan of the simulated marketplace's catalog (`PLANS`). */
export interface SimulatedPlan {
  /** The `plan` value entitlements carry. */
  id: string;
  /** The plan's display name (`Pro monthly`). */
  name: string;
  /** How it is sold: free, monthly, annual or one time. */
  kind: PlanKind;
  /** Display price, e.g. `$12 / month`. The marketplace shows no pricing record (docs/marketplace.md#gaps). */
  price: string;
  /** The features an entitlement to the plan lists. */
  features: readonly string[];
  /** `usage.limit`: API calls allowed per billing period. */
  limit: number;
  /** Days until `expires_at` after a purchase; `null` means no `expires_at` (never expires). */
  periodDays: number | null;
}

/** The simulated marketplace's plans: `free`, `pro_monthly`, `pro_annual`, `lifetime`. */
export const PLANS: readonly SimulatedPlan[] = [
  { id: 'free', name: 'Free', kind: 'free', price: '$0', features: [], limit: 100, periodDays: null },
  { id: 'pro_monthly', name: 'Pro monthly', kind: 'monthly', price: '$12 / month', features: ['export', 'reports'], limit: 10_000, periodDays: 30 },
  { id: 'pro_annual', name: 'Pro annual', kind: 'annual', price: '$120 / year', features: ['export', 'reports'], limit: 10_000, periodDays: 365 },
  { id: 'lifetime', name: 'Lifetime', kind: 'one_time', price: '$299 once', features: ['export', 'reports'], limit: 10_000, periodDays: null },
];

export function findPlan(id: string): SimulatedPlan | undefined {
  return PLANS.find((plan) => plan.id === id);
}

/** `YYYY-MM-DDThh:mm:ssZ`, the marketplace's timestamp form (docs/marketplace.md#entitlement). */
export function utcSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const DAY_MS = 86_400_000;

/**
 * An entitlement set through the Control API or `sim.setEntitlement`, held to what the marketplace
 * serves (docs/marketplace.md#entitlement): the shared schema also reads fractional seconds in `expires_at`, but a client
 * written from the documentation may parse only `YYYY-MM-DDThh:mm:ssZ`.
 */
export function assertServable(entitlement: Entitlement): Entitlement {
  if (typeof entitlement.expires_at === 'string' && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(entitlement.expires_at)) {
    throw new MarketplaceKitError('ERR_INVALID_INPUT', 'Invalid entitlement at expires_at: the marketplace sends YYYY-MM-DDThh:mm:ssZ, whole seconds in UTC');
  }
  return entitlement;
}

/** A fresh entitlement for `plan`, as a purchase of it at `now` would create. */
export function entitlementForPlan(
  plan: SimulatedPlan,
  userId: string,
  appId: string,
  now: number,
  overrides: Partial<Pick<Entitlement, 'status' | 'expires_at'>> & { apiCalls?: number } = {},
): Entitlement {
  const expires = plan.periodDays === null ? null : utcSeconds(now + plan.periodDays * DAY_MS);
  return {
    user_id: userId,
    app_id: appId,
    plan: plan.id,
    status: overrides.status ?? 'active',
    features: [...plan.features],
    usage: { api_calls: overrides.apiCalls ?? 0, limit: plan.limit },
    expires_at: overrides.expires_at === undefined ? expires : overrides.expires_at,
  };
}

/** A user of the simulated marketplace (`USER_SEEDS`): profile, avatar colour and starting entitlement. */
export interface SimulatedUserSeed {
  /** The user id (`usr_…`). */
  id: string;
  /** Display name. */
  name: string;
  /** Email address (on the `example.test` domain). */
  email: string;
  /** Background of the generated avatar (a CSS colour). */
  color: string;
  /** Starting entitlement; `null` for a user who holds none. */
  start: { plan: string; status: string; apiCalls: number; expiresInDays?: number } | null;
}

/** The starting users: one per interesting entitlement state. */
export const USER_SEEDS: readonly SimulatedUserSeed[] = [
  { id: 'usr_ada', name: 'Ada Lovelace', email: 'ada@example.test', color: '#7c3aed', start: { plan: 'free', status: 'active', apiCalls: 12 } },
  { id: 'usr_grace', name: 'Grace Hopper', email: 'grace@example.test', color: '#0891b2', start: { plan: 'pro_monthly', status: 'trialing', apiCalls: 240, expiresInDays: 14 } },
  { id: 'usr_alan', name: 'Alan Turing', email: 'alan@example.test', color: '#ea580c', start: { plan: 'pro_annual', status: 'active', apiCalls: 8_120 } },
  { id: 'usr_katherine', name: 'Katherine Johnson', email: 'katherine@example.test', color: '#16a34a', start: { plan: 'lifetime', status: 'active', apiCalls: 31 } },
  { id: 'usr_linus', name: 'Linus Pauling', email: 'linus@example.test', color: '#db2777', start: null },
];

export function profileOf(seed: SimulatedUserSeed, siteUrl: string): Profile {
  return { id: seed.id, email: seed.email, name: seed.name, avatar_url: `${siteUrl}/avatars/${seed.id}.svg` };
}

export function startingEntitlement(seed: SimulatedUserSeed, appId: string, now: number): Entitlement | null {
  if (!seed.start) return null;
  const plan = findPlan(seed.start.plan);
  if (!plan) return null;
  const expiresAt = seed.start.expiresInDays === undefined ? undefined : utcSeconds(now + seed.start.expiresInDays * DAY_MS);
  return entitlementForPlan(plan, seed.id, appId, now, { status: seed.start.status, apiCalls: seed.start.apiCalls, expires_at: expiresAt });
}

/** A small round SVG avatar with the user's initials, served at `{site_url}/avatars/<id>.svg`. */
export function avatarSvg(seed: SimulatedUserSeed): string {
  const initials = seed.name
    .split(/\s+/)
    .map((part) => part[0] ?? '')
    .join('')
    .slice(0, 2)
    .toUpperCase();
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96" viewBox="0 0 96 96" role="img" aria-label="${initials}">` +
    `<circle cx="48" cy="48" r="48" fill="${seed.color}"/>` +
    `<text x="48" y="60" font-family="system-ui,sans-serif" font-size="36" font-weight="600" fill="#fff" text-anchor="middle">${initials}</text>` +
    `</svg>`
  );
}
