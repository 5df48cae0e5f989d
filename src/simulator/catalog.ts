/**
 * The simulator's made-up marketplace: its plans (the four plan kinds of docs/marketplace.md#plans) and its users
 * (docs/marketplace.md#profile), each with a starting entitlement (docs/marketplace.md#entitlement). Nothing here is a real account.
 */
import { MarketplaceKitError } from '../shared/errors.js';
import type { Entitlement, Profile } from '../shared/schemas.js';

/** The marketplace's plan kinds (docs/marketplace.md#plans). */
export type PlanKind = 'free' | 'monthly' | 'annual' | 'one_time';

/** A plan of the simulated marketplace's catalogue: the built-in `PLANS`, or the config file's. */
export interface SimulatedPlan {
  /** The `plan` value entitlements carry. */
  id: string;
  /** The plan's display name (`Pro monthly`). */
  name: string;
  /** What the plan chooser says under the name: the config's `description`, or how the plan is billed (`Billed monthly`). */
  description: string;
  /** How it is sold: free, monthly, annual or one time. */
  kind: PlanKind;
  /** Display price, e.g. `$12 / month`. The marketplace shows no pricing record (docs/marketplace.md#gaps). */
  price: string;
  /** The price as a number, in `currency`. */
  amount: number;
  /** ISO 4217 currency code (`USD`). */
  currency: string;
  /** The features an entitlement to the plan lists. */
  features: readonly string[];
  /** `usage.limit`: API calls allowed per billing period. */
  limit: number;
  /** Days until `expires_at` after a purchase; `null` means no `expires_at` (never expires). */
  periodDays: number | null;
}

/** A plan as the config file gives it (`PlanDefinition`), its defaults filled in or not. */
export interface PlanInput {
  id: string;
  name: string;
  description?: string | undefined;
  kind: PlanKind;
  price?: number | undefined;
  currency?: string | undefined;
  features?: readonly string[] | undefined;
  usageLimit: number;
  periodDays?: number | null | undefined;
}

const PERIOD_DAYS: Record<PlanKind, number | null> = { free: null, monthly: 30, annual: 365, one_time: null };
const PRICE_SUFFIX: Record<PlanKind, string> = { free: '', monthly: ' / month', annual: ' / year', one_time: ' once' };
/** A plan's description when its definition gives none: how it is billed, and nothing more. */
const BILLING: Record<PlanKind, string> = { free: 'No charge', monthly: 'Billed monthly', annual: 'Billed yearly', one_time: 'Paid once' };

/** `$12 / month`: the price as the dashboard's plan chooser shows it. */
export function priceLabel(amount: number, currency: string, kind: PlanKind): string {
  const whole = Number.isInteger(amount);
  const text = new Intl.NumberFormat('en-US', { style: 'currency', currency, minimumFractionDigits: whole ? 0 : 2, maximumFractionDigits: 2 }).format(amount);
  return `${text}${amount === 0 ? '' : PRICE_SUFFIX[kind]}`;
}

/** A catalogue plan from its definition, with the defaults: price 0 in USD, no features, the kind's period, its billing as description. */
export function planFrom(input: PlanInput): SimulatedPlan {
  const amount = input.price ?? 0;
  const currency = input.currency ?? 'USD';
  return {
    id: input.id,
    name: input.name,
    description: input.description ?? BILLING[input.kind],
    kind: input.kind,
    price: priceLabel(amount, currency, input.kind),
    amount,
    currency,
    features: Object.freeze([...(input.features ?? [])]),
    limit: input.usageLimit,
    periodDays: input.periodDays === undefined ? PERIOD_DAYS[input.kind] : input.periodDays,
  };
}

/** The built-in catalogue's plans: `free`, `pro_monthly`, `pro_annual`, `lifetime`. A config file's `plans` replace them. */
export const PLANS: readonly SimulatedPlan[] = Object.freeze(
  [
    { id: 'free', name: 'Free', kind: 'free', usageLimit: 100 },
    { id: 'pro_monthly', name: 'Pro monthly', kind: 'monthly', price: 12, features: ['export', 'reports'], usageLimit: 10_000 },
    { id: 'pro_annual', name: 'Pro annual', kind: 'annual', price: 120, features: ['export', 'reports'], usageLimit: 10_000 },
    { id: 'lifetime', name: 'Lifetime', kind: 'one_time', price: 299, features: ['export', 'reports'], usageLimit: 10_000 },
  ].map((plan) => Object.freeze(planFrom(plan as PlanInput))),
);

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

/** A user of the simulated marketplace (`USER_SEEDS`, or the config file's): profile, avatar colour and starting entitlement. */
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

