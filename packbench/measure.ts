/**
 * The timing loop of `oarc bench`, written here so the installed command needs no benchmark
 * library: `process.hrtime.bigint()` around batches of decisions, warm-up first, then samples.
 *
 * A pass decides the occurrence file once, in order, as one session (or the sessions its
 * occurrences name), exactly as `oarc eval` would. Every pass must start from the same state, so
 * each pass of a batch decides in sessions of its own: the file's session ids with `\u0000#k`
 * appended for pass k (no fact reads a session id; the id only keys counters and activity
 * windows). Those copies of the occurrences are made before any timing, and after a sample every
 * session it used is ended (`engine.endSession`: counters and activity dropped), outside the timed
 * region — so the timed region holds decisions and nothing else, and the next sample starts afresh.
 *
 *   overall         a sample is a batch of passes, timed by one pair of clock reads (≥ 50 µs, far
 *                   above the clock's resolution); its figure is the time per decision.
 *   per occurrence  for occurrence i, every session of the batch first decides occurrences
 *                   0 … i−1 (untimed), then occurrence i is decided once in each session, timed as
 *                   one batch: the time of that decision in the state the file gives it.
 * The cost of a clock read, measured after warm-up, is subtracted from each batch. Back ends are
 * sampled in turn (round robin), so a ratio between them compares samples under the same load.
 */
import * as v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Engine, Occurrence } from '../runtime/index.js';

export interface Subject {
  /** The back end's name: `specialised` or `interpreter`. */
  readonly name: string;
  readonly engine: Engine;
}

export interface Workload {
  readonly occurrences: readonly Occurrence[];
}

export interface Samples {
  /** ns per decision over the pass, one entry per sample. */
  overall: number[];
  /** ns per decision of occurrence i, one entry per sample (empty beyond `PER_OCCURRENCE_MAX`). */
  perOccurrence: number[][];
}

export interface MeasureOptions {
  /** Total measuring time in ms, warm-up included, over all back ends. */
  timeMs: number;
  /** Samples each back end gets at least, however long that takes. */
  minSamples?: number;
}

export interface Measured {
  samples: Map<string, Samples>;
  passesPerSample: number;
  timerNs: number;
  warmupMs: number;
}

/** Per-occurrence figures replay each occurrence's prefix: quadratic, so only the first ones get them. */
export const PER_OCCURRENCE_MAX = 100;
/** At most this many occurrence copies are held for the batches. */
const MAX_COPIES = 200_000;
/** A sample lasts at least this long (over a thousand times the clock's cost) and at most the other. */
const SAMPLE_MIN_NS = 50_000;
const SAMPLE_MAX_NS = 500_000;

const now = process.hrtime.bigint;

/** The cost of one `process.hrtime.bigint()` read in ns: the median of several runs of many reads. */
export function timerCost(): number {
  const runs: number[] = [];
  for (let r = 0; r < 15; r++) {
    const n = 2000;
    const t0 = now();
    let t = t0;
    for (let i = 0; i < n; i++) t = now();
    runs.push(Number(t - t0) / n);
  }
  runs.sort((a, b) => a - b);
  return runs[Math.floor(runs.length / 2)] as number;
}

/** Pass k's copy of the file, in sessions of its own. */
export class Passes {
  private readonly copies: Occurrence[][] = [];
  private readonly used = new Set<string>();
  constructor(private readonly w: Workload) {}

  get(k: number): readonly Occurrence[] {
    let c = this.copies[k];
    if (c === undefined) {
      c = this.w.occurrences.map((o) => ({ ...o, session: `${o.session ?? ''}\u0000#${k}` }));
      this.copies[k] = c;
    }
    for (const o of c) this.used.add(o.session as string);
    return c;
  }

  /** End every session a sample used: the next sample starts from nothing again. */
  reset(engine: Engine): void {
    for (const s of this.used) engine.endSession(s);
    this.used.clear();
  }
}

function overallSample(s: Subject, passes: Passes, batch: number, n: number, cost: number): number {
  const lists: (readonly Occurrence[])[] = [];
  for (let k = 0; k < batch; k++) lists.push(passes.get(k));
  const engine = s.engine;
  const t0 = now();
  for (let k = 0; k < batch; k++) {
    const occs = lists[k] as readonly Occurrence[];
    for (let i = 0; i < n; i++) engine.decide(occs[i] as Occurrence);
  }
  const t1 = now();
  passes.reset(engine);
  return Math.max(Number(t1 - t0) - cost, 0) / (batch * n);
}

function occurrenceSample(s: Subject, passes: Passes, batch: number, i: number, cost: number): number {
  const engine = s.engine;
  const targets: Occurrence[] = [];
  for (let k = 0; k < batch; k++) {
    const occs = passes.get(k);
    for (let j = 0; j < i; j++) engine.decide(occs[j] as Occurrence);
    targets.push(occs[i] as Occurrence);
  }
  const t0 = now();
  for (let k = 0; k < batch; k++) engine.decide(targets[k] as Occurrence);
  const t1 = now();
  passes.reset(engine);
  return Math.max(Number(t1 - t0) - cost, 0) / batch;
}

