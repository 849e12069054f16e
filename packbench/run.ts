/**
 * `oarc bench` as a library: measure a loaded pack (one or two back ends) on a user's occurrences
 * and return the figures `--json` writes and `--baseline` reads back.
 */
import { createEngine, decisionToJson, type Bundle, type Detector, type Occurrence } from '../runtime/index.js';
import { PER_OCCURRENCE_MAX, Passes, allocationPerDecision, gcFunction, measure, type GcAccess, type Subject, type Workload } from './measure.js';
import { round, summarize, type Summary } from './stats.js';
import { plural } from '../runtime/plural.js';

/** The `--json` document's version: bumped when a member a baseline comparison reads changes. */
export const FIGURES_VERSION = 1;

export interface BackendFigures {
  overall: Summary & { alloc_bytes_per_decision: number | null; samples_ns: number[] };
  occurrences: (Summary & { index: number; anchor: string; summary: string })[];
}

export interface Figures {
  oarc_bench: number;
  oarc: string;
  node: string;
  pack: {
    inputs: string[];
    rules: number;
    bundle_bytes: number;
    /** Loading and checking the rule documents, emitting the module, compiling it in process; null for a bundle. */
    compile_ms: { load: number; emit: number; in_process: number } | null;
  };
  occurrences: { file: string; count: number; sessions: number };
  method: {
    time_s: number;
    samples: number;
    passes_per_sample: number;
    decisions_per_sample: number;
    timer_ns: number;
    warmup_ms: number;
    reset: string;
    gc: GcAccess;
  };
  backends: Record<string, BackendFigures>;
  /** Median ns per decision compiled ÷ interpreter, measured in this run (< 1: compiled is faster); null without the interpreter. */
  compiled_over_interpreter: number | null;
  /** Every back end gave every occurrence the same decision (checked once before timing). */
  backends_agree: boolean;
}

export interface BenchInput {
  /** The back ends to measure, the one users run (`specialised`) first. */
  bundles: readonly { name: string; bundle: Bundle }[];
  detectors: Readonly<Record<string, Detector>>;
  occurrences: readonly Occurrence[];
  /** A short description of each occurrence, for the report. */
  summaries: readonly string[];
  occurrenceFile: string;
  pack: Figures['pack'];
  compiler: string;
  timeMs: number;
  log?: (line: string) => void;
}

export const RESET = 'each pass of a sample decides in sessions of its own (the file\'s session ids suffixed per pass); after the sample they are ended with engine.endSession, outside the timed region';

export function runBench(input: BenchInput): Figures {
  const sessions = [...new Set(input.occurrences.map((o) => o.session ?? ''))];
  const workload: Workload = { occurrences: input.occurrences };
  const subjects: Subject[] = input.bundles.map((b) => ({ name: b.name, engine: createEngine(b.bundle, { detectors: input.detectors }) }));
  const agree = backendsAgree(subjects, workload);
  input.log?.(`oarc bench: ${plural(input.occurrences.length, 'occurrence')}, back ends ${subjects.map((s) => s.name).join(', ')}, ${(input.timeMs / 1000).toFixed(1)} s`);
  const m = measure(subjects, workload, { timeMs: input.timeMs });
  const { gc, access } = gcFunction();
  const backends: Record<string, BackendFigures> = {};
  for (const s of subjects) {
    const samples = m.samples.get(s.name)!;
    const alloc = allocationPerDecision(s, workload, 20_000, gc);
    backends[s.name] = {
      overall: { ...summarize(samples.overall), alloc_bytes_per_decision: Number.isFinite(alloc) ? round(alloc) : null, samples_ns: samples.overall.map(round) },
      occurrences: samples.perOccurrence.slice(0, PER_OCCURRENCE_MAX).map((xs, i) => ({ index: i + 1, anchor: (input.occurrences[i] as Occurrence).anchor, summary: input.summaries[i] ?? '', ...summarize(xs) })),
    };
  }
  const compiled = backends.specialised?.overall.median_ns;
  const interp = backends.interpreter?.overall.median_ns;
  const first = m.samples.get(subjects[0]!.name)!;
  return {
    oarc_bench: FIGURES_VERSION,
    oarc: input.compiler,
    node: process.version,
    pack: input.pack,
    occurrences: { file: input.occurrenceFile, count: input.occurrences.length, sessions: sessions.length },
    method: {
      time_s: input.timeMs / 1000,
      samples: first.overall.length,
      passes_per_sample: m.passesPerSample,
      decisions_per_sample: m.passesPerSample * input.occurrences.length,
      timer_ns: round(m.timerNs),
      warmup_ms: round(m.warmupMs),
      reset: RESET,
      gc: access,
    },
    backends,
    compiled_over_interpreter: compiled !== undefined && interp !== undefined && interp > 0 ? Math.round((compiled / interp) * 1000) / 1000 : null,
    backends_agree: agree,
  };
}

/** Decide the file once on every back end: a benchmark of back ends that disagree compares different work. */
function backendsAgree(subjects: readonly Subject[], w: Workload): boolean {
  const runs = subjects.map((s) => {
    const passes = new Passes(w);
    const out = passes.get(0).map((o) => JSON.stringify(decisionToJson(s.engine.decide(o)), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
    passes.reset(s.engine);
    return out;
  });
  return runs.every((r) => r.every((d, i) => d === runs[0]![i]));
}
