/**
 * Decision benchmark: whole `decide()` calls on generated gateway packs (packs.ts) of 10, 100 and
 * 1000 rules, by
 *
 *   specialised  — `createEngine(compileToBundle(pack))`: the bundle's per-anchor decision procedures
 *   compiled     — the same bundle with `procedures: false`: the generic engine over the emitted
 *                  condition closures
 *   interpreter  — `createEngine(compileToBundle(pack, 'interpreter'))`: the tree-walking oracle
 *   hand-written — decide-baseline.ts: a bespoke guard generated from the same rule list
 *
 * all in one process, in one run, interleaved: every round runs every task once, in a shuffled
 * order, and each reported time is a median over rounds (or over pooled per-call samples, for
 * latency percentiles). Each reported ratio is paired: the median over rounds of the ratio within a
 * round, so a change in the machine's load between rounds cancels out instead of landing on one
 * side (the ratio of the medians is kept in the JSON too). Before anything is timed, every variant must return deep-equal decisions on
 * every occurrence of the stream — decision, code, rule, copy, advisories, trace, side-effects,
 * events, counters, transforms, content — or the run aborts naming the occurrence and the field.
 *
 * Timing is tinybench's (`Bench.runSync`): per round, one Bench per task, so each task gets its own
 * budget and minimum iteration count. Three kinds of task:
 *   stream  — one iteration decides the whole stream (counters reset before it, untimed); the
 *             sample is ns per decision. Throughput and the headline ratios come from these.
 *   latency — one iteration is one `decide()`, wall clock (`hrtimeNow`, timer overhead subtracted
 *             by tinybench); pooled samples give p50 and p99 per decision over the stream's mix.
 *   growth  — one iteration decides one fixed occurrence 200 times (counters reset before each
 *             decide, on both sides): the "selected" occurrence selects the same 7 rules in every
 *             pack; the "unselected" one selects only the 1 rule without a selector. The ratio of
 *             the 1000-rule to the 10-rule time is the cost of rules that are not selected.
 * Every timed loop is a function of its own (`new Function` with a unique label), so each variant's
 * call site stays monomorphic — the same treatment for all.
 *
 * Clocks. Batch tasks (stream, growth) are timed by default in process CPU time (`cpuNow`: user +
 * system from getrusage, microsecond resolution on Linux), not wall time. On a machine shared with
 * other runs, a batch of tens of milliseconds is descheduled several times, and the wall clock
 * charges those gaps to whichever variant happened to be running — more often to the slower one,
 * whose batches are longer — so wall-clock ratios drift with the machine's load. CPU time does not
 * count the gaps. It does count the process's GC and JIT helper threads: real work this process
 * caused, and the warm-up round keeps JIT compilation out of the recorded rounds. The wall-clock
 * medians of the same batches are recorded too (`wallNs`), and `clock: 'wall'` times by wall clock.
 * The per-call latency task stays on the wall clock: a call of microseconds is rarely descheduled,
 * so its p50 is robust, while its p99 includes the machine's scheduling noise.
 */
import { Bench, type Task } from 'tinybench';
import { compileToBundle, formatDiagnostic, loadPackTexts, type LoadedPack } from '../compiler/index.js';
import { createEngine, MemoryCounterStore, type Bundle, type Decision, type Engine, type EngineOptions, type Occurrence } from '../runtime/index.js';
import { buildBaseline, type Baseline } from './decide-baseline.js';
import { generatePack, generateStream, growthOccurrences, packTexts, type GeneratedPack } from './packs.js';
import { median, prng, quantile, relativeIqr, shuffle } from './stats.js';

export type CreateEngine = (bundle: Bundle, options?: EngineOptions) => Engine;

// ---------------------------------------------------------------------------------------------
// Preparation.


export interface PreparedPack {
  readonly size: number;
  readonly pack: GeneratedPack;
  readonly loaded: LoadedPack;
  /** The specialised bundle (procedures and compiled conditions): `specialised` and `compiled` run it. */
  readonly compiled: Bundle;
  readonly interpreter: Bundle;
  readonly baseline: Baseline & { source: string };
  readonly stream: readonly Occurrence[];
}

/** Load a generated pack; throws with every diagnostic if it does not load. */
export function loadGenerated(pack: GeneratedPack): LoadedPack {
  const r = loadPackTexts(packTexts(pack));
  if (!r.ok) {
    const shown = r.diagnostics.slice(0, 10).map(formatDiagnostic).join('\n');
    throw new Error(`bench: the generated ${pack.size}-rule pack does not load (${r.diagnostics.length} diagnostics):\n${shown}`);
  }
  return r.pack;
}

