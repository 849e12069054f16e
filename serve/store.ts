/**
 * `--redis <url>`: the shared counter store, and a count of its failures for `/metrics`. The
 * engine turns a failed store call into the affected rules' `on_error` ([OAR-FIRE-9]); the count
 * is what an operator watches to learn that it is happening.
 */
import type { AsyncCounterStore } from '../runtime/index.js';

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

export async function connectRedis(url: string, prefix: string | undefined, onError: () => void): Promise<SharedStore> {
  const { RedisCounterStore } = await import('../runtime/redis.js');
  const store = new RedisCounterStore({ url, ...(prefix === undefined ? {} : { prefix }) });
  await store.ready();
  return {
    store: counted(store, onError),
    async close() {
      // Doubtful writes are resolved before the connection goes, so the counts stay exact.
      await store.settled(5000);
      await store.close();
    },
  };
}
