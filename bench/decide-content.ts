/**
 * The decision benchmark on the second realistic pack (bench/content-pack: a chat assistant's 19
 * hand-written rules at three content anchors — span redactions, counters and a breaker,
 * overrides, advisories; its stream from content-pack.ts), by
 *
 *   specialised  — `createEngine(compileToBundle(pack))`: the bundle's per-anchor decision procedures
 *   compiled     — the same bundle with `procedures: false`: the generic engine over its closures
 *   hand         — content-baseline.ts: the guard written by hand for exactly this pack
 *
 * in one process, one run, interleaved exactly as decide.ts does (shuffled rounds of tinybench
 * tasks, batches timed in process CPU time, paired ratios, pooled per-call wall-clock latency,
 * the same-decision tail), after checking that all three return deep-equal decisions — decision,
 * code, rule, copy, advisories, trace, side-effects, events, counters, transforms, skipped spans,
 * content — on every occurrence of the stream, and that the procedures handed none of them to the
 * generic path. Bytes allocated per decision are measured as alloc.ts does (GCProfiler).
 *
 * The pack is at its natural size, 19 rules: it is written by hand, and so is its guard. Growing
 * it to 100 or 1000 rules would mean generated rules — and a generated guard — which is what the
 * gateway pack of decide.ts already measures; what this pack adds is the content path (spans,
 * copy with facts, counters read across anchors, a breaker), which does not grow with the pack.
 */
import { compileToBundle } from '../compiler/index.js';
import { createEngine, MemoryCounterStore, type Engine, type Occurrence } from '../runtime/index.js';
import { allocated, ensureGc } from './alloc.js';
import { createContentBaseline } from './content-baseline.js';
import { generateContentStream, loadContentPack } from './content-pack.js';
import {
  firstDifference, fmtNs, fmtX, makeOneDecide, makeStreamBatch, paired, runTask, sameDecisionTail,
  type Clock, type Runner, type TimedTask, type VariantResult,
} from './decide.js';
import { median, prng, quantile, relativeIqr, shuffle } from './stats.js';

export interface ContentOptions {
  quick?: boolean;
  streamLength?: number;
  rounds?: number;
  taskMs?: number;
  /** Decisions per allocation measurement (0: skip). */
  allocDecisions?: number;
  clock?: Clock;
  seed?: number;
  log?: (line: string) => void;
}

export const CONTENT_VARIANTS = ['specialised', 'compiled', 'hand'] as const;
export type ContentVariant = (typeof CONTENT_VARIANTS)[number];
const LABEL: Readonly<Record<ContentVariant, string>> = { specialised: 'specialised', compiled: 'generic (compiled)', hand: 'hand-written' };

/** The gateway section's figures for one variant, and its allocation. */
export interface ContentVariantResult extends VariantResult {
  bytesPerDecision: number;
}

export interface ContentResult {
  meta: { node: string; quick: boolean; clock: Clock; rounds: number; taskMs: number; streamLength: number; rules: number; allocDecisions: number; seconds: number };
  mix: { occurrences: number; byAnchor: Record<string, number>; effects: Record<string, number>; transformed: number; skippedSpans: number; counterWrites: number; fallbacks: number };
  variants: Record<ContentVariant, ContentVariantResult>;
  ratios: { specialisedVsHand: number; compiledVsSpecialised: number; specialisedTail: number; handTail: number; specialisedAllocVsHand: number };
  targets: { specialisedWithin1_5xOfHand: boolean; specialised3xFasterThanGeneric: boolean; specialisedP99Within3xOfP50: boolean; specialisedSameDecisionP99Within3x: boolean };
}

interface Prepared {
  rules: number;
  stream: readonly Occurrence[];
  runners: Map<ContentVariant, Runner>;
  specialised: Engine;
}

