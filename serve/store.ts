/**
 * `--redis <url>`: the shared counter store, and a count of its failures for `/metrics`. The
 * engine turns a failed store call into the affected rules' `on_error` ([OAR-FIRE-9]); the count
 * is what an operator watches to learn that it is happening.
 */
import type { AsyncCounterStore } from '../runtime/index.js';
import type { RedisTarget } from '../runtime/redis-target.js';

export interface SharedStore {
  store: AsyncCounterStore;
  close(): Promise<void>;
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
    async close() {
      // Doubtful writes are resolved before the connection goes, so the counts stay exact.
      await store.settled(5000);
      await store.close();
    },
  };
}