const prepared = new Map<string, PreparedPack>();

/** Generate, load and compile a pack, build its baseline and stream — once per process (sections share them). */
export function preparePack(size: number, streamLength: number, seed?: number): PreparedPack {
  const key = `${size}:${streamLength}:${seed ?? 'default'}`;
  let p = prepared.get(key);
  if (p === undefined) prepared.set(key, (p = prepareFresh(size, streamLength, seed)));
  return p;
}

function prepareFresh(size: number, streamLength: number, seed?: number): PreparedPack {
  const pack = generatePack(size, seed);
  const loaded = loadGenerated(pack);
  return {
    size,
    pack,
    loaded,
    compiled: compileToBundle(loaded, 'specialised'),
    interpreter: compileToBundle(loaded, 'interpreter'),
    baseline: buildBaseline(pack),
    stream: generateStream(pack, { length: streamLength }),
  };
}

/** Something that decides, and can forget its counters. */
export interface Runner {
  decide(occ: Occurrence): Decision;
  reset(): void;
}

export function engineRunner(bundle: Bundle, create: CreateEngine = createEngine): Runner {
  const store = new MemoryCounterStore();
  const engine = create(bundle, { counters: store });
  return {
    decide: (occ) => engine.decide(occ),
    reset: () => store.clear(),
  };
}

/**
 * The variants of one pack: the repo engine on both back ends, the hand-written baseline, and any
 * extra engine implementations (for profiling experiments: a patched engine run side by side).
 */
export function runnersFor(p: PreparedPack, extra: readonly ExtraEngine[] = []): Map<string, Runner> {
  const m = new Map<string, Runner>([
    ['specialised', engineRunner(p.compiled)],
    ['compiled', engineRunner(p.compiled, (b, o) => createEngine(b, { ...o, procedures: false }))],
    ['interpreter', engineRunner(p.interpreter)],
    ['hand', { decide: (o) => p.baseline.decide(o), reset: () => p.baseline.reset() }],
  ]);
  // A bundle of its own (fresh closures), so its call sites do not share type feedback with the
  // repo engine's: the two engines' fact readers are different classes.
  for (const e of extra) m.set(e.id, engineRunner(compileToBundle(p.loaded, 'compiled'), e.create));
  return m;
}

export interface ExtraEngine {
  /** Variant id, e.g. `patched`. */
  id: string;
  label: string;
  create: CreateEngine;
}

// ---------------------------------------------------------------------------------------------
// Agreement.

/** The first place two JSON-like values differ: a path and the two values there, or null. */
export function firstDifference(a: unknown, b: unknown, path = '$'): { path: string; a: unknown; b: unknown } | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) {
    return { path, a, b };
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= a.length || i >= b.length) return { path: `${path}[${i}]`, a: a[i], b: b[i] };
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
    if (!Object.prototype.hasOwnProperty.call(ao, k) || !Object.prototype.hasOwnProperty.call(bo, k)) {
      return { path: `${path}.${k}`, a: ao[k], b: bo[k] };
    }
    const d = firstDifference(ao[k], bo[k], `${path}.${k}`);
    if (d) return d;
  }
  return null;
}

export interface StreamMix {
  occurrences: number;
  /** Decisions by effect, as the engine returned them. */
  effects: Record<string, number>;
  /** Trace entries by outcome. */
  outcomes: Record<string, number>;
  toolCalls: number;
  contentOccurrences: number;
  /** Rules bound to `tool.pre_invoke` in the pack. */
  toolAnchorRules: number;
  /** Mean number of rules selected (trace length) per tool call. */
  meanSelectedPerToolCall: number;
  /** Decisions that are not `none` in one pass from fresh counters (each timed pass re-checks it). */
  notNone: number;
  counterWrites: number;
}

const fmtJson = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 400 ? `${s.slice(0, 400)}…` : s;
};

/**
 * Run every variant over the whole stream from fresh counters and require deep-equal decisions
 * from each of them and the compiled engine. Also checks the two growth occurrences. Throws a
 * message naming the pack, the occurrence, the variant, the first differing field and both values.
 */
