/**
 * Counters shared across replicas: decisions per second with the Redis counter store
 * (`decideAsync` over `RedisCounterStore`) against the in-memory store (`decide` over
 * `MemoryCounterStore`, and `decideAsync` over an in-memory `AsyncCounterStore`, which isolates
 * the cost of the async path from the cost of the network), and the round trips per occurrence
 * ([OAR-FIRE-6]: at most 2 when a selected rule reads or writes a counter, 0 when none does).
 *
 * The pack is examples/gateway (COUNT_REPEATS counts every tool call under its fingerprint;
 * NUDGE_REPEAT and BLOCK_REPEAT read that count). The stream: tool calls over 16 sessions, each
 * call repeated, so decisions nudge and block as the counts grow; every round uses fresh sessions
 * so every variant starts from zero counters. The Redis store talks to a redis-server this
 * benchmark starts on loopback (append-only file, fsync every second — a common production
 * setting), over one connection per store.
 *
 * Usage: npm run bench:redis [-- --quick] [-- --json]
 *   --quick  tiny counts (smoke run; numbers mean nothing; bench/results/redis.json not written)
 * Markdown to stdout, progress to stderr; writes bench/results/redis.json. Numbers are medians
 * over interleaved rounds in one process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileToBundle, formatDiagnostic, loadPackFiles } from '../compiler/index.js';
import { packageRoot } from '../examples/root.js';
import { secretScanner } from '../examples/secret-scanner.js';
import { SEED_CORPUS, corpusDetector, factNames } from '../injection/detector.js';
import type { AsyncCounterStore } from '../runtime/async-counters.js';
import { MemoryCounterStore, type CounterKey, type CounterOp, type CounterValues } from '../runtime/counters.js';
import { createEngine, type Bundle, type Engine, type Occurrence } from '../runtime/index.js';
import { RedisCounterStore } from '../runtime/redis.js';
import { median } from './stats.js';

export interface RedisBenchOptions {
  quick?: boolean;
  /** Decisions per round per variant. */
  decisions?: number;
  rounds?: number;
  /** Decisions in flight for each Redis variant. */
  inFlight?: readonly number[];
  log?: (line: string) => void;
}

export interface RedisBenchVariant {
  name: string;
  store: string;
  call: string;
  inFlight: number;
  decisionsPerSecond: number;
  /** Median wall time per decision, in microseconds (for the sequential variants, the latency). */
  usPerDecision: number;
}

/** What every Redis benchmark run records about itself. */
export interface RedisBenchRun {
  quick: boolean;
  node: string;
  cpu: string;
  redis: string;
  /** 1-minute load average at the start and at the end: on a shared machine, read the ratios. */
  load: [number, number];
  decisions: number;
  rounds: number;
}

export interface RedisBenchResult extends RedisBenchRun {
  variants: RedisBenchVariant[];
  roundTrips: {
    /** A tool call whose selected rules read and write a counter: the first call (read + write). */
    counterOccurrence: number;
    /** Mean and maximum over the whole stream (a blocked repeat reads but does not write). */
    streamMean: number;
    streamMax: number;
    /** An occurrence whose selected rules touch no counter. */
    noCounterOccurrence: number;
  };
}

/** `decideAsync` over memory: the async path without a network. */
class MemoryAsyncStore implements AsyncCounterStore {
  private readonly mem = new MemoryCounterStore();
  async readMany(keys: readonly CounterKey[]): Promise<CounterValues[]> {
    return keys.map((k) => ({ ...this.mem.read(k) }));
  }
  async applyMany(ops: readonly CounterOp[]): Promise<void> {
    this.mem.apply(ops);
  }
}

// ---------------------------------------------------------------------------------------------
// A redis-server of our own on a free loopback port.

interface Server {
  url: string;
  version: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => ok(typeof a === 'object' && a !== null ? a.port : 0));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    sock.setTimeout(500, () => (sock.destroy(), ok(false)));
    sock.on('connect', () => sock.write('*1\r\n$4\r\nPING\r\n'));
    sock.on('data', (d) => (sock.end(), ok(d.toString().startsWith('+PONG'))));
    sock.on('error', () => ok(false));
  });
}

