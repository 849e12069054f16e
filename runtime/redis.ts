/**
 * A counter store shared across gateway replicas, on Redis ([OAR-FIRE-5], [OAR-FIRE-9]).
 *
 * - One key per counter: `<prefix>{<session as hex>}:<qualified id>[#<scope value>]` — the
 *   `<qid>#<scope>` spelling of [OAR-CONF-33]; the session, hex-encoded, is the hash tag, so every
 *   counter of a session lives in one cluster slot and the atomic write can touch them all. The
 *   value is a hash with `f` (fire_count) and `b` (breaker_count).
 * - Reads: one pipeline of HMGET, one round trip. Writes: one EVAL of a Lua script applying every
 *   increment and reset in order, atomically, and refreshing the idle-session TTL.
 * - Failure is loud: the client does not queue commands while disconnected and does not retry a
 *   write, so an unreachable server rejects at once, the engine routes the affected rules to
 *   `on_error` ([OAR-FIRE-9]), and no increment is ever applied twice. Reconnection is automatic.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { AsyncCounterStore } from './async-counters.js';
import { counterName, type CounterKey, type CounterOp, type CounterValues } from './counters.js';

export interface RedisCounterStoreOptions {
  /** An ioredis client, or options/URL to create one with fail-fast settings. */
  redis?: Redis;
  url?: string;
  options?: RedisOptions;
  /** Key prefix; default `oar:`. */
  prefix?: string;
  /** Idle sessions' counters expire after this many seconds; 0 keeps them. Default 86,400. */
  ttlSeconds?: number;
  /** Per-command timeout in milliseconds; default 500. */
  timeoutMs?: number;
}

const APPLY = `
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  local k = KEYS[tonumber(ARGV[i])]
  local a = ARGV[i + 1]
  if a == 'increment_counter' then redis.call('HINCRBY', k, 'f', 1)
  elseif a == 'reset_counter' then redis.call('HSET', k, 'f', 0)
  elseif a == 'increment_breaker' then redis.call('HINCRBY', k, 'b', 1)
  elseif a == 'reset_breaker' then redis.call('HSET', k, 'b', 0)
  else return redis.error_reply('unknown counter action ' .. a) end
end
if ttl > 0 then
  for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ttl) end
end
return #KEYS
`;

function hex(s: string): string {
  return Buffer.from(s, 'utf8').toString('hex');
}

export class RedisCounterStore implements AsyncCounterStore {
  readonly redis: Redis;
  private readonly prefix: string;
  private readonly ttl: number;
  /** Network round trips made: one per non-empty read batch, one per non-empty write batch. */
  roundTrips = 0;

  constructor(opts: RedisCounterStoreOptions = {}) {
    const timeout = opts.timeoutMs ?? 500;
    this.redis = opts.redis ?? new Redis(opts.url ?? 'redis://127.0.0.1:6379', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeout,
      connectTimeout: timeout,
      lazyConnect: false,
      ...opts.options,
    });
    this.prefix = opts.prefix ?? 'oar:';
    this.ttl = opts.ttlSeconds ?? 86_400;
  }

  key(k: CounterKey): string {
    return `${this.prefix}{${hex(k.session)}}:${counterName(k)}`;
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
    const argv: (string | number)[] = [this.ttl];
    for (const op of ops) {
      const k = this.key(op.key);
      let i = index.get(k);
      if (i === undefined) {
        keys.push(k);
        index.set(k, (i = keys.length));
      }
      argv.push(i, op.action);
    }
    this.roundTrips++;
    await this.redis.eval(APPLY, keys.length, ...keys, ...argv);
  }

  /** Close the connection. */
  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