export function checkAgreement(p: Pick<PreparedPack, 'size' | 'pack' | 'stream'>, runners: Map<string, Runner>): StreamMix {
  const ref = runners.get('compiled') as Runner;
  const others = [...runners].filter(([id]) => id !== 'compiled');
  for (const r of runners.values()) r.reset();
  const mix: StreamMix = {
    occurrences: p.stream.length, effects: {}, outcomes: {}, toolCalls: 0, contentOccurrences: 0,
    toolAnchorRules: p.pack.specs.filter((r) => r.anchor === 'tool.pre_invoke').length,
    meanSelectedPerToolCall: 0, notNone: 0, counterWrites: 0,
  };
  let selected = 0;
  const compare = (what: string, occ: Occurrence, i: number | string) => {
    const expected = ref.decide(occ);
    for (const [id, r] of others) {
      const got = r.decide(occ);
      const d = firstDifference(expected, got);
      if (d !== null) {
        throw new Error(
          `bench: ${id === 'hand' ? 'the hand-written baseline' : `the ${id} variant`} disagrees with the compiled engine ` +
            `on ${what} #${i} of the ${p.size}-rule pack, at ${d.path}: engine ${fmtJson(d.a)}, ${id} ${fmtJson(d.b)}\n` +
            `  occurrence: ${fmtJson(occ)}\n  engine decision: ${fmtJson(expected)}`,
        );
      }
    }
    return expected;
  };
  p.stream.forEach((occ, i) => {
    const d = compare('occurrence', occ, i);
    mix.effects[d.decision] = (mix.effects[d.decision] ?? 0) + 1;
    if (d.decision !== 'none') mix.notNone++;
    for (const t of d.applied) mix.outcomes[t.outcome] = (mix.outcomes[t.outcome] ?? 0) + 1;
    mix.counterWrites += Object.keys(d.counters).length;
    if (occ.toolCall !== undefined) {
      mix.toolCalls++;
      selected += d.applied.length;
    } else {
      mix.contentOccurrences++;
    }
  });
  mix.meanSelectedPerToolCall = mix.toolCalls === 0 ? 0 : selected / mix.toolCalls;
  const g = growthOccurrences();
  for (const [name, occ] of Object.entries(g)) {
    for (const r of runners.values()) r.reset();
    compare(`the growth occurrence "${name}"`, occ, 0);
    compare(`the growth occurrence "${name}" (repeated)`, occ, 1);
  }
  for (const r of runners.values()) r.reset();
  return mix;
}

// ---------------------------------------------------------------------------------------------
// Timing.

export type StreamBatch = (r: Runner, stream: readonly Occurrence[]) => number;
export type OneDecide = (r: Runner, occ: Occurrence) => Decision;
type GrowthBatch = (r: Runner, occ: Occurrence, n: number) => number;

// The timed loops. Each task gets its own copy (the label makes the source unique), so V8 keeps
// separate type feedback per variant. Each returns something checked, so the work stays observable.
export function makeStreamBatch(label: string): StreamBatch {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('r', 'stream', `"use strict"; // ${label}\nlet n = 0;\nfor (let i = 0; i < stream.length; i++) { if (r.decide(stream[i]).decision !== "none") n++; }\nreturn n;`) as StreamBatch;
}
export function makeOneDecide(label: string): OneDecide {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('r', 'occ', `"use strict"; // ${label}\nreturn r.decide(occ);`) as OneDecide;
}
function makeGrowthBatch(label: string): GrowthBatch {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('r', 'occ', 'n', `"use strict"; // ${label}\nlet t = 0;\nfor (let i = 0; i < n; i++) { r.reset(); t += r.decide(occ).applied.length; }\nreturn t;`) as GrowthBatch;
}

export type GrowthCase = 'selected' | 'unselected';
export const GROWTH_CASES: readonly GrowthCase[] = ['selected', 'unselected'];

export interface TimedTask {
  readonly name: string;
  readonly kind: 'stream' | 'latency' | 'growth';
  readonly size: number;
  readonly variant: string;
  readonly growth?: GrowthCase;
  /** Decisions per tinybench iteration. */
  readonly per: number;
  readonly minIterations: number;
  readonly fn: () => unknown;
  readonly beforeEach?: () => void;
  /** Stream and growth: the median ns/decision of each round. Latency: every sample, ns. */
  readonly values: number[];
  /** Stream and growth: the median wall-clock ns/decision of each round. */
  readonly wall: number[];
}

/** Process CPU time (user + system) in ms, for tinybench's `now`. */
export function cpuNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export type Clock = 'cpu' | 'wall';

export interface DecideOptions {
  quick?: boolean;
  sizes?: readonly number[];
  /** Occurrences per stream. */
  streamLength?: number;
  /** Timed rounds (after one warm-up round). */
  rounds?: number;
  /** tinybench time budget per task per round, ms. */
  taskMs?: number;
  /** Decisions per growth iteration. */
  growthBatch?: number;
  seed?: number;
  /** Extra engine implementations timed on the compiled bundle alongside the others. */
  engines?: readonly ExtraEngine[];
  /** Clock of the batch tasks (stream, growth); default `cpu`. */
  clock?: Clock;
  log?: (line: string) => void;
}

