/**
 * Allocation benchmark: bytes allocated per `decide()` on the compiled backend, for generated packs
 * of 10, 100 and 1000 rules, over the pack's occurrence stream (and, beside it, the hand-written
 * baseline of decide-baseline.ts, which returns the same Decision).
 *
 * Method (needs `node --expose-gc`; without it the flag is switched on at run time):
 *   allocated — `gc()`, then run 100,000 decisions under `v8.GCProfiler`; bytes allocated =
 *               heap used after − heap used before + every byte the collections in between freed.
 *               Counters are reset at each pass over the stream, as in the decide benchmark.
 *   no-GC     — a cross-check: many batches of a few hundred decisions, each after `gc()`; only
 *               batches during which no collection ran (GCProfiler saw none) count; heap delta / n.
 *   retained  — the size of the returned Decision itself: keep one pass of decisions, `gc()`, drop
 *               them, `gc()`; the heap that went away, per decision (strings shared with the bundle,
 *               such as rule identifiers, cost nothing; rendered copy and transformed content do).
 * Both allocation numbers include what the host's counter store allocates for new counter keys.
 */
import * as v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Occurrence } from '../runtime/index.js';
import { engineRunner, preparePack, type Runner } from './decide.js';
import { growthOccurrences } from './packs.js';
import { median } from './stats.js';

export interface AllocOptions {
  quick?: boolean;
  sizes?: readonly number[];
  /** Decisions per measurement. */
  decisions?: number;
  /** Measurements per (size, variant); the median is reported. */
  repeats?: number;
  streamLength?: number;
  seed?: number;
  log?: (line: string) => void;
}

export interface AllocVariant {
  /** Bytes allocated per decision, over the stream (GCProfiler method). */
  bytesPerDecision: number;
  /** The no-GC batch cross-check, or NaN when no batch ran without a collection. */
  noGcBytesPerDecision: number;
  /** Bytes retained by one returned Decision, mean over the stream. */
  retainedPerDecision: number;
  /** Bytes allocated per decision of the fixed "selected" and "unselected" occurrences. */
  selectedBytes: number;
  unselectedBytes: number;
  gcs: number;
}

export interface AllocResult {
  meta: { node: string; quick: boolean; decisions: number; repeats: number; exposeGc: boolean; seconds: number };
  sizes: { size: number; variants: Record<string, AllocVariant> }[];
}

export type Gc = () => void;

/** `global.gc`, switching `--expose-gc` on at run time when the process was started without it. */
export function ensureGc(): { gc: Gc; exposed: boolean } {
  const g = (globalThis as { gc?: Gc }).gc;
  if (typeof g === 'function') return { gc: g, exposed: true };
  v8.setFlagsFromString('--expose-gc');
  return { gc: runInNewContext('gc') as Gc, exposed: false };
}

const used = () => v8.getHeapStatistics().used_heap_size;

/** Bytes allocated by `run()`: heap growth plus everything collected while it ran. */
export function allocated(gc: Gc, run: () => void): { bytes: number; gcs: number } {
  gc();
  const prof = new v8.GCProfiler();
  prof.start();
  const h0 = used();
  run();
  const h1 = used();
  const stats = prof.stop().statistics;
  let freed = 0;
  for (const s of stats) freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
  return { bytes: h1 - h0 + freed, gcs: stats.length };
}

/** A loop over the stream that resets counters at every pass, like the decide benchmark's. */
function cycler(r: Runner, stream: readonly Occurrence[]): (n: number) => number {
  let i = 0;
  return (n) => {
    let t = 0;
    for (let k = 0; k < n; k++) {
      if (i >= stream.length) {
        i = 0;
        r.reset();
      }
      t += r.decide(stream[i++] as Occurrence).applied.length;
    }
    return t;
  };
}

