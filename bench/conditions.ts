/**
 * Condition benchmark: per condition, the median cost of one evaluation by
 *
 *   compiled     — oarc's emitted closure (`loadCondition`)
 *   interpreter  — oarc's tree-walking oracle (`interpret`)
 *   cel-js       — `@marcbachmann/cel-js`, prepared once, reading the same fact reader
 *   hand-written — a JS function a competent engineer would write against the same reader
 *   cel-js plain — (reference) cel-js over a prebuilt plain context, no reader at all
 *
 * all measured in one process, in one run, interleaved. Every variant must give the same boolean
 * on every case and every scenario before anything is timed; the run aborts otherwise.
 *
 * Usage: npm run bench:conditions [-- --quick] [-- --json] [-- --reader=reused|fresh|both]
 *        [-- --samples=N]
 * Writes bench/results/conditions.json (not for --quick). --json prints that JSON instead of the
 * markdown report; progress goes to stderr.
 */
import { mkdirSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkConditionSource, interpret, loadCondition, type TExpr } from '../compiler/expr/index.js';
import { ObjectFactReader, type FactReader } from '../runtime/facts.js';
import { Raise } from '../runtime/raise.js';
import { CASES, type ConditionCase } from './conditions-cases.js';
import { SCENARIOS, SYMBOLS, assertSlots, hostValues, type ScenarioName } from './conditions-env.js';
import { plainCel, readerCel, type CelProgram } from './cel.js';
import { geomean, median, prng, relativeIqr, shuffle } from './stats.js';

export { CASES } from './conditions-cases.js';

export type VariantId = 'compiled' | 'interpreter' | 'cel' | 'hand' | 'celPlain';
export const VARIANTS: readonly VariantId[] = ['compiled', 'interpreter', 'cel', 'hand', 'celPlain'];
export const VARIANT_LABEL: Readonly<Record<VariantId, string>> = {
  compiled: 'compiled',
  interpreter: 'interpreter',
  cel: 'cel-js',
  hand: 'hand-written',
  celPlain: 'cel-js plain ctx',
};

/**
 * How the fact reader is supplied to each evaluation — identical for every variant.
 * - `reused`: one reader per (case, variant), built once: facts are checked on first read and
 *   served from the reader's cache afterwards, as for every rule after the first in a pack.
 * - `fresh`: a new `ObjectFactReader` per evaluation: every evaluation pays reader construction
 *   and first-read fact checks, as a single-rule decision would.
 */
export type ReaderMode = 'reused' | 'fresh';

export const READER_MODE_TEXT: Readonly<Record<ReaderMode, string>> = {
  reused:
    'one reader per (case, variant), reused across evaluations: facts are checked once and then served from the reader cache (as for every rule after the first at an occurrence)',
  fresh:
    'a new ObjectFactReader per evaluation for every variant: each evaluation pays reader construction and first-read fact checks',
};

export interface BenchOptions {
  /** Tiny counts for a CI smoke run. */
  quick?: boolean;
  readers?: readonly ReaderMode[];
  /** Timed samples per (case, variant, reader mode). */
  samples?: number;
  /** Untimed batches per (case, variant, reader mode) before sampling. */
  warmup?: number;
  /** Lower bound on evaluations per sample. */
  minBatch?: number;
  /** Each sample of the hand-written variant should take at least this long. */
  targetSampleNs?: number;
  cases?: readonly ConditionCase[];
  seed?: number;
  /** Progress lines (stderr by default in the CLI, silent otherwise). */
  log?: (line: string) => void;
}

export interface CaseResult {
  id: string;
  /** Evaluations per sample. */
  batch: number;
  /** Median ns per evaluation; `null` where CEL cannot express the condition. */
  ns: Record<VariantId, number | null>;
  /** Largest relative interquartile range among the variants: a noise figure. */
  noise: number;
  ratios: Ratios;
}

export interface Ratios {
  compiledVsHand: number;
  interpreterVsCompiled: number;
  celVsCompiled: number | null;
  celPlainVsCompiled: number | null;
}

export interface ModeResult {
  reader: ReaderMode;
  readerText: string;
  /** Median ns per evaluation of the harness alone: the loop, the reader supply, `() => true`. */
  harnessNs: number;
  cases: CaseResult[];
  /** Geometric means over the cases (CEL columns over the cases CEL expresses). */
  geomean: { ns: Record<VariantId, number>; ratios: Ratios };
  targets: { compiledWithin1_5xOfHand: boolean; compiled5xFasterThanCel: boolean };
}

