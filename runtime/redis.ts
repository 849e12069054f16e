/**
 * A counter store shared across gateway replicas, on Redis ([OAR-FIRE-5], [OAR-FIRE-9]).
 *
 * - One key per counter: `<prefix>{<session as hex>}:<qualified id>[#<scope value>]` — the
 *   `<qid>#<scope>` spelling of [OAR-CONF-33]; the session, hex-encoded, is the hash tag, so every
 *   counter of a session lives in one cluster slot and the atomic write can touch them all. The
 *   value is a hash with `f` (fire_count) and `b` (breaker_count), and `rf` / `rb`, how often each
 *   was reset (used only to undo a write, below).
 * - Reads: one pipeline of HMGET, one round trip. Writes: one EVAL of a Lua script applying every
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
import type { Redis, RedisOptions } from 'ioredis';
import type { AsyncCounterStore } from './async-counters.js';
import { counterName, type CounterKey, type CounterOp, type CounterValues } from './counters.js';

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

const { Redis: RedisClient } = await importClient();

export interface RedisCounterStoreOptions {
  /** An ioredis client, or options/URL to create one with fail-fast settings. */
  redis?: Redis;
  url?: string;
  options?: RedisOptions;
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
}

/**
 * KEYS: the counter keys, then the store's write record for the session. ARGV: TTL, record TTL,
 * write id, low-water mark (every write of this store below it has a known outcome), then
 * (key index, action) pairs in application order ([OAR-FIRE-8]).
 */
const APPLY = `
local n = #KEYS - 1
local mk = KEYS[#KEYS]
local id = ARGV[3]
if redis.call('HEXISTS', mk, id) == 1 then return 0 end
local f, b, rf, rb, f0, b0 = {}, {}, {}, {}, {}, {}
for i = 1, n do
  local v = redis.call('HMGET', KEYS[i], 'f', 'b', 'rf', 'rb')
  f[i] = tonumber(v[1] or '0'); b[i] = tonumber(v[2] or '0'); rf[i] = tonumber(v[3] or '0'); rb[i] = tonumber(v[4] or '0')
  if f[i] == nil or b[i] == nil or rf[i] == nil or rb[i] == nil then
    return redis.error_reply('oarc: ' .. KEYS[i] .. ' does not hold counters')
  end
  f0[i] = f[i]; b0[i] = b[i]
end
for j = 5, #ARGV, 2 do
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
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  for i = 1, n do redis.call('EXPIRE', KEYS[i], ttl) end
end
redis.call('EXPIRE', mk, tonumber(ARGV[2]))
return 1
`;

/**
 * Resolve a doubtful write. KEYS: as the write had them. ARGV: write id, record TTL. A write that
 * never ran is fenced (`x`) so it never will; one that ran is undone (`u`), counter by counter,
 * unless that counter was reset since (its reset count moved on). Idempotent: a resolution that
 * timed out may have run, and is simply sent again. Returns 1 if the write had run, else 0.
 */