export function measure(subjects: readonly Subject[], w: Workload, opts: MeasureOptions): Measured {
  const n = w.occurrences.length;
  const start = performance.now();
  const budget = opts.timeMs;
  const minSamples = opts.minSamples ?? 5;
  const passes = new Map(subjects.map((s) => [s.name, new Passes(w)]));
  const P = (s: Subject) => passes.get(s.name) as Passes;
  // Warm-up: a third of the time (at most 2 s), every back end in turn, until the JIT settles:
  // first single passes, then — once the batch size is known — whole samples, thrown away.
  const warmupMs = Math.min(budget / 3, 2000);
  const warmStart = performance.now();
  for (let rounds = 0; performance.now() - warmStart < warmupMs / 3 || rounds < 3; rounds++) {
    for (const s of subjects) overallSample(s, P(s), 1, n, 0);
  }
  const cost = timerCost();
  // The time of one pass now the code is warm: the median of a few timed batches of ten passes.
  const probes: number[] = [];
  for (const s of subjects) overallSample(s, P(s), 10, n, cost);
  for (let r = 0; r < 5; r++) for (const s of subjects) probes.push(overallSample(s, P(s), 10, n, cost) * n);
  probes.sort((a, b) => a - b);
  const passNs = probes[Math.floor(probes.length / 2)] as number;
  // Of the time after warm-up, 55% for the overall samples (~300 each), the rest per occurrence.
  const left = Math.max(budget - warmupMs, 0);
  const overallNs = left * 0.55 * 1e6;
  // Short samples, many of them: on a shared machine a sample the scheduler interrupted is an
  // outlier the median passes over, and the shorter the samples, the fewer are interrupted.
  const target = Math.max(SAMPLE_MIN_NS, Math.min(overallNs / subjects.length / 300, SAMPLE_MAX_NS));
  const batchFor = (ns: number) => clamp(Math.ceil(target / Math.max(ns, 1)), 1, Math.floor(MAX_COPIES / n));
  let batch = batchFor(passNs);
  // The JIT keeps optimising for a while: size the batch again from the last warm-up samples.
  const warm: number[] = [];
  while (performance.now() - warmStart < warmupMs) for (const s of subjects) warm.push(overallSample(s, P(s), batch, n, cost) * n);
  const recent = warm.slice(-Math.max(subjects.length * 5, Math.floor(warm.length / 2))).sort((a, b) => a - b);
  if (recent.length > 0) batch = batchFor(recent[Math.floor(recent.length / 2)] as number);
  const perOcc = Math.min(n, PER_OCCURRENCE_MAX);
  // A per-occurrence batch lasts about as long as a pass batch: n times as many decisions of one occurrence.
  const occBatch = clamp(batch * n, 1, Math.floor(MAX_COPIES / n));

  const samples = new Map<string, Samples>(subjects.map((s) => [s.name, { overall: [], perOccurrence: Array.from({ length: n }, () => []) }]));
  const overallEnd = performance.now() + left * 0.55;
  for (let round = 0; round < minSamples || performance.now() < overallEnd; round++) {
    for (const s of subjects) samples.get(s.name)!.overall.push(overallSample(s, P(s), batch, n, cost));
  }
  const occEnd = start + budget;
  for (let i = 0; i < perOcc; i++) {
    // Each occurrence gets an equal share of what is left, and at least `minSamples` samples.
    const share = (occEnd - performance.now()) / (perOcc - i);
    const until = performance.now() + share;
    for (let round = 0; round < minSamples || performance.now() < until; round++) {
      for (const s of subjects) samples.get(s.name)!.perOccurrence[i]!.push(occurrenceSample(s, P(s), occBatch, i, cost));
    }
  }
  return { samples, passesPerSample: batch, timerNs: cost, warmupMs };
}

const clamp = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), Math.max(lo, hi));

// ---------------------------------------------------------------------------------------------
// Allocation

export type GcAccess = 'exposed' | 'runtime-flag' | 'unavailable';

/**
 * `global.gc`: there when node ran with `--expose-gc`; otherwise switched on now through
 * `v8.setFlagsFromString` (the installed `oarc` is started by its shebang, without the flag), which
 * gives a `gc` function in a new context. `unavailable` if neither works.
 */
export function gcFunction(): { gc?: () => void; access: GcAccess } {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return { gc: g, access: 'exposed' };
  try {
    v8.setFlagsFromString('--expose-gc');
    const f = runInNewContext('gc') as unknown;
    if (typeof f === 'function') return { gc: f as () => void, access: 'runtime-flag' };
  } catch {
    // fall through: measured without a collection first
  }
  return { access: 'unavailable' };
}

const heapUsed = () => v8.getHeapStatistics().used_heap_size;

/**
 * Bytes allocated per decision: heap used after the passes, less before, plus every byte the
 * collections in between freed (`v8.GCProfiler`). With `gc` a collection runs first, so the figure
 * starts from a clean heap; without it the figure is still right on average, only noisier. NaN when
 * this Node has no GC profiler.
 */
export function allocationPerDecision(s: Subject, w: Workload, decisions: number, gc: (() => void) | undefined): number {
  const Profiler = (v8 as { GCProfiler?: typeof v8.GCProfiler }).GCProfiler;
  if (Profiler === undefined) return NaN;
  const n = w.occurrences.length;
  const batch = clamp(Math.ceil(decisions / n), 1, Math.floor(MAX_COPIES / n));
  const passes = new Passes(w);
  const lists: (readonly Occurrence[])[] = [];
  for (let k = 0; k < batch; k++) lists.push(passes.get(k));
  gc?.();
  const prof = new Profiler();
  prof.start();
  const before = heapUsed();
  for (let k = 0; k < batch; k++) {
    const occs = lists[k] as readonly Occurrence[];
    for (let i = 0; i < n; i++) s.engine.decide(occs[i] as Occurrence);
  }
  const after = heapUsed();
  let freed = 0;
  for (const st of prof.stop().statistics) freed += st.beforeGC.heapStatistics.usedHeapSize - st.afterGC.heapStatistics.usedHeapSize;
  passes.reset(s.engine);
  return (after - before + freed) / (batch * n);
}