function prepare(streamLength: number, seed?: number): Prepared {
  const pack = loadContentPack();
  const bundle = compileToBundle(pack, 'specialised');
  const engine = (procedures: boolean) => {
    const store = new MemoryCounterStore();
    const e = createEngine(bundle, { counters: store, procedures });
    return { e, runner: { decide: (o: Occurrence) => e.decide(o), reset: () => store.clear() } satisfies Runner };
  };
  const sp = engine(true);
  const generic = engine(false);
  const hand = createContentBaseline();
  return {
    rules: pack.rules.length,
    stream: generateContentStream({ length: streamLength, ...(seed === undefined ? {} : { seed }) }),
    runners: new Map<ContentVariant, Runner>([['specialised', sp.runner], ['compiled', generic.runner], ['hand', hand]]),
    specialised: sp.e,
  };
}

const fmtJson = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 400 ? `${s.slice(0, 400)}…` : s;
};

/**
 * Decide the stream from fresh counters with every variant and require decisions deep-equal to the
 * generic engine's; throws naming the occurrence, the variant and the first differing field.
 */
export function checkContentAgreement(stream: readonly Occurrence[], runners: ReadonlyMap<ContentVariant, Runner>): Omit<ContentResult['mix'], 'fallbacks'> & { notNone: number } {
  const ref = runners.get('compiled') as Runner;
  const others = [...runners].filter(([v]) => v !== 'compiled');
  for (const r of runners.values()) r.reset();
  const mix = { occurrences: stream.length, byAnchor: {} as Record<string, number>, effects: {} as Record<string, number>, transformed: 0, skippedSpans: 0, counterWrites: 0, notNone: 0 };
  stream.forEach((occ, i) => {
    const expected = ref.decide(occ);
    for (const [v, r] of others) {
      const d = firstDifference(expected, r.decide(occ));
      if (d !== null) {
        throw new Error(
          `bench: the ${LABEL[v]} variant disagrees with the generic engine on occurrence #${i} of the content stream, at ${d.path}: ` +
            `engine ${fmtJson(d.a)}, ${v} ${fmtJson(d.b)}\n  occurrence: ${fmtJson(occ)}\n  engine decision: ${fmtJson(expected)}`,
        );
      }
    }
    mix.byAnchor[occ.anchor] = (mix.byAnchor[occ.anchor] ?? 0) + 1;
    mix.effects[expected.decision] = (mix.effects[expected.decision] ?? 0) + 1;
    if (expected.decision !== 'none') mix.notNone++;
    if (expected.decision === 'transform' && expected.content !== occ.content) mix.transformed++;
    mix.skippedSpans += expected.skippedTransforms.length;
    mix.counterWrites += Object.keys(expected.counters).length;
  });
  for (const r of runners.values()) r.reset();
  return mix;
}

/** Bytes allocated per decision over the stream (counters reset at every pass), median of three. */
function allocPerDecision(r: Runner, stream: readonly Occurrence[], n: number): number {
  const { gc } = ensureGc();
  let i = 0;
  const run = (k: number) => {
    for (let j = 0; j < k; j++) {
      if (i >= stream.length) {
        i = 0;
        r.reset();
      }
      r.decide(stream[i++] as Occurrence);
    }
  };
  run(Math.min(n, 20_000));
  return median([0, 1, 2].map(() => allocated(gc, () => run(n)).bytes / n));
}