export interface VariantResult {
  /** Median over rounds of ns per decision over the stream, by the batch clock. */
  streamNs: number;
  /** The same batches by the wall clock. */
  wallNs: number;
  decisionsPerSecond: number;
  /** Per-decision latency over the stream, pooled samples, ns. */
  p50Ns: number;
  p99Ns: number;
  /** p99 of a call's latency over its own decision's median (`sameDecisionTail`). */
  sameDecisionP99: number;
  /** Relative IQR of the per-round stream medians. */
  noise: number;
}

export interface SizeResult {
  size: number;
  mix: StreamMix;
  variants: Record<string, VariantResult>;
  /** Paired (median of per-round ratios) unless named otherwise. */
  ratios: {
    /** The headline: the specialised procedures against the hand-written guard. */
    specialisedVsHand: number;
    /** The generic engine over the same bundle against its procedures. */
    compiledVsSpecialised: number;
    /** p99 / p50 of the specialised engine's per-call latency over the stream's mix. */
    specialisedTail: number;
    /** The same for the hand-written guard: the spread the stream's mix itself has. */
    handTail: number;
    compiledVsHand: number;
    interpreterVsCompiled: number;
    compiledVsHandWall: number;
    compiledVsHandP50: number;
    compiledVsHandP99: number;
    /** Ratio of the medians, for comparison with the paired figures. */
    compiledVsHandOfMedians: number;
    interpreterVsCompiledOfMedians: number;
  };
}

export interface GrowthResult {
  case: GrowthCase;
  /** Rules selected at this occurrence (the same in every pack). */
  selectedRules: number;
  /** ns per decision by size and variant. */
  ns: Record<string, Record<string, number>>;
  /** ns(largest) / ns(smallest), per variant, paired by round. */
  ratio: Record<string, number>;
  /** Extra ns per rule bound to the anchor but not selected, compiled: (ns(max) − ns(min)) / Δrules. */
  nsPerUnselectedRule: Record<string, number>;
}

export interface DecideResult {
  meta: { node: string; quick: boolean; clock: Clock; rounds: number; taskMs: number; streamLength: number; growthBatch: number; variants: string[]; labels: Record<string, string>; seconds: number };
  sizes: SizeResult[];
  growth: GrowthResult[];
  targets: {
    specialisedWithin1_5xOfHandAtEverySize: boolean;
    specialised3xFasterThanGenericAtEverySize: boolean;
    /** Over the stream's mix (pooled samples of different decisions). */
    specialisedP99Within3xOfP50AtEverySize: boolean;
    /** For the same decision repeated: p99 of a call over its own decision's median. */
    specialisedSameDecisionP99Within3xAtEverySize: boolean;
    unselectedGrowthNearZero: boolean;
  };
}

export const VARIANT_LABEL: Readonly<Record<string, string>> = { specialised: 'specialised', compiled: 'generic (compiled)', interpreter: 'interpreter', hand: 'hand-written' };

/** The median over rounds of a[i] / b[i]: both recorded in the same round. */
export function paired(a: readonly number[], b: readonly number[]): number {
  return median(a.map((x, i) => x / (b[i] as number)));
}

export function runTask(t: TimedTask, taskMs: number, record: boolean, clock: Clock): void {
  const latency = t.kind === 'latency';
  const bench = new Bench({
    time: taskMs,
    iterations: t.minIterations,
    warmup: false,
    throws: true,
    retainSamples: true,
    ...(latency || clock === 'wall' ? { timestampProvider: 'hrtimeNow' as const } : { now: cpuNow }),
    // Only the per-call latency task is short enough for the timer's own cost to matter.
    subtractTimerOverhead: latency,
  });
  const wall: number[] = [];
  const fn = latency
    ? t.fn
    : () => {
        const t0 = process.hrtime.bigint();
        t.fn();
        wall.push(Number(process.hrtime.bigint() - t0) / t.per);
      };
  bench.add(t.name, fn, t.beforeEach ? { beforeEach: t.beforeEach } : {});
  const [task] = bench.runSync() as [Task];
  const r = task.result;
  if (r.state !== 'completed') throw new Error(`bench: task ${t.name} ended ${r.state}${'error' in r ? `: ${String(r.error)}` : ''}`);
  if (!record) return;
  const samples = (r.latency.samples ?? []).map((ms) => (ms * 1e6) / t.per);
  if (latency) t.values.push(...samples);
  else {
    t.values.push(median(samples));
    t.wall.push(median(wall));
  }
}

