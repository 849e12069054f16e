/**
 * A counter store shared across gateway replicas, on Redis ([OAR-FIRE-5], [OAR-FIRE-9]).
 *
 * - One key per counter: `<prefix>{<session as hex>}:<qualified id>[#<scope value>]` — the
 *   `<qid>#<scope>` spelling of [OAR-CONF-33]; the session, hex-encoded, is the hash tag, so every
 *   counter of a session lives in one cluster slot and the atomic write can touch them all. The
 *   value is a hash with `f` (fire_count) and `b` (breaker_count), and `rf` / `rb`, how often each
 *   was reset (used only to undo a write, below). Keys are bytes, the WTF-8 encoding of the
 *   strings: lossless, so sessions or scope values that differ only in a lone surrogate are
 *   different keys (UTF-8 would turn both into U+FFFD).
 * - Serialisable decisions across replicas: each session has a version (`<prefix>{<hex>}!v`) that
 *   every write moves. Reads are one MULTI (atomic, one round trip) of the version and the
 *   counters; the write script applies its ops only if the version is still the one read — else
 *   it applies nothing and the engine reads and evaluates again ([OAR-FIRE-6]).
 * - Lost data is detected. `<prefix>epoch` (the epoch record) holds the store's epoch id, a write
 *   sequence every write advances, a generation (moved on by each acknowledged loss) and, once a
 *   store has found a loss, a mark saying so. Beside it, each store keeps a write sequence of its
 *   own (`<prefix>epoch:q:<store id>`), which only its own writes advance, in the same script. Every
 *   read and write checks: the id is the one this store adopted; the record is not marked lost;
 *   the deployment's sequence is not below the highest this store has seen; and this store's own
 *   sequence is not below the highest it saw acknowledged — so a restore of older data, or a
 *   failover that lost acknowledged writes, is found by every store that had a write acknowledged
 *   since, whatever the other stores wrote meanwhile (their writes move the deployment's sequence,
 *   never this one). A store that finds a loss marks the record, so every other store refuses
 *   counters from its next read or write, and a store started later refuses too. Then every counter
 *   read and write fails — the rules that need counters take `on_error` — until an operator calls
 *   `acknowledgeDataLoss()` on any store: it moves the generation on and clears the mark, and each
 *   store, seeing the newer generation, adopts what Redis holds instead of reporting the loss
 *   again ([OAR-FIRE-9]: counters silently back at an older value would report breakers that
 *   never advanced). What no check can see: writes that no running store had acknowledged (a
 *   store's floors are its memory: a restore done while every store was stopped, or writes of
 *   stores since gone, are simply adopted), and, until the store whose writes were lost next
 *   touches Redis, the decisions other stores make on the older data. Own sequences expire
 *   `markerTtlSeconds` after their store's last write (so a key per store instance ever started
 *   does not pile up); a store idle for 90% of that forgets its own floor and starts it afresh.
 *   On a cluster each hash slot has its own record, `<prefix>{epoch-<n>}epoch`, with the stores'
 *   own sequences beside it in the same slot (see `adoptSlot`); a loss is marked on the slot's
 *   record and on the root `<prefix>epoch`, which stores read when they start or meet a new slot.
 * - Reads: one MULTI of HMGETs, one round trip. Writes: one EVAL of a Lua script applying every
 *   increment and reset in order, atomically — it reads and checks every counter before it writes
 *   any, so a script error leaves nothing half-applied (Redis does not roll a script back) — and
 *   refreshing the idle-session TTL.
 * - Failure is loud: the client does not queue commands while disconnected and neither retries nor
 *   re-sends a command, so an unreachable server rejects at once and the engine routes the affected
 *   rules to `on_error` ([OAR-FIRE-9]). Reconnection is automatic. A server that stalls instead (the
 *   connection stays up, nothing answers) would cost every command its full timeout, a session's
 *   queued decisions one after another; so after a command times out, commands to that server
 *   (per primary on a cluster) fail at once, unsent, for `failFastMs`, then one goes as a probe;
 *   a PING kept in flight to the server meanwhile, or any other answer, ends it (`send`).
 * - A write whose outcome the client cannot know — it timed out, or the connection dropped after
 *   it was sent — is reported failed, so the decision says the rule took `on_error`; yet Redis may
 *   still run it (a stalled server resuming) or may have run it (a server killed between its
 *   append-only-file fsync and its reply). Such a write is *doubtful*, and the store makes it
 *   untrue that it was applied: every write carries an id and records, in the same script, what it
 *   changed under `<prefix>{<session hex>}!w:<store id>`; once the server answers again the store
 *   resolves each doubtful write — a write that never ran is fenced off so it never will, and one
 *   that ran is undone (a counter reset since then is left alone: the reset already erased it). So
 *   the counters end up holding exactly the increments that decisions report applied, and no
 *   increment is applied twice. `settled()` waits for that.
 */
import { randomBytes } from 'node:crypto';
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import type { SharedStep, VersionedCounterStore, VersionedRead } from './async-counters.js';
import { counterName, type CounterKey, type CounterOp, type CounterValues } from './counters.js';
import { parseRedisTarget, type RedisTarget } from './redis-target.js';
import { keySlot, tagForSlot } from './redis-slots.js';
import { utf8Decode, utf8Encode } from './sha256.js';

/**
 * ioredis is an optional peer dependency: a host that only decides, or keeps counters in memory,
 * never installs a Redis client. Importing this module without it fails here, saying what to do.
 */
