/**
 * The simulator's config file, `mpkit.config.json` (or `mpkit simulate --config FILE`): the
 * options of `startSimulator` as JSON, the app's plans as the Developer Console's Pricing tab
 * holds them (docs/marketplace.md#plans), and its users. One zod schema reads the file and checks
 * the `plans` and `users` given to `startSimulator`; a mistake is one `ERR_CONFIG` that names the
 * field (`plans[1].kind`). What the file may hold: docs/simulator.md#your-own-app-and-plans-mpkitconfigjson.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { MarketplaceKitError } from '../shared/errors.js';
import { shownValue } from '../shared/options.js';
import { AppId, UserId } from '../shared/schemas.js';
import type { SimulatorOptions } from './options.js';

/** The file `mpkit simulate` reads from the working directory when no `--config` is given. */
export const CONFIG_FILE = 'mpkit.config.json';

/**
 * A plan or feature id. The elements read a list of plans from one attribute, split on spaces and
 * commas, so an id holds neither.
 */
const Identifier = z
  .string({ error: 'must be a string' })
  .regex(/^[A-Za-z0-9_.:-]{1,100}$/, { error: 'must be 1 to 100 letters, digits, or _ . : - (no spaces or commas: the elements split plan lists on them)' });

const Text = z.string({ error: 'must be a string' }).refine((text) => text.trim().length > 0 && text.length <= 200, { error: 'must be a non-empty text of at most 200 characters' });

const WholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.number({ error: 'must be a number' }).refine((value) => Number.isSafeInteger(value) && value >= min && value <= max, {
    error: max === Number.MAX_SAFE_INTEGER ? `must be a whole number of at least ${min}` : `must be a whole number from ${min} to ${max}`,
  });

/** How a plan is sold (docs/marketplace.md#plans). `one-time` is read as `one_time`. */
const PlanKindField = z
  .enum(['free', 'monthly', 'annual', 'one_time', 'one-time'], { error: 'must be free, monthly, annual or one_time' })
  .transform((kind) => (kind === 'one-time' ? 'one_time' : kind));

/** One plan, as the config file and `startSimulator({ plans })` give it. */
export const PlanDefinition = z.strictObject({
  /** The `plan` value entitlements carry: `pro_monthly`. */
  id: Identifier,
  /** The name users see: `Pro`. */
  name: Text,
  /** What the dashboard's plan chooser says under the name: `For teams that export`. Default: how it is billed. */
  description: Text.optional(),
  /** `free`, `monthly`, `annual` or `one_time`. */
  kind: PlanKindField,
  /** The price in `currency`, a number: `12`, `9.99`. Default 0. */
  price: z.number({ error: 'must be a number' }).refine((price) => Number.isFinite(price) && price >= 0, { error: 'must be a number of at least 0' }).optional(),
  /** ISO 4217 code of the price's currency. Default `USD`. */
  currency: z.string({ error: 'must be a string' }).regex(/^[A-Z]{3}$/, { error: 'must be a three-letter currency code such as USD or EUR' }).optional(),
  /** The features an entitlement to the plan lists. Default none. */
  features: z.array(Identifier, { error: 'must be an array of feature ids' }).optional(),
  /** `usage.limit`: the API calls the plan allows. */
  usageLimit: WholeNumber(0),
  /** Days until `expires_at` after a purchase. Default: 30 monthly, 365 annual, none (never ends) otherwise. */
  periodDays: WholeNumber(1).nullable().optional(),
});
export type PlanDefinition = z.input<typeof PlanDefinition>;

