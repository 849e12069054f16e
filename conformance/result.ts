/**
 * The conformance report as data: one entry per case, four verdicts, the counts, and the set of
 * capabilities the runner can adopt. The discipline is `reference/conformance-corpus.md`'s: every
 * case is enumerated; a skipped case is never a pass and names what could not be adopted
 * ([OAR-CONF-20], [OAR-CONF-24]); an errored case is one that could not be run; the counts sum to
 * the total; and the adoptable set published here is the very constant the runner decides skips
 * with (`ADOPTABLE` in runner.ts, passed in by `runFixtures`), never a second list kept beside it.
 *
 * This module holds no I/O and imports nothing from the runner, so the runner can build a report
 * and the CLI (report.ts) can run the runner without an import cycle.
 */
import { COMPILER_VERSION } from '../compiler/version.js';
import { IMPLEMENTED_VERSION, validateReport } from '../compiler/load/schema.js';

export type Verdict = 'passed' | 'failed' | 'skipped' | 'errored';

/** One asserted `expected` member that differed: what the fixture said, what the engine did. */
export interface DiffEntry {
  expected: unknown;
  actual: unknown;
}

export interface CaseResult {
  /** The fixture's `id` (its file name stem when the id cannot be read). */
  id: string;
  file: string;
  verdict: Verdict;
  /** Why the case failed, was skipped, or could not be run. */
  reason?: string;
  /**
   * For a failed case: each asserted member that differed, keyed by its place in the fixture
   * (`decision`, `applied`, `occurrences[1].counters`), with the expected and the actual value.
   */
  diff?: Record<string, DiffEntry>;
  /** For a skipped case: what in the fixture's capability document could not be adopted. */
  skipped_capability?: string;
  /** True when the fixture's capability is a baseline one, which is never skipped ([OAR-CONF-35]). */
  baseline?: boolean;
}

/**
 * What the runner can adopt from a fixture's capability document. The member names are the
 * report schema's (`capabilities`), so the constant is published exactly as the runner reads it.
 */
export interface AdoptableCapabilities {
  /** Standard profiles whose facts the runner can supply (a fixture's `facts` supply them). */
  readonly profiles: readonly string[];
  /** Core anchors the runner can bind to any host-local spelling. */
  readonly core_anchors: readonly string[];
  /** Whether a host-native anchor catalogue can be adopted. */
  readonly host_anchors: boolean;
  /** Whether host-tier facts can be adopted (their values come from the fixture's `facts`). */
  readonly host_facts: boolean;
  /** Detector references the runner resolves. */
  readonly detectors: readonly string[];
  readonly supports_transform: boolean;
  /** The largest `activity_window` the runner can adopt. */
  readonly activity_window_max: number;
  /** The largest `expression_nodes_max` the condition parser can be configured with. */
  readonly expression_nodes_max: number;
}

/** What the run measured (corpus.ts): two reports with the same digest ran the same fixtures. */
export interface CorpusIdentity {
  /** The fixture files and directories given, as given. */
  paths: string[];
  /** How many fixture files were found (a file named twice counted once). */
  fixture_files: number;
  /** SHA-256 over the sorted relative paths and bytes of every fixture file and manifest read. */
  sha256: string;
  /** Each `manifest.json` that lists fixture ids, and how many it lists. */
  manifests?: { file: string; fixtures: number }[];
}

export interface ConformanceReport {
  engine: { name: string; version: string };
  /** The OAR version the engine implements. */
  spec: string;
  capabilities: AdoptableCapabilities;
  /** Where `capabilities` comes from: the runner's own constant, never a second list. */
  capabilities_from: 'runner';
  counts: { passed: number; failed: number; skipped: number; errored: number };
  /** The ids of the cases that failed or could not be run (errored), in report order. */
  failed_cases: string[];
  /** The number of cases: fixture files (a file named twice counted once) and listed fixtures with no file. */
  total: number;
  corpus: CorpusIdentity;
  cases: CaseResult[];
}

export const ENGINE_NAME = 'oarc';

/** Assemble the report; the counts are computed from the cases, never supplied. */
export function buildReport(cases: readonly CaseResult[], adoptable: AdoptableCapabilities, corpus: CorpusIdentity): ConformanceReport {
  const counts = { passed: 0, failed: 0, skipped: 0, errored: 0 };
  for (const c of cases) counts[c.verdict]++;
  return {
    engine: { name: ENGINE_NAME, version: COMPILER_VERSION },
    spec: `${IMPLEMENTED_VERSION.major}.${IMPLEMENTED_VERSION.minor}`,
    capabilities: {
      profiles: [...adoptable.profiles],
      core_anchors: [...adoptable.core_anchors],
      host_anchors: adoptable.host_anchors,
      host_facts: adoptable.host_facts,
      detectors: [...adoptable.detectors],
      supports_transform: adoptable.supports_transform,
      activity_window_max: adoptable.activity_window_max,
      expression_nodes_max: adoptable.expression_nodes_max,
    },
    capabilities_from: 'runner',
    counts,
    failed_cases: cases.filter((c) => c.verdict === 'failed' || c.verdict === 'errored').map((c) => c.id),
    total: cases.length,
    corpus: { ...corpus, paths: [...corpus.paths], ...(corpus.manifests ? { manifests: corpus.manifests.map((m) => ({ ...m })) } : {}) },
    cases: cases.map((c) => ({ ...c })),
  };
}

/**
 * Problems with a report: its schema (`schema/conformance-report.schema.json`) and the arithmetic
 * the schema cannot state (the counts sum to the total, each count matches the cases). Empty when
 * valid. The report is checked in its JSON form, exactly as it is published.
 */
export function reportProblems(report: ConformanceReport): string[] {
  return validateReport(JSON.parse(reportJson(report)));
}

/** The report as published: JSON, two-space indented. Big integers are written exactly. */
export function reportJson(report: ConformanceReport): string {
  return JSON.stringify(toJson(report), null, 2);
}

/**
 * A JSON-safe copy of a value: a `bigint` becomes a number when it is exact as one, and its
 * decimal string otherwise; `undefined` becomes `null`. Fixture values parsed with exact big
 * integers reach diffs, and JSON.stringify cannot write a bigint.
 */
export function toJson(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(toJson);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = toJson(x);
    return out;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}