async function importClient(): Promise<typeof import('ioredis')> {
  try {
    return await import('ioredis');
  } catch (e) {
    // Only ioredis itself missing; a broken installation of it keeps its own error.
    if ((e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && (e as Error).message.includes("'ioredis'")) {
      throw new Error('oarc/redis needs the Redis client ioredis, an optional peer dependency of oarc that is not installed: run `npm install ioredis`', { cause: e });
    }
    throw e;
  }
}

const { Redis: RedisClient, Cluster: ClusterClient } = await importClient();

export { parseRedisTarget, type RedisTarget } from './redis-target.js';

export interface RedisCounterStoreOptions {
  /**
   * An ioredis client (`Redis`, for one server or a Sentinel-managed primary, or `Cluster`), or
   * where to connect — `target`, or `url` in any form `parseRedisTarget` reads (`redis://…`,
   * `redis+cluster://h1:p1,h2:p2`, `redis+sentinel://s1:p1,s2:p2/mastername`) — to create one with
   * fail-fast settings.
   */
  redis?: Redis | Cluster;
  url?: string;
  target?: RedisTarget;
  /** ioredis options merged over the fail-fast ones (for a cluster: each node's connection options). */
  options?: RedisOptions;
  /** Cluster options merged over the fail-fast ones (a `redis+cluster` target only). */
  clusterOptions?: ClusterOptions;
  /**
   * After each write, `WAIT replicas waitTimeoutMs`: a write that fewer replicas acknowledged in
   * time is reported failed (the rules take `on_error`) and undone, so a failover that promotes
   * an acknowledging replica loses no increment a decision reported applied. 0 (default) does not
   * wait: replication is asynchronous and a failover can lose the last acknowledged writes.
   */
  waitReplicas?: number;
  /** How long WAIT waits, in milliseconds; default 100, and below `timeoutMs`. */
  waitTimeoutMs?: number;
  /** Key prefix; default `oar:`. It must not contain `{` or `}` (the hash tag is the session). */
  prefix?: string;
  /** Idle sessions' counters expire after this many seconds; 0 keeps them. Default 86,400. */
  ttlSeconds?: number;
  /**
   * How long the record of a write outlives it, so a doubtful write can still be resolved: the
   * session TTL, or 86,400 when counters are kept forever. Only the last write of a session per
   * store stays recorded; earlier ones are pruned by later writes. This store's own write
   * sequence (its loss detection, beside the epoch record) expires as long after its last write.
   */
  markerTtlSeconds?: number;
  /** Per-command timeout in milliseconds; default 500. */
  timeoutMs?: number;
  /**
   * After a command times out (a server that stopped answering but kept its connections: stalled,
   * SIGSTOPped, partitioned), new commands to that server fail at once, without being sent — the
   * rules that needed them take `on_error` — for this many milliseconds; then one is let through
   * to probe it (the others still fail at once); the first answer to it, or to a PING the store
   * keeps in flight to that server, ends it. Without it every
   * decision would wait out its own timeout, one after the other for a session's queued
   * decisions. Default 1000; 0 turns it off. On a cluster, per primary.
   */
  failFastMs?: number;
  /**
   * Keep sessions' activity windows in Redis, read with the counters and appended with their
   * writes, so `flow` rules see one window across replicas ([OAR-PROF-9]). Default true; false
   * keeps each replica's own window and saves the write of a step at occurrences that count
   * nothing.
   */
  shareActivity?: boolean;
}

/**
 * KEYS: the counter keys, then the store's write record for the session, the session's version,
 * its activity window, the epoch record, this store's own write sequence. ARGV: TTL, record TTL,
 * write id, low-water mark (every write of this store below it has a known outcome), expected
 * version ('' for none), expected epoch id, the tool step to append ('' for none), the window
 * size, this store's generation, the lowest write sequence and own write sequence the record may
 * hold, the own sequence's TTL, then (key index, action) pairs in application order
 * ([OAR-FIRE-8]). Returns {status, sequence, own sequence, loss mark, and for -2 the epoch id
 * found}: 1 applied, 0 fenced, -1
 * the version moved, -2 the epoch is not the expected one, -3 the record is marked lost (in this
 * store's generation or a later one), -4 the write sequence is below its floor, -5 this store's
 * own sequence is below its floor; nothing is written unless 1.
 */
const APPLY = `
local n = #KEYS - 5
local mk, vk, ak, ek, ok = KEYS[n + 1], KEYS[n + 2], KEYS[n + 3], KEYS[n + 4], KEYS[n + 5]
local id = ARGV[3]
local e = redis.call('HMGET', ek, 'id', 'seq', 'lost')
local seq, own = tonumber(e[2] or '0'), tonumber(redis.call('GET', ok) or '0')
if e[1] ~= ARGV[6] then return {-2, seq, own, e[3] or '', e[1] or ''} end
if e[3] and tonumber(string.match(e[3], '^%d+') or '0') >= tonumber(ARGV[9]) then return {-3, seq, own, e[3]} end
if seq < tonumber(ARGV[10]) then return {-4, seq, own, ''} end
if own < tonumber(ARGV[11]) then return {-5, seq, own, ''} end
if redis.call('HEXISTS', mk, id) == 1 then return {0, seq, own, ''} end
if ARGV[5] ~= '' and (redis.call('GET', vk) or '0') ~= ARGV[5] then return {-1, seq, own, ''} end
local f, b, rf, rb, f0, b0 = {}, {}, {}, {}, {}, {}
for i = 1, n do
  local v = redis.call('HMGET', KEYS[i], 'f', 'b', 'rf', 'rb')
  f[i] = tonumber(v[1] or '0'); b[i] = tonumber(v[2] or '0'); rf[i] = tonumber(v[3] or '0'); rb[i] = tonumber(v[4] or '0')
  if f[i] == nil or b[i] == nil or rf[i] == nil or rb[i] == nil then
    return redis.error_reply('oarc: ' .. KEYS[i] .. ' does not hold counters')
  end
  f0[i] = f[i]; b0[i] = b[i]
end
for j = 13, #ARGV, 2 do
  local i = tonumber(ARGV[j])
  local a = ARGV[j + 1]
  if a == 'increment_counter' then f[i] = f[i] + 1
  elseif a == 'reset_counter' then f[i] = 0; rf[i] = rf[i] + 1
  elseif a == 'increment_breaker' then b[i] = b[i] + 1
  elseif a == 'reset_breaker' then b[i] = 0; rb[i] = rb[i] + 1
  else return redis.error_reply('oarc: unknown counter action ' .. a) end
end
local undo = {}
for i = 1, n do
  redis.call('HSET', KEYS[i], 'f', f[i], 'b', b[i], 'rf', rf[i], 'rb', rb[i])
  undo[i] = i .. ' ' .. (f[i] - f0[i]) .. ' ' .. (b[i] - b0[i]) .. ' ' .. rf[i] .. ' ' .. rb[i]
end
redis.call('HSET', mk, id, table.concat(undo, ';'))
local low = tonumber(ARGV[4])
for _, w in ipairs(redis.call('HKEYS', mk)) do
  if tonumber(w) < low then redis.call('HDEL', mk, w) end
end
redis.call('INCR', vk)
if ARGV[7] ~= '' then
  redis.call('RPUSH', ak, ARGV[7])
  redis.call('LTRIM', ak, -tonumber(ARGV[8]), -1)
end
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  for i = 1, n do redis.call('EXPIRE', KEYS[i], ttl) end
  redis.call('EXPIRE', vk, ttl)
  if ARGV[7] ~= '' then redis.call('EXPIRE', ak, ttl) end
end
redis.call('EXPIRE', mk, tonumber(ARGV[2]))
local s = redis.call('HINCRBY', ek, 'seq', 1)
local o = redis.call('INCR', ok)
redis.call('EXPIRE', ok, tonumber(ARGV[12]))
return {1, s, o, ''}
`;

/**
 * One atomic read. KEYS: the epoch record, this store's own write sequence, the session's version,
 * its activity window, the counter keys. ARGV: how many of the window's last steps to read (0:
 * none). Returns a flat array (Lua arrays cannot hold nil, so a missing value is ''): epoch id,
 * write sequence, loss mark, own write sequence, version, the number of steps, the steps, then
 * `f`, `b` of each counter. A script rather than MULTI: a server past its memory limit refuses to
 * queue even a read inside MULTI, while a script that writes nothing runs.
 */
const READ = `
local e = redis.call('HMGET', KEYS[1], 'id', 'seq', 'lost')
local out = {e[1] or '', e[2] or '0', e[3] or '', redis.call('GET', KEYS[2]) or '0', redis.call('GET', KEYS[3]) or '0'}
local steps = {}
local want = tonumber(ARGV[1])
if want > 0 then steps = redis.call('LRANGE', KEYS[4], -want, -1) end
out[#out + 1] = tostring(#steps)
for _, s in ipairs(steps) do out[#out + 1] = s end
for i = 5, #KEYS do
  local v = redis.call('HMGET', KEYS[i], 'f', 'b')
  out[#out + 1] = v[1] or ''
  out[#out + 1] = v[2] or ''
end
return out
`;

/**
 * Resolve a doubtful write. KEYS: as the write had them. ARGV: write id, record TTL. A write that
 * never ran is fenced (`x`) so it never will; one that ran is undone (`u`), counter by counter,
 * unless that counter was reset since (its reset count moved on), and the undo moves the session's
 * version like any write. A tool step the write appended stays: the call was admitted. Idempotent: a resolution that timed out may have run, and is simply sent
 * again. Returns 1 if the write had run, else 0.
 */
const RESOLVE = `
local mk, vk = KEYS[#KEYS - 4], KEYS[#KEYS - 3]
local v = redis.call('HGET', mk, ARGV[1])
if v == 'x' then return 0 end
if v == 'u' then return 1 end
redis.call('HSET', mk, ARGV[1], v == false and 'x' or 'u')
redis.call('EXPIRE', mk, tonumber(ARGV[2]))
if v == false then return 0 end
redis.call('INCR', vk)
for i, df, db, rf, rb in string.gmatch(v, '(%d+) (%-?%d+) (%-?%d+) (%d+) (%d+)') do
  local k = KEYS[tonumber(i)]
  if redis.call('EXISTS', k) == 1 then
    local cur = redis.call('HMGET', k, 'rf', 'rb')
    if tonumber(df) ~= 0 and tonumber(cur[1] or '0') == tonumber(rf) then redis.call('HINCRBY', k, 'f', -tonumber(df)) end
    if tonumber(db) ~= 0 and tonumber(cur[2] or '0') == tonumber(rb) then redis.call('HINCRBY', k, 'b', -tonumber(db)) end
  end
end
return 1
`;

/** How long a store waits before starting a client that ioredis has ended (see the constructor). */
const RESTART_MS = 1000;

const OFFLINE = "Stream isn't writeable";
/** What an ioredis Cluster says when it cannot route a command at all (nothing was sent). */
const CLUSTER_OFFLINE = "Cluster isn't ready";

/**
 * On a cluster, the first time a store meets a hash slot it learns the slot's epoch record
 * (`<prefix>{epoch-<n>}epoch`, a key of that slot). KEYS: that record. ARGV: the store's epoch id,
 * then '0' (the slot has been initialised before, by the root's account: a missing record is a
 * loss) or '1' (never initialised: create it). Returns {id or '', seq, loss mark or ''}.
 */
const ADOPT_SLOT = `
local e = redis.call('HMGET', KEYS[1], 'id', 'seq', 'lost')
if e[1] or e[3] or ARGV[2] == '0' then return {e[1] or '', e[2] or '0', e[3] or ''} end
redis.call('HSET', KEYS[1], 'id', ARGV[1])
return {ARGV[1], '0', ''}
`;

/**
 * Mark an epoch record lost, so that every store refuses counters from its next read or write.
 * KEYS: the record. ARGV: the marking store's generation, the mark (`<generation> <store id>
 * <what was found>`). A mark of an older generation — made before an operator's acknowledgement —
 * is replaced; a current one is kept (the first finder's account stays).
 */
const MARK = `
local m = redis.call('HGET', KEYS[1], 'lost')
if m and tonumber(string.match(m, '^%d+') or '0') >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'lost', ARGV[2])
return 1
`;

/**
 * An operator's acknowledgement of a loss, on the root record: a new generation (above the last,
 * and at least ARGV[2], the clock), no loss mark, and an epoch id (ARGV[1] if it has none).
 * Returns {id, seq, generation}.
 */
const ACKNOWLEDGE = `
local g = tonumber(redis.call('HGET', KEYS[1], 'g') or '0') + 1
if tonumber(ARGV[2]) > g then g = tonumber(ARGV[2]) end
g = string.format('%d', g)
redis.call('HSET', KEYS[1], 'g', g)
redis.call('HDEL', KEYS[1], 'lost')
redis.call('HSETNX', KEYS[1], 'id', ARGV[1])
local v = redis.call('HMGET', KEYS[1], 'id', 'seq')
return {v[1], v[2] or '0', g}
`;

/** Acknowledgement on a cluster: a slot's record takes the root's epoch id and loses its mark. KEYS: the record; ARGV: the id. */
const TAKE_OVER = `
redis.call('HDEL', KEYS[1], 'lost')
redis.call('HSET', KEYS[1], 'id', ARGV[1])
return 1
`;

/** The WTF-8 bytes of a string: UTF-8, with a lone surrogate encoded as its own code point. */
function wtf8(s: string): Buffer {
  const b = utf8Encode(s);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function fromWtf8(b: Buffer): string {
  return utf8Decode(b, 0, b.length);
}

function hex(s: string): string {
  return wtf8(s).toString('hex');
}

/** A store whose data was lost: every counter read and write fails until an operator acknowledges it. */
export class CounterDataLoss extends Error {
  override readonly name = 'CounterDataLoss';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** What a store found, in words (a loss message, and the mark it leaves for the other stores). */
function lossFinding(l: DataLoss): string {
  switch (l.reason) {
    case 'epoch':
      return `it held epoch ${l.expected.id} and now holds ${l.found.id === null ? 'no epoch (the server restarted empty or was flushed)' : `epoch ${l.found.id}`}`;
    case 'sequence':
      return `it held epoch ${l.expected.id} and now holds write sequence ${l.found.seq}, below the ${l.expected.seq} already acknowledged (older data was restored)`;
    case 'store-sequence':
      return `writes of its own are gone: its own write sequence is ${l.own?.found}, below the ${l.own?.expected} it saw acknowledged (older data was restored, or a failover lost acknowledged writes)`;
    case 'marked':
      return `store ${l.mark?.store} marked the record lost: ${l.mark?.finding}`;
  }
}

function lossMessage(l: DataLoss): string {
  const where = l.slot === undefined ? '' : ` in cluster hash slot ${l.slot}`;
  return `the counter store lost data${where}: ${lossFinding(l)}; counters stay unavailable until an operator calls acknowledgeDataLoss()`;
}

/** A loss mark, `<generation> <store id> <finding>`, read back. */
function parseMark(m: string): { generation: number; store: string; finding: string } {
  const x = /^(\d+) (\S+) ([^]*)$/.exec(m);
  return x === null ? { generation: 0, store: '?', finding: m } : { generation: Number(x[1]), store: x[2] as string, finding: x[3] as string };
}

/** A command not sent because its server timed out a moment ago (`failFastMs`). */
export class StoreStalled extends Error {
  override readonly name = 'StoreStalled';
}

/** Did the command certainly not run? Never sent, or answered with an error by the server. */
function certainlyNotApplied(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return e.name === 'ReplyError' || e instanceof StoreStalled || e.message.startsWith(OFFLINE) || e.message.startsWith(CLUSTER_OFFLINE);
}

/** ioredis's `commandTimeout` rejection: the server did not answer in time. */
const isTimeout = (e: unknown) => e instanceof Error && e.message === 'Command timed out';

/** A write that applied on the primary but reached fewer replicas than `waitReplicas` in time. */
export class UnreplicatedWrite extends Error {
  override readonly name = 'UnreplicatedWrite';
}

/** Create the client a target names, with the store's fail-fast settings. */
function connect(target: RedisTarget, timeout: number, opts: RedisCounterStoreOptions): Redis | Cluster {
  // No offline queue, no retry, no re-send: a command either reaches the server now or fails at
  // once, and the engine routes the rules that needed it to on_error ([OAR-FIRE-9]).
  const failFast: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: timeout,
    connectTimeout: timeout,
    lazyConnect: false,
  };
  if (target.kind === 'server') return new RedisClient(target.url, { ...failFast, ...opts.options });
  const auth = { ...(target.username === undefined ? {} : { username: target.username }), ...(target.password === undefined ? {} : { password: target.password }), ...(target.tls ? { tls: {} } : {}) };
  if (target.kind === 'sentinel') {
    return new RedisClient({
      ...failFast,
      ...auth,
      sentinels: target.sentinels,
      name: target.name,
      role: 'master',
      ...(target.sentinelPassword === undefined ? {} : { sentinelPassword: target.sentinelPassword }),
      ...(target.db === undefined ? {} : { db: target.db }),
      // Listen for +switch-master, so a primary that stopped answering (but kept its connections)
      // is left for the promoted one at once, not when a timeout finally closes the connection.
      failoverDetector: true,
      // A primary that was demoted under the connection (it answered again after the Sentinels
      // had promoted another) refuses writes with READONLY: reconnect, asking the Sentinels anew.
      // 1: reconnect without re-sending the command (a doubtful write is resolved instead).
      reconnectOnError: (e: Error) => (e.message.startsWith('READONLY') ? 1 : false),
      sentinelCommandTimeout: timeout,
      retryStrategy: (n: number) => Math.min(50 * n, 1000),
      ...opts.options,
    });
  }
  const { enableOfflineQueue: _q, lazyConnect: _l, ...nodeFailFast } = failFast;
  return new ClusterClient(target.nodes, {
    enableOfflineQueue: false,
    // Every command to the slot's primary: a replica's copy may be behind, and the version check
    // must see the latest write ([OAR-FIRE-6]).
    scaleReads: 'master',
    maxRedirections: 16,
    // A MOVED / ASK / TRYAGAIN reply means the command did not run, so following it is safe (the
    // client does, up to maxRedirections). A command whose connection closed may have run: it is
    // never re-sent (0 turns that retry off), and the store resolves it as a doubtful write.
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    retryDelayOnTryAgain: 20,
    retryDelayOnMoved: 0,
    slotsRefreshTimeout: Math.max(timeout, 1000),
    slotsRefreshInterval: 2000,
    clusterRetryStrategy: (n: number) => Math.min(100 * n, 1000),
    ...opts.clusterOptions,
    redisOptions: { ...nodeFailFast, ...auth, ...opts.options, ...opts.clusterOptions?.redisOptions },
  });
}

interface Doubtful {
  keys: Buffer[];
  /** The hash slot of the keys (0 on one server). */
  slot: number;
}

/**
 * A server that timed out: commands to it fail at once until `until`, then one goes as a probe
 * (`probing`); meanwhile a PING is kept in flight to it (`pinging`), whose answer ends the stall.
 */
interface Stall {
  until: number;
  since: number;
  probing: boolean;
  pinging: boolean;
}

/** What `dataLoss` reports: the epoch this store knew, and what it found instead. */
export interface DataLoss {
  /**
   * What showed the loss: `epoch` — the record holds another epoch id or none (restarted empty,
   * flushed); `sequence` — the deployment's write sequence is below the highest this store saw;
   * `store-sequence` — this store's own write sequence is below the highest it saw acknowledged
   * (writes of its own are gone); `marked` — another store found a loss and marked the record.
   */
  readonly reason: 'epoch' | 'sequence' | 'store-sequence' | 'marked';
  /** The epoch id this store held, and the highest write sequence it had seen. */
  readonly expected: { id: string; seq: number };
  /** The epoch id and write sequence the record held. */
  readonly found: { id: string | null; seq: number };
  /** This store's own write sequence: the highest it saw acknowledged, and what the record held. */
  readonly own?: { expected: number; found: number };
  /** For `marked`: which store marked the record, and what it had found. */
  readonly mark?: { store: string; finding: string };
  readonly at: Date;
  /** On a cluster, the hash slot whose epoch showed the loss (each slot keeps its own sequence). */
  readonly slot?: number;
}

export class RedisCounterStore implements VersionedCounterStore {
  /** The client: an ioredis `Redis` (one server, or a Sentinel-managed primary) or `Cluster`. */
  readonly redis: Redis | Cluster;
  /** This store's id in write records; one per store instance (one per replica process). */
  readonly id = randomBytes(6).toString('hex');
  /** On a cluster, each hash slot keeps its own epoch record (see `adoptSlot`). */
  readonly clustered: boolean;
  private readonly prefix: string;
  private readonly prefixBytes: Buffer;
  /** One server: the epoch. A cluster: the root record (the epoch id, and which slots have one). */
  private readonly epochKey: Buffer;
  private readonly ttl: number;
  private readonly markerTtl: number;
  private readonly waitReplicas: number;
  private readonly waitTimeout: number;
  private readonly failFastMs: number;
  /** Servers that timed out (by node on a cluster, '' on one server), failing fast. */
  private readonly stalls = new Map<string, Stall>();
  /** Network round trips made: one per non-empty read batch, one per non-empty write batch. */
  roundTrips = 0;
  /** Doubtful writes resolved so far: `undone` had run and were reverted, `fenced` had not. */
  readonly resolutions = { undone: 0, fenced: 0 };
  /** Writes the version check turned back because another writer moved the session first. */
  conflicts = 0;
  /** Writes that fewer than `waitReplicas` replicas acknowledged in time (reported failed, undone). */
  unreplicated = 0;
  /** Sessions' activity windows live in Redis, so every replica's `flow` rules see one window. */
  readonly sharesActivity: boolean;
  /** The last connection error the client reported (they are not printed). */
  lastError: Error | undefined;
  private seq = 0;
  /** Writes sent whose outcome is not known yet (in flight or doubtful). */
  private readonly open = new Set<number>();
  private readonly doubtful = new Map<number, Doubtful>();
  private resolving = false;
  private closed = false;
  private waiters: (() => void)[] = [];
  /** The epoch id this store adopted, and per slot (0 on one server) the highest write sequence it has seen. */
  private epoch: string | undefined;
  private readonly highest = new Map<number, number>();
  /**
   * Per slot, the highest own write sequence this store saw acknowledged (and replicated, with
   * `waitReplicas`), and when: its own writes alone move it, so no other store's writes can hide
   * the loss of one of them.
   */
  private readonly own = new Map<number, { seq: number; at: number }>();
  /** The root record's generation when this store adopted its epoch: each acknowledged loss moves it on. */
  private generation = 0;
  /** Cluster: the slots whose epoch record this store has checked, and those being checked. */
  private readonly adopted = new Set<number>();
  private readonly adoptingSlots = new Map<number, Promise<boolean>>();
  private lost: DataLoss | undefined;
  private adopting: Promise<void> | undefined;
  private readopting: Promise<void> | undefined;

  constructor(opts: RedisCounterStoreOptions = {}) {
    const timeout = opts.timeoutMs ?? 500;
    this.waitReplicas = opts.waitReplicas ?? 0;
    this.waitTimeout = opts.waitTimeoutMs ?? 100;
    this.failFastMs = opts.failFastMs ?? 1000;
    if (!Number.isInteger(this.failFastMs) || this.failFastMs < 0) throw new Error(`oarc: failFastMs must be a whole number of milliseconds, not ${this.failFastMs}`);
    if (!Number.isInteger(this.waitReplicas) || this.waitReplicas < 0) throw new Error(`oarc: waitReplicas must be a whole number of replicas, not ${this.waitReplicas}`);
    if (this.waitReplicas > 0 && !(this.waitTimeout > 0 && this.waitTimeout < timeout)) {
      throw new Error(`oarc: waitTimeoutMs (${this.waitTimeout}) must be above 0 and below timeoutMs (${timeout}), or every WAIT would time out as a command first`);
    }
    this.redis = opts.redis ?? connect(opts.target ?? parseRedisTarget(opts.url ?? 'redis://127.0.0.1:6379'), timeout, opts);
    this.clustered = (this.redis as Cluster).isCluster === true;
    if (opts.redis === undefined) {
      this.redis.on('error', (e: Error) => void (this.lastError = e));
      // ioredis stops for good ('end') when a reconnection attempt fails outright rather than
      // dropping: seen in the Sentinel partition test, where the store then failed every command
      // for the rest of its life. Until `close()`, a store starts its client again after a pause;
      // meanwhile commands fail, and the rules that need them take on_error ([OAR-FIRE-9]), as on any
      // lost connection.
      this.redis.on('end', () => {
        if (this.closed) return;
        setTimeout(() => {
          if (!this.closed && this.redis.status === 'end') this.redis.connect().catch(() => {});
        }, RESTART_MS).unref();
      });
    }
    this.redis.on('ready', () => {
      // A new connection — perhaps to a newly promoted primary — is not the one that stalled.
      this.stalls.clear();
      void this.adoptEpoch().catch(() => {});
      void this.resolveDoubtful();
    });
    this.prefix = opts.prefix ?? 'oar:';
    if (/[{}]/.test(this.prefix)) throw new Error(`oarc: the Redis key prefix ${JSON.stringify(this.prefix)} must not contain { or }`);
    this.prefixBytes = wtf8(this.prefix);
    this.epochKey = Buffer.concat([this.prefixBytes, Buffer.from('epoch')]);
    this.ttl = opts.ttlSeconds ?? 86_400;
    this.sharesActivity = opts.shareActivity ?? true;
    this.markerTtl = opts.markerTtlSeconds ?? (this.ttl > 0 ? this.ttl : 86_400);
    if (this.redis.status === 'ready') void this.adoptEpoch().catch(() => {});
  }

  /** The Redis key of a counter, as bytes (WTF-8). */
  key(k: CounterKey): Buffer {
    return Buffer.concat([this.sessionTag(k.session), Buffer.from(':'), wtf8(counterName(k))]);
  }

  /** The Redis key of this store's write record for a session. */
  recordKey(session: string): Buffer {
    return Buffer.concat([this.sessionTag(session), Buffer.from(`!w:${this.id}`)]);
  }

  /** The Redis key of a session's version, which every write of its counters moves. */
  versionKey(session: string): Buffer {
    return Buffer.concat([this.sessionTag(session), Buffer.from('!v')]);
  }

  /** The Redis key of a session's activity window: a list of tool steps, oldest first ([OAR-PROF-9]). */
  activityKey(session: string): Buffer {
    return Buffer.concat([this.sessionTag(session), Buffer.from('!a')]);
  }

  /** The hash slot of every key of a session (its hash tag is the session). */
  sessionSlot(session: string): number {
    return keySlot(Buffer.from(hex(session)));
  }

  /**
   * The epoch record a session's scripts check: on one server the one `<prefix>epoch`; on a
   * cluster the record of the session's slot, `<prefix>{epoch-<n>}epoch`, so that every key of a
   * script is in one slot.
   */
  epochKeyOf(session: string): Buffer {
    return this.clustered ? this.slotEpochKey(this.sessionSlot(session)) : this.epochKey;
  }

  private slotEpochKey(slot: number): Buffer {
    return Buffer.concat([this.prefixBytes, Buffer.from(`{${tagForSlot(slot)}}epoch`)]);
  }

  private sessionTag(session: string): Buffer {
    return Buffer.concat([this.prefixBytes, Buffer.from(`{${hex(session)}}`)]);
  }

  /** Resolves once the client is connected and the store's epoch is known (commands fail fast until then). */
  async ready(timeoutMs = 10_000): Promise<void> {
    if (this.redis.status !== 'ready') {
      await new Promise<void>((resolve, reject) => {
        const onReady = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          this.redis.off('ready', onReady);
          reject(new Error(`oarc: Redis not ready after ${timeoutMs} ms${this.lastError ? `: ${this.lastError.message}` : ''}`));
        }, timeoutMs);
        this.redis.once('ready', onReady);
      });
    }
    await this.adoptEpoch();
  }

  /**
   * Learn the store's epoch the first time the server answers: create it if the keyspace has none
   * (a new deployment), else adopt it, with the root record's generation — and its loss mark, if
   * another store marked it lost: a store started then refuses counters too. Later connections do
   * not adopt again: what a read finds is checked against it (`verdict`).
   */
  private adoptEpoch(again = false): Promise<void> {
    if (this.epoch !== undefined && !again) return Promise.resolve();
    this.adopting ??= (async () => {
      try {
        await this.redis.hsetnx(this.epochKey, 'id', randomBytes(8).toString('hex'));
        const [id, seq, g, mark] = await this.redis.hmget(this.epochKey, 'id', 'seq', 'g', 'lost');
        this.generation = Number(g ?? 0);
        this.epoch = id ?? undefined;
        if (!this.clustered) this.highest.set(0, Number(seq ?? 0));
        const loss = mark === null ? undefined : this.markedLoss(mark, { id, seq: Number(seq ?? 0) }, 0, undefined);
        if (loss !== undefined) this.lost ??= loss;
      } finally {
        this.adopting = undefined;
      }
    })();
    return this.adopting;
  }

  /**
   * Cluster: check a slot's epoch record the first time this store uses the slot. The root record
   * marks every slot that ever had one (`s<slot>`), so a record missing from a marked slot — its
   * primary restarted empty, or a failover promoted a replica that never had it — is a loss, while
   * a slot never used gets its record made now. Returns false when the store adopted a newer
   * generation meanwhile (an operator's acknowledgement): the caller starts again.
   */
  private adoptSlot(slot: number): Promise<boolean> {
    if (!this.clustered || this.adopted.has(slot)) return Promise.resolve(true);
    let p = this.adoptingSlots.get(slot);
    if (p === undefined) {
      p = (async () => {
        try {
          const mark = `s${slot}`;
          const generation = this.generation;
          const marked = (await this.send(this.rootSlot, () => this.redis.hget(this.epochKey, mark))) !== null;
          const [id, seq, lost] = (await this.send(slot, () => this.redis.eval(ADOPT_SLOT, 1, this.slotEpochKey(slot), this.epoch as string, marked ? '0' : '1'))) as [string, string, string];
          if (!marked && id === this.epoch) await this.send(this.rootSlot, () => this.redis.hset(this.epochKey, mark, 1));
          const found = { id: id === '' ? null : id, seq: Number(seq), own: 0, mark: lost === '' ? null : lost };
          const loss = this.verdict(found, slot, 0, 0);
          if (loss !== undefined && !(await this.lossFound(loss, generation))) return false;
          this.adopted.add(slot);
          return true;
        } finally {
          this.adoptingSlots.delete(slot);
        }
      })();
      this.adoptingSlots.set(slot, p);
    }
    return p;
  }

  /** The data loss this store detected, if any; counters fail until `acknowledgeDataLoss()`. */
  get dataLoss(): DataLoss | undefined {
    return this.lost;
  }

  /**
   * An operator has seen the data loss: counting resumes, from what Redis holds, for every store
   * of the deployment. The root record gets a new generation and loses its loss mark (on a
   * cluster, so does every slot's record, which takes the root's epoch id); each other store sees
   * the newer generation at its next read or write that finds a loss, or while it is refusing
   * counters, and adopts what Redis holds instead of reporting the loss again.
   */
  async acknowledgeDataLoss(): Promise<void> {
    const [id, seq, g] = (await this.redis.eval(ACKNOWLEDGE, 1, this.epochKey, randomBytes(8).toString('hex'), Math.max(Date.now(), this.generation + 1))) as [string, string, string];
    if (this.clustered) await this.takeOverSlots(id);
    this.adopted.clear();
    this.highest.clear();
    this.own.clear();
    this.epoch = id;
    this.generation = Number(g);
    if (!this.clustered) this.highest.set(0, Number(seq));
    this.lost = undefined;
  }

  /**
   * Cluster, on acknowledgement: every slot's record (found by scanning each primary) takes the
   * root's epoch id and loses its mark; a slot the root marks as having had a record that no
   * longer exists is unmarked, so the next store to use it makes one.
   */
  private async takeOverSlots(id: string): Promise<void> {
    const cluster = this.redis as Cluster;
    const pattern = `${this.prefix.replace(/[*?[\]\\]/g, '\\$&')}{epoch-*}epoch`;
    const found = new Set<number>();
    for (const node of cluster.nodes('master')) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scanBuffer(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = String(next);
        for (const k of keys) {
          await this.redis.eval(TAKE_OVER, 1, k, id);
          found.add(keySlot(k));
        }
      } while (cursor !== '0');
    }
    const gone = Object.keys(await this.redis.hgetall(this.epochKey)).filter((f) => /^s\d+$/.test(f) && !found.has(Number(f.slice(1))));
    if (gone.length > 0) await this.redis.hdel(this.epochKey, ...gone);
  }

  /**
   * Before a read or write: a store that holds a loss asks the root record whether an operator
   * has acknowledged it since (a newer generation, and no newer mark), and if so adopts what Redis
   * holds; else the call fails with the loss.
   */
  private async guard(): Promise<void> {
    if (this.lost !== undefined) {
      const [g, mark] = await this.send(this.rootSlot, () => this.redis.hmget(this.epochKey, 'g', 'lost'));
      const acknowledged = Number(g ?? 0) > this.generation && (mark === null || parseMark(mark).generation < Number(g ?? 0));
      if (!acknowledged) throw new CounterDataLoss(lossMessage(this.lost));
      await this.readopt();
    }
    if (this.epoch === undefined) throw new Error('oarc: the counter store has not learned its epoch yet (await store.ready())');
  }

  /** Forget the epoch, the floors and any loss, and adopt what the root record holds now. */
  private readopt(): Promise<void> {
    this.readopting ??= (async () => {
      try {
        // The epoch stays known meanwhile, so calls in flight do not fail for want of one.
        this.lost = undefined;
        this.highest.clear();
        this.own.clear();
        this.adopted.clear();
        await this.adoptEpoch(true);
      } finally {
        this.readopting = undefined;
      }
    })();
    return this.readopting;
  }

  /** A loss read from a record's mark, if the mark is current: made in this store's generation or a later one. */
  private markedLoss(mark: string, found: { id: string | null; seq: number }, floor: number, slot: number | undefined): DataLoss | undefined {
    const m = parseMark(mark);
    if (m.generation < this.generation) return undefined; // made before an acknowledgement this store has adopted
    return { reason: 'marked', expected: { id: this.epoch ?? found.id ?? '', seq: floor }, found, mark: { store: m.store, finding: m.finding }, at: new Date(), ...(this.clustered && slot !== undefined ? { slot } : {}) };
  }

  /**
   * What a record's contents say, against what this store knows: undefined if all is well, else
   * the loss. `floor` and `ownFloor` are the highest write sequence and own write sequence seen
   * before the command was sent: the server executed those writes first, so a healthy server
   * holds at least that.
   */
  private verdict(found: { id: string | null; seq: number; own: number; mark: string | null }, slot: number, floor: number, ownFloor: number): DataLoss | undefined {
    const epoch = this.epoch as string;
    const base = { expected: { id: epoch, seq: floor }, found: { id: found.id, seq: found.seq }, at: new Date(), ...(this.clustered ? { slot } : {}) };
    if (found.id !== epoch) return { reason: 'epoch', ...base };
    const marked = found.mark === null ? undefined : this.markedLoss(found.mark, base.found, floor, slot);
    if (marked !== undefined) return marked;
    if (found.seq < floor) return { reason: 'sequence', ...base };
    if (found.own < ownFloor) return { reason: 'store-sequence', ...base, own: { expected: ownFloor, found: found.own } };
    return undefined;
  }

  /**
   * A record showed a loss. If an operator acknowledged a loss since this store adopted its epoch
   * (the root's generation is newer), what the store remembers predates that: it adopts what Redis
   * holds and returns false (the caller starts again). Else it keeps the loss — every counter call
   * fails until an acknowledgement — marks the record lost for the other stores (and the root, on
   * a cluster, for stores that start or meet a new slot), and throws. `generation` is the one the
   * store held when the command was sent: if the store has adopted a newer one since (another
   * call found the acknowledgement first), the floors the finding was judged by are stale.
   */
  private async lossFound(loss: DataLoss, generation: number): Promise<false> {
    if (this.generation > generation) return false;
    const [g] = await this.send(this.rootSlot, () => this.redis.hmget(this.epochKey, 'g'));
    if (Number(g ?? 0) > generation) {
      if (Number(g ?? 0) > this.generation) await this.readopt();
      return false;
    }
    this.lost ??= loss;
    if (loss.reason !== 'marked') {
      const mark = `${this.generation} ${this.id} ${lossFinding(loss)}${loss.slot === undefined ? '' : ` in cluster hash slot ${loss.slot}`}`;
      const records = this.clustered && loss.slot !== undefined ? [this.slotEpochKey(loss.slot), this.epochKey] : [this.epochKey];
      // Best effort: the loss stands for this store whether or not the mark is written.
      for (const r of records) await this.redis.eval(MARK, 1, r, this.generation, mark).catch(() => {});
    }
    throw new CounterDataLoss(lossMessage(this.lost));
  }

  /** This store's own write sequence floor for a slot; 0 once its key may have expired (no acknowledged write for 90% of its TTL). */
  private ownFloor(slot: number): number {
    const o = this.own.get(slot);
    return o === undefined || Date.now() - o.at > this.markerTtl * 900 ? 0 : o.seq;
  }

  /** The slot a session's epoch is kept under: its hash slot on a cluster, 0 on one server. */
  private epochSlot(session: string): number {
    return this.clustered ? this.sessionSlot(session) : 0;
  }

  /**
   * The key of this store's own write sequence beside an epoch record (same hash slot), advanced
   * by each of its writes; it expires `markerTtlSeconds` after the store's last write, so the
   * keys of stores long gone do not pile up.
   */
  ownSequenceKey(session: string): Buffer {
    return Buffer.concat([this.epochKeyOf(session), Buffer.from(`:q:${this.id}`)]);
  }

  /** The server a slot's commands go to: its primary on a cluster ('' on one server). */
  private nodeOf(slot: number): string {
    return this.clustered ? ((this.redis as Cluster).slots[slot]?.[0] ?? '?') : '';
  }

  /** The slot of the root epoch record (0 on one server). */
  private get rootSlot(): number {
    return this.clustered ? keySlot(this.epochKey) : 0;
  }

  /**
   * Send a command to the server of `slot` — or, while that server is stalled (a command to it
   * timed out less than `failFastMs` ago, or another is probing it), fail at once without sending
   * it. A timeout stalls the server; any answer, even an error reply, ends the stall.
   */
  private async send<T>(slot: number, command: () => Promise<T>): Promise<T> {
    if (this.failFastMs === 0) return command();
    const node = this.nodeOf(slot);
    const stall = this.stalls.get(node);
    if (stall !== undefined) {
      const now = Date.now();
      if (now < stall.until || stall.probing) {
        throw new StoreStalled(`oarc: not sent: a command to the counter store timed out ${now - stall.since} ms ago (Redis stopped answering); commands fail at once for ${this.failFastMs} ms after a timeout, then one probes it`);
      }
      stall.probing = true;
    }
    try {
      const r = await command();
      this.stalls.delete(node);
      return r;
    } catch (e) {
      const now = Date.now();
      const s = this.stalls.get(node);
      if (isTimeout(e)) {
        if (s === undefined) {
          this.stalls.set(node, { until: now + this.failFastMs, since: now, probing: false, pinging: false });
          this.ping(node);
        } else {
          s.until = now + this.failFastMs;
          s.probing = false;
        }
      } else if (e instanceof Error && e.name === 'ReplyError') this.stalls.delete(node);
      else if (s !== undefined) s.probing = false; // not answered (disconnected): the next command probes
      throw e;
    }
  }

  /**
   * Keep a PING in flight to a stalled server until it answers, which ends the stall at once: a
   * server that resumes answers the PING queued on its connection, so counting resumes as soon as
   * it is back rather than when the interval is over (on a cluster that lets a stale slot map reach
   * the node again, whose MOVED teaches the client the new primary).
   */
  private ping(node: string): void {
    const stall = this.stalls.get(node);
    if (stall === undefined || stall.pinging || this.closed) return;
    let client: Redis | Cluster | undefined = this.redis;
    if (this.clustered) client = (this.redis as Cluster).nodes('all').find((n) => `${n.options.host}:${n.options.port}` === node);
    if (client === undefined) return;
    stall.pinging = true;
    client.ping().then(
      () => {
        if (this.stalls.get(node) === stall) this.stalls.delete(node);
      },
      () => {
        stall.pinging = false;
        if (this.stalls.get(node) === stall) setTimeout(() => this.ping(node), 100).unref();
      },
    );
  }

  async readMany(keys: readonly CounterKey[]): Promise<CounterValues[]> {
    if (keys.length === 0) return [];
    return (await this.read(keys, (keys[0] as CounterKey).session, 0)).values;
  }

  readVersioned(session: string, keys: readonly CounterKey[], activity = 0): Promise<VersionedRead> {
    return this.read(keys, session, activity);
  }

  /** One read script: the epoch, the session's version, its last `activity` steps, every counter. */
  private async read(keys: readonly CounterKey[], session: string, activity: number): Promise<VersionedRead> {
    // A second attempt only after adopting a newer generation (an acknowledged loss).
    for (let attempt = 0; ; attempt++) {
      const r = await this.readOnce(keys, session, activity);
      if (r !== undefined) return r;
      if (attempt >= 2) throw new Error('oarc: the counter store kept finding newer acknowledgements of a data loss; try again');
    }
  }

  private async readOnce(keys: readonly CounterKey[], session: string, activity: number): Promise<VersionedRead | undefined> {
    await this.guard();
    const slot = this.epochSlot(session);
    if (!(await this.adoptSlot(slot))) return undefined;
    await this.guard();
    this.roundTrips++;
    const generation = this.generation;
    const floor = this.highest.get(slot) ?? 0;
    const ownFloor = this.ownFloor(slot);
    const args: Buffer[] = [this.epochKeyOf(session), this.ownSequenceKey(session), this.versionKey(session), this.activityKey(session)];
    for (const k of keys) args.push(this.key(k));
    // As bytes: a step is decoded from WTF-8, so it comes back exactly as it was written.
    const reply = (await this.send(slot, () => this.redis.callBuffer('EVAL', READ, args.length, ...args, activity))) as Buffer[];
    const text = (i: number) => (reply[i] as Buffer).toString('latin1');
    const found = { id: text(0) === '' ? null : text(0), seq: Number(text(1)), mark: text(2) === '' ? null : fromWtf8(reply[2] as Buffer), own: Number(text(3)) };
    const loss = this.verdict(found, slot, floor, ownFloor);
    if (loss !== undefined) return this.lossFound(loss, generation).then(() => undefined);
    if (found.seq > floor) this.highest.set(slot, Math.max(found.seq, this.highest.get(slot) ?? 0));
    const n = Number(text(5));
    const steps: string[] = [];
    for (let i = 6; i < 6 + n; i++) steps.push(fromWtf8(reply[i] as Buffer));
    const values: CounterValues[] = [];
    for (let i = 6 + n; i < reply.length; i += 2) values.push({ fire_count: Number(text(i) || 0), breaker_count: Number(text(i + 1) || 0) });
    return activity > 0 ? { values, version: text(4), activity: steps } : { values, version: text(4) };
  }

  async applyMany(ops: readonly CounterOp[]): Promise<void> {
    if (ops.length === 0) return;
    await this.write((ops[0] as CounterOp).key.session, ops, '', undefined);
  }

  async applyIfUnchanged(session: string, version: string, ops: readonly CounterOp[], step?: SharedStep): Promise<boolean> {
    if (ops.length === 0 && (step === undefined || !this.sharesActivity)) return true;
    return this.write(session, ops, version, this.sharesActivity ? step : undefined);
  }

  /** The write script, with or without a version check; false when the version had moved. */
  private async write(session: string, ops: readonly CounterOp[], version: string, step: SharedStep | undefined): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const r = await this.writeOnce(session, ops, version, step);
      if (r !== undefined) return r;
      if (attempt >= 2) throw new Error('oarc: the counter store kept finding newer acknowledgements of a data loss; try again');
    }
  }

  /** One write; undefined when it applied nothing because the store adopted a newer generation (send it again). */
  private async writeOnce(session: string, ops: readonly CounterOp[], version: string, step: SharedStep | undefined): Promise<boolean | undefined> {
    await this.guard();
    const slot = this.epochSlot(session);
    if (!(await this.adoptSlot(slot))) return undefined;
    await this.guard();
    const keys: Buffer[] = [];
    const index = new Map<string, number>();
    const id = ++this.seq;
    let low = id;
    for (const w of this.open) if (w < low) low = w;
    const generation = this.generation;
    const floor = this.highest.get(slot) ?? 0;
    const ownFloor = this.ownFloor(slot);
    const argv: (string | number | Buffer)[] = [this.ttl, this.markerTtl, id, low, version, this.epoch as string, step === undefined ? '' : wtf8(step.tool), step?.window ?? 0, generation, floor, ownFloor, this.markerTtl];
    for (const op of ops) {
      const k = this.key(op.key);
      const text = k.toString('latin1'); // a lossless Map key for the bytes
      let i = index.get(text);
      if (i === undefined) {
        keys.push(k);
        index.set(text, (i = keys.length));
      }
      argv.push(i, op.action);
    }
    keys.push(this.recordKey(session), this.versionKey(session), this.activityKey(session), this.epochKeyOf(session), this.ownSequenceKey(session));
    this.open.add(id);
    this.roundTrips++;
    let reply: [number, number, number, string, string?];
    let replicas = -1;
    const doubt = (e: unknown): never => {
      if (certainlyNotApplied(e)) this.open.delete(id);
      else {
        this.doubtful.set(id, { keys, slot });
        void this.resolveDoubtful();
      }
      throw e;
    };
    try {
      if (this.waitReplicas === 0) reply = (await this.send(slot, () => this.redis.eval(APPLY, keys.length, ...keys, ...argv))) as typeof reply;
      else {
        // One round trip to the slot's primary: the script, then WAIT on the same connection.
        const out = await this.send(slot, async () => {
          const o = await this.redis.pipeline().eval(APPLY, keys.length, ...keys, ...argv).wait(this.waitReplicas, this.waitTimeout).exec();
          const [applyErr] = o?.[0] ?? [new Error('oarc: the write pipeline returned nothing')];
          if (applyErr) throw applyErr;
          return o;
        });
        reply = out?.[0]?.[1] as typeof reply;
        const [waitErr, waitReply] = out?.[1] ?? [null, -1];
        replicas = waitErr ? -1 : Number(waitReply);
      }
    } catch (e) {
      doubt(e);
    }
    reply = reply!;
    const [status, seq, own, mark, foundId] = reply;
    if (status === 1 && this.waitReplicas > 0 && replicas < this.waitReplicas) {
      // Applied on the primary only: a failover now could lose it. Report it failed and undo it,
      // so no decision says applied what a promoted replica may not hold.
      this.unreplicated++;
      doubt(new UnreplicatedWrite(`oarc: the counter write reached ${replicas < 0 ? 'an unknown number of' : replicas} of the ${this.waitReplicas} replica(s) required within ${this.waitTimeout} ms (WAIT); it is reported failed and undone`));
    }
    this.open.delete(id);
    if (status < -1) {
      // Nothing was written: the script found a loss, judged here as a read's would be.
      const found = { id: status === -2 ? (foundId ? foundId : null) : (this.epoch as string), seq, own, mark: mark === '' ? null : mark };
      const loss = this.verdict(found, slot, floor, ownFloor) as DataLoss;
      return this.lossFound(loss, generation).then(() => undefined);
    }
    if (status === -1) {
      this.conflicts++;
      return false;
    }
    if (seq > (this.highest.get(slot) ?? 0)) this.highest.set(slot, seq);
    // Acknowledged writes may come back out of order: the floor only rises (unless it had gone stale).
    this.own.set(slot, { seq: Math.max(own, this.ownFloor(slot)), at: Date.now() });
    return true;
  }

  /** Writes whose outcome is still being resolved. */
  get pending(): number {
    return this.doubtful.size;
  }

  /**
   * Resolves `true` once every doubtful write has been resolved (at once when there is none), or
   * `false` after `timeoutMs`. A gateway that shuts down should await it before `close()`.
   */
  settled(timeoutMs = 30_000): Promise<boolean> {
    if (this.doubtful.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(done);
      void this.resolveDoubtful();
    });
  }

  /** Resolve every doubtful write, retrying (with backoff) until the server answers. */
  private async resolveDoubtful(): Promise<void> {
    if (this.resolving) return;
    this.resolving = true;
    let attempt = 0;
    try {
      while (this.doubtful.size > 0 && !this.closed) {
        if (this.redis.status === 'ready') {
          try {
            for (const [id, w] of this.doubtful) {
              const undone = await this.resolveOne(id, w);
              if (undone === undefined) throw new Error('not replicated yet');
              if (undone === 1) this.resolutions.undone++;
              else this.resolutions.fenced++;
              this.doubtful.delete(id);
              this.open.delete(id);
            }
            continue;
          } catch {
            // not answering yet; try again below
          }
        }
        await sleep(Math.min(25 * 2 ** attempt++, 1000));
      }
    } finally {
      this.resolving = false;
      if (this.doubtful.size === 0) {
        const waiters = this.waiters;
        this.waiters = [];
        for (const w of waiters) w();
      }
    }
  }

  /**
   * One resolution; with `waitReplicas`, followed by WAIT on the same connection. An undo (or a
   * fence) is a write too, and a failover can lose it like any other: it counts as done only once
   * enough replicas hold it — else undefined, and it is sent again later (the script is
   * idempotent, so a primary that already has it answers the same, and one promoted without it
   * undoes or fences afresh).
   */
  private async resolveOne(id: number, w: Doubtful): Promise<number | undefined> {
    // Through `send`: while the server is stalled a resolution fails at once too, and once the
    // interval is over it is as good a probe as a decision's command.
    if (this.waitReplicas === 0) return Number(await this.send(w.slot, () => this.redis.eval(RESOLVE, w.keys.length, ...w.keys, id, this.markerTtl)));
    const out = await this.send(w.slot, async () => {
      const o = await this.redis.pipeline().eval(RESOLVE, w.keys.length, ...w.keys, id, this.markerTtl).wait(this.waitReplicas, this.waitTimeout).exec();
      const [e] = o?.[0] ?? [new Error('oarc: the resolution pipeline returned nothing')];
      if (e) throw e;
      return o;
    });
    const reply = out?.[0]?.[1];
    const [waitErr, replicas] = out?.[1] ?? [null, -1];
    return waitErr || Number(replicas) < this.waitReplicas ? undefined : Number(reply);
  }

  /** Close the connection. Doubtful writes not yet resolved stay unresolved: await `settled()` first. */
  async close(): Promise<void> {
    this.closed = true;
    await this.redis.quit().catch(() => {});
    // QUIT ends the data connection only: with Sentinel, the connections watching for a failover
    // (+switch-master) stay open, reconnecting forever, until the client is disconnected as well.
    this.redis.disconnect();
  }
}
