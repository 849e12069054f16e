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
 * - Lost data is detected: `<prefix>epoch` holds the store's epoch id and a write sequence the
 *   write script advances. Every read and write checks the id against the one this store first
 *   saw, and every read checks the sequence is not below the highest this store has seen written:
 *   an empty restart (a new or missing id) or a restore of older data (a lower sequence) makes
 *   every counter read and write fail — the rules that need counters take `on_error` — until an
 *   operator calls `acknowledgeDataLoss()` ([OAR-FIRE-9]: counters silently back at zero would
 *   report breakers that never advanced).
 * - Reads: one MULTI of HMGETs, one round trip. Writes: one EVAL of a Lua script applying every
 *   increment and reset in order, atomically — it reads and checks every counter before it writes
 *   any, so a script error leaves nothing half-applied (Redis does not roll a script back) — and
 *   refreshing the idle-session TTL.
 * - Failure is loud: the client does not queue commands while disconnected and neither retries nor
 *   re-sends a command, so an unreachable server rejects at once and the engine routes the affected
 *   rules to `on_error` ([OAR-FIRE-9]). Reconnection is automatic.
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
   * store stays recorded; earlier ones are pruned by later writes.
   */
  markerTtlSeconds?: number;
  /** Per-command timeout in milliseconds; default 500. */
  timeoutMs?: number;
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
 * its activity window, the epoch. ARGV: TTL, record TTL, write id, low-water mark (every write of
 * this store below it has a known outcome), expected version ('' for none), expected epoch id,
 * the tool step to append ('' for none), the window size, then (key index, action) pairs in
 * application order ([OAR-FIRE-8]). Returns {status, sequence}: 1 applied, 0
 * fenced, -1 the version moved, -2 the epoch is not the expected one; nothing is written unless 1.
 */
const APPLY = `
local n = #KEYS - 4
local mk, vk, ak, ek = KEYS[n + 1], KEYS[n + 2], KEYS[n + 3], KEYS[n + 4]
local id = ARGV[3]
if redis.call('HGET', ek, 'id') ~= ARGV[6] then return {-2, 0} end
if redis.call('HEXISTS', mk, id) == 1 then return {0, 0} end
if ARGV[5] ~= '' and (redis.call('GET', vk) or '0') ~= ARGV[5] then return {-1, 0} end
local f, b, rf, rb, f0, b0 = {}, {}, {}, {}, {}, {}
for i = 1, n do
  local v = redis.call('HMGET', KEYS[i], 'f', 'b', 'rf', 'rb')
  f[i] = tonumber(v[1] or '0'); b[i] = tonumber(v[2] or '0'); rf[i] = tonumber(v[3] or '0'); rb[i] = tonumber(v[4] or '0')
  if f[i] == nil or b[i] == nil or rf[i] == nil or rb[i] == nil then
    return redis.error_reply('oarc: ' .. KEYS[i] .. ' does not hold counters')
  end
  f0[i] = f[i]; b0[i] = b[i]
end
for j = 9, #ARGV, 2 do
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
return {1, redis.call('HINCRBY', ek, 'seq', 1)}
`;

/**
 * One atomic read. KEYS: the epoch, the session's version, its activity window, the counter keys.
 * ARGV: how many of the window's last steps to read (0: none). Returns a flat array (Lua arrays
 * cannot hold nil, so a missing value is ''): epoch id, write sequence, version, the number of
 * steps, the steps, then `f`, `b` of each counter. A script rather than MULTI: a server past its
 * memory limit refuses to queue even a read inside MULTI, while a script that writes nothing runs.
 */
const READ = `
local e = redis.call('HMGET', KEYS[1], 'id', 'seq')
local out = {e[1] or '', e[2] or '0', redis.call('GET', KEYS[2]) or '0'}
local steps = {}
local want = tonumber(ARGV[1])
if want > 0 then steps = redis.call('LRANGE', KEYS[3], -want, -1) end
out[#out + 1] = tostring(#steps)
for _, s in ipairs(steps) do out[#out + 1] = s end
for i = 4, #KEYS do
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
local mk, vk = KEYS[#KEYS - 3], KEYS[#KEYS - 2]
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
 * loss), '1' (never initialised: create it), or '2' (an operator acknowledged a loss: create it,
 * or take the epoch id over). Returns {id or '', seq}.
 */
const ADOPT_SLOT = `
local id = redis.call('HGET', KEYS[1], 'id')
if id and (id == ARGV[1] or ARGV[2] ~= '2') then return {id, redis.call('HGET', KEYS[1], 'seq') or '0'} end
if ARGV[2] == '0' then return {'', '0'} end
redis.call('HSET', KEYS[1], 'id', ARGV[1])
return {ARGV[1], redis.call('HGET', KEYS[1], 'seq') or '0'}
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