export interface BenchResult {
  meta: {
    node: string;
    cpu: string;
    cores: number;
    quick: boolean;
    samples: number;
    warmup: number;
    cases: number;
    agreement: { scenarios: number; evaluations: number };
    seconds: number;
    date: string;
  };
  modes: ModeResult[];
}

// ---------------------------------------------------------------------------------------------
// Preparation: everything compiled, parsed and checked once, outside any timed loop.

interface PreparedCase {
  readonly c: ConditionCase;
  readonly typed: TExpr;
  readonly compiled: (f: FactReader) => unknown;
  readonly cel: CelProgram | null;
  readonly celPlain: CelProgram | null;
}

const celR = readerCel(SYMBOLS);
const celP = plainCel(SYMBOLS);

const VALUES: Readonly<Record<string, Readonly<Record<string, unknown>>>> = Object.fromEntries(
  Object.entries(SCENARIOS).map(([name, spec]) => [name, hostValues(spec)]),
);

function prepare(c: ConditionCase): PreparedCase {
  const checked = checkConditionSource(c.oar, SYMBOLS);
  if (!checked.ok) {
    throw new Error(`bench: case ${c.id}: oarc rejects ${JSON.stringify(c.oar)}: ${checked.errors.map((e) => e.message).join('; ')}`);
  }
  const typed = checked.condition.typed;
  return {
    c,
    typed,
    compiled: loadCondition(typed),
    cel: c.cel === null ? null : celR.prepare(c.cel),
    celPlain: c.cel === null ? null : celP.prepare(c.cel),
  };
}

type Evaluate = (f: FactReader) => unknown;

/** The evaluation function of one variant of one case, for one scenario's host values. */
function variantFn(p: PreparedCase, v: VariantId, scenario: ScenarioName): Evaluate | null {
  switch (v) {
    case 'compiled':
      return p.compiled;
    case 'interpreter': {
      const typed = p.typed;
      return (f) => {
        const r = interpret(typed, f);
        if (!r.ok) throw r.raise;
        return r.value;
      };
    }
    case 'hand':
      return p.c.hand;
    case 'cel': {
      const program = p.cel;
      if (program === null) return null;
      return (f) => celR.run(program, f);
    }
    case 'celPlain': {
      const program = p.celPlain;
      if (program === null) return null;
      const values = VALUES[scenario] as Readonly<Record<string, unknown>>;
      const ctx = celP.context(values);
      return () => celP.run(program, ctx, values);
    }
  }
}

function newReader(scenario: ScenarioName): ObjectFactReader {
  return new ObjectFactReader(SYMBOLS, VALUES[scenario] as Readonly<Record<string, unknown>>);
}

// ---------------------------------------------------------------------------------------------
// Agreement: every variant, every case, every scenario, the same boolean — before any timing.

function outcome(fn: Evaluate, f: FactReader): string {
  try {
    const v = fn(f);
    return typeof v === 'boolean' ? String(v) : `non-boolean ${typeof v} ${String(v)}`;
  } catch (e) {
    if (e instanceof Raise) return `raise ${e.code}`;
    return `throw ${e instanceof Error ? e.message : String(e)}`;
  }
}

export interface Agreement {
  scenarios: number;
  evaluations: number;
  /** case id → scenario → the agreed value. */
  values: Record<string, Record<string, boolean>>;
}

/** Throws, naming the case, the scenario and every variant's answer, on any disagreement. */
export function checkAgreement(cases: readonly ConditionCase[] = CASES): Agreement {
  return agree(cases.map(prepare));
}

