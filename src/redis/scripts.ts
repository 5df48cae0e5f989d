/**
 * The Lua scripts of the Redis stores: each store operation is one script, so it is atomic and
 * costs one round trip (docs/redis.md "What is shared"). Times are the app's clock in ms; expiries
 * are relative (`PX`), so that a Redis whose clock differs from the app's keeps keys as long as
 * asked.
 *
 * `EPOCH` opens every script that guards against replays: a hash whose `since` is the time this
 * Redis was first used by the kit. A Redis that lost its data (restarted without persistence,
 * flushed) has none: the script sets it to now, and what was issued in an earlier second (context
 * tokens and sessions carry whole seconds) is refused (docs/redis.md "A Redis that lost its data").
 */
import { script } from './link.js';

const EPOCH = `
local since = redis.call('HGET', KEYS[1], 'since')
if not since then
  since = ARGV[1]
  redis.call('HSET', KEYS[1], 'since', since)
end
since = tonumber(since)
local sinceSecond = math.floor(since / 1000) * 1000
local now = tonumber(ARGV[1])
`;

/** KEYS: epoch. ARGV: now. Starts the epoch when the stores are created, not at their first request. */
export const TOUCH_EPOCH = script(`${EPOCH}
return 1`);

/** KEYS: epoch, claim. ARGV: now, owner, ttl ms, earliest issue time. → 1 claimed, 0 replay. */
export const CLAIM = script(`${EPOCH}
if tonumber(ARGV[4]) < sinceSecond then return 0 end
if redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3], 'NX') then return 1 end
return 0`);

/** KEYS: claim. ARGV: owner. Ends a claim that timed out on its way, if it was made after all. */
export const UNCLAIM = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`);

/** KEYS: claim. Ends a claim, whoever made it (`ReplayStore.release`). */
export const UNCLAIM_ANY = script(`
redis.call('DEL', KEYS[1])
return 1`);

/** KEYS: epoch, deliveries… ARGV: now, owner, lease ms, done ms, sent at. → {'claimed'} | {'done'} | {'busy', ms}. */
export const WEBHOOK_BEGIN = script(`${EPOCH}
if tonumber(ARGV[5]) < sinceSecond then return {'busy', 300000} end
local lease = 'lease:' .. ARGV[2]
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) == 'done' then
    for j = 2, #KEYS do redis.call('SET', KEYS[j], 'done', 'PX', ARGV[4], 'NX') end
    return {'done'}
  end
end
local busy = 0
for i = 2, #KEYS do
  local held = redis.call('GET', KEYS[i])
  if held and held ~= lease then busy = math.max(busy, redis.call('PTTL', KEYS[i])) end
end
if busy > 0 then return {'busy', busy} end
for i = 2, #KEYS do redis.call('SET', KEYS[i], lease, 'PX', ARGV[3]) end
return {'claimed'}`);

/** KEYS: deliveries… ARGV: owner, lease ms. → 1 renewed, 0 lost. */
export const WEBHOOK_RENEW = script(`
local lease = 'lease:' .. ARGV[1]
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) ~= lease then return 0 end
end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return 1`);

/** KEYS: deliveries… ARGV: done ms. */
export const WEBHOOK_FINISH = script(`
for i = 1, #KEYS do redis.call('SET', KEYS[i], 'done', 'PX', ARGV[1]) end
return 1`);

/** KEYS: deliveries… ARGV: owner. */
export const WEBHOOK_ABANDON = script(`
local lease = 'lease:' .. ARGV[1]
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == lease then redis.call('DEL', KEYS[i]) end
end
return 1`);

/** KEYS: count. ARGV: limit, window ms. → {1, 0} counted | {0, ms until the window ends}. */
export const LAUNCH_TAKE = script(`
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 then left = tonumber(ARGV[2]) end
  return {0, left}
