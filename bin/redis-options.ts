/**
 * The `--redis` options a command shares (`oarc serve`, `oarc mcp`): where the shared counter
 * store lives — one server, a cluster, or a Sentinel-managed primary (runtime/redis-target.ts) —
 * its key prefix, and whether each write waits for replicas. Parsed here, before anything
 * connects, so a mistyped target is a usage error (exit 2) saying what would be accepted.
 *
 *   --redis redis://host:6379
 *   --redis redis+cluster://h1:7000,h2:7001        (or --redis redis+cluster://h1:7000 --redis redis+cluster://h2:7001)
 *   --redis redis+sentinel://s1:26379,s2:26379/mymaster
 *   --redis-prefix gw:  --redis-wait-replicas 1  --redis-wait-ms 100  --redis-fail-fast-ms 1000
 */
import { parseRedisTarget, RedisTargetError, type RedisTarget } from '../runtime/redis-target.js';
import { str, strs, type Parsed } from './args.js';
import { UsageError } from './errors.js';

export const REDIS_OPTIONS = {
  redis: { type: 'string', multiple: true },
  'redis-prefix': { type: 'string' },
  'redis-wait-replicas': { type: 'string' },
  'redis-wait-ms': { type: 'string' },
  'redis-fail-fast-ms': { type: 'string' },
} as const;

/** What `RedisCounterStore` is built from (serve/store.ts `connectRedis`). */
export interface RedisConfig {
  target: RedisTarget;
  prefix?: string;
  waitReplicas?: number;
  waitTimeoutMs?: number;
  failFastMs?: number;
}

/** The help lines for the options, to paste into a command's help text. */
export const REDIS_HELP = `      --redis <target>      keep counters and activity windows in Redis (oarc/redis; needs
                            ioredis installed), so replicas decide as one: redis://host:port,
                            redis+cluster://h1:p1,h2:p2 (a Redis Cluster's seed nodes), or
                            redis+sentinel://s1:p1,s2:p2/mastername; repeatable for more seeds
      --redis-prefix <p>    the Redis key prefix (default oar:)
      --redis-wait-replicas <n>
                            after each write, WAIT for n replicas; a write fewer acknowledge
                            takes on_error and is undone (default 0: no WAIT)
      --redis-wait-ms <ms>  how long WAIT waits (default 100; below the 500 ms command timeout)
      --redis-fail-fast-ms <ms>
                            after a command times out (Redis stalled), fail commands at once,
                            taking on_error, for this long, then probe with one (default 1000;
                            0: every command waits for its own timeout)`;

function whole(text: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`--${flag} takes a whole number from ${min} to ${max}, not \`${text}\``);
  return Number(text);
}

/** The Redis configuration the options give, or undefined without `--redis`; throws UsageError. */
export function redisConfigFrom(p: Parsed): RedisConfig | undefined {
  const texts = strs(p, 'redis');
  const prefix = str(p, 'redis-prefix');
  const waitReplicas = whole(str(p, 'redis-wait-replicas'), 'redis-wait-replicas', 0, 1000);
  const waitTimeoutMs = whole(str(p, 'redis-wait-ms'), 'redis-wait-ms', 1, 499);
  const failFastMs = whole(str(p, 'redis-fail-fast-ms'), 'redis-fail-fast-ms', 0, 3_600_000);
  if (texts.length === 0) {
    const stray = (['redis-prefix', 'redis-wait-replicas', 'redis-wait-ms', 'redis-fail-fast-ms'] as const).find((f) => str(p, f) !== undefined);
    if (stray !== undefined) throw new UsageError(`--${stray} applies to the Redis store: give --redis <target> too`);
    return undefined;
  }
  if (waitTimeoutMs !== undefined && !waitReplicas) throw new UsageError('--redis-wait-ms is how long WAIT waits: give --redis-wait-replicas <n> too');
  let target: RedisTarget;
  try {
    target = parseRedisTarget(texts);
  } catch (e) {
    if (e instanceof RedisTargetError) throw new UsageError(`--redis: ${e.message}`);
    throw e;
  }
  if (prefix !== undefined && /[{}]/.test(prefix)) throw new UsageError(`--redis-prefix ${JSON.stringify(prefix)} must not contain { or } (the session is the hash tag)`);
  return {
    target,
    ...(prefix === undefined ? {} : { prefix }),
    ...(waitReplicas === undefined ? {} : { waitReplicas }),
    ...(waitTimeoutMs === undefined ? {} : { waitTimeoutMs }),
    ...(failFastMs === undefined ? {} : { failFastMs }),
  };
}