function agree(prepared: readonly PreparedCase[]): Agreement {
  const values: Record<string, Record<string, boolean>> = {};
  let evaluations = 0;
  const scenarios = Object.keys(SCENARIOS) as ScenarioName[];
  for (const p of prepared) {
    const row: Record<string, boolean> = {};
    for (const s of scenarios) {
      const answers: [VariantId, string][] = [];
      for (const v of VARIANTS) {
        const fn = variantFn(p, v, s);
        if (fn === null) continue;
        // A fresh reader and, for the reused pattern, a second evaluation on the same reader.
        const reader = newReader(s);
        answers.push([v, outcome(fn, reader)], [v, outcome(fn, reader)]);
        evaluations += 2;
      }
      const first = answers[0]?.[1] as string;
      if (first !== 'true' && first !== 'false') {
        throw new Error(`bench: case ${p.c.id}, scenario ${s}: compiled gives ${first}, not a boolean`);
      }
      if (answers.some(([, a]) => a !== first)) {
        const list = answers.map(([v, a]) => `${VARIANT_LABEL[v]}=${a}`).join(', ');
        throw new Error(`bench: variants disagree on case ${p.c.id} (${p.c.oar}) in scenario ${s}: ${list}`);
      }
      row[s] = first === 'true';
    }
    values[p.c.id] = row;
  }
  return { scenarios: scenarios.length, evaluations, values };
}

// ---------------------------------------------------------------------------------------------
// Timing.

type Batch = (fn: Evaluate, reader: () => FactReader, n: number) => number;

/**
 * A batch loop of its own for every (case, variant, mode): a distinct function (the label makes
 * the source unique, so V8 shares neither code nor type feedback between them), so each variant's
 * call site stays monomorphic and may inline — the same treatment for all. Returns the number of
 * `true` results, which is checked and keeps the work observable.
 */
function makeBatch(label: string): Batch {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function(
    'fn',
    'reader',
    'n',
    `"use strict"; // ${label}\nlet t = 0;\nfor (let i = 0; i < n; i++) { if (fn(reader()) === true) t++; }\nreturn t;`,
  ) as Batch;
}

interface Stream {
  readonly caseId: string;
  readonly variant: VariantId | 'harness';
  readonly fn: Evaluate;
  readonly reader: () => FactReader;
  readonly batch: Batch;
  readonly expectTrue: boolean;
  n: number;
  readonly samples: number[];
}

function sample(s: Stream): number {
  const t0 = process.hrtime.bigint();
  const t = s.batch(s.fn, s.reader, s.n);
  const dt = Number(process.hrtime.bigint() - t0);
  if (t !== (s.expectTrue ? s.n : 0)) {
    throw new Error(`bench: case ${s.caseId}, ${s.variant}: ${t} of ${s.n} evaluations returned true, expected ${s.expectTrue ? s.n : 0}`);
  }
  return dt / s.n;
}

function readerSupply(mode: ReaderMode, scenario: ScenarioName): () => FactReader {
  if (mode === 'fresh') {
    const values = VALUES[scenario] as Readonly<Record<string, unknown>>;
    return () => new ObjectFactReader(SYMBOLS, values);
  }
  const r = newReader(scenario);
  return () => r;
}

