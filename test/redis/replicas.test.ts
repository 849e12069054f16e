/**
 * Two gateway replicas in TWO PROCESSES (test/redis/replica.mjs, running the built dist/) share one
 * real redis-server: 10,000 occurrences decided concurrently, split between them, several in flight
 * in each; the counters in Redis then equal exactly the increments the decisions report applied
 * ([OAR-FIRE-5], [OAR-FIRE-9]). A rule reading `fire_count_of` in one replica sees what the other
 * wrote ([OAR-FIRE-11]).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { RedisCounterStore } from '../../runtime/redis.js';
import { addInto, call, dumpCounters, engineFor, normal, uniquePrefix, useTestRedis } from './pack.js';
import { Replica, type Occ } from './replica.js';
import { describeRedis } from './server.js';

describeRedis('server', 'replica processes sharing a real redis-server', () => {
  const redis = useTestRedis();
  const replicas: Replica[] = [];

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.exit()));
  });

  async function twoReplicas(prefix: string): Promise<[Replica, Replica]> {
    const pair: [Replica, Replica] = [new Replica(), new Replica()];
    replicas.push(...pair);
    await Promise.all(pair.map((r) => r.init(redis.url(), prefix)));
    expect(pair[0].id).not.toBe(pair[1].id);
    return pair;
  }

  describe('two replicas in two processes, one Redis', () => {
    it('decide 10,000 occurrences concurrently; the counters equal exactly the increments reported applied', async () => {
      const prefix = uniquePrefix('replicas');
      const [a, b] = await twoReplicas(prefix);
      // 16 sessions × 25 distinct calls, interleaved. Each replica decides 8 of the sessions: a
      // session's decisions are serialised (at most one in flight per session and replica), so
      // concurrency comes from many sessions; replicas racing on ONE session is concurrency.test.ts.
      const all: Occ[] = Array.from({ length: 10_000 }, (_, i) => ({
        session: `s${i % 16}`,
        tool: i % 3 === 0 ? 'count2' : 'count',
        args: { k: Math.floor(i / 4) % 25 },
      }));
      const [ra, rb] = await Promise.all([a.run(all.filter((_, i) => i % 2 === 0), 16), b.run(all.filter((_, i) => i % 2 === 1), 16)]);

      expect(ra.count + rb.count).toBe(10_000);
      expect(ra.errored + rb.errored).toBe(0);
      // [OAR-FIRE-6] exactly one read and one write per occurrence.
      expect(ra.roundTrips).toBe(2 * ra.count);
      expect(rb.roundTrips).toBe(2 * rb.count);

      const reported = addInto(addInto(new Map(), ra.applied), rb.applied);
      const inRedis = await dumpCounters(redis.url(), prefix);
      expect(normal(inRedis)).toEqual(normal(reported));
      // Every occurrence counted once under TOTAL (none failed), once under its COUNT#<fingerprint>.
      let total = 0;
      let count = 0;
      for (const [k, v] of inRedis) {
        if (k.endsWith('\u0000t/TOTAL')) total += v;
        else if (k.includes('\u0000t/COUNT#')) count += v;
      }
      expect(total).toBe(10_000);
      expect(count).toBe(10_000);
      expect([...inRedis.keys()].filter((k) => k.includes('t/COUNT#'))).toHaveLength(16 * 2 * 25);
      console.log(`two replicas: ${ra.count} + ${rb.count} decisions in ${Math.max(ra.ms, rb.ms).toFixed(0)} ms (16 in flight per process)`);
    });

    it('a rule reading fire_count_of sees the value written by the other replica ([OAR-FIRE-11])', async () => {
      const prefix = uniquePrefix('xproc');
      const [a, b] = await twoReplicas(prefix);
      const peek = (n: number): Occ => ({ session: 'x', tool: 'peek', args: { n } });
      // Replica A counts 7 occurrences; replica B (another process) reads TOTAL through PEEK.
      const before = await b.run([peek(0), peek(7)], 1, true);
      expect(before.decisions?.map((d) => d.rule)).toEqual(['t/PEEK', null]);
      await a.run(Array.from({ length: 7 }, (_, i) => ({ session: 'x', tool: 'count', args: { i: i % 2 } })), 3);
      const after = await b.run([peek(6), peek(7), peek(8)], 1, true);
      expect(after.decisions?.map((d) => d.decision)).toEqual(['none', 'warn', 'none']);
      // REPEATED in B reads COUNT#<fp of i:0>, which A took to 4 — B's own increment is not yet visible to itself ([OAR-FIRE-6]).
      const rep = await b.run([{ session: 'x', tool: 'count', args: { i: 0 } }], 1, true);
      expect(rep.decisions?.[0]?.rule).toBe('t/REPEATED');
      expect(rep.decisions?.[0]?.counters).toMatchObject({ 't/TOTAL': { fire_count: 8 } });
      // And this process — a third replica — sees both.
      const store = new RedisCounterStore({ url: redis.url(), prefix });
      try {
        await store.ready();
        expect((await engineFor(store).decideAsync(call('peek', { n: 8 }, 'x'))).rule).toBe('t/PEEK');
      } finally {
        await store.close();
      }
    });
  });
});