export function runContentBench(opts: ContentOptions = {}): ContentResult {
  const started = Date.now();
  const quick = opts.quick ?? false;
  const streamLength = opts.streamLength ?? (quick ? 200 : 2000);
  const rounds = opts.rounds ?? (quick ? 2 : 12);
  const taskMs = opts.taskMs ?? (quick ? 4 : 60);
  const allocDecisions = opts.allocDecisions ?? (quick ? 2_000 : 100_000);
  const clock = opts.clock ?? 'cpu';
  const log = opts.log ?? (() => {});
  const p = prepare(streamLength, opts.seed);
  const fallbacksBefore = (p.specialised as unknown as { procedureFallbacks: number }).procedureFallbacks;
  const checked = checkContentAgreement(p.stream, p.runners);
  const fallbacks = (p.specialised as unknown as { procedureFallbacks: number }).procedureFallbacks - fallbacksBefore;
  if (fallbacks !== 0) throw new Error(`bench: the content pack's procedures handed ${fallbacks} occurrences to the generic path`);
  const { notNone, ...mix } = checked;
  log(`decide-content: ${p.rules} rules; all ${CONTENT_VARIANTS.length} variants agree on ${p.stream.length} occurrences (${notNone} not none, ${mix.skippedSpans} spans skipped)`);

  const tasks: TimedTask[] = [];
  for (const v of CONTENT_VARIANTS) {
    const r = p.runners.get(v) as Runner;
    const stream = p.stream;
    const batch = makeStreamBatch(`content:stream:${v}`);
    tasks.push({
      name: `content:stream:${v}`, kind: 'stream', size: p.rules, variant: v, per: stream.length, minIterations: 2, values: [], wall: [],
      beforeEach: () => r.reset(),
      fn: () => {
        const n = batch(r, stream);
        if (n !== notNone) throw new Error(`bench: ${v} on the content stream: ${n} decisions were not none, expected ${notNone}`);
      },
    });
    const one = makeOneDecide(`content:latency:${v}`);
    let i = 0;
    tasks.push({
      name: `content:latency:${v}`, kind: 'latency', size: p.rules, variant: v, per: 1, minIterations: 50, values: [], wall: [],
      beforeEach: () => {
        if (i >= stream.length) {
          i = 0;
          r.reset();
        }
      },
      fn: () => one(r, stream[i++] as Occurrence),
    });
  }
  const rand = prng(opts.seed ?? 0xc0de);
  log(`decide-content: ${tasks.length} tasks × ${rounds} rounds (+1 warm-up), ${taskMs} ms each`);
  for (let round = 0; round <= rounds; round++) {
    for (const t of shuffle([...tasks], rand)) runTask(t, round === 0 ? Math.max(1, taskMs / 4) : taskMs, round > 0, clock);
  }
  const tails = sameDecisionTail(p.stream, p.runners, quick ? 3 : 15, rand);
  const bytes = new Map<ContentVariant, number>();
  for (const v of CONTENT_VARIANTS) bytes.set(v, allocDecisions > 0 ? allocPerDecision(p.runners.get(v) as Runner, p.stream, allocDecisions) : NaN);
  log('decide-content: timed, tail and allocation measured');

  const find = (kind: TimedTask['kind'], v: ContentVariant) => tasks.find((t) => t.kind === kind && t.variant === v) as TimedTask;
  const variants = {} as Record<ContentVariant, ContentVariantResult>;
  for (const v of CONTENT_VARIANTS) {
    const s = find('stream', v);
    const lat = find('latency', v).values;
    const streamNs = median(s.values);
    variants[v] = {
      streamNs, wallNs: median(s.wall), decisionsPerSecond: 1e9 / streamNs, p50Ns: quantile(lat, 0.5), p99Ns: quantile(lat, 0.99),
      sameDecisionP99: tails.get(v) as number, bytesPerDecision: bytes.get(v) as number, noise: relativeIqr(s.values),
    };
  }
  const st = (v: ContentVariant) => find('stream', v).values;
  const ratios = {
    specialisedVsHand: paired(st('specialised'), st('hand')),
    compiledVsSpecialised: paired(st('compiled'), st('specialised')),
    specialisedTail: variants.specialised.p99Ns / variants.specialised.p50Ns,
    handTail: variants.hand.p99Ns / variants.hand.p50Ns,
    specialisedAllocVsHand: variants.specialised.bytesPerDecision / variants.hand.bytesPerDecision,
  };
  return {
    meta: { node: process.version, quick, clock, rounds, taskMs, streamLength, rules: p.rules, allocDecisions, seconds: Math.round((Date.now() - started) / 100) / 10 },
    mix: { ...mix, fallbacks },
    variants,
    ratios,
    targets: {
      specialisedWithin1_5xOfHand: ratios.specialisedVsHand <= 1.5,
      specialised3xFasterThanGeneric: ratios.compiledVsSpecialised >= 3,
      specialisedP99Within3xOfP50: ratios.specialisedTail <= 3,
      specialisedSameDecisionP99Within3x: variants.specialised.sameDecisionP99 <= 3,
    },
  };
}