/** Every allocation figure of one runner over a stream (exported for side-by-side engine experiments). */
export function measureAllocation(gc: Gc, r: Runner, stream: readonly Occurrence[], n: number, repeats: number, quick: boolean): AllocVariant {
  const run = cycler(r, stream);
  run(Math.min(n, 20_000)); // warm up: optimised code allocates differently from the interpreter's
  const perDecision: number[] = [];
  let gcs = 0;
  for (let k = 0; k < repeats; k++) {
    const a = allocated(gc, () => run(n));
    perDecision.push(a.bytes / n);
    gcs += a.gcs;
  }
  // Cross-check: small batches with no collection in them.
  const clean: number[] = [];
  const batch = 256;
  const want = quick ? 3 : 15;
  for (let k = 0; k < 3 * want && clean.length < want; k++) {
    const a = allocated(gc, () => run(batch));
    if (a.gcs === 0) clean.push(a.bytes / batch);
  }
  // Retained size of the returned decisions: one pass, kept, then dropped.
  r.reset();
  let kept: unknown[] | null = new Array(stream.length);
  for (let i = 0; i < stream.length; i++) kept[i] = r.decide(stream[i] as Occurrence);
  gc();
  const withDecisions = used();
  kept.fill(undefined);
  kept = null;
  gc();
  const retained = (withDecisions - used()) / stream.length;
  r.reset();
  const fixed = (occ: Occurrence) => {
    const m = Math.max(1000, Math.floor(n / 10));
    const loop = () => {
      for (let i = 0; i < m; i++) {
        r.reset();
        r.decide(occ);
      }
    };
    loop();
    return median((quick ? [0] : [0, 1, 2]).map(() => allocated(gc, loop).bytes / m));
  };
  const g = growthOccurrences();
  return {
    bytesPerDecision: median(perDecision),
    noGcBytesPerDecision: clean.length === 0 ? NaN : median(clean),
    retainedPerDecision: retained,
    selectedBytes: fixed(g.selected),
    unselectedBytes: fixed(g.unselected),
    gcs,
  };
}

export function runAllocBench(opts: AllocOptions = {}): AllocResult {
  const started = Date.now();
  const quick = opts.quick ?? false;
  const sizes = opts.sizes ?? [10, 100, 1000];
  const decisions = opts.decisions ?? (quick ? 5_000 : 100_000);
  const repeats = opts.repeats ?? (quick ? 1 : 3);
  const streamLength = opts.streamLength ?? (quick ? 200 : 2000);
  const log = opts.log ?? (() => {});
  const { gc, exposed } = ensureGc();
  const out: AllocResult['sizes'] = [];
  for (const size of sizes) {
    const p = preparePack(size, streamLength, opts.seed);
    const variants: Record<string, AllocVariant> = {
      compiled: measureAllocation(gc, engineRunner(p.compiled), p.stream, decisions, repeats, quick),
      hand: measureAllocation(gc, { decide: (o) => p.baseline.decide(o), reset: () => p.baseline.reset() }, p.stream, decisions, repeats, quick),
    };
    out.push({ size, variants });
    log(`alloc: ${size} rules: compiled ${Math.round((variants.compiled as AllocVariant).bytesPerDecision)} B/decision`);
  }
  return {
    meta: { node: process.version, quick, decisions, repeats, exposeGc: exposed, seconds: Math.round((Date.now() - started) / 100) / 10 },
    sizes: out,
  };
}

const b = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');

export function renderAlloc(r: AllocResult): string {
  const out: string[] = [];
  out.push(`## Allocation per decision${r.meta.quick ? ' (--quick: smoke counts, numbers are not meaningful)' : ''}`);
  out.push('');
  out.push(
    `${r.meta.node}${r.meta.exposeGc ? ', --expose-gc' : ', gc exposed at run time'}; ${r.meta.decisions.toLocaleString('en-US')} decisions per measurement over the ` +
      `stream, median of ${r.meta.repeats}; allocated = heap growth + bytes freed by the collections in between (v8.GCProfiler); ` +
      `no-GC = median of 256-decision batches during which no collection ran; retained = heap held by one returned Decision ` +
      `(mean over the stream); selected / unselected = bytes allocated per decision of the two fixed growth occurrences. ${r.meta.seconds} s.`,
  );
  out.push('');
  out.push('| rules | compiled B/decision | no-GC check | Decision retained | result share | selected | unselected | hand-written B/decision | hand retained | compiled/hand |');
  out.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const s of r.sizes) {
    const c = s.variants.compiled as AllocVariant;
    const h = s.variants.hand as AllocVariant;
    out.push(
      `| ${s.size} | ${b(c.bytesPerDecision)} | ${b(c.noGcBytesPerDecision)} | ${b(c.retainedPerDecision)} | ` +
        `${Math.round((100 * c.retainedPerDecision) / c.bytesPerDecision)}% | ${b(c.selectedBytes)} | ${b(c.unselectedBytes)} | ` +
        `${b(h.bytesPerDecision)} | ${b(h.retainedPerDecision)} | ${(c.bytesPerDecision / h.bytesPerDecision).toFixed(2)} |`,
    );
  }
  out.push('');
  out.push('"result share" = retained Decision / allocated: the part of each decision\'s allocation that is the result handed to the caller.');
  return out.join('\n');
}

export function allocJson(r: AllocResult): string {
  return `${JSON.stringify({ benchmark: 'alloc', ...r }, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 10) / 10 : v), 1)}\n`;
}