function runMode(
  mode: ReaderMode,
  prepared: readonly PreparedCase[],
  agreement: Agreement,
  o: Required<Omit<BenchOptions, 'cases' | 'log' | 'readers'>>,
  log: (line: string) => void,
): ModeResult {
  const streams: Stream[] = [];
  const byCase = new Map<string, Stream[]>();
  for (const p of prepared) {
    const expectTrue = (agreement.values[p.c.id] as Record<string, boolean>)[p.c.timed] as boolean;
    const list: Stream[] = [];
    for (const v of VARIANTS) {
      const fn = variantFn(p, v, p.c.timed);
      if (fn === null) continue;
      list.push({
        caseId: p.c.id,
        variant: v,
        fn,
        reader: readerSupply(mode, p.c.timed),
        batch: makeBatch(`${mode}:${p.c.id}:${v}`),
        expectTrue,
        n: o.minBatch,
        samples: [],
      });
    }
    byCase.set(p.c.id, list);
    streams.push(...list);
  }
  const harness: Stream = {
    caseId: '(harness)',
    variant: 'harness',
    fn: () => true,
    reader: readerSupply(mode, 'shell'),
    batch: makeBatch(`${mode}:harness`),
    expectTrue: true,
    n: o.minBatch,
    samples: [],
  };
  streams.push(harness);

  // Calibrate: size each case's batches so its hand-written sample lasts targetSampleNs.
  if (!o.quick) {
    for (const list of byCase.values()) {
      const hand = list.find((s) => s.variant === 'hand') as Stream;
      for (let i = 0; i < 3; i++) sample(hand);
      const per = Math.min(sample(hand), sample(hand), sample(hand));
      const n = Math.max(o.minBatch, Math.min(100_000, Math.ceil(o.targetSampleNs / Math.max(per, 0.1) / 100) * 100));
      for (const s of list) s.n = n;
    }
    harness.n = Math.max(...[...byCase.values()].map((l) => (l[0] as Stream).n));
  }

  const rand = prng(o.seed);
  const order = [...byCase.keys()];
  const round = (r: number, record: boolean) => {
    for (const id of shuffle(order, rand)) {
      const list = byCase.get(id) as Stream[];
      // Rotate the variant order every round so no variant always runs first or last.
      for (let k = 0; k < list.length; k++) {
        const s = list[(k + r) % list.length] as Stream;
        const ns = sample(s);
        if (record) s.samples.push(ns);
      }
    }
    const ns = sample(harness);
    if (record) harness.samples.push(ns);
  };
  for (let r = 0; r < o.warmup; r++) round(r, false);
  const started = Date.now();
  for (let r = 0; r < o.samples; r++) {
    round(r, true);
    if ((r + 1) % 10 === 0) log(`  [${mode}] ${r + 1}/${o.samples} rounds (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }

  const cases: CaseResult[] = prepared.map((p) => {
    const list = byCase.get(p.c.id) as Stream[];
    const ns = { compiled: null, interpreter: null, cel: null, hand: null, celPlain: null } as Record<VariantId, number | null>;
    let noise = 0;
    for (const s of list) {
      ns[s.variant as VariantId] = median(s.samples);
      noise = Math.max(noise, relativeIqr(s.samples));
    }
    return { id: p.c.id, batch: (list[0] as Stream).n, ns, noise, ratios: ratios(ns) };
  });
  const gm = (v: VariantId) => geomean(cases.map((c) => c.ns[v]).filter((x): x is number => x !== null));
  const gmNs = { compiled: gm('compiled'), interpreter: gm('interpreter'), cel: gm('cel'), hand: gm('hand'), celPlain: gm('celPlain') };
  const gr = (k: keyof Ratios) => geomean(cases.map((c) => c.ratios[k]).filter((x): x is number => x !== null));
  const geo: Ratios = {
    compiledVsHand: gr('compiledVsHand'),
    interpreterVsCompiled: gr('interpreterVsCompiled'),
    celVsCompiled: gr('celVsCompiled'),
    celPlainVsCompiled: gr('celPlainVsCompiled'),
  };
  return {
    reader: mode,
    readerText: READER_MODE_TEXT[mode],
    harnessNs: median(harness.samples),
    cases,
    geomean: { ns: gmNs, ratios: geo },
    targets: {
      compiledWithin1_5xOfHand: geo.compiledVsHand <= 1.5,
      compiled5xFasterThanCel: (geo.celVsCompiled ?? 0) >= 5,
    },
  };
}

function ratios(ns: Record<VariantId, number | null>): Ratios {
  const c = ns.compiled as number;
  return {
    compiledVsHand: c / (ns.hand as number),
    interpreterVsCompiled: (ns.interpreter as number) / c,
    celVsCompiled: ns.cel === null ? null : ns.cel / c,
    celPlainVsCompiled: ns.celPlain === null ? null : ns.celPlain / c,
  };
}

/** Prepare, check agreement, then time every case × variant × reader mode. Pure apart from time. */
export function runConditionBench(opts: BenchOptions = {}): BenchResult {
  const started = Date.now();
  const quick = opts.quick ?? false;
  const o = {
    quick,
    samples: opts.samples ?? (quick ? 5 : 60),
    warmup: opts.warmup ?? (quick ? 1 : 5),
    minBatch: opts.minBatch ?? (quick ? 100 : 1000),
    targetSampleNs: opts.targetSampleNs ?? 50_000,
    seed: opts.seed ?? 0x0a7c,
  };
  const log = opts.log ?? (() => {});
  assertSlots();
  const prepared = (opts.cases ?? CASES).map(prepare);
  const agreement = agree(prepared);
  log(`agreement: ${prepared.length} cases × ${agreement.scenarios} scenarios × ${VARIANTS.length} variants — all agree (${agreement.evaluations} evaluations)`);
  const modes = (opts.readers ?? ['reused', 'fresh']).map((m) => runMode(m, prepared, agreement, o, log));
  const cpu = cpus();
  return {
    meta: {
      node: process.version,
      cpu: cpu[0]?.model ?? 'unknown',
      cores: cpu.length,
      quick,
      samples: o.samples,
      warmup: o.warmup,
      cases: prepared.length,
      agreement: { scenarios: agreement.scenarios, evaluations: agreement.evaluations },
      seconds: Math.round((Date.now() - started) / 100) / 10,
      date: new Date().toISOString(),
    },
    modes,
  };
}

// ---------------------------------------------------------------------------------------------
// Reporting.

const fmtNs = (x: number | null) => (x === null ? '—' : x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));
const fmtX = (x: number | null) => (x === null ? '—' : x.toFixed(2));

/** One markdown table for one reader mode: a row per condition and a geometric-mean row. */
export function renderTable(m: ModeResult): string {
  const head = [
    'condition', 'compiled ns', 'hand ns', 'interp ns', 'cel-js ns', 'cel plain ns',
    'compiled/hand', 'interp/compiled', 'cel-js/compiled', 'cel plain/compiled', 'noise',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const c of m.cases) {
    const flagHand = c.ratios.compiledVsHand <= 1.5 ? '' : ' ✗';
    const flagCel = c.ratios.celVsCompiled === null || c.ratios.celVsCompiled >= 5 ? '' : ' ✗';
    lines.push(
      `| ${c.id} | ${fmtNs(c.ns.compiled)} | ${fmtNs(c.ns.hand)} | ${fmtNs(c.ns.interpreter)} | ${fmtNs(c.ns.cel)} | ` +
        `${fmtNs(c.ns.celPlain)} | ${fmtX(c.ratios.compiledVsHand)}${flagHand} | ${fmtX(c.ratios.interpreterVsCompiled)} | ` +
        `${fmtX(c.ratios.celVsCompiled)}${flagCel} | ${fmtX(c.ratios.celPlainVsCompiled)} | ${Math.round(c.noise * 100)}% |`,
    );
  }
  const g = m.geomean;
  lines.push(
    `| **geomean** | **${fmtNs(g.ns.compiled)}** | **${fmtNs(g.ns.hand)}** | **${fmtNs(g.ns.interpreter)}** | ` +
      `**${fmtNs(g.ns.cel)}** | **${fmtNs(g.ns.celPlain)}** | **${fmtX(g.ratios.compiledVsHand)}** | ` +
      `**${fmtX(g.ratios.interpreterVsCompiled)}** | **${fmtX(g.ratios.celVsCompiled)}** | **${fmtX(g.ratios.celPlainVsCompiled)}** | |`,
  );
  return lines.join('\n');
}

export function renderReport(r: BenchResult, cases: readonly ConditionCase[] = CASES): string {
  const out: string[] = [];
  out.push(`# Condition benchmark${r.meta.quick ? ' (--quick: smoke counts, numbers are not meaningful)' : ''}`);
  out.push('');
  out.push(
    `${r.meta.node}, ${r.meta.cpu} × ${r.meta.cores}; ${r.meta.cases} conditions; median of ${r.meta.samples} interleaved ` +
      `samples per variant per condition (each a batch of evaluations, after ${r.meta.warmup} warm-up rounds); ` +
      `${r.meta.seconds} s total.`,
  );
  out.push(
    `Agreement checked before timing: every variant returns the same boolean for every condition in ` +
      `${r.meta.agreement.scenarios} scenarios (${r.meta.agreement.evaluations} evaluations); each timed batch re-checks its count of true results.`,
  );
  out.push(
    'cel-js: `env.parse()` + `.check()` once per condition, only the call is timed; facts are context getters over the same ' +
      'FactReader (ints as BigInt); observation functions (`fire_count_of`, `tool_arg_string`, `tool_arg_int`) are registered ' +
      'CEL functions calling the same reader. "cel plain" is cel-js over a prebuilt plain context (its best case; it ignores the ' +
      'reader the harness still supplies, so loop overhead is identical). Every variant runs in its own batch loop (own call site). ' +
      'Hand-written: direct JS over the same reader. ns = median nanoseconds per evaluation; noise = largest relative IQR among the variants.',
  );
  for (const m of r.modes) {
    out.push('');
    out.push(`## Reader: ${m.reader} — ${m.readerText}`);
    out.push('');
    out.push(renderTable(m));
    out.push('');
    out.push(`Harness alone (loop + reader supply + \`() => true\`): ${fmtNs(m.harnessNs)} ns/eval, included in every number above.`);
    const t = m.targets;
    out.push(
      `Targets (geomean): compiled within 1.5× of hand-written — ${t.compiledWithin1_5xOfHand ? 'met' : 'NOT met'} ` +
        `(${fmtX(m.geomean.ratios.compiledVsHand)}×); compiled ≥ 5× faster than cel-js — ${t.compiled5xFasterThanCel ? 'met' : 'NOT met'} ` +
        `(${fmtX(m.geomean.ratios.celVsCompiled)}×). ✗ marks a condition that misses a target on its own.`,
    );
  }
  out.push('');
  out.push('Conditions:');
  out.push('');
  for (const c of cases) out.push(`- \`${c.id}\`: \`${c.oar}\``);
  return out.join('\n');
}

/**
 * The JSON written to bench/results: small — medians (ns/eval) and ratios rounded, no raw samples,
 * one line per condition so a diff of two runs reads like the table.
 */
export function resultJson(r: BenchResult): string {
  const round = (x: number | null, d: number) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d);
  const roundAll = (o: object, d: number) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v as number | null, d)]));
  const j = (x: unknown) => JSON.stringify(x);
  const modes = r.modes.map((m) => {
    const head =
      `  {"reader": ${j(m.reader)}, "harnessNs": ${round(m.harnessNs, 2)}, "targets": ${j(m.targets)},\n` +
      `   "geomean": {"ns": ${j(roundAll(m.geomean.ns, 2))}, "ratios": ${j(roundAll(m.geomean.ratios, 3))}},\n` +
      '   "cases": {\n';
    const rows = m.cases.map(
      (c) => `    ${j(c.id)}: {"ns": ${j(roundAll(c.ns, 2))}, "ratios": ${j(roundAll(c.ratios, 3))}, "noise": ${round(c.noise, 3)}}`,
    );
    return `${head}${rows.join(',\n')}\n  }}`;
  });
  return [
    '{',
    ' "benchmark": "conditions",',
    ` "meta": ${j(r.meta)},`,
    ` "readerModes": ${j(READER_MODE_TEXT)},`,
    ' "modes": [',
    modes.join(',\n'),
    ' ]',
    '}',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// CLI.

function repoRoot(from: string): string {
  let dir = from;
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'oarc') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('bench: cannot find the oarc package root');
    dir = up;
  }
}