const flag = (ok: boolean) => (ok ? '' : ' ✗');
const bytesFmt = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');

export function renderContent(r: ContentResult): string {
  const out: string[] = [];
  const clock = r.meta.clock === 'cpu' ? 'process CPU time' : 'wall clock';
  out.push(`## decide() on the content pack${r.meta.quick ? ' (--quick: smoke counts, numbers are not meaningful)' : ''}`);
  out.push('');
  out.push(
    `${r.meta.node}; bench/content-pack (${r.meta.rules} rules, its natural size); a stream of ${r.meta.streamLength} occurrences; ` +
      `${r.meta.rounds} interleaved rounds (after a warm-up round), tinybench ${r.meta.taskMs} ms per task per round; stream batches in ${clock}, ` +
      `medians over rounds, ratios paired by round; p50/p99 from pooled per-call wall-clock samples; bytes allocated per decision by ` +
      `GCProfiler over ${r.meta.allocDecisions.toLocaleString('en-US')} decisions; ${r.meta.seconds} s. All three variants returned deep-equal ` +
      `decisions on every occurrence before timing, and the procedures handed ${r.mix.fallbacks} to the generic path.`,
  );
  out.push('');
  const vs = CONTENT_VARIANTS;
  const head = ['variant', 'ns/decision', 'decisions/s', 'p50 ns', 'p99 ns', 'p99/p50 (mix)', 'same-decision p99', 'B/decision', 'wall ns/decision', 'noise'];
  out.push(`| ${head.join(' | ')} |`, `| --- |${head.slice(1).map(() => ' ---: ').join('|')}|`);
  for (const v of vs) {
    const x = r.variants[v];
    out.push(
      `| ${LABEL[v]} | ${fmtNs(x.streamNs)} | ${Math.round(x.decisionsPerSecond).toLocaleString('en-US')} | ${fmtNs(x.p50Ns)} | ${fmtNs(x.p99Ns)} | ` +
        `${fmtX(x.p99Ns / x.p50Ns)}${v === 'specialised' ? flag(r.targets.specialisedP99Within3xOfP50) : ''} | ` +
        `${fmtX(x.sameDecisionP99)}${v === 'specialised' ? flag(r.targets.specialisedSameDecisionP99Within3x) : ''} | ${bytesFmt(x.bytesPerDecision)} | ${fmtNs(x.wallNs)} | ${Math.round(x.noise * 100)}% |`,
    );
  }
  out.push('');
  out.push(
    `specialised / hand-written **${fmtX(r.ratios.specialisedVsHand)}×**${flag(r.targets.specialisedWithin1_5xOfHand)} (target ≤ 1.5); ` +
      `generic / specialised **${fmtX(r.ratios.compiledVsSpecialised)}×**${flag(r.targets.specialised3xFasterThanGeneric)} (target ≥ 3); ` +
      `allocation specialised / hand-written ${fmtX(r.ratios.specialisedAllocVsHand)}×.`,
  );
  out.push('');
  const m = r.mix;
  const e = m.effects;
  out.push(
    `Stream mix: ${Object.entries(m.byAnchor).map(([a, n]) => `${n} ${a}`).join(', ')}; decisions none ${e.none ?? 0}, block ${e.block ?? 0}, ` +
      `transform ${e.transform ?? 0} (${m.transformed} changing the content), nudge ${e.nudge ?? 0}, warn ${e.warn ?? 0}; ` +
      `${m.skippedSpans} spans skipped for overlap; ${m.counterWrites} counter writes.`,
  );
  return out.join('\n');
}

export function contentJson(r: ContentResult): string {
  return `${JSON.stringify({ benchmark: 'decide-content', ...r }, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 1)}\n`;
}