/** One user, as the config file and `startSimulator({ users })` give it. */
export const UserDefinition = z.strictObject({
  /** `usr_<id>`. */
  id: z.string({ error: 'must be a string' }).refine((id) => UserId.safeParse(id).success, { error: 'must be a user id of the form usr_<id>' }),
  /** Display name. */
  name: Text,
  /** Default: `<id without usr_>@example.test`. */
  email: z.email({ error: 'must be an email address' }).optional(),
  /** The plan the user starts on (one of `plans`), or null (the default) for none. */
  plan: Identifier.nullable().optional(),
  /** The starting entitlement's status. Default `active`. */
  status: Identifier.optional(),
  /** `usage.api_calls` to start from. Default 0. */
  apiCalls: WholeNumber(0).optional(),
  /** Days from now until `expires_at` (negative: already ended). Default: the plan's period. */
  expiresInDays: z.number({ error: 'must be a number' }).refine(Number.isSafeInteger, { error: 'must be a whole number' }).optional(),
});
export type UserDefinition = z.input<typeof UserDefinition>;

const Url = z.string({ error: 'must be a string' });
const Credential = z.string({ error: 'must be a string' }).refine((value) => value.trim().length > 0, { error: 'must not be empty' });

/**
 * The config file: the JSON-able options of `startSimulator`, under the same names. `plans` and
 * `users` replace the built-in catalogue and users; everything left out keeps its default.
 */
export const SimulatorConfigFile = z
  .strictObject({
    /** For editors: the file's JSON Schema. Ignored by the simulator. */
    $schema: z.string().optional(),
    port: WholeNumber(0, 65535).optional(),
    appId: z.string({ error: 'must be a string' }).refine((id) => AppId.safeParse(id).success, { error: 'must look like app_<id>' }).optional(),
    appName: Text.optional(),
    appUrl: Url.optional(),
    redirectUris: z.array(Url, { error: 'must be an array of URLs' }).optional(),
    webhookUrl: Url.optional(),
    clientId: Credential.optional(),
    clientSecret: Credential.optional(),
    testApiKey: Credential.optional(),
    liveApiKey: Credential.optional(),
    webhookSecret: Credential.optional(),
    codeTtlSeconds: WholeNumber(1).optional(),
    accessTokenTtlSeconds: WholeNumber(1).optional(),
    rateLimits: z.strictObject({ test: WholeNumber(1).optional(), live: WholeNumber(1).optional(), bearer: WholeNumber(1).optional(), windowMs: WholeNumber(1).optional() }).optional(),
    webhookMaxAttempts: WholeNumber(1).optional(),
    webhookBackoffMs: WholeNumber(0).optional(),
    webhookTimeoutMs: WholeNumber(1).optional(),
    plans: z.array(PlanDefinition, { error: 'must be an array of plans' }).optional(),
    users: z.array(UserDefinition, { error: 'must be an array of users' }).optional(),
  })
  .superRefine((config, ctx) => checkCatalog(config.plans, config.users, ctx));
export type SimulatorConfigFile = z.input<typeof SimulatorConfigFile>;

/** Ids that repeat, and users on plans the list lacks: the checks that span more than one field. */
function checkCatalog(plans: ReadonlyArray<{ id: string; features?: readonly string[] | undefined }> | undefined, users: ReadonlyArray<{ id: string; plan?: string | null | undefined }> | undefined, ctx: z.RefinementCtx): void {
  if (plans?.length === 0) ctx.addIssue({ code: 'custom', path: ['plans'], message: 'must hold at least one plan' });
  if (users?.length === 0) ctx.addIssue({ code: 'custom', path: ['users'], message: 'must hold at least one user' });
  const repeated = (ids: string[], field: string) =>
    ids.forEach((id, i) => {
      if (ids.indexOf(id) !== i) ctx.addIssue({ code: 'custom', path: [field, i, 'id'], message: `repeats ${JSON.stringify(id)}: each ${field.slice(0, -1)} needs its own id` });
    });
  repeated(plans?.map((plan) => plan.id) ?? [], 'plans');
  repeated(users?.map((user) => user.id) ?? [], 'users');
  plans?.forEach((plan, i) =>
    plan.features?.forEach((feature, j) => {
      if (plan.features!.indexOf(feature) !== j) ctx.addIssue({ code: 'custom', path: ['plans', i, 'features', j], message: `repeats ${JSON.stringify(feature)}` });
    }),
  );
  if (plans === undefined) return;
  const known = plans.map((plan) => plan.id);
  users?.forEach((user, i) => {
    if (typeof user.plan === 'string' && !known.includes(user.plan)) {
      ctx.addIssue({ code: 'custom', path: ['users', i, 'plan'], message: `must be one of the plans (${known.join(', ')}) or null, got ${JSON.stringify(user.plan)}` });
    }
  });
}

