/**
 * `decideAsync` over `RedisCounterStore` against three real topologies side by side, in one run:
 * one server, a Redis Cluster (3 primaries + 3 replicas) and a primary + replica under three
 * Sentinels — and the last two again with `waitReplicas: 1` (WAIT after every write) — at 1, 8
 * and 32 decisions in flight. Every data node keeps an append-only file fsynced every second.
 * Reported: decisions per second (median over interleaved rounds) and p50 / p99 latency of one
 * `decideAsync` (over every decision of every round).
 *
 * The pack is examples/gateway; the stream is tool calls over 64 sessions (so 32 in flight are not
 * held back by the per-session queue), each call made three times, so decisions count, nudge and
 * block; every round and variant uses fresh sessions.
 *
 * Usage: npm run bench:redis-topologies [-- --quick]
 *   --quick  tiny counts (smoke run; numbers mean nothing; bench/results/redis-topologies.json not written)
 * Markdown to stdout, progress to stderr.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileToBundle, formatDiagnostic, loadPackFiles } from '../compiler/index.js';
import { packageRoot } from '../examples/root.js';
import { secretScanner } from '../examples/secret-scanner.js';
import { SEED_CORPUS, corpusDetector, factNames } from '../injection/detector.js';
import { createEngine, type Bundle, type Engine, type Occurrence } from '../runtime/index.js';
import { RedisCounterStore } from '../runtime/redis.js';
import { REDIS_SERVER, startCluster, startSentinel, startStandalone } from './redis-topology.js';
import type { RedisBenchRun } from './redis.js';
import { median } from './stats.js';

export interface TopologyVariant {
  topology: string;
  inFlight: number;
  decisionsPerSecond: number;
  p50us: number;
  p99us: number;
  errored: number;
}

export interface TopologyBenchResult extends RedisBenchRun {
  variants: TopologyVariant[];
}

// The gateway pack's detectors, as examples/gateway/detectors.mjs registers them.
const DETECTORS = { 'detector://secret-scanner': secretScanner, 'detector://injection-corpus': corpusDetector([{ path: SEED_CORPUS }], factNames('acme.gateway')) };
const TOOLS = ['read', 'write', 'bash', 'search'];
const SESSIONS = 64;

function loadGateway(): Bundle {
  const dir = join(packageRoot(), 'examples', 'gateway');
  const r = loadPackFiles({ capability: join(dir, 'capability.yaml'), rules: [join(dir, 'rules.yaml')] });
  if (!r.ok) throw new Error(`examples/gateway did not load:\n${r.diagnostics.map(formatDiagnostic).join('\n')}`);
  return compileToBundle(r.pack, 'compiled');
}

function stream(n: number, tag: string): Occurrence[] {
  return Array.from({ length: n }, (_, i) => {
    const call = Math.floor(i / (3 * SESSIONS)) * SESSIONS + (i % SESSIONS); // each call recurs 3 times
    return {
      anchor: 'tool.pre_invoke',
      session: `${tag}-s${i % SESSIONS}`,
      toolCall: { name: TOOLS[call % TOOLS.length] as string, arguments: { path: `/workspace/f${call}.txt`, n: call } },
    };
  });
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function timeRun(engine: Engine, occs: readonly Occurrence[], inFlight: number, latencies: number[]): Promise<{ seconds: number; errored: number }> {
  let next = 0;
  let errored = 0;
  const t0 = process.hrtime.bigint();
  const worker = async () => {
    while (next < occs.length) {
      const o = occs[next++] as Occurrence;
      const s = process.hrtime.bigint();
      const d = await engine.decideAsync(o);
      latencies.push(Number(process.hrtime.bigint() - s) / 1e3);
      if (d.applied.some((a) => a.outcome === 'errored')) errored++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, errored };
}

export async function runTopologyBench(opts: { quick?: boolean; log?: (line: string) => void } = {}): Promise<TopologyBenchResult> {
  const quick = opts.quick ?? false;
  const n = quick ? 384 : 2304;
  const rounds = quick ? 1 : 3;
  const inFlights = [1, 8, 32];
  const log = opts.log ?? (() => {});
  const load0 = loadavg()[0] ?? NaN;
  const bundle = loadGateway();
  const persist = { appendfsync: 'everysec' } as const;
  log('starting one server, a 3+3 cluster and a primary + replica + 3 Sentinels');
  const [single, cluster, sentinel] = await Promise.all([startStandalone(persist), startCluster(persist), startSentinel(persist)]);
  const stores: RedisCounterStore[] = [];
  try {
    const topologies: { name: string; url: string; waitReplicas: number }[] = [
      { name: 'one server', url: single.url, waitReplicas: 0 },
      { name: 'cluster (3 + 3)', url: cluster.url, waitReplicas: 0 },
      { name: 'cluster, WAIT 1', url: cluster.url, waitReplicas: 1 },
      { name: 'Sentinel (1 + 1, 3 sentinels)', url: sentinel.url, waitReplicas: 0 },
      { name: 'Sentinel, WAIT 1', url: sentinel.url, waitReplicas: 1 },
    ];
    const variants: { topology: string; inFlight: number; engine: Engine; seconds: number[]; latencies: number[]; errored: number }[] = [];
    for (const [ti, t] of topologies.entries()) {
      for (const k of inFlights) {
        const store = new RedisCounterStore({ url: t.url, prefix: `bench${ti}x${k}:`, ttlSeconds: 600, timeoutMs: 1000, waitReplicas: t.waitReplicas, waitTimeoutMs: 500 });
        stores.push(store);
        await store.ready();
        variants.push({ topology: t.name, inFlight: k, engine: createEngine(bundle, { detectors: DETECTORS, asyncCounters: store }), seconds: [], latencies: [], errored: 0 });
      }
    }
    // Every topology decides as the in-memory engine does before anything is timed.
    const memory = createEngine(bundle, { detectors: DETECTORS });
    for (const o of stream(3 * SESSIONS, 'check')) {
      const want = JSON.stringify(memory.decide(o));
      for (const v of variants.filter((x) => x.inFlight === 1)) {
        const got = JSON.stringify(await v.engine.decideAsync(o));
        if (got !== want) throw new Error(`bench: ${v.topology} decided ${got}, decide decided ${want}`);
      }
    }
    // One untimed warm-up per variant (the JIT, each store's first touch of its slots).
    for (const [i, v] of variants.entries()) await timeRun(v.engine, stream(Math.min(n, 6 * SESSIONS), `warm${i}`), v.inFlight, []);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const [i, v] of order.entries()) {
        const r = await timeRun(v.engine, stream(n, `r${round}v${i}k${v.inFlight}`), v.inFlight, v.latencies);
        v.seconds.push(r.seconds);
        v.errored += r.errored;
      }
      log(`round ${round + 1}/${rounds}: ${variants.map((v) => `${v.topology}@${v.inFlight} ${Math.round(n / (v.seconds.at(-1) ?? 1))}/s`).join(', ')}`);
    }
    const version = /v=(\S+)/.exec(spawnSync(REDIS_SERVER, ['--version']).stdout?.toString() ?? '')?.[1] ?? 'unknown';
    return {
      quick,
      node: process.version,
      cpu: `${cpus()[0]?.model ?? 'unknown cpu'} × ${cpus().length}`,
      redis: version,
      load: [load0, loadavg()[0] ?? NaN],
      decisions: n,
      rounds,
      variants: variants.map((v) => {
        const sorted = [...v.latencies].sort((a, b) => a - b);
        return { topology: v.topology, inFlight: v.inFlight, decisionsPerSecond: n / median(v.seconds), p50us: percentile(sorted, 50), p99us: percentile(sorted, 99), errored: v.errored };
      }),
    };
  } finally {
    await Promise.all(stores.map((s) => s.close()));
    await Promise.all([single.stop(), cluster.stop(), sentinel.stop()]);
  }
}

export function renderTopologies(r: TopologyBenchResult): string {
  const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
  const ms = (us: number) => (us / 1000).toFixed(2);
  const names = [...new Set(r.variants.map((v) => v.topology))];
  const cell = (t: string, k: number) => {
    const v = r.variants.find((x) => x.topology === t && x.inFlight === k);
    return v === undefined ? '' : `${fmt(v.decisionsPerSecond)} (${ms(v.p50us)} / ${ms(v.p99us)})`;
  };
  const errored = r.variants.reduce((a, v) => a + v.errored, 0);
  return [
    `## decideAsync against Redis topologies${r.quick ? ' (--quick: not meaningful)' : ''}`,
    '',
    `examples/gateway pack, ${fmt(r.decisions)} tool calls per variant and round over ${SESSIONS} sessions, median of ${r.rounds} interleaved rounds; ` +
      `${r.node} on ${r.cpu} (load ${r.load[0].toFixed(1)} → ${r.load[1].toFixed(1)}); redis-server ${r.redis}, every node on loopback, AOF fsync every second. ` +
      `Cells: decisions/s (p50 / p99 ms per decideAsync). Errored decisions: ${errored}.`,
    '',
    '| topology | 1 in flight | 8 in flight | 32 in flight |',
    '|---|---:|---:|---:|',
    ...names.map((t) => `| ${t} | ${cell(t, 1)} | ${cell(t, 8)} | ${cell(t, 32)} |`),
  ].join('\n');
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  const r = await runTopologyBench({ quick, log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(`${renderTopologies(r)}\n`);
  if (!quick) {
    const dir = join(packageRoot(), 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'redis-topologies.json'), `${JSON.stringify(r, null, 2)}\n`);
  }
}