function lossMessage(l: DataLoss): string {
  const found = l.found.id === null ? 'no epoch (the server restarted empty or was flushed)' : l.found.id !== l.expected.id ? `epoch ${l.found.id}` : `write sequence ${l.found.seq}, below the ${l.expected.seq} already acknowledged (older data was restored)`;
  const where = l.slot === undefined ? '' : ` in cluster hash slot ${l.slot}`;
  return `the counter store lost data${where}: it held epoch ${l.expected.id} and now holds ${found}; counters stay unavailable until an operator calls acknowledgeDataLoss()`;
}

/** Did the command certainly not run? Never sent, or answered with an error by the server. */
function certainlyNotApplied(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return e.name === 'ReplyError' || e.message.startsWith(OFFLINE) || e.message.startsWith(CLUSTER_OFFLINE);
}

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
}

/** What `dataLoss` reports: the epoch this store knew, and what it found instead. */
export interface DataLoss {
  readonly expected: { id: string; seq: number };
  readonly found: { id: string | null; seq: number };
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
  /** The epoch id this store adopted, and per slot (0 on one server) the highest write sequence it has seen acknowledged. */
  private epoch: string | undefined;
  private readonly highest = new Map<number, number>();
  /** Cluster: the slots whose epoch record this store has checked, and those being checked. */
  private readonly adopted = new Set<number>();
  private readonly adoptingSlots = new Map<number, Promise<void>>();
  /** Cluster: slots whose record an acknowledged loss lets this store recreate or take over. */
  private forced = new Set<number>();
  private lost: DataLoss | undefined;
  private adopting: Promise<void> | undefined;