/** Prepare every pack, check agreement, then time all tasks in interleaved rounds. */
/**
 * Tail latency of the same decision. The stream's pooled p99/p50 mixes cheap calls (a tool call
 * no rule selects) with dear ones (a redaction that renders copy and splices spans), so it measures
 * the stream's spread as much as any jitter: the hand-written guard shows it as much as the engine.
 * Here every occurrence is decided `passes` times, each pass from fresh counters (so pass k's i-th
 * decision is the same work as every other pass's), each call timed alone by the wall clock (timer
 * cost subtracted); a sample's ratio to its own decision's median is its slowdown. Reported: the
 * p99 of those ratios — how much slower than usual the slowest 1 % of calls are.
 */
export function sameDecisionTail(stream: readonly Occurrence[], runners: ReadonlyMap<string, Runner>, passes: number, rand: () => number): Map<string, number> {
  const timer: number[] = [];
  for (let k = 0; k < 2000; k++) {
    const a = process.hrtime.bigint();
    timer.push(Number(process.hrtime.bigint() - a));
  }
  const overhead = median(timer);
  const samples = new Map<string, Float64Array[]>([...runners.keys()].map((v) => [v, []]));
  for (let pass = 0; pass < passes; pass++) {
    for (const v of shuffle([...runners.keys()], rand)) {
      const r = runners.get(v) as Runner;
      const t = new Float64Array(stream.length);
      r.reset();
      for (let i = 0; i < stream.length; i++) {
        const a = process.hrtime.bigint();
        r.decide(stream[i] as Occurrence);
        t[i] = Math.max(1, Number(process.hrtime.bigint() - a) - overhead);
      }
      (samples.get(v) as Float64Array[]).push(t);
    }
  }
  const out = new Map<string, number>();
  for (const [v, ps] of samples) {
    const ratios: number[] = [];
    for (let i = 0; i < stream.length; i++) {
      const own = ps.map((t) => t[i] as number);
      const m = median(own);
      for (const x of own) ratios.push(x / m);
    }
    out.set(v, quantile(ratios, 0.99));
  }
  return out;
}

