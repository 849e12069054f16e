/**
 * Concurrent decisions of one session are serialisable: N concurrent `decideAsync` calls decide
 * as some one-at-a-time order of them would — within one process (a per-session queue) and across
 * replicas in TWO PROCESSES sharing one real redis-server (the session's version, checked by the
 * write script, and a bounded re-evaluation). The escalation rule "nudge on the first repeat,
 * block from the second" holds exactly as for sequential calls ([OAR-FIRE-6], [OAR-FIRE-11]).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../runtime/index.js';
import { RedisCounterStore } from '../../runtime/redis.js';
import { call, dumpCounters, engineFor, ESCALATION, uniquePrefix, useTestRedis } from './pack.js';
import { Replica } from './replica.js';
import { describeRedis } from './server.js';

describeRedis('server', 'concurrent decisions of one session against a real redis-server', () => {
  const redis = useTestRedis();
  const stores: RedisCounterStore[] = [];
  const replicas: Replica[] = [];

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.exit()));
    await Promise.all(stores.map((s) => s.close()));
  });

  async function newStore(prefix: string, shareActivity = true): Promise<RedisCounterStore> {
    const s = new RedisCounterStore({ url: redis.url(), prefix, shareActivity });
    stores.push(s);
    await s.ready();
    return s;
  }

  const decisions = (ds: readonly Decision[]) => ds.map((d) => d.decision);
  const sorted = (xs: readonly string[]) => [...xs].sort();

  describe('one process: concurrent calls of one session decide as sequential calls', () => {
    it('10 identical calls in Promise.all decide none, nudge, block × 8, in call order', async () => {
      const engine = engineFor(await newStore(uniquePrefix('inproc')));
      const all = await Promise.all(Array.from({ length: 10 }, () => engine.decideAsync(call('esc', { same: 1 }, 'one'))));
      expect(decisions(all)).toEqual(ESCALATION);
    });

    it('two engines (two replicas in one process) calling concurrently still escalate exactly', async () => {
      const prefix = uniquePrefix('twoeng');
      const a = engineFor(await newStore(prefix));
      const b = engineFor(await newStore(prefix));
      for (let round = 0; round < 5; round++) {
        const session = `r${round}`;
        const all = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).decideAsync(call('esc', { same: 1 }, session))));
        expect(sorted(decisions(all)), session).toEqual(sorted(ESCALATION));
      }
      expect([...(await dumpCounters(redis.url(), prefix)).values()]).toEqual([2, 2, 2, 2, 2]);
    });
  });

  describe('two processes sharing one Redis', () => {
    it('concurrent identical calls split across two replicas escalate exactly as sequential calls', async () => {
      const prefix = uniquePrefix('procs');
      const pair = [new Replica(), new Replica()] as const;
      replicas.push(...pair);
      await Promise.all(pair.map((r) => r.init(redis.url(), prefix)));
      // 40 sessions, 10 identical calls each, every session's calls split evenly between the two
      // processes and all of them in flight at once.
      const sessions = Array.from({ length: 40 }, (_, i) => `p${i}`);
      const mine = (half: number) => sessions.flatMap((session) => Array.from({ length: 5 }, () => ({ session, tool: 'esc', args: { same: half >= 0 } })));
      const [ra, rb] = await Promise.all([pair[0].run(mine(0), 200, true), pair[1].run(mine(1), 200, true)]);
      const by = new Map<string, string[]>();
      for (const [r, occs] of [[ra, mine(0)], [rb, mine(1)]] as const) {
        (r.decisions as Decision[]).forEach((d, i) => {
          const s = (occs[i] as { session: string }).session;
          by.set(s, [...(by.get(s) ?? []), d.decision]);
        });
      }
      for (const s of sessions) expect(sorted(by.get(s) ?? []), s).toEqual(sorted(ESCALATION));
      const counters = await dumpCounters(redis.url(), prefix);
      expect(counters.size).toBe(sessions.length);
      expect(new Set(counters.values())).toEqual(new Set([2]));
      // The version check did turn writes back: the two processes did race on the same sessions.
      expect(ra.conflicts + rb.conflicts).toBeGreaterThan(0);
    });
  });

  describe('activity windows are shared state too ([OAR-PROF-9], [OAR-FACT-12])', () => {
    it('two replicas alternating calls of one session see one window, capped at activity_window', async () => {
      const prefix = uniquePrefix('window');
      const stores = [await newStore(prefix), await newStore(prefix)];
      const [a, b] = stores.map((s) => engineFor(s)) as [ReturnType<typeof engineFor>, ReturnType<typeof engineFor>];
      const steps = ['fetch', 'plain', 'plain', 'send'];
      const out: string[] = [];
      for (const [i, tool] of steps.entries()) out.push((await (i % 2 === 0 ? a : b).decideAsync(call(tool, {}, 'w'))).decision);
      expect(out).toEqual(['none', 'none', 'none', 'block']); // b saw a's fetch
      const key = stores[0]?.activityKey('w') as Buffer;
      // The blocked send is not a step; the window holds the last 4 admitted steps.
      await a.decideAsync(call('plain', {}, 'w'));
      expect((await b.decideAsync(call('send', {}, 'w'))).decision).toBe('block'); // fetch is the oldest of 4
      await a.decideAsync(call('plain', {}, 'w'));
      expect((await b.decideAsync(call('send', {}, 'w'))).decision).toBe('none'); // fetch dropped out
      const raw = await stores[0]?.redis.lrangeBuffer(key, 0, -1);
      expect(raw?.map((x) => x.toString())).toEqual(['plain', 'plain', 'plain', 'send']);
    });

    it('without shared windows each replica sees only its own steps', async () => {
      const prefix = uniquePrefix('ownwindow');
      const a = engineFor(await newStore(prefix, false));
      const b = engineFor(await newStore(prefix, false));
      await a.decideAsync(call('fetch', {}, 'w'));
      expect((await b.decideAsync(call('send', {}, 'w'))).decision).toBe('none');
      expect((await a.decideAsync(call('send', {}, 'w'))).decision).toBe('block');
    });
  });
});