end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, 0}`);

/** KEYS: count. */
export const LAUNCH_GIVE_BACK = script(`
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 1`);

/** KEYS: cut-off. ARGV: at, keep ms. */
export const REVOKE = script(`
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then current = tonumber(ARGV[1]) end
redis.call('SET', KEYS[1], string.format('%.0f', current), 'PX', math.max(tonumber(ARGV[2]), redis.call('PTTL', KEYS[1])))
return 1`);

/**
 * KEYS: epoch, cut-off. ARGV: now. → the user's cut-off, or the second the epoch began in,
 * whichever is later: sessions from before a loss of data are refused, as a cut-off lost with it might.
 */
export const REVOKED_AT = script(`${EPOCH}
local cutoff = tonumber(redis.call('GET', KEYS[2]) or '0')
if sinceSecond > cutoff then cutoff = sinceSecond end
return string.format('%.0f', cutoff)`);

/** KEYS: epoch, user. ARGV: now. → {value or false, expires at, generation}. */
export const ENTITLEMENT_READ = script(`${EPOCH}
local found = redis.call('HMGET', KEYS[2], 'v', 'x', 'g')
return {found[1], found[2] or '0', string.format('%.0f', since) .. ':' .. (found[3] or '0')}`);

/** KEYS: epoch, every user's generation. ARGV: now. → a generation that any invalidation moves on. */
export const ENTITLEMENT_GENERATION = script(`${EPOCH}
return string.format('%.0f', since) .. ':*' .. (redis.call('GET', KEYS[2]) or '0')`);

/**
 * KEYS: epoch, user, every user's generation. ARGV: now, value, generation, loaded at, expires at,
 * keep ms. → 1 written, 0 refused (invalidated since the generation, or a later load's answer is cached).
 */
export const ENTITLEMENT_WRITE = script(`${EPOCH}
local epoch, scope, generation = string.match(ARGV[3], '^(%d+):(%*?)(%d+)$')
if tonumber(epoch) ~= since then return 0 end
if scope == '*' then
  if (redis.call('GET', KEYS[3]) or '0') ~= generation then return 0 end
elseif (redis.call('HGET', KEYS[2], 'g') or '0') ~= generation then
  return 0
end
local held = redis.call('HMGET', KEYS[2], 'x', 'l')
if held[1] and tonumber(held[1]) > now and tonumber(held[2]) > tonumber(ARGV[4]) then return 0 end
redis.call('HSET', KEYS[2], 'v', ARGV[2], 'x', ARGV[5], 'l', ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 1`);

/** KEYS: user, every user's generation. ARGV: keep ms. */
export const ENTITLEMENT_INVALIDATE = script(`
redis.call('HINCRBY', KEYS[1], 'g', 1)
redis.call('HDEL', KEYS[1], 'v', 'x', 'l')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[2])
return 1`);

/**
 * KEYS: slots, pause. ARGV: now, window ms, limit, slot, hold until.
 * Slots are scored by when they end: their answer's time once given back, `hold until` while in
 * flight. → {1} taken | {0, wait ms, 1 if the wait is a 429's pause}.
 */
export const PACE_TAKE = script(`
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local pause = tonumber(redis.call('GET', KEYS[2]) or '0') - now
local wait = 0
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local first = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
  if first <= now then wait = first + window - now else wait = window end
end
if pause <= 0 and wait <= 0 then
  redis.call('ZADD', KEYS[1], ARGV[5], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[5]) - now + window))
  return {1}
end
if pause > wait then return {0, math.ceil(pause), 1} end
return {0, math.ceil(wait), 0}`);

/** KEYS: slots. ARGV: slot, now, window ms. The slot's answer came: it ends now, unless it already ended. */
export const PACE_RELEASE = script(`
local ends = redis.call('ZSCORE', KEYS[1], ARGV[1])
if ends and tonumber(ends) > tonumber(ARGV[2]) then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
return 1`);

/** KEYS: pause. ARGV: until, now. Keeps the later of two pauses. */
export const PACE_PAUSE = script(`
if tonumber(ARGV[1]) > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', math.max(1, tonumber(ARGV[1]) - tonumber(ARGV[2])))
end
return 1`);

/** KEYS: outcome, lease. ARGV: owner, lease ms. → {'done', sealed} | {'lead'} | {'wait'}. */
export const REFRESH_BEGIN = script(`
local sealed = redis.call('GET', KEYS[1])
if sealed then return {'done', sealed} end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return {'wait'} end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {'lead'}`);

/** KEYS: outcome, lease. ARGV: sealed outcome (tokens or failure), keep ms. */
export const REFRESH_FINISH = script(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
return 1`);
