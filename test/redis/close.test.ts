/**
 * Closing the shared store (`oarc serve` and `oarc mcp` drain through serve/store.ts): doubtful
 * writes are resolved first, and those that cannot be — the server stalled — are counted, so the
 * service can say that increments its decisions reported not applied may still land ([OAR-FIRE-9]).
 */
import { afterEach, expect, it } from 'vitest';
import { connectRedis, unresolvedWrites } from '../../serve/store.js';
import { createEngine } from '../../runtime/index.js';
import { compileToBundle } from '../../compiler/index.js';
import { PACK, call, uniquePrefix } from './pack.js';
import { describeRedis, startRedis, type RedisServer } from './server.js';

describeRedis('binary', 'closing the shared store', () => {
  const servers: RedisServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.resume();
      await s.stop();
    }
  });

  it('resolves nothing that is certain, and counts the doubtful writes it could not resolve', async () => {
    const srv = await startRedis();
    servers.push(srv);
    const shared = await connectRedis({ url: srv.url, prefix: uniquePrefix('close') }, undefined, () => undefined);
    const engine = createEngine(compileToBundle(PACK), { asyncCounters: shared.store });
    // Stopped between the read and the write: the write times out, its outcome unknown.
    const d = await engine.decideAsync(call('hook', {}, 's', { 'acme.gw.flag': () => (srv.pause(), 'go') }));
    expect(d.decision).toBe('block');
    expect(await shared.close()).toBe(1);
    expect(unresolvedWrites(1)).toMatch(/^1 counter write Redis never confirmed is left unresolved/);
  }, 30_000);

  it('a store with nothing doubtful closes with nothing left', async () => {
    const srv = await startRedis();
    servers.push(srv);
    const shared = await connectRedis({ url: srv.url, prefix: uniquePrefix('close') }, undefined, () => undefined);
    const engine = createEngine(compileToBundle(PACK), { asyncCounters: shared.store });
    expect((await engine.decideAsync(call('count', { n: 1 }))).decision).not.toBe('block');
    expect(await shared.close()).toBe(0);
  });
});
