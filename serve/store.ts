/**
 * `--redis <url>`: the shared counter store, and a count of its failures for `/metrics`. The
 * engine turns a failed store call into the affected rules' `on_error` ([OAR-FIRE-9]); the count
 * is what an operator watches to learn that it is happening.
 */
import type { AsyncCounterStore } from '../runtime/index.js';
import type { DataLoss } from '../runtime/redis.js';
import type { RedisTarget } from '../runtime/redis-target.js';

export interface SharedStore {
  store: AsyncCounterStore;
  /**
   * The data loss the store detected ([OAR-FIRE-9]: counters silently back at an older value would
   * report breakers that never advanced): until acknowledged, every counting rule takes its on_error.
   */
  dataLoss(): DataLoss | undefined;
  /** An operator has seen the loss: count again from what Redis holds now. False when there was none. */
  acknowledgeDataLoss(): Promise<boolean>;
  /**
   * Resolve the doubtful writes (up to 5 s), then close. Resolves with how many stayed doubtful:
   * writes Redis never confirmed, which the decisions that made them reported as not applied, and
   * which may yet land (a stalled server resuming) — the caller says so.
   */
  close(): Promise<number>;
}

/** The line a service says, once, when its store detects a data loss. */
export function dataLossLine(loss: DataLoss, acknowledge: string): string {
  const found = loss.found.id === null ? 'no epoch record (restarted empty, flushed, or failed over to a node without the data)' : `write sequence ${loss.found.seq} where ${loss.expected.seq} was acknowledged`;
  return `the Redis counter store lost data${loss.slot === undefined ? '' : ` (hash slot ${loss.slot})`}: found ${found}; every rule that reads or writes a counter takes its on_error until an operator acknowledges the loss (${acknowledge})`;
}

/** The line a caller says when `close()` left doubtful writes unresolved. */
export function unresolvedWrites(n: number): string {
  return `${n} counter write${n === 1 ? '' : 's'} Redis never confirmed ${n === 1 ? 'is' : 'are'} left unresolved: the decisions that made ${n === 1 ? 'it' : 'them'} reported ${n === 1 ? 'it' : 'them'} not applied, and ${n === 1 ? 'it' : 'they'} may still be applied if the server resumes (the counters would then hold more than was reported)`;
}

/** Every method of `store` that returns a promise, with its rejections counted by `onError`. */
function counted<T extends object>(store: T, onError: () => void): T {
  return new Proxy(store, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        const r = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (r instanceof Promise) r.catch(onError);
        return r;
      };
    },
  });
}

/**
 * Where the store lives and how it writes: `url` in any form `parseRedisTarget` reads (one server,
 * `redis+cluster://…`, `redis+sentinel://…/name`) or a parsed `target`; the key prefix; WAIT.
 */
export interface RedisConnect {
  url?: string;
  target?: RedisTarget;
  prefix?: string;
  waitReplicas?: number;
  waitTimeoutMs?: number;
  /** How long commands fail at once after one timed out (`failFastMs`); the store's default otherwise. */
  failFastMs?: number;
  /** Idle sessions' keys expire after this many seconds (`--session-idle`); the store's default otherwise. */
  ttlSeconds?: number;
}

/** Connect the shared store; `where` is a URL (as before) or a `RedisConnect`, whose prefix wins over `prefix`. */
export async function connectRedis(where: string | RedisConnect, prefix: string | undefined, onError: () => void): Promise<SharedStore> {
  const { RedisCounterStore } = await import('../runtime/redis.js');
  const c: RedisConnect = typeof where === 'string' ? { url: where } : where;
  const p = c.prefix ?? prefix;
  const store = new RedisCounterStore({
    ...(c.target === undefined ? { url: c.url ?? 'redis://127.0.0.1:6379' } : { target: c.target }),
    ...(p === undefined ? {} : { prefix: p }),
    ...(c.waitReplicas === undefined ? {} : { waitReplicas: c.waitReplicas }),
    ...(c.waitTimeoutMs === undefined ? {} : { waitTimeoutMs: c.waitTimeoutMs }),
    ...(c.failFastMs === undefined ? {} : { failFastMs: c.failFastMs }),
    ...(c.ttlSeconds === undefined ? {} : { ttlSeconds: c.ttlSeconds }),
  });
  try {
    await store.ready();
  } catch (e) {
    // The client reconnects forever by default: closed here, a service that cannot reach its
    // store exits with the message instead of hanging on a connection it will never use.
    await store.close();
    throw e;
  }
  return {
    store: counted(store, onError),
    dataLoss: () => store.dataLoss,
    async acknowledgeDataLoss() {
      if (store.dataLoss === undefined) return false;
      await store.acknowledgeDataLoss();
      return true;
    },
    async close() {
      // Doubtful writes are resolved before the connection goes, so the counts stay exact.
      await store.settled(5000);
      const left = store.pending;
      await store.close();
      return left;
    },
  };
}