function main(argv: readonly string[]): void {
  const flags = new Set(argv.filter((a) => !a.includes('=')));
  const opt = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const known = new Set(['--quick', '--json']);
  for (const a of argv) {
    if (!known.has(a) && !a.startsWith('--reader=') && !a.startsWith('--samples=')) {
      throw new Error(`bench: unknown option ${a} (options: --quick --json --reader=reused|fresh|both --samples=N)`);
    }
  }
  const readerOpt = opt('reader') ?? 'both';
  if (!['reused', 'fresh', 'both'].includes(readerOpt)) throw new Error(`bench: --reader must be reused, fresh or both`);
  const readers: ReaderMode[] = readerOpt === 'both' ? ['reused', 'fresh'] : [readerOpt as ReaderMode];
  const samplesOpt = opt('samples');
  const samples = samplesOpt === undefined ? undefined : Number(samplesOpt);
  if (samples !== undefined && !(Number.isInteger(samples) && samples > 0)) throw new Error('bench: --samples must be a positive integer');
  const result = runConditionBench({
    quick: flags.has('--quick'),
    readers,
    ...(samples === undefined ? {} : { samples }),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const json = resultJson(result);
  // A --quick run's numbers mean nothing; it must not overwrite the recorded results.
  let wrote = 'Not written (--quick).';
  if (!result.meta.quick) {
    const dir = join(repoRoot(dirname(fileURLToPath(import.meta.url))), 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'conditions.json');
    writeFileSync(file, json);
    wrote = `Wrote ${file}`;
  }
  if (flags.has('--json')) {
    process.stdout.write(json);
  } else {
    process.stdout.write(`${renderReport(result)}\n\n${wrote}\n`);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}