/** `plans[1].kind`, from a zod issue's path. */
function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join('');
}

/** The first issue as one sentence: the field, what it must be, and what it got. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const field = fieldPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const where = field ? `${field} has` : 'has';
    return `${where} an unknown field ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`;
  }
  const input = 'input' in issue ? issue.input : undefined;
  // A field the schema requires and the input lacks.
  if (issue.code === 'invalid_type' && input === undefined) return `${field} is required`;
  const shown = input === null ? 'null' : typeof input === 'object' ? (Array.isArray(input) ? 'an array' : 'an object') : shownValue(input);
  // The value itself when it is one; an object only where its type is the mistake (a cross-field
  // check's input is the whole file).
  const got = input !== undefined && (typeof input !== 'object' || input === null || issue.code === 'invalid_type') ? `, got ${shown}` : '';
  return `${field} ${issue.message}${got}`;
}

/** Checks `value` with `schema`; the first mistake is `ERR_CONFIG` from `where` (a file, or `startSimulator`). */
export function parseConfig<T extends z.ZodType>(schema: T, value: unknown, where: string, prefix: Array<string | number> = []): z.output<T> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  // A misspelt field first: it explains the "required" of the field it should have been.
  const issue = result.error.issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? result.error.issues[0]!;
  const message = describeIssue({ ...issue, path: [...prefix, ...issue.path] } as z.core.$ZodIssue);
  throw new MarketplaceKitError('ERR_CONFIG', `${where}: ${message.trim()}`);
}

/** The plans and users given to `startSimulator`, checked as the config file's are. */
export function parseCatalog(plans: unknown, users: unknown, where: string): { plans?: z.output<typeof PlanDefinition>[]; users?: z.output<typeof UserDefinition>[] } {
  const schema = z
    .strictObject({ plans: z.array(PlanDefinition, { error: 'must be an array of plans' }).optional(), users: z.array(UserDefinition, { error: 'must be an array of users' }).optional() })
    .superRefine((catalog, ctx) => checkCatalog(catalog.plans, catalog.users, ctx));
  const given: Record<string, unknown> = {};
  if (plans !== undefined) given.plans = plans;
  if (users !== undefined) given.users = users;
  const parsed = parseConfig(schema, given, where);
  return { ...(parsed.plans ? { plans: parsed.plans } : {}), ...(parsed.users ? { users: parsed.users } : {}) };
}

/**
 * Reads and checks a config file. A missing file, JSON that does not parse and a field that is
 * wrong are each one `ERR_CONFIG` that names the file and the field.
 */
export function loadSimulatorConfig(file: string): SimulatorOptions {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'there is no such file' : (error as Error).message;
    throw new MarketplaceKitError('ERR_CONFIG', `${file}: cannot read the config file (${path}): ${reason}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new MarketplaceKitError('ERR_CONFIG', `${file}: not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new MarketplaceKitError('ERR_CONFIG', `${file}: must hold one JSON object, got ${Array.isArray(json) ? 'an array' : shownValue(json)}`);
  const { $schema: _schema, ...options } = parseConfig(SimulatorConfigFile, json, file);
  return options as SimulatorOptions;
}

/** The config file's JSON Schema, for editors (`"$schema"` in the file). */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(SimulatorConfigFile, { io: 'input', unrepresentable: 'any' });
}
