/**
 * A counter store that cannot be reached must not silently stop counting ([OAR-FIRE-9],
 * [OAR-OPS-3], [OAR-OPS-4]). Each test owns a REAL redis-server (append-only file fsynced on every
 * write), and kills it with SIGKILL, stops it with SIGSTOP, or makes it refuse writes:
 *
 * - every decision made while the store is unreachable follows `on_error` — TOTAL (fail_closed)
 *   blocks naming itself, COUNT (fail_open) is `errored` and not counted — says why in its trace,
 *   and reports no increment applied;
 * - counting resumes by itself once the server is back (ioredis reconnects);
 * - the counters then hold exactly the increments the decisions reported applied: none applied
 *   twice, and none applied that a decision reported failed (a doubtful write is resolved).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { toolArgsFingerprint, type Decision } from '../../runtime/index.js';
import { RedisCounterStore } from '../../runtime/redis.js';
import { addInto, appliedIncrements, call, dumpCounters, engineFor, normal, uniquePrefix } from './pack.js';
import { describeRedis, startRedis, type RedisServer } from './server.js';

describeRedis('binary', 'a redis-server that is killed, stopped or refuses writes', () => {
  const servers: RedisServer[] = [];
  const stores: RedisCounterStore[] = [];

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  async function setup(timeoutMs = 300, extra: { failFastMs?: number } = {}): Promise<{ srv: RedisServer; store: RedisCounterStore; prefix: string }> {
    const srv = await startRedis();
    servers.push(srv);
    const prefix = uniquePrefix('fail');
    const store = new RedisCounterStore({ url: srv.url, prefix, timeoutMs, ...extra });
    stores.push(store);
    await store.ready();
    return { srv, store, prefix };
  }

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const trace = (d: Decision) => d.applied.map((t) => `${t.rule}:${t.outcome}`);

  type Kind = 'ok' | 'on_error';

  /**
   * Every decision of the count pack is either fully applied, or went down on_error with nothing
   * applied; anything else fails the test.
   */
  /** Decides through `engine`, keeping every decision with its session for the final count check. */
  function recording(engine: ReturnType<typeof engineFor>) {
    const all: { d: Decision; session: string }[] = [];
    const decide = async (o: ReturnType<typeof call>): Promise<Decision> => {
      const d = await engine.decideAsync(o);
      all.push({ d, session: o.session as string });
      return d;
    };
    return { all, decide };
  }

  function classify(d: Decision): Kind {
    const fired = d.onFire.map((s) => `${s.rule}:${s.action}`);
    if (!d.applied.some((t) => t.outcome === 'errored')) {
      expect(fired).toEqual(['t/COUNT:increment_counter', 't/TOTAL:increment_counter']);
      expect(Object.keys(d.counters)).toHaveLength(2);
      return 'ok';
    }
    // [OAR-OPS-4] COUNT is fail_open: errored, no side-effect; [OAR-OPS-3] TOTAL is fail_closed: a
    // block carrying its identifiers. REPEATED is fail_open and may have errored (a failed read).
    expect(d.applied.find((t) => t.rule === 't/COUNT')?.outcome).toBe('errored');
    expect(d.applied.find((t) => t.rule === 't/TOTAL')?.outcome).toBe('errored');
    expect(['passed', 'fired', 'errored']).toContain(d.applied.find((t) => t.rule === 't/REPEATED')?.outcome);
    expect({ decision: d.decision, code: d.code, rule: d.rule }).toEqual({ decision: 'block', code: 'TOTAL', rule: 't/TOTAL' });
    for (const t of d.applied.filter((e) => e.outcome === 'errored')) {
      expect(t.error?.message).toMatch(/counter store (could not be read|refused the write)/);
    }
    expect(d.onFire).toEqual([]);
    expect(d.counters).toEqual({});
    return 'on_error';
  }

  interface Load {
    stop(): Promise<void>;
    readonly decisions: { d: Decision; session: string; at: number }[];
  }

  /** Decide `count` occurrences continuously, `concurrency` in flight, until stopped. */
  function load(engine: ReturnType<typeof engineFor>, concurrency: number): Load {
    let running = true;
    let i = 0;
    const decisions: Load['decisions'] = [];
    const worker = async () => {
      while (running) {
        const n = i++;
        const session = `s${n % 3}`;
        const d = await engine.decideAsync(call(n % 2 ? 'count' : 'count2', { k: n % 10 }, session));
        decisions.push({ d, session, at: Date.now() });
        // A decision refused at once (the client is disconnected) must not spin the loop.
        if (d.decision === 'block') await sleep(2);
      }
    };
    const done = Promise.all(Array.from({ length: concurrency }, worker));
    return {
      decisions,
      async stop() {
        running = false;
        await done;
      },
    };
  }

  async function until(what: string, ms: number, cond: () => boolean): Promise<void> {
    const deadline = Date.now() + ms;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(10);
    }
  }

  function reportedApplied(ds: readonly { d: Decision; session: string }[]): Map<string, number> {
    const m = new Map<string, number>();
    for (const { d, session } of ds) appliedIncrements(d, session, m);
    return m;
  }

  describe('the server is killed mid-run (kill -9), then restarted', () => {
    it('decisions while it is down follow on_error; counting resumes by itself; counters equal the increments reported applied', async () => {
      const { srv, store, prefix } = await setup();
      const engine = engineFor(store);
      const run = load(engine, 8);
      await until('200 decisions', 20_000, () => run.decisions.length >= 200);

      await srv.kill9(); // writes are in flight: some land, some do not, some are doubtful
      const killedAt = Date.now();
      await sleep(600);
      const downUntil = Date.now();
      await srv.restart();
      const restartedAt = Date.now();
      // No call on the store: the client reconnects by itself and decisions apply again.
      await until('a decision applied after the restart', 20_000, () => run.decisions.some((x) => x.at > restartedAt && x.d.onFire.length > 0));
      const resumedAt = Date.now();
      const seen = run.decisions.length;
      await until('200 more decisions', 20_000, () => run.decisions.length >= seen + 200);
      await run.stop();
      expect(await store.settled(20_000)).toBe(true);

      const kinds = run.decisions.map((x) => ({ ...x, kind: classify(x.d) }));
      const before = kinds.filter((x) => x.at < killedAt);
      const down = kinds.filter((x) => x.at > killedAt + 50 && x.at < downUntil);
      const after = kinds.filter((x) => x.at > resumedAt);
      expect(before.filter((x) => x.kind === 'ok').length).toBeGreaterThanOrEqual(190);
      expect(down.length).toBeGreaterThan(0);
      expect(down.every((x) => x.kind === 'on_error')).toBe(true);
      expect(after.filter((x) => x.kind === 'ok').length).toBeGreaterThan(150);

      // None applied twice, none applied that was reported failed: exactly what the decisions say.
      const inRedis = await dumpCounters(srv.url, prefix);
      expect(normal(inRedis)).toEqual(normal(reportedApplied(run.decisions)));
      const failed = kinds.filter((x) => x.kind === 'on_error').length;
      console.log(
        `kill -9: ${kinds.length} decisions, ${failed} on_error (${down.length} while down); doubtful writes resolved: ` +
          `${store.resolutions.undone} undone, ${store.resolutions.fenced} fenced`,
      );
    });

    it('a write sent just as the server dies is doubtful: reported failed, and fenced so it never counts', async () => {
      const { srv, store, prefix } = await setup();
      const engine = engineFor(store);
      const ok = await engine.decideAsync(call('count', { a: 1 }));
      expect(classify(ok)).toBe('ok');
      // The flag provider runs during evaluation — after the read, before the write — and kills the server.
      const d = await engine.decideAsync(call('hook', {}, 's', { 'acme.gw.flag': () => (process.kill(srv.pid, 'SIGKILL'), 'go') }));
      expect(trace(d)).toEqual(['t/HOOK:errored']);
      expect({ decision: d.decision, rule: d.rule }).toEqual({ decision: 'block', rule: 't/HOOK' });
      expect(d.applied[0]?.error?.message).toMatch(/counter store refused the write/);
      expect(d.onFire).toEqual([]);
      expect(store.pending).toBe(1);
      await srv.restart();
      expect(await store.settled(20_000)).toBe(true);
      expect(store.resolutions).toEqual({ undone: 0, fenced: 1 });
      const again = await engine.decideAsync(call('count', { a: 1 }));
      expect(classify(again)).toBe('ok');
      expect(normal(await dumpCounters(srv.url, prefix))).toEqual(normal(addInto(appliedIncrements(ok, 's'), appliedIncrements(again, 's'))));
    });
  });

  describe('a client that ioredis has ended', () => {
    it('is started again by the store; meanwhile rules take on_error [OAR-FIRE-9] (a reconnection that failed outright in the Sentinel partition test left it ended for good)', async () => {
      const { store } = await setup();
      const engine = engineFor(store);
      expect(classify(await engine.decideAsync(call('count', { n: 1 }, 'end-1')))).toBe('ok');
      // What ioredis does when a reconnection attempt fails outright: status 'end', no more retries.
      const client = (store as unknown as { redis: { disconnect(): void; status: string } }).redis;
      client.disconnect();
      await until("the client's end", 5_000, () => client.status === 'end');
      // While it is down, decisions fail closed...
      expect(classify(await engine.decideAsync(call('count', { n: 2 }, 'end-1')))).toBe('on_error');
      // ...and without a call on the store, it comes back and counting resumes.
      await until('the client ready again', 10_000, () => client.status === 'ready');
      expect(classify(await engine.decideAsync(call('count', { n: 3 }, 'end-1')))).toBe('ok');
    });
  });

  describe('a timeout is a side-effect that cannot be applied', () => {
    it('a stopped server (SIGSTOP): decisions time out down on_error, a late write is undone, counting resumes', async () => {
      const { srv, store, prefix } = await setup(250);
      const engine = engineFor(store);
      const { all, decide } = recording(engine);
      for (let i = 0; i < 5; i++) expect(classify(await decide(call('count', { i })))).toBe('ok');

      // Stopped between the read and the write: the write times out, reaches the server when it
      // resumes — and is then undone, because the decision reported it failed.
      const t0 = Date.now();
      const late = await decide(call('hook', {}, 's', { 'acme.gw.flag': () => (srv.pause(), 'go') }));
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(trace(late)).toEqual(['t/HOOK:errored']);
      expect({ decision: late.decision, rule: late.rule }).toEqual({ decision: 'block', rule: 't/HOOK' });
      expect(late.applied[0]?.error?.message).toMatch(/refused the write: Command timed out/);
      // While stopped, reads fail too: at once, since a command timed out a moment ago (failFastMs).
      const stalled = await Promise.all(Array.from({ length: 6 }, (_, i) => decide(call('count', { i }))));
      for (const d of stalled) expect(classify(d)).toBe('on_error');
      expect(stalled[0]?.applied[0]?.error?.message).toMatch(/could not be read: oarc: not sent: a command to the counter store timed out/);
      srv.resume();

      expect(await store.settled(20_000)).toBe(true);
      expect(store.resolutions.undone).toBe(1);
      for (let i = 0; i < 5; i++) expect(classify(await decide(call('count', { i })))).toBe('ok');
      expect(normal(await dumpCounters(srv.url, prefix))).toEqual(normal(reportedApplied(all)));
      // The late write did reach Redis (the key exists) and was undone.
      expect(await srv.command('HGET', `${prefix}{${Buffer.from('s').toString('hex')}}:t/HOOK`, 'f')).toBe('$1\r\n0\r\n');
    });
  });

  describe('a stalled server fails at once after a timeout (failFastMs)', () => {
    it('decisions of one session, queued behind each other, finish in about one timeout, not one each; one probe at a time; after SIGCONT counting resumes exactly', async () => {
      const timeout = 300;
      const { srv, store, prefix } = await setup(timeout, { failFastMs: 1500 });
      const engine = engineFor(store);
      const { all, decide } = recording(engine);
      for (let i = 0; i < 3; i++) expect(classify(await decide(call('count', { i })))).toBe('ok');

      srv.pause(); // TCP stays up: every command would wait for its timeout
      // 20 occurrences of one session at once: decideAsync runs them one after the other.
      let t0 = Date.now();
      const batch = await Promise.all(Array.from({ length: 20 }, (_, i) => decide(call('count', { i }))));
      const batchMs = Date.now() - t0;
      for (const d of batch) expect(classify(d)).toBe('on_error');
      expect(batch[0]?.applied[0]?.error?.message).toMatch(/could not be read: Command timed out/);
      expect(batch[1]?.applied[0]?.error?.message).toMatch(/could not be read: .*not sent: a command to the counter store timed out \d+ ms ago/);
      // One timeout, then every other decision fails at once (before: 20 timeouts, 6 s).
      expect(batchMs).toBeLessThan(3 * timeout);
      // Awaited one by one, the same.
      t0 = Date.now();
      for (let i = 0; i < 10; i++) expect(classify(await decide(call('count', { i }, 'other')))).toBe('on_error');
      expect(Date.now() - t0).toBeLessThan(timeout);

      // After the interval one command is let through to probe; meanwhile the others fail at once.
      await sleep(1600);
      t0 = Date.now();
      const probing = await Promise.all(Array.from({ length: 6 }, (_, i) => decide(call('count', { i }, `p${i}`))));
      for (const d of probing) expect(classify(d)).toBe('on_error');
      expect(probing.filter((d) => /Command timed out$/.test(d.applied[0]?.error?.message ?? ''))).toHaveLength(1);
      expect(Date.now() - t0).toBeLessThan(3 * timeout);

      srv.resume();
      // The first decision after the interval probes, is answered, and counting resumes.
      const resumedAt = Date.now();
      let failedAfter = 0;
      while (classify(await decide(call('count', { n: failedAfter }))) === 'on_error') {
        failedAfter++;
        expect(Date.now() - resumedAt, 'counting resumed within the interval and a timeout').toBeLessThan(1500 + 2 * timeout);
        await sleep(20);
      }
      for (let i = 0; i < 5; i++) expect(classify(await decide(call('count', { i })))).toBe('ok');
      expect(await store.settled(20_000)).toBe(true);
      // Exactly: the counters hold what the decisions reported applied, no more, no less.
      expect(normal(await dumpCounters(srv.url, prefix))).toEqual(normal(reportedApplied(all)));
    }, 30_000);

    it('failFastMs 0 turns it off: every command waits for its own timeout', async () => {
      const timeout = 150;
      const { srv, store } = await setup(timeout, { failFastMs: 0 });
      const engine = engineFor(store);
      expect(classify(await engine.decideAsync(call('count')))).toBe('ok');
      srv.pause();
      const t0 = Date.now();
      for (let i = 0; i < 4; i++) expect(classify(await engine.decideAsync(call('count', { i })))).toBe('on_error');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(4 * timeout - 20);
      srv.resume();
      expect(await store.settled(20_000)).toBe(true);
    }, 30_000);

    it('rejects a failFastMs that is not a whole number of milliseconds', () => {
      expect(() => new RedisCounterStore({ url: 'redis://127.0.0.1:1', failFastMs: -1 })).toThrow(/failFastMs/);
    });
  });

  describe('a write the server refuses', () => {
    it('reads succeed and writes fail (maxmemory): writing rules follow on_error, readers decide on the real snapshot', async () => {
      const { srv, store, prefix } = await setup();
      const engine = engineFor(store);
      for (let i = 0; i < 2; i++) expect(classify(await engine.decideAsync(call('count', { same: true })))).toBe('ok');
      expect(await srv.command('CONFIG', 'SET', 'maxmemory', '1')).toBe('+OK\r\n');
      let calls = 0;
      const fp = toolArgsFingerprint('count', { same: true });
      const d = await engine.decideAsync(call('count', { same: true }, 's', { tool_args_fingerprint: () => (calls++, fp) }));
      expect(await srv.command('CONFIG', 'SET', 'maxmemory', '0')).toBe('+OK\r\n');
      expect(classify(d)).toBe('on_error');
      // REPEATED read COUNT = 2 from the store and fired; the writers could not write.
      expect(trace(d)).toEqual(['t/COUNT:errored', 't/REPEATED:fired', 't/TOTAL:errored']);
      expect(d.applied[0]?.error?.message).toMatch(/refused the write: .*OOM/);
      expect(calls).toBe(1); // the provider is asked once, though the occurrence was decided twice ([OAR-FACT-11])
      expect(store.pending).toBe(0); // an error reply is a certain answer: nothing to resolve
      const after = await engine.decideAsync(call('count', { same: true }));
      expect(classify(after)).toBe('ok');
      const inRedis = await dumpCounters(srv.url, prefix);
      expect([...inRedis.values()].sort()).toEqual([3, 3]);
    });
  });
});