/** The built-in users: one per interesting entitlement state. A config file's `users` replace them. */
export const USER_SEEDS: readonly SimulatedUserSeed[] = [
  { id: 'usr_ada', name: 'Ada Lovelace', email: 'ada@example.test', color: '#7c3aed', start: { plan: 'free', status: 'active', apiCalls: 12 } },
  { id: 'usr_grace', name: 'Grace Hopper', email: 'grace@example.test', color: '#0891b2', start: { plan: 'pro_monthly', status: 'trialing', apiCalls: 240, expiresInDays: 14 } },
  { id: 'usr_alan', name: 'Alan Turing', email: 'alan@example.test', color: '#ea580c', start: { plan: 'pro_annual', status: 'active', apiCalls: 8_120 } },
  { id: 'usr_katherine', name: 'Katherine Johnson', email: 'katherine@example.test', color: '#16a34a', start: { plan: 'lifetime', status: 'active', apiCalls: 31 } },
  { id: 'usr_linus', name: 'Linus Pauling', email: 'linus@example.test', color: '#db2777', start: null },
];

/** A user as the config file gives it (`UserDefinition`). */
export interface UserInput {
  id: string;
  name: string;
  email?: string | undefined;
  plan?: string | null | undefined;
  status?: string | undefined;
  apiCalls?: number | undefined;
  expiresInDays?: number | undefined;
}

const AVATAR_COLORS = ['#7c3aed', '#0891b2', '#ea580c', '#16a34a', '#db2777', '#2563eb', '#a16207', '#475569'];

function userFrom(input: UserInput, index: number): SimulatedUserSeed {
  const plan = input.plan ?? null;
  return {
    id: input.id,
    name: input.name,
    email: input.email ?? `${input.id.replace(/^usr_/, '')}@example.test`,
    color: AVATAR_COLORS[index % AVATAR_COLORS.length]!,
    start:
      plan === null
        ? null
        : { plan, status: input.status ?? 'active', apiCalls: input.apiCalls ?? 0, ...(input.expiresInDays === undefined ? {} : { expiresInDays: input.expiresInDays }) },
  };
}

/**
 * The built-in users on a catalogue of the developer's own plans: each starts on the first plan of
 * the kind their built-in plan has (Grace on a monthly plan's trial, Alan on an annual plan…), or
 * with none when the catalogue has no plan of that kind.
 */
function builtInUsersFor(plans: readonly SimulatedPlan[]): SimulatedUserSeed[] {
  return USER_SEEDS.map((seed) => {
    if (!seed.start || plans.some((plan) => plan.id === seed.start!.plan)) return seed;
    const kind = PLANS.find((plan) => plan.id === seed.start!.plan)?.kind;
    const match = plans.find((plan) => plan.kind === kind);
    return { ...seed, start: match ? { ...seed.start, plan: match.id } : null };
  });
}

/** The plans and users of one simulator: the built-in ones, or a config file's. */
export class Catalog {
  readonly plans: readonly SimulatedPlan[];
  readonly users: readonly SimulatedUserSeed[];

  constructor(plans?: readonly PlanInput[], users?: readonly UserInput[]) {
    this.plans = plans ? Object.freeze(plans.map((plan) => Object.freeze(planFrom(plan)))) : PLANS;
    this.users = users ? users.map(userFrom) : plans ? builtInUsersFor(this.plans) : USER_SEEDS;
  }

  /** The plan with this id, if the catalogue has one. */
  plan(id: string): SimulatedPlan | undefined {
    return this.plans.find((plan) => plan.id === id);
  }

  /** The plans' display names by id, as `createKit({ planNames })` takes them. */
  planNames(): Record<string, string> {
    return Object.fromEntries(this.plans.map((plan) => [plan.id, plan.name]));
  }

  /** The user's entitlement at start: their plan's, with the status, usage and expiry given. */
  startingEntitlement(seed: SimulatedUserSeed, appId: string, now: number): Entitlement | null {
    if (!seed.start) return null;
    const plan = this.plan(seed.start.plan);
    if (!plan) return null;
    const expiresAt = seed.start.expiresInDays === undefined ? undefined : utcSeconds(now + seed.start.expiresInDays * DAY_MS);
    return entitlementForPlan(plan, seed.id, appId, now, { status: seed.start.status, apiCalls: seed.start.apiCalls, expires_at: expiresAt });
  }
}

export function profileOf(seed: SimulatedUserSeed, siteUrl: string): Profile {
  return { id: seed.id, email: seed.email, name: seed.name, avatar_url: `${siteUrl}/avatars/${seed.id}.svg` };
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** A small round SVG avatar with the user's initials, served at `{site_url}/avatars/<id>.svg`. */
export function avatarSvg(seed: SimulatedUserSeed): string {
  // A name from a config file may hold anything: the initials are escaped.
  const initials = [...seed.name.split(/\s+/).map((part) => [...part][0] ?? '').join('')]
    .slice(0, 2)
    .join('')
    .toUpperCase()
    .replace(/[&<>"']/g, (char) => XML_ESCAPES[char]!);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96" viewBox="0 0 96 96" role="img" aria-label="${initials}">` +
    `<circle cx="48" cy="48" r="48" fill="${seed.color}"/>` +
    `<text x="48" y="60" font-family="system-ui,sans-serif" font-size="36" font-weight="600" fill="#fff" text-anchor="middle">${initials}</text>` +
    `</svg>`
  );
}