async function startServer(): Promise<Server> {
  const bin = process.env.OARC_REDIS_SERVER ?? 'redis-server';
  const dir = mkdtempSync(join(tmpdir(), 'oarc-bench-redis-'));
  const port = await freePort();
  let out = '';
  const proc: ChildProcess = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--loglevel', 'warning'], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout?.on('data', (d: Buffer) => void (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => void (out += d.toString()));
  let failed: Error | undefined;
  proc.on('error', (e) => void (failed = new Error(`cannot run ${bin} (install Debian's redis-server, or set OARC_REDIS_SERVER): ${e.message}`)));
  proc.on('exit', (code) => void (failed ??= new Error(`${bin} exited (${code}): ${out}`)));
  const deadline = Date.now() + 10_000;
  while (!(await ping(port))) {
    if (failed) throw failed;
    if (Date.now() > deadline) throw new Error(`${bin} did not answer on port ${port}: ${out}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const version = await new Promise<string>((ok) => {
    const v = spawn(bin, ['--version']);
    let s = '';
    v.stdout.on('data', (d: Buffer) => void (s += d.toString()));
    v.on('close', () => ok(/v=(\S+)/.exec(s)?.[1] ?? 'unknown'));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    version,
    async stop() {
      if (proc.exitCode === null) {
        const gone = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------

function loadGateway(): Bundle {
  const dir = join(packageRoot(), 'examples', 'gateway');
  const r = loadPackFiles({ capability: join(dir, 'capability.yaml'), rules: [join(dir, 'rules.yaml')] });
  if (!r.ok) throw new Error(`examples/gateway did not load:\n${r.diagnostics.map(formatDiagnostic).join('\n')}`);
  return compileToBundle(r.pack, 'compiled');
}

// The gateway pack's detectors, as examples/gateway/detectors.mjs registers them.
const DETECTORS = { 'detector://secret-scanner': secretScanner, 'detector://injection-corpus': corpusDetector([{ path: SEED_CORPUS }], factNames('acme.gateway')) };
const TOOLS = ['read', 'write', 'bash', 'search'];

/** Round `round`'s stream: fresh sessions, each tool call made three times. */
function stream(n: number, round: number, variant: string): Occurrence[] {
  return Array.from({ length: n }, (_, i) => {
    const call = Math.floor(i / 48) * 16 + (i % 16); // each call recurs at i, i+16, i+32
    return {
      anchor: 'tool.pre_invoke',
      session: `${variant}-r${round}-s${i % 16}`,
      toolCall: { name: TOOLS[call % TOOLS.length] as string, arguments: { path: `/workspace/f${call}.txt`, n: call } },
    };
  });
}

async function timeRun(occs: readonly Occurrence[], inFlight: number, decide: (o: Occurrence) => unknown): Promise<number> {
  const t0 = process.hrtime.bigint();
  if (inFlight === 0) {
    for (const o of occs) decide(o);
  } else {
    let next = 0;
    const worker = async () => {
      while (next < occs.length) await decide(occs[next++] as Occurrence);
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
  }
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

export async function runRedisBench(opts: RedisBenchOptions = {}): Promise<RedisBenchResult> {
  const quick = opts.quick ?? false;
  const n = opts.decisions ?? (quick ? 480 : 9600);
  const rounds = opts.rounds ?? (quick ? 2 : 7);
  const inFlight = opts.inFlight ?? [1, 8, 32];
  const log = opts.log ?? (() => {});
  const load0 = loadavg()[0] ?? NaN;
  const bundle = loadGateway();
  const server = await startServer();
  const stores: RedisCounterStore[] = [];
  try {
    const redisStore = async (tag: string) => {
      const s = new RedisCounterStore({ url: server.url, prefix: `bench:${tag}:`, ttlSeconds: 600 });
      stores.push(s);
      await s.ready();
      return s;
    };
    const memory = createEngine(bundle, { detectors: DETECTORS });
    const memoryAsync = createEngine(bundle, { detectors: DETECTORS, asyncCounters: new MemoryAsyncStore() });
    const variants: { name: string; store: string; call: string; inFlight: number; engine: Engine; run: (occs: Occurrence[]) => Promise<number> }[] = [
      { name: 'memory-sync', store: 'in-memory', call: 'decide', inFlight: 1, engine: memory, run: (o) => timeRun(o, 0, (x) => memory.decide(x)) },
      { name: 'memory-async', store: 'in-memory (async)', call: 'decideAsync', inFlight: 1, engine: memoryAsync, run: (o) => timeRun(o, 1, (x) => memoryAsync.decideAsync(x)) },
    ];
    for (const k of inFlight) {
      const engine = createEngine(bundle, { detectors: DETECTORS, asyncCounters: await redisStore(`in${k}`) });
      variants.push({ name: `redis-${k}`, store: 'Redis', call: 'decideAsync', inFlight: k, engine, run: (o) => timeRun(o, k, (x) => engine.decideAsync(x)) });
    }

    // The decisions must agree before they are timed.
    const check = stream(96, -1, 'check');
    for (const o of check) {
      const want = JSON.stringify(memory.decide(o));
      for (const v of variants.slice(1)) {
        const got = JSON.stringify(await v.engine.decideAsync(o));
        if (got !== want) throw new Error(`bench: ${v.name} decided ${got}, decide decided ${want}`);
      }
    }

    const seconds = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) {
        const s = await v.run(stream(n, round, v.name));
        seconds.get(v.name)?.push(s);
      }
      log(`round ${round + 1}/${rounds}: ${variants.map((v) => `${v.name} ${Math.round(n / (seconds.get(v.name)?.at(-1) ?? 1))}/s`).join(', ')}`);
    }

    // Round trips per occurrence, measured on the store's own count.
    const probe = await redisStore('probe');
    const engine = createEngine(bundle, { detectors: DETECTORS, asyncCounters: probe });
    const trips = async (o: Occurrence) => {
      const t0 = probe.roundTrips;
      await engine.decideAsync(o);
      return probe.roundTrips - t0;
    };
    const first = await trips({ anchor: 'tool.pre_invoke', session: 'probe-first', toolCall: { name: 'read', arguments: { path: '/workspace/a' } } });
    const perOcc: number[] = [];
    for (const o of stream(quick ? 96 : 960, 0, 'probe')) perOcc.push(await trips(o));
    const none = await trips({ anchor: 'content.output', session: 'probe-none', content: 'a short answer' });

    return {
      quick,
      node: process.version,
      cpu: `${cpus()[0]?.model ?? 'unknown cpu'} × ${cpus().length}`,
      redis: server.version,
      load: [load0, loadavg()[0] ?? NaN],
      decisions: n,
      rounds,
      variants: variants.map((v) => {
        const s = median(seconds.get(v.name) ?? []);
        return { name: v.name, store: v.store, call: v.call, inFlight: v.inFlight, decisionsPerSecond: n / s, usPerDecision: (s / n) * 1e6 };
      }),
      roundTrips: {
        counterOccurrence: first,
        streamMean: perOcc.reduce((a, b) => a + b, 0) / perOcc.length,
        streamMax: Math.max(...perOcc),
        noCounterOccurrence: none,
      },
    };
  } finally {
    await Promise.all(stores.map((s) => s.close()));
    await server.stop();
  }
}

export function renderRedis(r: RedisBenchResult): string {
  const base = r.variants[0]?.decisionsPerSecond ?? NaN;
  const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
  const lines = [
    `## Counters shared across replicas: Redis vs in-memory${r.quick ? ' (--quick: not meaningful)' : ''}`,
    '',
    `examples/gateway pack, ${fmt(r.decisions)} tool calls per round (16 sessions, each call made 3 times: counts, nudges, blocks), ` +
      `median of ${r.rounds} interleaved rounds; ${r.node} on ${r.cpu} (load ${r.load[0].toFixed(1)} → ${r.load[1].toFixed(1)}); ` +
      `redis-server ${r.redis} on loopback (AOF, fsync every second).`,
    '',
    '| store | call | in flight | decisions/s | µs/decision | vs decide in-memory |',
    '|---|---|---:|---:|---:|---:|',
    ...r.variants.map((v) => `| ${v.store} | \`${v.call}\` | ${v.inFlight} | ${fmt(v.decisionsPerSecond)} | ${v.usPerDecision.toFixed(1)} | ${(v.decisionsPerSecond / base).toFixed(3)}× |`),
    '',
    '| round trips per occurrence | measured | bound |',
    '|---|---:|---:|',
    `| a tool call whose rules read and write a counter (first call: read + write) | ${r.roundTrips.counterOccurrence} | ≤ 2 |`,
    `| over the stream (a blocked repeat reads only) | mean ${r.roundTrips.streamMean.toFixed(2)}, max ${r.roundTrips.streamMax} | ≤ 2 |`,
    `| an occurrence whose rules touch no counter (content.output) | ${r.roundTrips.noCounterOccurrence} | 0 |`,
  ];
  return lines.join('\n');
}

async function main(argv: readonly string[]): Promise<void> {
  const rounds = argv.find((a) => a.startsWith('--rounds='));
  for (const a of argv) if (a !== '--quick' && a !== '--json' && a !== rounds) throw new Error(`bench:redis: unknown option ${a} (options: --quick --json --rounds=N)`);
  const quick = argv.includes('--quick');
  const r = await runRedisBench({ quick, log: (l) => process.stderr.write(`${l}\n`), ...(rounds ? { rounds: Number(rounds.slice('--rounds='.length)) } : {}) });
  if (r.roundTrips.counterOccurrence > 2 || r.roundTrips.streamMax > 2 || r.roundTrips.noCounterOccurrence !== 0) {
    process.exitCode = 1;
    process.stderr.write('bench:redis: round trips per occurrence exceed the bound\n');
  }
  if (!quick) {
    const dir = join(packageRoot(), 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'redis.json'), `${JSON.stringify(r, null, 1)}\n`);
  }
  process.stdout.write(argv.includes('--json') ? `${JSON.stringify(r, null, 1)}\n` : `${renderRedis(r)}\n${quick ? '' : '\nWrote bench/results/redis.json\n'}`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