  constructor(opts: RedisCounterStoreOptions = {}) {
    const timeout = opts.timeoutMs ?? 500;
    this.waitReplicas = opts.waitReplicas ?? 0;
    this.waitTimeout = opts.waitTimeoutMs ?? 100;
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
   * (a new deployment), else adopt it. Later connections do not adopt again: what a read finds is
   * checked against it (`checkEpoch`).
   */
  private adoptEpoch(): Promise<void> {
    if (this.epoch !== undefined) return Promise.resolve();
    this.adopting ??= (async () => {
      try {
        await this.redis.hsetnx(this.epochKey, 'id', randomBytes(8).toString('hex'));
        const [id, seq] = await this.redis.hmget(this.epochKey, 'id', 'seq');
        this.epoch = id ?? undefined;
        if (!this.clustered) this.highest.set(0, Number(seq ?? 0));
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
   * a slot never used gets its record made now.
   */
  private adoptSlot(slot: number): Promise<void> {
    if (!this.clustered || this.adopted.has(slot)) return Promise.resolve();
    let p = this.adoptingSlots.get(slot);
    if (p === undefined) {
      p = (async () => {
        try {
          const mark = `s${slot}`;
          const marked = (await this.redis.hget(this.epochKey, mark)) !== null;
          const mode = this.forced.has(slot) ? '2' : marked ? '0' : '1';
          const [id, seq] = (await this.redis.eval(ADOPT_SLOT, 1, this.slotEpochKey(slot), this.epoch as string, mode)) as [string, string];
          if (!marked && id === this.epoch) await this.redis.hset(this.epochKey, mark, 1);
          this.forced.delete(slot);
          this.checkEpoch(id === '' ? null : id, Number(seq), 0, slot);
          this.adopted.add(slot);
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
   * An operator has seen the data loss: adopt the epoch the server has now (creating one if it has
   * none) and serve counters again, from what the server holds.
   */
  async acknowledgeDataLoss(): Promise<void> {
    if (this.clustered) {
      this.forced = new Set([...this.adopted, ...this.forced, ...(this.lost?.slot === undefined ? [] : [this.lost.slot])]);
      this.adopted.clear();
    }
    this.epoch = undefined;
    this.highest.clear();
    await this.adoptEpoch();
    this.lost = undefined;
  }

  private failIfLost(): void {
    if (this.lost !== undefined) throw new CounterDataLoss(lossMessage(this.lost));
    if (this.epoch === undefined) throw new Error('oarc: the counter store has not learned its epoch yet (await store.ready())');
  }

  /**
   * Compare what a read found with the epoch this store knows; a mismatch is a data loss. `floor`
   * is the highest write sequence acknowledged before the read was sent: the server executed those
   * writes before the read, so a healthy server answers at least that.
   */
  private checkEpoch(id: string | null, seq: number, floor: number, slot: number): void {
    const epoch = this.epoch as string;
    if (id === epoch && seq >= floor) {
      if (seq > (this.highest.get(slot) ?? 0)) this.highest.set(slot, seq);
      return;
    }
    this.lost ??= { expected: { id: epoch, seq: floor }, found: { id, seq }, at: new Date(), ...(this.clustered ? { slot } : {}) };
    throw new CounterDataLoss(lossMessage(this.lost));
  }

  /** The slot a session's epoch is kept under: its hash slot on a cluster, 0 on one server. */
  private epochSlot(session: string): number {
    return this.clustered ? this.sessionSlot(session) : 0;
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
    this.failIfLost();
    const slot = this.epochSlot(session);
    await this.adoptSlot(slot);
    this.failIfLost();
    this.roundTrips++;
    const floor = this.highest.get(slot) ?? 0;
    const args: Buffer[] = [this.epochKeyOf(session), this.versionKey(session), this.activityKey(session)];
    for (const k of keys) args.push(this.key(k));
    // As bytes: a step is decoded from WTF-8, so it comes back exactly as it was written.
    const reply = (await this.redis.callBuffer('EVAL', READ, args.length, ...args, activity)) as Buffer[];
    const text = (i: number) => (reply[i] as Buffer).toString('latin1');
    this.checkEpoch(text(0) === '' ? null : text(0), Number(text(1)), floor, slot);
    const n = Number(text(3));
    const steps: string[] = [];
    for (let i = 4; i < 4 + n; i++) steps.push(fromWtf8(reply[i] as Buffer));
    const values: CounterValues[] = [];
    for (let i = 4 + n; i < reply.length; i += 2) values.push({ fire_count: Number(text(i) || 0), breaker_count: Number(text(i + 1) || 0) });
    return activity > 0 ? { values, version: text(2), activity: steps } : { values, version: text(2) };
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
    this.failIfLost();
    const slot = this.epochSlot(session);
    await this.adoptSlot(slot);
    this.failIfLost();
    const keys: Buffer[] = [];
    const index = new Map<string, number>();
    const id = ++this.seq;
    let low = id;
    for (const w of this.open) if (w < low) low = w;
    const argv: (string | number | Buffer)[] = [this.ttl, this.markerTtl, id, low, version, this.epoch as string, step === undefined ? '' : wtf8(step.tool), step?.window ?? 0];
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
    keys.push(this.recordKey(session), this.versionKey(session), this.activityKey(session), this.epochKeyOf(session));
    this.open.add(id);
    this.roundTrips++;
    let reply: [number, number];
    let replicas = -1;
    const doubt = (e: unknown): never => {
      if (certainlyNotApplied(e)) this.open.delete(id);
      else {
        this.doubtful.set(id, { keys });
        void this.resolveDoubtful();
      }
      throw e;
    };
    try {
      if (this.waitReplicas === 0) reply = (await this.redis.eval(APPLY, keys.length, ...keys, ...argv)) as [number, number];
      else {
        // One round trip to the slot's primary: the script, then WAIT on the same connection.
        const out = await this.redis.pipeline().eval(APPLY, keys.length, ...keys, ...argv).wait(this.waitReplicas, this.waitTimeout).exec();
        const [applyErr, applyReply] = out?.[0] ?? [new Error('oarc: the write pipeline returned nothing'), null];
        if (applyErr) throw applyErr;
        reply = applyReply as [number, number];
        const [waitErr, waitReply] = out?.[1] ?? [null, -1];
        replicas = waitErr ? -1 : Number(waitReply);
      }
    } catch (e) {
      doubt(e);
    }
    reply = reply!;
    const [status, seq] = reply;
    if (status === 1 && this.waitReplicas > 0 && replicas < this.waitReplicas) {
      // Applied on the primary only: a failover now could lose it. Report it failed and undo it,
      // so no decision says applied what a promoted replica may not hold.
      this.unreplicated++;
      doubt(new UnreplicatedWrite(`oarc: the counter write reached ${replicas < 0 ? 'an unknown number of' : replicas} of the ${this.waitReplicas} replica(s) required within ${this.waitTimeout} ms (WAIT); it is reported failed and undone`));
    }
    this.open.delete(id);
    if (status === -2) {
      this.lost ??= { expected: { id: this.epoch as string, seq: this.highest.get(slot) ?? 0 }, found: { id: null, seq: 0 }, at: new Date(), ...(this.clustered ? { slot } : {}) };
      throw new CounterDataLoss(lossMessage(this.lost));
    }
    if (status === -1) {
      this.conflicts++;
      return false;
    }
    if (seq > (this.highest.get(slot) ?? 0)) this.highest.set(slot, seq);
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
    if (this.waitReplicas === 0) return Number(await this.redis.eval(RESOLVE, w.keys.length, ...w.keys, id, this.markerTtl));
    const out = await this.redis.pipeline().eval(RESOLVE, w.keys.length, ...w.keys, id, this.markerTtl).wait(this.waitReplicas, this.waitTimeout).exec();
    const [err, reply] = out?.[0] ?? [new Error('oarc: the resolution pipeline returned nothing'), null];
    if (err) throw err;
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
