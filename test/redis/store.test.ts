/**
 * The Redis counter store against a REAL redis-server (test/redis/server.ts; `OARC_REDIS_URL` when
 * `.ci/run` started one): key spelling and TTL ([OAR-FIRE-5], [OAR-FIRE-10], [OAR-CONF-33]), round
 * trips per occurrence ([OAR-FIRE-6]), a `fire_count_of` reading what another replica wrote
 * ([OAR-FIRE-11]), and `decideAsync` deciding exactly as `decide` does.
 */
import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolArgsFingerprint, type Decision } from '../../runtime/index.js';
import { RedisCounterStore } from '../../runtime/redis.js';
import { call, engineFor, uniquePrefix, useTestRedis } from './pack.js';
import { describeRedis } from './server.js';

describeRedis('server', 'the Redis counter store against a real redis-server', () => {
  const redis = useTestRedis();
  let raw: Redis;
  const stores: RedisCounterStore[] = [];

  beforeAll(async () => {
    raw = new Redis(redis.url(), { lazyConnect: true });
    await raw.connect();
  });

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    raw?.disconnect();
  });

  async function newStore(opts: { prefix?: string; ttlSeconds?: number; shareActivity?: boolean } = {}): Promise<RedisCounterStore> {
    const s = new RedisCounterStore({
      url: redis.url(),
      prefix: opts.prefix ?? uniquePrefix('store'),
      ...(opts.ttlSeconds !== undefined ? { ttlSeconds: opts.ttlSeconds } : {}),
      ...(opts.shareActivity !== undefined ? { shareActivity: opts.shareActivity } : {}),
    });
    stores.push(s);
    await s.ready();
    return s;
  }

  const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');
  const trace = (d: Decision) => d.applied.map((t) => `${t.rule}:${t.outcome}`);

  describe('keys ([OAR-FIRE-5], [OAR-FIRE-10], [OAR-CONF-33])', () => {
    it('spells a counter <prefix>{<session hex>}:<qid>[#<scope>], sets the TTL, and stores f and b', async () => {
      const prefix = uniquePrefix('keys');
      const store = await newStore({ prefix, ttlSeconds: 120 });
      const engine = engineFor(store);
      const args = { path: '/a', n: 1 };
      const d = await engine.decideAsync(call('count', args, 'sess-1'));
      const fp = toolArgsFingerprint('count', args);
      expect(d.counters).toEqual({ [`t/COUNT#${fp}`]: { fire_count: 1, breaker_count: 0 }, 't/TOTAL': { fire_count: 1, breaker_count: 0 } });

      const tag = `{${hex('sess-1')}}`;
      const keys = (await raw.keys(`${prefix}*`)).sort();
      // the counters, this store's write record, the session's version and activity window, the
      // epoch record, and this store's own write sequence beside it (which expires: see below)
      expect(keys).toEqual([`${prefix}${tag}!w:${store.id}`, `${prefix}${tag}!v`, `${prefix}${tag}!a`, `${prefix}${tag}:t/COUNT#${fp}`, `${prefix}${tag}:t/TOTAL`, `${prefix}epoch`, `${prefix}epoch:q:${store.id}`].sort());
      expect(await raw.get(`${prefix}epoch:q:${store.id}`)).toBe('1');
      expect(await raw.get(`${prefix}${tag}!v`)).toBe('1');
      expect(await raw.lrange(`${prefix}${tag}!a`, 0, -1)).toEqual(['count']);
      expect(await raw.hgetall(`${prefix}${tag}:t/TOTAL`)).toEqual({ f: '1', b: '0', rf: '0', rb: '0' });
      for (const k of keys.filter((k) => k !== `${prefix}epoch`)) {
        const ttl = await raw.ttl(k);
        expect(ttl, k).toBeGreaterThan(0);
        expect(ttl, k).toBeLessThanOrEqual(120);
      }
    });

    it('keeps counters without a TTL when ttlSeconds is 0 (the write record and the own write sequence still expire)', async () => {
      const prefix = uniquePrefix('nottl');
      const store = await newStore({ prefix, ttlSeconds: 0 });
      await engineFor(store).decideAsync(call('count', {}, 's'));
      expect(await raw.ttl(`${prefix}{${hex('s')}}:t/TOTAL`)).toBe(-1);
      expect(await raw.ttl(store.recordKey('s'))).toBeGreaterThan(0);
      // So does the store's own write sequence: one key per store instance ever started, each gone
      // a day after that store's last write.
      expect(await raw.ttl(store.ownSequenceKey('s'))).toBeGreaterThan(86_000);
    });

    it('a scoped rule with an empty scope value has its own counter, distinct from the unscoped spelling', async () => {
      const prefix = uniquePrefix('empty');
      const store = await newStore({ prefix });
      const engine = engineFor(store);
      const base = `${prefix}{${hex('s')}}:t/SCOPED_EMPTY`;
      // A value under the unscoped spelling must never be read for the scoped rule.
      await raw.hset(base, 'f', '7', 'b', '0');
      const first = await engine.decideAsync(call('empty'));
      expect(first.counters).toEqual({ 't/SCOPED_EMPTY#': { fire_count: 1, breaker_count: 0 } });
      expect(first.decision).toBe('none');
      const second = await engine.decideAsync(call('empty'));
      expect(second.decision).toBe('warn'); // PEEK_EMPTY read the `#` counter: exactly 1
      expect(second.rule).toBe('t/PEEK_EMPTY');
      expect(await raw.hget(`${base}#`, 'f')).toBe('2');
      expect(await raw.hget(base, 'f')).toBe('7');
    });

    it('hex-encodes the session, so any session string stays inside the hash tag', async () => {
      const prefix = uniquePrefix('sess');
      const store = await newStore({ prefix });
      const session = 'a}b{c:d\u00e9';
      await engineFor(store).decideAsync(call('count', {}, session));
      expect(await raw.hget(`${prefix}{${hex(session)}}:t/TOTAL`, 'f')).toBe('1');
      expect(() => new RedisCounterStore({ url: redis.url(), prefix: 'bad{', options: { lazyConnect: true } })).toThrow(/must not contain/);
    });
  });

  describe('round trips per occurrence ([OAR-FIRE-6])', () => {
    /** Count what the client writes to its socket: each write is one request batch on the wire. */
    function socketWrites(store: RedisCounterStore): () => number {
      const sock = (store.redis as unknown as { stream: Socket }).stream;
      const write = sock.write.bind(sock) as (...a: unknown[]) => boolean;
      let n = 0;
      (sock as unknown as { write: (...a: unknown[]) => boolean }).write = (...a: unknown[]) => {
        n++;
        return write(...a);
      };
      return () => n;
    }

    // With shared activity windows (the default) an admitted tool call also appends its step: it
    // rides in the counters' write, or is a write of its own when nothing was counted.
    for (const shareActivity of [false, true]) {
      const step = shareActivity ? 1 : 0;
      it(`${shareActivity ? 'sharing windows' : 'windows per replica'}: 0 trips when no selected rule reads or writes a counter${shareActivity ? ' (1 to append the step)' : ''}, 1 read + 1 write when one writes, 1 when rules only read`, async () => {
        const store = await newStore({ shareActivity });
        const engine = engineFor(store);
        const writes = socketWrites(store);
        const measure = async (o: Parameters<typeof engine.decideAsync>[0]) => {
          const t0 = store.roundTrips;
          const w0 = writes();
          const d = await engine.decideAsync(o);
          return { d, trips: store.roundTrips - t0, wire: writes() - w0 };
        };

        // No counter rule selected: PLAIN only, fired or not; no rule at all; and an anchor that admits no step.
        for (const [o, trips] of [[call('plain', { x: 'y' }), step], [call('plain', { x: 'z' }), step], [call('unknown'), step], [{ anchor: 'tool.post_invoke', session: 's' }, 0]] as const) {
          const m = await measure(o);
          expect(m.trips).toBe(trips);
          expect(m.wire).toBe(trips);
        }
        expect((await measure(call('plain', { x: 'y' }))).d.decision).toBe('nudge');

        // COUNT and TOTAL write, REPEATED reads: one batched read of the three counters, one write.
        for (let i = 0; i < 3; i++) {
          const m = await measure(call('count', { i: 1 }));
          expect(m.trips).toBe(2);
          expect(m.wire).toBe(2);
          expect(m.d.onFire.map((s) => `${s.rule}:${s.action}`)).toEqual(['t/COUNT:increment_counter', 't/TOTAL:increment_counter']);
          expect(m.d.decision).toBe(i >= 2 ? 'warn' : 'none');
        }

        // PEEK only reads TOTAL: one round trip, and it sees the three increments.
        const peek = await measure(call('peek', { n: 3 }));
        expect(peek.trips).toBe(1 + step);
        expect(peek.wire).toBe(1 + step);
        expect(peek.d.rule).toBe('t/PEEK');
      });
    }
  });

  describe('replicas sharing one store ([OAR-FIRE-11])', () => {
    it('a rule reading fire_count_of sees what another replica (its own connection) wrote', async () => {
      const prefix = uniquePrefix('xrep');
      const a = engineFor(await newStore({ prefix }));
      const b = engineFor(await newStore({ prefix }), 'interpreter');
      expect((await b.decideAsync(call('peek', { n: 2 }, 'shared'))).decision).toBe('none');
      await a.decideAsync(call('count', { q: 1 }, 'shared'));
      await a.decideAsync(call('count', { q: 2 }, 'shared'));
      const seen = await b.decideAsync(call('peek', { n: 2 }, 'shared'));
      expect(seen.decision).toBe('warn');
      expect(seen.rule).toBe('t/PEEK');
      // B counts on top of A's counts: REPEATED reads COUNT#<fp of q:1>, written by A once, by B once.
      await b.decideAsync(call('count', { q: 1 }, 'shared'));
      const third = await a.decideAsync(call('count', { q: 1 }, 'shared'));
      expect(third.decision).toBe('warn');
      expect(third.rule).toBe('t/REPEATED');
      expect((await a.decideAsync(call('peek', { n: 4 }, 'shared'))).decision).toBe('warn'); // 2 by A, 1 by B, 1 by A
    });
  });

  describe('decideAsync decides as decide does', () => {
    it('the same decisions as decide over the in-memory store, on both back ends, for a mixed sequence', async () => {
      const occs = [
        call('count', { a: 1 }), call('count', { a: 1 }), call('plain', { x: 'y' }), call('count', { a: 1 }), call('peek', { n: 3 }),
        call('empty'), call('empty'), call('count2', { a: 1 }), call('count', { a: 2 }, 'other'), call('peek', { n: 1 }, 'other'),
      ];
      for (const backend of ['compiled', 'interpreter'] as const) {
        const mem = engineFor(undefined, backend);
        const red = engineFor(await newStore(), backend);
        for (const o of occs) {
          const want = mem.decide(o);
          const got = await red.decideAsync(o);
          expect(got, JSON.stringify(o)).toEqual(want);
        }
      }
    });

    it('concurrent occurrences each record their own tool step ([OAR-PROF-9])', async () => {
      const engine = engineFor(await newStore());
      // count (session A) and count2 (session B) interleave: each awaits its read and its write.
      await Promise.all(Array.from({ length: 20 }, (_, i) => engine.decideAsync(i % 2 === 0 ? call('count', { i }, 'A') : call('count2', { i }, 'B'))));
      expect(engine.activity('A')).toEqual(['count', 'count', 'count', 'count']);
      expect(engine.activity('B')).toEqual(['count2', 'count2', 'count2', 'count2']);
    });

    it('asks a lazy provider once per occurrence though keys are planned before evaluation ([OAR-FACT-11])', async () => {
      const engine = engineFor(await newStore());
      let calls = 0;
      const d = await engine.decideAsync(call('empty', {}, 'lazy', { 'acme.gw.key': () => (calls++, 'k1') }));
      expect(calls).toBe(1);
      expect(d.counters).toEqual({ 't/SCOPED_EMPTY#k1': { fire_count: 1, breaker_count: 0 } });
      expect(trace(d)).toEqual(['t/PEEK_EMPTY:passed', 't/SCOPED_EMPTY:fired']);
    });
  });
});
