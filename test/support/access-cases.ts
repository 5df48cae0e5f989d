// One table of access-rule cases (docs/decisions.md#marketplace-api), run by the Node tests and again in Chromium, so both
// sides are proven to decide alike.
import type { AccessReason, AccessRequirement } from '../../src/shared/access.js';
import type { AnyEntitlement } from '../../src/shared/schemas.js';

export const NOW = Date.parse('2026-11-21T10:00:00Z');

const base = {
  user_id: 'usr_1',
  app_id: 'app_1',
  plan: 'pro',
  status: 'active',
  features: ['export', 'reports'],
  usage: { api_calls: 10, limit: 1000 },
  expires_at: '2026-12-21T00:00:00Z',
};

export interface AccessCase {
  name: string;
  entitlement: AnyEntitlement | null | undefined;
  requirement?: AccessRequirement;
  reason: AccessReason;
}

export const accessCases: AccessCase[] = [
  { name: 'active, no requirement', entitlement: base, reason: 'granted' },
  { name: 'active with the feature', entitlement: base, requirement: { feature: 'export' }, reason: 'granted' },
  { name: 'trialing counts as live', entitlement: { ...base, status: 'trialing' }, requirement: { feature: 'export' }, reason: 'granted' },
  { name: 'missing feature', entitlement: base, requirement: { feature: 'sso' }, reason: 'feature' },
  { name: 'plan matches', entitlement: base, requirement: { plan: 'pro' }, reason: 'granted' },
  { name: 'plan among several', entitlement: base, requirement: { plan: ['business', 'pro'] }, reason: 'granted' },
  { name: 'plan among several, first', entitlement: base, requirement: { plan: ['pro', 'business'] }, reason: 'granted' },
  { name: 'wrong plan', entitlement: base, requirement: { plan: 'business' }, reason: 'plan' },
  { name: 'an empty plan name is no wildcard', entitlement: base, requirement: { plan: '' }, reason: 'plan' },
  { name: 'a plan name is one plan, never a list', entitlement: base, requirement: { plan: 'business,pro' }, reason: 'plan' },
  { name: 'past_due', entitlement: { ...base, status: 'past_due' }, reason: 'past_due' },
  { name: 'cancelled', entitlement: { ...base, status: 'cancelled' }, reason: 'cancelled' },
  { name: 'expired status', entitlement: { ...base, status: 'expired' }, reason: 'expired' },
  { name: 'unknown status fails closed', entitlement: { ...base, status: 'paused' }, reason: 'inactive' },
  { name: 'a status named like an Object property is unknown too', entitlement: { ...base, status: 'constructor' }, reason: 'inactive' },
  { name: 'status wins over a passed expires_at', entitlement: { ...base, status: 'cancelled', expires_at: '2026-11-21T09:59:59Z' }, reason: 'cancelled' },
  { name: 'expires_at in the past', entitlement: { ...base, expires_at: '2026-11-21T09:59:59Z' }, reason: 'expired' },
  { name: 'expires_at exactly now', entitlement: { ...base, expires_at: '2026-11-21T10:00:00Z' }, reason: 'expired' },
  { name: 'unreadable expires_at fails closed', entitlement: { ...base, expires_at: 'soon' }, reason: 'expired' },
  { name: 'lifetime (no expires_at)', entitlement: { ...base, expires_at: undefined }, reason: 'granted' },
  { name: 'lifetime (null expires_at)', entitlement: { ...base, expires_at: null }, reason: 'granted' },
  {
    name: 'short form counts as active',
    entitlement: { user_id: 'usr_1', app_id: 'app_1', plan: 'pro', features: ['export'], usage: { api_calls: 0, limit: 5 } },
    requirement: { feature: 'export' },
    reason: 'granted',
  },
  { name: 'no entitlement', entitlement: null, reason: 'none' },
  { name: 'no entitlement (undefined)', entitlement: undefined, reason: 'none' },
  { name: 'over quota, unmetered', entitlement: { ...base, usage: { api_calls: 1000, limit: 1000 } }, requirement: { feature: 'export' }, reason: 'granted' },
  { name: 'over quota, metered', entitlement: { ...base, usage: { api_calls: 1000, limit: 1000 } }, requirement: { feature: 'export', metered: true }, reason: 'over_quota' },
  { name: 'status wins over feature', entitlement: { ...base, status: 'past_due' }, requirement: { feature: 'sso' }, reason: 'past_due' },
  {
    name: 'plan is named before over_quota',
    entitlement: { ...base, usage: { api_calls: 1000, limit: 1000 } },
    requirement: { plan: 'business', metered: true },
    reason: 'plan',
  },
  {
    name: 'feature is named before over_quota',
    entitlement: { ...base, usage: { api_calls: 1000, limit: 1000 } },
    requirement: { feature: 'sso', metered: true },
    reason: 'feature',
  },
  { name: 'plan is named before feature', entitlement: base, requirement: { plan: 'business', feature: 'sso' }, reason: 'plan' },
  { name: 'an empty feature name is no wildcard', entitlement: base, requirement: { feature: '' }, reason: 'feature' },
  { name: 'over quota, metered: false', entitlement: { ...base, usage: { api_calls: 1000, limit: 1000 } }, requirement: { metered: false }, reason: 'granted' },
];