const RESOLVE = `
local mk = KEYS[#KEYS]
local v = redis.call('HGET', mk, ARGV[1])
if v == 'x' then return 0 end
if v == 'u' then return 1 end
redis.call('HSET', mk, ARGV[1], v == false and 'x' or 'u')
redis.call('EXPIRE', mk, tonumber(ARGV[2]))
if v == false then return 0 end
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

const OFFLINE = "Stream isn't writeable";

function hex(s: string): string {
  return Buffer.from(s, 'utf8').toString('hex');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Did the command certainly not run? Never sent, or answered with an error by the server. */
function certainlyNotApplied(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return e.name === 'ReplyError' || e.message.startsWith(OFFLINE);
}

interface Doubtful {
  keys: string[];
}

export class RedisCounterStore implements AsyncCounterStore {
  readonly redis: Redis;
  /** This store's id in write records; one per store instance (one per replica process). */
  readonly id = randomBytes(6).toString('hex');
  private readonly prefix: string;
  private readonly ttl: number;
  private readonly markerTtl: number;
  /** Network round trips made: one per non-empty read batch, one per non-empty write batch. */
  roundTrips = 0;
  /** Doubtful writes resolved so far: `undone` had run and were reverted, `fenced` had not. */
  readonly resolutions = { undone: 0, fenced: 0 };
  /** The last connection error the client reported (they are not printed). */
  lastError: Error | undefined;
  private seq = 0;
  /** Writes sent whose outcome is not known yet (in flight or doubtful). */
  private readonly open = new Set<number>();
  private readonly doubtful = new Map<number, Doubtful>();
  private resolving = false;
  private closed = false;
  private waiters: (() => void)[] = [];

  constructor(opts: RedisCounterStoreOptions = {}) {
    const timeout = opts.timeoutMs ?? 500;
    this.redis = opts.redis ?? new RedisClient(opts.url ?? 'redis://127.0.0.1:6379', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: timeout,
      connectTimeout: timeout,
      lazyConnect: false,
      ...opts.options,
    });
    if (opts.redis === undefined) this.redis.on('error', (e: Error) => void (this.lastError = e));
    this.redis.on('ready', () => void this.resolveDoubtful());
    this.prefix = opts.prefix ?? 'oar:';
    if (/[{}]/.test(this.prefix)) throw new Error(`oarc: the Redis key prefix ${JSON.stringify(this.prefix)} must not contain { or }`);
    this.ttl = opts.ttlSeconds ?? 86_400;
    this.markerTtl = opts.markerTtlSeconds ?? (this.ttl > 0 ? this.ttl : 86_400);
  }

  /** The Redis key of a counter. */
  key(k: CounterKey): string {
    return `${this.prefix}{${hex(k.session)}}:${counterName(k)}`;
  }

  /** The Redis key of this store's write record for a session. */
  recordKey(session: string): string {
    return `${this.prefix}{${hex(session)}}!w:${this.id}`;
  }

  /** Resolves once the client is connected (commands fail fast until then). */
  ready(timeoutMs = 10_000): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
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

  async readMany(keys: readonly CounterKey[]): Promise<CounterValues[]> {
    if (keys.length === 0) return [];
    this.roundTrips++;
    const p = this.redis.pipeline();
    for (const k of keys) p.hmget(this.key(k), 'f', 'b');
    const results = await p.exec();
    if (results === null) throw new Error('redis pipeline was discarded');
    return results.map(([err, v]) => {
      if (err) throw err;
      const [f, b] = v as (string | null)[];
      return { fire_count: f === null || f === undefined ? 0 : Number(f), breaker_count: b === null || b === undefined ? 0 : Number(b) };
    });
  }

  async applyMany(ops: readonly CounterOp[]): Promise<void> {
    if (ops.length === 0) return;
    const keys: string[] = [];
    const index = new Map<string, number>();
    const id = ++this.seq;
    let low = id;
    for (const w of this.open) if (w < low) low = w;
    const argv: (string | number)[] = [this.ttl, this.markerTtl, id, low];
    for (const op of ops) {
      const k = this.key(op.key);
      let i = index.get(k);
      if (i === undefined) {
        keys.push(k);
        index.set(k, (i = keys.length));
      }
      argv.push(i, op.action);
    }
    keys.push(this.recordKey((ops[0] as CounterOp).key.session));
    this.open.add(id);
    this.roundTrips++;
    try {
      await this.redis.eval(APPLY, keys.length, ...keys, ...argv);
    } catch (e) {
      if (certainlyNotApplied(e)) this.open.delete(id);
      else {
        this.doubtful.set(id, { keys });
        void this.resolveDoubtful();
      }
      throw e;
    }
    this.open.delete(id);
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
              const undone = await this.redis.eval(RESOLVE, w.keys.length, ...w.keys, id, this.markerTtl);
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

  /** Close the connection. Doubtful writes not yet resolved stay unresolved: await `settled()` first. */
  async close(): Promise<void> {
    this.closed = true;
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
