/**
 * Faults an operator meets, against a REAL redis-server per test ([OAR-FIRE-9], [OAR-OPS-3]):
 *
 * - a caller that awaits `decideAsync` back to back while Redis is down never starves the event
 *   loop: every failed store call yields to the macrotask queue, so the client reconnects (and the
 *   test's own restart of the server proceeds) while the caller loops;
 * - a store that lost its data — restarted empty, flushed, or restored from older data — is
 *   detected by its epoch, and every rule that needs a counter takes `on_error` until an operator
 *   acknowledges the loss; counters silently back at zero would let breakers that had tripped
 *   reset without anyone knowing;
 * - keys encode strings losslessly: sessions or scope values differing only in a lone surrogate
 *   are different counters.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Decision } from '../../runtime/index.js';
import { CounterDataLoss, RedisCounterStore } from '../../runtime/redis.js';
import { call, engineFor, uniquePrefix } from './pack.js';
import { describeRedis, startRedis, type RedisServer } from './server.js';

describeRedis('binary', 'a redis-server that is killed, restarted empty or restored', () => {
  const servers: RedisServer[] = [];
  const stores: RedisCounterStore[] = [];

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  async function setup(): Promise<{ srv: RedisServer; store: RedisCounterStore }> {
    const srv = await startRedis();
    servers.push(srv);
    const store = new RedisCounterStore({ url: srv.url, prefix: uniquePrefix('faults'), timeoutMs: 300 });
    stores.push(store);
    await store.ready();
    return { srv, store };
  }

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const errored = (d: Decision) => d.applied.some((t) => t.outcome === 'errored');
  const messages = (d: Decision) => d.applied.flatMap((t) => (t.error ? [t.error.message] : []));

  /** Kill the server and bring it back with nothing: its append-only file is gone. */
  async function restartEmpty(srv: RedisServer): Promise<void> {
    await srv.kill9();
    for (const f of readdirSync(srv.dir)) rmSync(join(srv.dir, f), { recursive: true, force: true });
    await srv.restart();
  }

  describe('a caller that never yields', () => {
    it('decisions awaited back to back while Redis is down let the client reconnect', async () => {
      const { srv, store } = await setup();
      const engine = engineFor(store);
      expect(errored(await engine.decideAsync(call('count')))).toBe(false);
      await srv.kill9();
      // The restart needs the event loop (a child process, timers, sockets); so does the client's
      // reconnect. The loop below awaits nothing but decisions.
      const back = srv.restart();
      const deadline = Date.now() + 20_000;
      let failures = 0;
      let recovered = false;
      while (Date.now() < deadline) {
        const d = await engine.decideAsync(call('count'));
        if (!errored(d)) {
          recovered = true;
          break;
        }
        failures++;
      }
      await back;
      expect(recovered).toBe(true);
      expect(failures).toBeGreaterThan(0);
    }, 30_000);
  });

  describe('a shared activity window that cannot be read', () => {
    it('fails the flow rules that need it ([OAR-OPS-3]): never a silent empty window', async () => {
      const { srv, store } = await setup();
      const engine = engineFor(store);
      await engine.decideAsync(call('fetch'));
      expect((await engine.decideAsync(call('send'))).decision).toBe('block'); // the window holds the fetch
      await srv.kill9();
      const d = await engine.decideAsync(call('send'));
      expect(d.applied.map((t) => `${t.rule}:${t.outcome}`)).toEqual(['t/SEND_AFTER_FETCH:errored']);
      expect(messages(d).join('\n')).toMatch(/the activity window could not be read/);
    });
  });

  describe('lost data is detected ([OAR-FIRE-9])', () => {
    it('Redis restarted empty: counter rules take on_error until acknowledgeDataLoss(), other rules decide', async () => {
      const { srv, store } = await setup();
      const engine = engineFor(store);
      for (let i = 0; i < 3; i++) expect(errored(await engine.decideAsync(call('count', { same: 1 })))).toBe(false);
      await restartEmpty(srv);
      await store.ready();

      for (let i = 0; i < 2; i++) {
        const d = await engine.decideAsync(call('count', { same: 1 }));
        // TOTAL is fail_closed: a block naming it; COUNT is fail_open: errored, not counted.
        expect({ decision: d.decision, rule: d.rule }).toEqual({ decision: 'block', rule: 't/TOTAL' });
        expect(d.counters).toEqual({});
        expect(messages(d).join('\n')).toMatch(/lost data: it held epoch [0-9a-f]+ and now holds no epoch \(the server restarted empty/);
      }
      expect(store.dataLoss?.found.id).toBeNull();
      expect(store.dataLoss?.expected.seq).toBe(3);
      await expect(store.readMany([{ rule: 't/TOTAL', session: 's' }])).rejects.toBeInstanceOf(CounterDataLoss);
      // A rule that touches no counter is unaffected.
      expect((await engine.decideAsync(call('plain', { x: 'y' }))).decision).toBe('nudge');

      await store.acknowledgeDataLoss();
      expect(store.dataLoss).toBeUndefined();
      const after = await engine.decideAsync(call('count', { same: 1 }));
      expect(errored(after)).toBe(false);
      expect(after.counters['t/TOTAL']).toEqual({ fire_count: 1, breaker_count: 0 }); // counting again, from what Redis holds
    }, 30_000);

    it('a flush while connected, and a restore of older data, are detected too', async () => {
      const { srv, store } = await setup();
      const engine = engineFor(store);
      await engine.decideAsync(call('count'));
      expect(await srv.command('FLUSHALL')).toBe('+OK\r\n');
      expect(errored(await engine.decideAsync(call('count')))).toBe(true);
      await store.acknowledgeDataLoss();
      for (let i = 0; i < 2; i++) expect(errored(await engine.decideAsync(call('count')))).toBe(false);

      // Older data restored (an RDB snapshot, or an fsync-every-second AOF that lost its tail): the
      // write sequence went back below what this store saw acknowledged.
      const prefix = (store as unknown as { prefix: string }).prefix;
      expect(await srv.command('HSET', `${prefix}epoch`, 'seq', '1')).toBe(':0\r\n');
      const d = await engine.decideAsync(call('count'));
      expect(errored(d)).toBe(true);
      expect(messages(d).join('\n')).toMatch(/write sequence 1, below the 2 already acknowledged/);
    }, 30_000);
  });

  describe('a restore of older data, whichever store touches Redis first ([OAR-FIRE-9])', () => {
    /** Another store (another gateway replica) on the same server and prefix. */
    async function peer(srv: RedisServer, of: RedisCounterStore): Promise<RedisCounterStore> {
      const s = new RedisCounterStore({ url: srv.url, prefix: (of as unknown as { prefix: string }).prefix, timeoutMs: 300 });
      stores.push(s);
      await s.ready();
      return s;
    }
    const esc = (engine: ReturnType<typeof engineFor>, session: string) => engine.decideAsync(call('esc', { same: 1 }, session));

    it("another store's writes after the restore do not hide it: the store whose writes were lost detects it, and marks it for every store", async () => {
      const { srv, store: b } = await setup();
      const a = await peer(srv, b);
      const [ea, eb] = [engineFor(a), engineFor(b)];
      expect(errored(await eb.decideAsync(call('count', {}, 'bob')))).toBe(false);
      const backup = srv.backup();
      const before: string[] = [];
      for (let i = 0; i < 3; i++) before.push((await esc(ea, 'alice')).decision);
      expect(before).toEqual(['none', 'nudge', 'block']);
      await srv.restoreFrom(backup); // alice's three decisions are gone
      await Promise.all([a.ready(), b.ready()]);
      // B lost none of its own writes: it decides, and its writes carry the deployment's write
      // sequence back up past what A saw acknowledged.
      for (let i = 0; i < 4; i++) expect(errored(await eb.decideAsync(call('count', { i }, `bob${i}`)))).toBe(false);
      expect(b.dataLoss).toBeUndefined();
      // A's own write sequence is behind what it saw acknowledged: alice's breaker is not silently reset.
      const d = await esc(ea, 'alice');
      expect(d.decision).not.toBe('none');
      expect(errored(d)).toBe(true);
      // (Two writes: the blocking decision counted nothing.)
      expect(messages(d).join('\n')).toMatch(/writes of its own are gone: its own write sequence is 0, below the 2 it saw acknowledged/);
      expect(a.dataLoss?.reason).toBe('store-sequence');
      // A marked the record: B refuses counters from its next call, and so does a store started now.
      const db = await eb.decideAsync(call('count', {}, 'bob'));
      expect(errored(db)).toBe(true);
      expect(messages(db).join('\n')).toMatch(new RegExp(`store ${a.id} marked the record lost: writes of its own are gone`));
      expect(b.dataLoss?.reason).toBe('marked');
      const c = await peer(srv, b);
      expect(errored(await engineFor(c).decideAsync(call('count', {}, 'carol')))).toBe(true);
      expect(c.dataLoss?.reason).toBe('marked');

      // One acknowledgement, on any store, is the operator's word for the deployment: every store
      // counts again, from what Redis holds (alice starts over).
      await a.acknowledgeDataLoss();
      expect(a.dataLoss).toBeUndefined();
      expect((await esc(ea, 'alice')).decision).toBe('none');
      expect(errored(await eb.decideAsync(call('count', {}, 'bob')))).toBe(false);
      expect(b.dataLoss).toBeUndefined();
      expect(errored(await engineFor(c).decideAsync(call('count', {}, 'carol')))).toBe(false);
    }, 30_000);

    it("after an acknowledgement, a call that found the old loss while another call of its store adopted the acknowledgement does not report it anew", async () => {
      const { srv, store: b } = await setup();
      const a = await peer(srv, b);
      const eb = engineFor(b);
      const backup = srv.backup();
      await esc(engineFor(a), 'alice');
      for (let i = 0; i < 3; i++) await esc(eb, 'bob');
      await srv.restoreFrom(backup);
      await Promise.all([a.ready(), b.ready()]);
      expect(errored(await esc(engineFor(a), 'alice'))).toBe(true);
      await a.acknowledgeDataLoss();
      // B's first call finds its stale floor and asks the root for its generation — an answer that
      // arrives late here — while B's second call finds the same, learns of the acknowledgement
      // and adopts it. The first call's late answer must not then read as a new loss.
      const client = b.redis as unknown as { hmget: (...a: unknown[]) => Promise<unknown> };
      const hmget = client.hmget.bind(client);
      let delayed = 0;
      client.hmget = (...args: unknown[]) => {
        const p = hmget(...args);
        return args.length === 2 && args[1] === 'g' && delayed++ === 0 ? p.then(async (r) => (await sleep(150), r)) : p;
      };
      const first = esc(eb, 's1');
      await sleep(50);
      const second = await esc(eb, 's2');
      const d1 = await first;
      expect([d1.decision, second.decision]).toEqual(['none', 'none']);
      expect(b.dataLoss).toBeUndefined();
      expect(errored(await esc(engineFor(a), 'alice'))).toBe(false); // no new mark stops A
      expect(a.dataLoss).toBeUndefined();
    }, 30_000);

    it('after an acknowledgement, a store that had not yet seen the loss resumes too, instead of reporting it again', async () => {
      const { srv, store: b } = await setup();
      const a = await peer(srv, b);
      const [ea, eb] = [engineFor(a), engineFor(b)];
      const backup = srv.backup();
      // Both lose writes of their own.
      for (let i = 0; i < 2; i++) await esc(ea, 'alice');
      for (let i = 0; i < 2; i++) await esc(eb, 'bob');
      await srv.restoreFrom(backup);
      await Promise.all([a.ready(), b.ready()]);
      expect(errored(await esc(ea, 'alice'))).toBe(true);
      await a.acknowledgeDataLoss();
      // B's own sequence is still below what it saw: the acknowledgement (a newer generation in the
      // record) tells it the loss was accepted, so it adopts what Redis holds instead of marking again.
      expect((await esc(eb, 'bob')).decision).toBe('none');
      expect(b.dataLoss).toBeUndefined();
      expect((await esc(ea, 'alice')).decision).toBe('none');
      expect(a.dataLoss).toBeUndefined();
    }, 30_000);
  });

  describe("a store's own write sequence expires (markerTtlSeconds)", () => {
    it('a store idle past it forgets its floor rather than reading the expired key as a loss', async () => {
      const srv = await startRedis();
      servers.push(srv);
      const store = new RedisCounterStore({ url: srv.url, prefix: uniquePrefix('idle'), timeoutMs: 300, markerTtlSeconds: 1 });
      stores.push(store);
      await store.ready();
      const engine = engineFor(store);
      for (let i = 0; i < 3; i++) expect(errored(await engine.decideAsync(call('count', {}, 'x')))).toBe(false);
      expect(await srv.command('GET', store.ownSequenceKey('x').toString())).toBe('$1\r\n3\r\n');
      await new Promise((r) => setTimeout(r, 1300));
      expect(await srv.command('EXISTS', store.ownSequenceKey('x').toString())).toBe(':0\r\n'); // gone
      const d = await engine.decideAsync(call('count', {}, 'x'));
      expect(messages(d)).toEqual([]);
      expect(store.dataLoss).toBeUndefined();
    });
  });

  describe('keys encode strings losslessly', () => {
    it('sessions "\\uD800" and "\\uDC00" are different sessions', async () => {
      const { store } = await setup();
      const engine = engineFor(store);
      for (const session of ['\uD800', '\uDC00', '\uFFFD']) {
        const d = await engine.decideAsync(call('count', {}, session));
        expect(d.counters['t/TOTAL'], JSON.stringify(session)).toEqual({ fire_count: 1, breaker_count: 0 });
      }
      expect(store.key({ rule: 't/TOTAL', session: '\uD800' }).equals(store.key({ rule: 't/TOTAL', session: '\uDC00' }))).toBe(false);
    });

    it('scope values with lone surrogates are different counters, and a well-formed key keeps its UTF-8 spelling', async () => {
      const { store } = await setup();
      const engine = engineFor(store);
      for (const key of ['\uD800', '\uDC00', '\uD800', '\uDC00']) await engine.decideAsync(call('empty', {}, 's', { 'acme.gw.key': key }));
      const d = await engine.decideAsync(call('empty', {}, 's', { 'acme.gw.key': '\uDC00' }));
      expect(d.counters).toEqual({ 't/SCOPED_EMPTY#\uDC00': { fire_count: 3, breaker_count: 0 } });
      const k = store.key({ rule: 't/COUNT', session: 'é', scope: 'ü' });
      expect(k.toString('utf8')).toBe(`${(store as unknown as { prefix: string }).prefix}{c3a9}:t/COUNT#ü`);
    });
  });
});
