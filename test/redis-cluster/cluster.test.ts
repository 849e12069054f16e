/**
 * The Redis counter store on a REAL Redis Cluster — 3 primaries, 3 replicas, started by
 * topology.ts from Debian's redis-server and redis-cli — keeps every guarantee it states for one
 * server ([OAR-FIRE-5], [OAR-FIRE-6], [OAR-FIRE-9]):
 *
 * - every command it sends touches one hash slot (the server never answers CROSSSLOT, and every
 *   command's keys hash, by the server's own CLUSTER KEYSLOT, to one slot);
 * - concurrent decisions of one session in two processes are serialisable;
 * - while a slot migrates (MOVED / ASK / TRYAGAIN), a primary is partitioned away (SIGSTOP) or
 *   killed (SIGKILL) and failed over, a decision whose counters cannot be read or written takes
 *   on_error, nothing throws out of decideAsync, the client finds the new topology by itself, and
 *   the counters end up holding exactly the increments the decisions reported applied.
 *
 * Each scenario prints decisions, errored decisions, increments reported and held (README figures).
 */
import { Redis, type Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../runtime/index.js';
import { RedisCounterStore } from '../../runtime/redis.js';
import { keySlot } from '../../runtime/redis-slots.js';
import { call, engineFor, ensureBuilt, ESCALATION, uniquePrefix } from '../redis/pack.js';
import { Replica } from '../redis/replica.js';
import { ensureBuilt as ensureBuiltDirs } from '../support/build.js';
import { PACK_ARGS, call as http, serve } from '../support/serve.js';
import { cmd, replicaInSync, startCluster, waitFor, type RedisClusterTopology } from './topology.js';
import { describeTopology, dumpNodes, newTally, report, runUntil, sum } from './workload.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeTopology('a real Redis Cluster (3 primaries, 3 replicas)', () => {
  let c: RedisClusterTopology;
  const stores: RedisCounterStore[] = [];
  const replicas: Replica[] = [];

  beforeAll(async () => {
    ensureBuilt();
    c = await startCluster();
  });

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.exit()));
    await Promise.all(stores.map((s) => s.close()));
    await c?.stop();
  });

  async function newStore(prefix: string, extra: Partial<ConstructorParameters<typeof RedisCounterStore>[0]> = {}): Promise<RedisCounterStore> {
    const s = new RedisCounterStore({ url: c.url, prefix, ttlSeconds: 600, ...extra });
    stores.push(s);
    await s.ready();
    expect(s.clustered).toBe(true);
    return s;
  }

  const primaries = async () => (await c.nodes()).filter((n) => n.role === 'master' && !n.failed && n.slots.length > 0).map((n) => n.port);
  const until = (ms: number) => sleep(ms);

  /** `n` session names whose keys all hash to `slot`. */
  function sessionsInSlot(store: RedisCounterStore, slot: number, n: number): string[] {
    const out: string[] = [];
    for (let i = 0; out.length < n; i++) if (store.sessionSlot(`m${i}`) === slot) out.push(`m${i}`);
    return out;
  }

  it("computes every key's hash slot as the server does (CLUSTER KEYSLOT)", async () => {
    const keys = ['foo', '123456789', '{user1000}.following', 'a{}b', '{}x', '{a', 'x{b}{c}', 'ü', ...Array.from({ length: 40 }, (_, i) => `oar:{${Buffer.from(`s${i}`).toString('hex')}}:t/X`)];
    for (const k of keys) expect(keySlot(k), k).toBe(Number(await cmd(c.ports[0] as number, 'CLUSTER', 'KEYSLOT', k)));
  });

  it('sends no command that crosses slots: the server counts no CROSSSLOT, and every command keys one slot', async () => {
    const prefix = uniquePrefix('slots');
    const a = await newStore(prefix, { waitReplicas: 1, waitTimeoutMs: 200, timeoutMs: 300 });
    const b = await newStore(prefix, { timeoutMs: 300 });
    // Every command both stores send, with its keys.
    const sent: { name: string; keys: (string | Buffer)[] }[] = [];
    for (const s of [a, b]) {
      const cl = s.redis as Cluster;
      const send = cl.sendCommand.bind(cl);
      cl.sendCommand = ((command: { name: string; getKeys(): (string | Buffer)[] }, ...rest: unknown[]) => {
        sent.push({ name: command.name, keys: command.getKeys() });
        return (send as (...x: unknown[]) => unknown)(command, ...rest);
      }) as typeof cl.sendCommand;
    }
    const crossslot = async () => {
      let n = 0;
      for (const p of c.ports) n += Number(/errorstat_CROSSSLOT:count=(\d+)/.exec(await cmd(p, 'INFO', 'errorstats'))?.[1] ?? 0);
      return n;
    };
    const before = await crossslot();
    // Reads, writes with WAIT, conflicts (two stores racing on the same sessions), doubtful writes
    // and their resolution (one primary paused for 600 ms — less than the node timeout, so no failover).
    const sessions = Array.from({ length: 24 }, (_, i) => `x${i}`);
    const ta = newTally();
    const tb = newTally();
    const target = await c.primaryOf(a.sessionSlot('x0'));
    const finished = { done: false };
    const stopped = waitFor('the pauses', 60_000, async () => finished.done);
    const work = Promise.all([runUntil(engineFor(a), sessions, 6, stopped, ta), runUntil(engineFor(b), sessions, 6, stopped, tb)]);
    await sleep(500);
    // Pause until some write was caught in flight (doubtful), a few times at most.
    const doubtful = () => a.pending + b.pending + a.resolutions.undone + a.resolutions.fenced + b.resolutions.undone + b.resolutions.fenced;
    for (let i = 0; i < 8 && doubtful() === 0; i++) {
      c.pause(target);
      await sleep(500);
      c.resume(target);
      await sleep(300);
    }
    await sleep(300);
    finished.done = true;
    await work;
    expect(await a.settled(10_000)).toBe(true);
    expect(await b.settled(10_000)).toBe(true);
    expect(ta.thrown.concat(tb.thrown)).toEqual([]);
    expect(ta.errored + tb.errored, 'decisions errored while paused').toBeGreaterThan(0);
    expect(doubtful(), 'writes made doubtful by a pause, then resolved').toBeGreaterThan(0);
    expect(a.conflicts + b.conflicts, 'version conflicts').toBeGreaterThan(0);

    // The server's own count of CROSSSLOT replies did not move.
    expect(await crossslot()).toBe(before);
    // And by the server's slot function, every command keyed one slot.
    const names = new Set(sent.map((s) => s.name));
    for (const n of ['eval', 'wait']) expect(names, `the stores sent ${n}`).toContain(n);
    const slotOf = new Map<string, number>();
    const probe = new Redis({ host: '127.0.0.1', port: c.ports[0] as number, lazyConnect: true });
    await probe.connect();
    try {
      for (const s of sent) {
        const slots = new Set<number>();
        for (const k of s.keys) {
          const hexKey = Buffer.from(k).toString('hex');
          let slot = slotOf.get(hexKey);
          if (slot === undefined) slotOf.set(hexKey, (slot = Number(await probe.call('CLUSTER', 'KEYSLOT', Buffer.from(k)))));
          slots.add(slot);
        }
        expect(slots.size, `${s.name} with keys ${s.keys.map(String).join(' ')}`).toBeLessThanOrEqual(1);
      }
      // The check can fail: a command keying two sessions is refused with CROSSSLOT and counted.
      await expect(probe.call('EVAL', 'return 1', 2, a.versionKey('x0'), a.versionKey('x1'))).rejects.toThrow(/CROSSSLOT/);
    } finally {
      probe.disconnect();
    }
    expect(await crossslot()).toBe(before + 1);
    const held = await dumpNodes(await primaries(), prefix);
    const reported = new Map([...ta.reported]);
    for (const [k, v] of tb.reported) reported.set(k, (reported.get(k) ?? 0) + v);
    report('cluster, two stores racing, one primary paused (500 ms, below the node timeout)', { ...ta, decisions: ta.decisions + tb.decisions, errored: ta.errored + tb.errored, reported, errors: new Map([...ta.errors, ...tb.errors]) }, held, `, ${sent.length} commands checked`);
    expect(sum(held)).toBe(sum(reported));
    expect([...held].filter(([, v]) => v !== 0).sort()).toEqual([...reported].filter(([, v]) => v !== 0).sort());
  });

  describe('two processes deciding against the cluster', () => {
    it('concurrent identical calls of one session, split across two processes, escalate exactly as sequential calls', async () => {
      // On a loaded machine one process may finish before the other starts, and then nothing
      // races: run again (fresh keys) until the version check has turned writes back, 4 times at most.
      let conflicts = 0;
      for (let attempt = 0; attempt < 4 && conflicts === 0; attempt++) conflicts = await race();
      expect(conflicts).toBeGreaterThan(0);
    });

    async function race(): Promise<number> {
      const pair = [new Replica(), new Replica()] as const;
      replicas.push(...pair);
      const prefix = uniquePrefix('procs');
      await Promise.all(pair.map((r) => r.init(c.url, prefix)));
      // 40 sessions (spread over the three primaries), 10 identical calls each, split evenly
      // between the processes and all in flight at once ([OAR-FIRE-6], [OAR-FIRE-11]).
      const sessions = Array.from({ length: 40 }, (_, i) => `p${i}`);
      const mine = () => sessions.flatMap((session) => Array.from({ length: 5 }, () => ({ session, tool: 'esc', args: { same: true } })));
      const [ra, rb] = await Promise.all([pair[0].run(mine(), 200, true), pair[1].run(mine(), 200, true)]);
      const by = new Map<string, string[]>();
      for (const r of [ra, rb]) {
        (r.decisions as Decision[]).forEach((d, i) => {
          const s = (mine()[i] as { session: string }).session;
          by.set(s, [...(by.get(s) ?? []), d.decision]);
        });
      }
      const sorted = (xs: readonly string[]) => [...xs].sort();
      for (const s of sessions) expect(sorted(by.get(s) ?? []), s).toEqual(sorted(ESCALATION));
      expect(ra.errored + rb.errored).toBe(0);
      const held = await dumpNodes(await primaries(), prefix);
      expect(held.size).toBe(sessions.length);
      expect(new Set(held.values())).toEqual(new Set([2]));
      // The sessions really were spread over every primary, and the processes did race.
      const owners = new Set(await Promise.all(sessions.map((s) => c.primaryOf(keySlot(Buffer.from(s).toString('hex'))))));
      expect(owners.size).toBe(3);
      console.log(`cluster, two processes: ${ra.count + rb.count} concurrent same-session decisions over ${sessions.length} sessions, ${ra.conflicts + rb.conflicts} version conflicts re-evaluated, every session escalated none, nudge, block × 8`);
      return ra.conflicts + rb.conflicts;
    }

    it('10 identical calls in Promise.all in one process decide none, nudge, block × 8', async () => {
      const engine = engineFor(await newStore(uniquePrefix('inproc')));
      const all = await Promise.all(Array.from({ length: 10 }, () => engine.decideAsync(call('esc', { same: 1 }, 'one'))));
      expect(all.map((d) => d.decision)).toEqual(ESCALATION);
    });
  });

  it('two `oarc serve --redis redis+cluster://…` processes keep one counter', async () => {
    ensureBuiltDirs(['bin', 'compiler', 'runtime', 'packtest', 'watch', 'serve', 'injection', 'examples']);
    const args = [...PACK_ARGS, '--redis', c.url, '--redis-prefix', 'serve:', '--redis-wait-replicas', '1'];
    const [a, b] = await Promise.all([serve(args), serve(args)]);
    try {
      const occ = { anchor: 'tool.pre_invoke', session_id: 'shared', tool_call: { name: 'grep', arguments: { pattern: 'x' } } };
      const effects: string[] = [];
      for (const s of [a, b, a, b]) effects.push(((await http(s.url, '/v1/decide', { body: occ })).json as { decision: string }).decision);
      // Alone, each process would have seen two calls: none, nudge. Together they see four.
      expect(effects).toEqual(['none', 'nudge', 'block', 'block']);
      expect((await http(a.url, '/metrics')).text).toMatch(/^oarc_store_errors_total 0$/m);
    } finally {
      expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
    }
  });

  it('a slot migrated mid-run (CLUSTER SETSLOT IMPORTING / MIGRATING, MIGRATE key by key): counts stay exact', async () => {
    const prefix = uniquePrefix('migrate');
    const store = await newStore(prefix, { timeoutMs: 500 });
    const slot = store.sessionSlot('mig');
    const moving = sessionsInSlot(store, slot, 6);
    const sessions = [...moving, ...Array.from({ length: 6 }, (_, i) => `o${i}`)];
    const from = await c.primaryOf(slot);
    const to = (await primaries()).find((p) => p !== from) as number;
    const id = async (port: number) => (await cmd(port, 'CLUSTER', 'MYID')).trim();
    const [fromId, toId] = [await id(from), await id(to)];
    const t = newTally();
    const stop = { done: false };
    const stopped = waitFor('the migration', 60_000, async () => stop.done);
    const work = runUntil(engineFor(store), sessions, 6, stopped.then(() => sleep(500)), t);
    await sleep(400);
    const src = new Redis({ host: '127.0.0.1', port: from });
    let moved = 0;
    try {
      await cmd(to, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
      await cmd(from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
      // One key at a time, with pauses, so decisions meet the slot half-moved (ASK, TRYAGAIN).
      for (;;) {
        const keys = (await src.callBuffer('CLUSTER', 'GETKEYSINSLOT', slot, 1)) as Buffer[];
        if (keys.length === 0) break;
        await src.callBuffer('MIGRATE', '127.0.0.1', to, '', 0, 5000, 'KEYS', ...keys);
        moved += keys.length;
        await sleep(15);
      }
      for (const p of [to, from, ...(await primaries()).filter((p) => p !== to && p !== from)]) await cmd(p, 'CLUSTER', 'SETSLOT', slot, 'NODE', toId);
    } finally {
      src.disconnect();
      stop.done = true;
    }
    await work;
    expect(await store.settled(10_000)).toBe(true);
    expect(t.thrown).toEqual([]);
    expect(moved).toBeGreaterThan(20);
    expect(await c.primaryOf(slot)).toBe(to);
    const held = await dumpNodes(await primaries(), prefix);
    report('cluster, one slot migrated mid-run', t, held, `, ${moved} keys moved`);
    expect([...held].filter(([, v]) => v !== 0).sort()).toEqual([...t.reported].filter(([, v]) => v !== 0).sort());
    // The moved sessions are counted on the new primary, and the store still decides there.
    const after = newTally();
    await runUntil(engineFor(store), moving, 2, until(300), after);
    expect(after.errored).toBe(0);
    expect(after.decisions).toBeGreaterThan(0);
  });

  it("a shard that lost the store's keys is a detected loss, in the slot's own epoch, for running and new stores alike", async () => {
    const prefix = uniquePrefix('loss');
    const a = await newStore(prefix);
    const engine = engineFor(a);
    const sessions = Array.from({ length: 12 }, (_, i) => `l${i}`);
    for (const session of sessions) expect((await engine.decideAsync(call('count', {}, session))).applied.some((t) => t.outcome === 'errored')).toBe(false);
    const victim = sessions[0] as string;
    const shard = await c.primaryOf(a.sessionSlot(victim));
    // The shard loses every key of this deployment (as a primary restarted empty would).
    const node = new Redis({ host: '127.0.0.1', port: shard });
    try {
      let cursor = '0';
      do {
        const [next, keys] = await node.scanBuffer(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = String(next);
        for (const k of keys) await node.del(k); // one by one: they are in many slots
      } while (cursor !== '0');
    } finally {
      node.disconnect();
    }
    const lost = await engine.decideAsync(call('count', {}, victim));
    expect(lost.decision).toBe('block'); // TOTAL is fail_closed ([OAR-FIRE-9])
    expect(a.dataLoss?.slot).toBe(a.sessionSlot(victim));
    expect(a.dataLoss?.found.id).toBeNull();
    // A store that starts now finds the slot marked in the root record but without its epoch — or,
    // when the root record itself was on the lost shard, every other slot's epoch under another id.
    const b = await newStore(prefix);
    const eb = engineFor(b);
    // (The other sessions first: with the root lost, the lost shard's slots look new until then.)
    for (const session of sessions.slice(1)) await eb.decideAsync(call('count', {}, session));
    expect((await eb.decideAsync(call('count', {}, victim))).decision).toBe('block');
    expect(b.dataLoss).toBeDefined();
    // An operator acknowledges: counting resumes from what the shard holds (nothing).
    await a.acknowledgeDataLoss();
    const again = await engine.decideAsync(call('count', {}, victim));
    expect(again.applied.some((t) => t.outcome === 'errored')).toBe(false);
    expect(again.counters['t/TOTAL']).toEqual({ fire_count: 1, breaker_count: 0 });
  });

  it("a slot's record that lost one store's own writes: that store finds it whatever another wrote there, marks the slot for the other, and one acknowledgement clears every mark", async () => {
    const prefix = uniquePrefix('ownseq');
    const a = await newStore(prefix);
    const b = await newStore(prefix);
    const [ea, eb] = [engineFor(a), engineFor(b)];
    const errored = (d: Decision) => d.applied.some((t) => t.outcome === 'errored');
    const slot = a.sessionSlot('own');
    const [sa, sb] = sessionsInSlot(a, slot, 2) as [string, string];
    for (let i = 0; i < 3; i++) expect(errored(await ea.decideAsync(call('count', {}, sa)))).toBe(false);
    // The slot's record goes back to before A's last two writes (as a restore of the shard would
    // put it), while B's writes there carry the slot's write sequence past what A saw.
    await (a.redis as Cluster).set(a.ownSequenceKey(sa), '1');
    for (let i = 0; i < 5; i++) expect(errored(await eb.decideAsync(call('count', { i }, sb)))).toBe(false);
    expect(b.dataLoss).toBeUndefined();
    const d = await ea.decideAsync(call('count', {}, sa));
    expect(d.decision).toBe('block'); // TOTAL is fail_closed
    expect(a.dataLoss?.reason).toBe('store-sequence');
    expect(a.dataLoss?.slot).toBe(slot);
    expect(a.dataLoss?.own).toEqual({ expected: 3, found: 1 });
    // B refuses in that slot from its next call, and so does a store started now (the root is marked).
    expect(errored(await eb.decideAsync(call('count', {}, sb)))).toBe(true);
    expect(b.dataLoss?.reason).toBe('marked');
    const late = await newStore(prefix);
    expect(errored(await engineFor(late).decideAsync(call('count', {}, 'elsewhere')))).toBe(true);
    // One acknowledgement: every store counts again, from what the slot holds.
    await b.acknowledgeDataLoss();
    for (const [e, session] of [[ea, sa], [eb, sb], [engineFor(late), 'elsewhere']] as const) expect(errored(await e.decideAsync(call('count', {}, session))), session).toBe(false);
    expect([a.dataLoss, b.dataLoss, late.dataLoss]).toEqual([undefined, undefined, undefined]);
  });

  /**
   * A primary's failover, then its return as a replica. With `waitReplicas: 1` a decision reports
   * an increment applied only once a replica holds it, so the promoted replica has every one; while
   * the shard has no replica (its old primary is down) its writes cannot reach one, and take on_error.
   */
  async function failover(kind: 'partition' | 'kill'): Promise<void> {
    const prefix = uniquePrefix(kind);
    const store = await newStore(prefix, { waitReplicas: 1, waitTimeoutMs: 150, timeoutMs: 400 });
    const sessions = Array.from({ length: 18 }, (_, i) => `${kind}${i}`);
    const victim = await c.primaryOf(store.sessionSlot(sessions[0] as string));
    const victimId = (await cmd(victim, 'CLUSTER', 'MYID')).trim();
    const replica = (await c.nodes()).find((n) => n.master === victimId)?.port as number;
    expect(replica).toBeGreaterThan(0);
    const t = newTally();
    const recovered = { done: false };
    const work = runUntil(engineFor(store), sessions, 6, waitFor('recovery', 60_000, async () => recovered.done), t);
    await sleep(500);
    const t0 = Date.now();
    if (kind === 'kill') await c.kill9(victim);
    else c.pause(victim);
    await waitFor(`the replica on ${replica} to be promoted`, 30_000, async () => (await c.nodes(replica)).find((n) => n.port === replica)?.role === 'master');
    const promotedMs = Date.now() - t0;
    // The old primary comes back (restarted empty, or resumed) and follows the promoted replica.
    if (kind === 'kill') await c.restart(victim);
    else c.resume(victim);
    await waitFor('the old primary to rejoin as a replica, in sync', 30_000, () => replicaInSync(victim));
    await waitFor('the cluster to agree again', 30_000, () => c.healthy());
    await sleep(300);
    recovered.done = true;
    await work;
    expect(await store.settled(10_000)).toBe(true);
    expect(t.thrown).toEqual([]);
    expect(t.errored).toBeGreaterThan(0);
    expect(store.dataLoss).toBeUndefined();
    const held = await dumpNodes(await primaries(), prefix);
    report(`cluster, primary ${kind === 'kill' ? 'killed (SIGKILL)' : 'partitioned (SIGSTOP)'} and failed over, waitReplicas 1`, t, held, `, promoted after ${promotedMs} ms, ${store.unreplicated} writes short of a replica undone, doubtful writes ${store.resolutions.undone} undone / ${store.resolutions.fenced} fenced`);
    expect([...held].filter(([, v]) => v !== 0).sort()).toEqual([...t.reported].filter(([, v]) => v !== 0).sort());
    // The client found the new topology by itself: every session decides again, nothing errs.
    const after = newTally();
    await runUntil(engineFor(store), sessions, 4, until(400), after);
    expect(after.errored, [...after.errors].join('; ')).toBe(0);
    expect(after.decisions).toBeGreaterThan(0);
  }

  it('a primary partitioned away (SIGSTOP) past the node timeout is failed over; counts stay exact', () => failover('partition'));
  it('a primary killed (SIGKILL) mid-run is failed over; counts stay exact', () => failover('kill'));
});