export function runDecideBench(opts: DecideOptions = {}): DecideResult {
  const started = Date.now();
  const quick = opts.quick ?? false;
  const sizes = opts.sizes ?? [10, 100, 1000];
  const streamLength = opts.streamLength ?? (quick ? 200 : 2000);
  const rounds = opts.rounds ?? (quick ? 2 : 12);
  const taskMs = opts.taskMs ?? (quick ? 4 : 60);
  const growthBatch = opts.growthBatch ?? (quick ? 20 : 200);
  const log = opts.log ?? (() => {});
  const clock = opts.clock ?? 'cpu';
  const extra = opts.engines ?? [];
  const variants = ['specialised', 'compiled', 'interpreter', 'hand', ...extra.map((e) => e.id)];
  const labels: Record<string, string> = { ...VARIANT_LABEL, ...Object.fromEntries(extra.map((e) => [e.id, e.label])) };

  const tasks: TimedTask[] = [];
  const mixes = new Map<number, StreamMix>();
  const runnersBySize = new Map<number, Map<string, Runner>>();
  const growthOcc = growthOccurrences();
  const selectedCount: Record<GrowthCase, number> = { selected: 0, unselected: 0 };
  for (const size of sizes) {
    const t0 = Date.now();
    const p = preparePack(size, streamLength, opts.seed);
    const runners = runnersFor(p, extra);
    runnersBySize.set(size, runners);
    const mix = checkAgreement(p, runners);
    mixes.set(size, mix);
    for (const gc of GROWTH_CASES) {
      const r = runners.get('specialised') as Runner;
      r.reset();
      selectedCount[gc] = r.decide(growthOcc[gc]).applied.length;
      r.reset();
    }
    log(`decide: ${size} rules loaded, compiled and checked in ${((Date.now() - t0) / 1000).toFixed(1)} s — all ${variants.length} variants agree on ${mix.occurrences} occurrences (${mix.notNone} not none; ${mix.meanSelectedPerToolCall.toFixed(1)} of ${mix.toolAnchorRules} tool-anchor rules selected per tool call)`);
    for (const v of variants) {
      const r = runners.get(v) as Runner;
      const stream = p.stream;
      const expected = mix.notNone;
      const batch = makeStreamBatch(`stream:${size}:${v}`);
      tasks.push({
        name: `stream:${size}:${v}`, kind: 'stream', size, variant: v, per: stream.length, minIterations: 2, values: [], wall: [],
        beforeEach: () => r.reset(),
        fn: () => {
          const n = batch(r, stream);
          if (n !== expected) throw new Error(`bench: ${v} on the ${size}-rule stream: ${n} decisions were not none, expected ${expected}`);
        },
      });
      const one = makeOneDecide(`latency:${size}:${v}`);
      let i = 0;
      tasks.push({
        name: `latency:${size}:${v}`, kind: 'latency', size, variant: v, per: 1, minIterations: 50, values: [], wall: [],
        beforeEach: () => {
          if (i >= stream.length) {
            i = 0;
            r.reset();
          }
        },
        fn: () => one(r, stream[i++] as Occurrence),
      });
      for (const gc of GROWTH_CASES) {
        const occ = growthOcc[gc];
        const g = makeGrowthBatch(`growth:${gc}:${size}:${v}`);
        const want = selectedCount[gc] * growthBatch;
        tasks.push({
          name: `growth:${gc}:${size}:${v}`, kind: 'growth', size, variant: v, growth: gc, per: growthBatch, minIterations: 3, values: [], wall: [],
          fn: () => {
            const n = g(r, occ, growthBatch);
            if (n !== want) throw new Error(`bench: growth ${gc} ${size} ${v}: ${n} trace entries, expected ${want}`);
          },
        });
      }
    }
  }

  const rand = prng(opts.seed ?? 0x0a7c);
  const order = [...tasks];
  log(`decide: ${tasks.length} tasks × ${rounds} rounds (+1 warm-up), ${taskMs} ms each`);
  for (let round = 0; round <= rounds; round++) {
    for (const t of shuffle(order, rand)) runTask(t, round === 0 ? Math.max(1, taskMs / 4) : taskMs, round > 0, clock);
    if (round > 0 && (round % 3 === 0 || round === rounds)) log(`  decide: round ${round}/${rounds} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }

  const tailPasses = quick ? 3 : 15;
  const tails = new Map<number, Map<string, number>>();
  for (const size of sizes) {
    tails.set(size, sameDecisionTail(preparePack(size, streamLength, opts.seed).stream, runnersBySize.get(size) as Map<string, Runner>, tailPasses, rand));
    log(`  decide: same-decision tail at ${size} rules (${tailPasses} passes)`);
  }

  const find = (kind: TimedTask['kind'], size: number, v: string, gc?: GrowthCase) =>
    tasks.find((t) => t.kind === kind && t.size === size && t.variant === v && t.growth === gc) as TimedTask;
  const sizeResults: SizeResult[] = sizes.map((size) => {
    const vr: Record<string, VariantResult> = {};
    for (const v of variants) {
      const s = find('stream', size, v).values;
      const lat = find('latency', size, v).values;
      const streamNs = median(s);
      const tail = (tails.get(size) as Map<string, number>).get(v) as number;
      vr[v] = { streamNs, wallNs: median(find('stream', size, v).wall), decisionsPerSecond: 1e9 / streamNs, p50Ns: quantile(lat, 0.5), p99Ns: quantile(lat, 0.99), sameDecisionP99: tail, noise: relativeIqr(s) };
    }
    const c = vr.compiled as VariantResult;
    const sp = vr.specialised as VariantResult;
    const h = vr.hand as VariantResult;
    const it = vr.interpreter as VariantResult;
    const st = (v: string) => find('stream', size, v);
    return {
      size,
      mix: mixes.get(size) as StreamMix,
      variants: vr,
      ratios: {
        specialisedVsHand: paired(st('specialised').values, st('hand').values),
        compiledVsSpecialised: paired(st('compiled').values, st('specialised').values),
        specialisedTail: sp.p99Ns / sp.p50Ns,
        handTail: h.p99Ns / h.p50Ns,
        compiledVsHand: paired(st('compiled').values, st('hand').values),
        interpreterVsCompiled: paired(st('interpreter').values, st('compiled').values),
        compiledVsHandWall: paired(st('compiled').wall, st('hand').wall),
        compiledVsHandP50: c.p50Ns / h.p50Ns,
        compiledVsHandP99: c.p99Ns / h.p99Ns,
        compiledVsHandOfMedians: c.streamNs / h.streamNs,
        interpreterVsCompiledOfMedians: it.streamNs / c.streamNs,
      },
    };
  });
  const lo = Math.min(...sizes);
  const hi = Math.max(...sizes);
  const growth: GrowthResult[] = GROWTH_CASES.map((gc) => {
    const ns: Record<string, Record<string, number>> = {};
    const ratio: Record<string, number> = {};
    const perRule: Record<string, number> = {};
    const toolRules = (size: number) => (mixes.get(size) as StreamMix).toolAnchorRules;
    for (const v of variants) {
      ns[v] = Object.fromEntries(sizes.map((s) => [String(s), median(find('growth', s, v, gc).values)]));
      const a = ns[v][String(lo)] as number;
      const b = ns[v][String(hi)] as number;
      ratio[v] = paired(find('growth', hi, v, gc).values, find('growth', lo, v, gc).values);
      perRule[v] = (b - a) / (toolRules(hi) - toolRules(lo));
    }
    return { case: gc, selectedRules: selectedCount[gc], ns, ratio, nsPerUnselectedRule: perRule };
  });
  const unsel = growth.find((g) => g.case === 'unselected') as GrowthResult;
  return {
    meta: { node: process.version, quick, clock, rounds, taskMs, streamLength, growthBatch, variants, labels, seconds: Math.round((Date.now() - started) / 100) / 10 },
    sizes: sizeResults,
    growth,
    targets: {
      specialisedWithin1_5xOfHandAtEverySize: sizeResults.every((s) => s.ratios.specialisedVsHand <= 1.5),
      specialised3xFasterThanGenericAtEverySize: sizeResults.every((s) => s.ratios.compiledVsSpecialised >= 3),
      specialisedP99Within3xOfP50AtEverySize: sizeResults.every((s) => s.ratios.specialisedTail <= 3),
      specialisedSameDecisionP99Within3xAtEverySize: sizeResults.every((s) => (s.variants.specialised as VariantResult).sameDecisionP99 <= 3),
      // "Near zero": the 1000-rule pack costs at most 25 % more than the 10-rule one.
      unselectedGrowthNearZero: (unsel.ratio.specialised as number) <= 1.25,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Reporting.

export const fmtNs = (x: number) => (!Number.isFinite(x) ? '—' : x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));
export const fmtX = (x: number) => (!Number.isFinite(x) ? '—' : x.toFixed(2));
const fmtRate = (x: number) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} M` : x >= 1e3 ? `${(x / 1e3).toFixed(0)} k` : x.toFixed(0));
const flag = (ok: boolean) => (ok ? '' : ' ✗');

export function renderDecide(r: DecideResult): string {
  const out: string[] = [];
  const vs = r.meta.variants;
  const L = (v: string) => r.meta.labels[v] ?? v;
  out.push(`## decide()${r.meta.quick ? ' (--quick: smoke counts, numbers are not meaningful)' : ''}`);
  out.push('');
  const clock = r.meta.clock === 'cpu' ? 'process CPU time' : 'wall clock';
  out.push(
    `${r.meta.node}; streams of ${r.meta.streamLength} occurrences; ${r.meta.rounds} interleaved rounds (after a warm-up round), ` +
      `tinybench ${r.meta.taskMs} ms per task per round; batches (stream passes, growth) timed in ${clock}, medians over rounds; ` +
      `p50/p99 from pooled per-call wall-clock samples (timer overhead subtracted); ${r.meta.seconds} s. Every variant returned ` +
      'deep-equal decisions on every occurrence before timing, and every timed pass re-checks its count of decisions that are not none.',
  );
  out.push('');
  out.push(`### Throughput over the stream (${clock})`);
  out.push('');
  const head = ['rules', ...vs.map((v) => `${L(v)} ns/decision`), ...vs.map((v) => `${L(v)} decisions/s`), 'specialised/hand', 'generic/specialised', 'interp/generic', 'noise'];
  out.push(`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? ' ---: ' : ' ---: ')).join('|')}|`);
  for (const s of r.sizes) {
    const noise = Math.max(...vs.map((v) => (s.variants[v] as VariantResult).noise));
    out.push(
      `| ${s.size} | ${vs.map((v) => fmtNs((s.variants[v] as VariantResult).streamNs)).join(' | ')} | ` +
        `${vs.map((v) => fmtRate((s.variants[v] as VariantResult).decisionsPerSecond)).join(' | ')} | ` +
        `${fmtX(s.ratios.specialisedVsHand)}${flag(s.ratios.specialisedVsHand <= 1.5)} | ${fmtX(s.ratios.compiledVsSpecialised)}${flag(s.ratios.compiledVsSpecialised >= 3)} | ${fmtX(s.ratios.interpreterVsCompiled)} | ${Math.round(noise * 100)}% |`,
    );
  }
  out.push('');
  out.push('Ratios are paired: the median over rounds of the ratio within a round. Noise: the largest relative IQR of the per-round medians among the variants.');
  out.push('');
  out.push('### Latency per decision (wall clock) and the same stream batches by the wall clock');
  out.push('');
  const lh = ['rules', ...vs.flatMap((v) => [`${L(v)} p50`, `${L(v)} p99`]), 'specialised p99/p50 (mix)', 'hand-written p99/p50 (mix)', ...vs.map((v) => `${L(v)} same-decision p99`), ...vs.map((v) => `${L(v)} wall ns/decision`)];
  out.push(`| ${lh.join(' | ')} |`, `|${lh.map(() => ' ---: ').join('|')}|`);
  for (const s of r.sizes) {
    out.push(
      `| ${s.size} | ${vs.map((v) => `${fmtNs((s.variants[v] as VariantResult).p50Ns)} | ${fmtNs((s.variants[v] as VariantResult).p99Ns)}`).join(' | ')} | ` +
        `${fmtX(s.ratios.specialisedTail)}${flag(s.ratios.specialisedTail <= 3)} | ${fmtX(s.ratios.handTail)} | ` +
        `${vs.map((v) => `${fmtX((s.variants[v] as VariantResult).sameDecisionP99)}${v === 'specialised' ? flag((s.variants[v] as VariantResult).sameDecisionP99 <= 3) : ''}`).join(' | ')} | ` +
        `${vs.map((v) => fmtNs((s.variants[v] as VariantResult).wallNs)).join(' | ')} |`,
    );
  }
  out.push('');
  out.push(
    'Latency columns are ns per decision. p99/p50 (mix) pools the calls of the whole stream — different decisions, from a tool call no rule ' +
      'selects to a redaction that splices spans — so it measures the stream\'s spread as much as jitter: the hand-written guard has it too. ' +
      'Same-decision p99: every occurrence decided again in each of several passes from fresh counters, each call timed alone; the p99 of ' +
      'a call\'s time over its own decision\'s median (GC pauses, deopts, scheduling).',
  );
  out.push('');
  out.push('Stream mix (engine decisions, one pass from fresh counters):');
  out.push('');
  out.push('| rules | tool calls | content | tool-anchor rules | selected per tool call | none | block | transform | nudge | warn | counter writes |');
  out.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const s of r.sizes) {
    const e = s.mix.effects;
    out.push(
      `| ${s.size} | ${s.mix.toolCalls} | ${s.mix.contentOccurrences} | ${s.mix.toolAnchorRules} | ${s.mix.meanSelectedPerToolCall.toFixed(1)} | ` +
        `${e.none ?? 0} | ${e.block ?? 0} | ${e.transform ?? 0} | ${e.nudge ?? 0} | ${e.warn ?? 0} | ${s.mix.counterWrites} |`,
    );
  }
  out.push('');
  out.push(`### Growth: the cost of rules that are not selected (${clock})`);
  out.push('');
  const sizes = r.sizes.map((s) => s.size);
  const lo = Math.min(...sizes);
  const hi = Math.max(...sizes);
  const gh = ['occurrence', 'variant', ...sizes.map((s) => `${s} rules ns`), `${hi}/${lo}`, 'ns per unselected rule'];
  out.push(`| ${gh.join(' | ')} |`, `| --- | --- |${gh.slice(2).map(() => ' ---: ').join('|')}|`);
  for (const g of r.growth) {
    for (const v of vs) {
      const ns = g.ns[v] as Record<string, number>;
      const ratio = g.ratio[v] as number;
      out.push(
        `| ${g.case} (${g.selectedRules} selected) | ${L(v)} | ${sizes.map((s) => fmtNs(ns[String(s)] as number)).join(' | ')} | ` +
          `${fmtX(ratio)}${v === 'specialised' && g.case === 'unselected' ? flag(ratio <= 1.25) : ''} | ${fmtNs(g.nsPerUnselectedRule[v] as number)} |`,
      );
    }
  }
  out.push('');
  const t = r.targets;
  const met = (x: boolean) => (x ? 'met' : 'NOT met');
  out.push(
    `Targets: specialised within 1.5× of hand-written at every size — ${met(t.specialisedWithin1_5xOfHandAtEverySize)}; ` +
      `specialised ≥ 3× faster than the generic engine on the same bundle — ${met(t.specialised3xFasterThanGenericAtEverySize)}; ` +
      `specialised p99 ≤ 3× p50 over the stream's mix — ${met(t.specialisedP99Within3xOfP50AtEverySize)}, for the same decision repeated — ${met(t.specialisedSameDecisionP99Within3xAtEverySize)}; ` +
      `unselected-rule cost near zero (specialised, ${hi}/${lo} ≤ 1.25 at the unselected occurrence) — ${met(t.unselectedGrowthNearZero)}. ✗ marks a miss.`,
  );
  return out.join('\n');
}

export function decideJson(r: DecideResult): string {
  return `${JSON.stringify({ benchmark: 'decide', ...r }, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 1)}\n`;
}
