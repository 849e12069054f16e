/**
 * Running a pack's tests: each test file's pack is loaded once through the real loader, compiled
 * once per back end, and every test decides its occurrences as one session on a fresh engine and
 * counter store ([OAR-CONF-31]). Expectations are compared by conformance/compare.ts — the same
 * comparison the conformance runner makes of a fixture's `expected`, so a test and a fixture that
 * assert the same thing agree on whether it holds.
 *
 * Nothing a test file contains makes the runner throw: a pack that does not load, a detectors
 * module that cannot be used or a malformed test file fails that file with the reasons; an
 * occurrence the engine refuses (`HostInputError`: an unknown anchor, member or fact name) fails
 * its test, located at the member in the test file.
 */
import { compileToBundle, formatDiagnostic, loadPackFiles, type Backend, type LoadedPack } from '../compiler/index.js';
import { compareExpected, jsonEqual, show, type Mismatch } from '../conformance/compare.js';
import { counterKeyProblem, counterRulesOf } from '../conformance/runner.js';
import { DETECTOR_REF, corpusDetector, factNames } from '../injection/detector.js';
import {
  HostInputError,
  MemoryCounterStore,
  createEngine,
  decisionToJson,
  occurrenceFromJson,
  occurrencePathToJson,
  type Bundle,
  type CounterValues,
  type Decision,
  type Detector,
} from '../runtime/index.js';
import { Coverage, type CoverageReport } from './coverage.js';
import { DetectorModuleError, importDetectors, missingDetector } from './detectors.js';
import { discoverTestFiles } from './discover.js';
import { TestFileError, readTestFile, type Obj, type TestCase, type TestFile } from './testfile.js';
import { plural } from '../runtime/plural.js';

/** Which back ends run each test; `both` also fails a test on any difference between them. */
export type BackendChoice = Backend | 'both';

export interface TestResult {
  file: string;
  line: number;
  name: string;
  status: 'passed' | 'failed';
  /** Expectations that did not hold (and, with `both`, where the back ends differ). */
  mismatches: Mismatch[];
  /** Why the test could not run to the end: a malformed test, an occurrence the engine refused. */
  error?: string;
}

export interface FileResult {
  file: string;
  tests: TestResult[];
  /** Why the file could not run at all (the pack's diagnostics, a malformed test file). */
  error?: string[];
  /** Every file this file's run read: the test file, the pack, the detectors module. */
  inputs: string[];
}

export interface RunResult {
  files: FileResult[];
  passed: number;
  failed: number;
  coverage: CoverageReport;
  /** Directories searched for test files, and the paths given that could not be read. */
  directories: string[];
  unreadable: { path: string; reason: string }[];
}

export interface RunOptions {
  backend?: BackendChoice;
}

/** Discover the test files under `paths` and run them all. */
export async function runTests(paths: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const found = discoverTestFiles(paths);
  const coverage = new Coverage();
  const files: FileResult[] = [];
  for (const f of found.files) files.push(await runTestFile(f, coverage, opts));
  // A file that could not run is one failure; so is each failed test.
  const failed = files.reduce((n, f) => n + (f.error ? 1 : 0) + f.tests.filter((t) => t.status === 'failed').length, 0);
  const passed = files.reduce((n, f) => n + f.tests.filter((t) => t.status === 'passed').length, 0);
  return { files, passed, failed, coverage: coverage.report(), directories: found.directories, unreadable: found.unreadable };
}

/** Run one test file, adding what its tests exercised to `coverage`. Never throws on bad input. */
export async function runTestFile(file: string, coverage: Coverage, opts: RunOptions = {}): Promise<FileResult> {
  let tf: TestFile;
  try {
    tf = readTestFile(file);
  } catch (e) {
    if (e instanceof TestFileError) return { file, tests: [], error: [...e.lines], inputs: [file] };
    throw e;
  }
  const inputs = [file, tf.capability, ...tf.rules, ...tf.configs, ...(tf.detectors !== undefined ? [tf.detectors] : []), ...tf.injectionCorpus];
  const fail = (lines: string[]): FileResult => ({ file, tests: [], error: lines, inputs });
  const loaded = loadPackFiles({ capability: tf.capability, rules: tf.rules, configs: tf.configs });
  if (!loaded.ok) {
    const errors = loaded.diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic);
    return fail([`${file}: the pack does not load (${plural(errors.length, 'error')}):`, ...errors]);
  }
  let detectors: Record<string, Detector> = {};
  if (tf.detectors !== undefined) {
    try {
      detectors = await importDetectors(tf.detectors);
    } catch (e) {
      if (e instanceof DetectorModuleError) return fail([`${file}: ${e.message}`]);
      throw e;
    }
  }
  if (tf.injectionCorpus.length > 0) {
    if (DETECTOR_REF in detectors) return fail([`${file}: both ${tf.detectors} and \`injection_corpus\` implement ${DETECTOR_REF}; keep one`]);
    // Loaded when a rule first invokes it: an unreadable corpus is a detector failure, which the
    // rule's on_error decides ([OAR-OPS-3]) — as it would be in a host.
    const names = factNames(loaded.pack.capability.host);
    detectors = { ...detectors, [DETECTOR_REF]: corpusDetector(tf.injectionCorpus.map((path) => ({ path })), names) };
  }
  const backends: Backend[] = opts.backend === 'both' ? ['compiled', 'interpreter'] : [opts.backend ?? 'compiled'];
  const bundles = backends.map((b) => compileToBundle(loaded.pack, b));
  const missing = missingDetector(bundles[0] as Bundle, detectors);
  if (missing !== undefined) {
    return fail([`${file}: rule ${missing.rule} invokes ${missing.ref}: ${tf.detectors === undefined ? 'give `detectors:`, a module implementing it' : `${tf.detectors} does not implement it`}`]);
  }
  coverage.addRules(loaded.pack.rules.map((r) => r.qid));
  const tests = tf.tests.map((t) => runTest(t, tf, loaded.pack, bundles, detectors, coverage));
  return { file, tests, inputs };
}

/** One back end's run of a test: its decisions, or where the engine refused an occurrence. */
type Run = { decisions: Decision[]; counters: Record<string, CounterValues> } | { error: string };

function runTest(t: TestCase, tf: TestFile, pack: LoadedPack, bundles: readonly Bundle[], detectors: Record<string, Detector>, coverage: Coverage): TestResult {
  const base = { file: t.file, line: t.line, name: t.name };
  if (t.problem !== undefined) return { ...base, status: 'failed', mismatches: [], error: t.problem };
  const runs = bundles.map((b) => decideAll(t, tf, b, detectors));
  const first = runs[0] as Run;
  if ('error' in first) return { ...base, status: 'failed', mismatches: [], error: first.error };
  coverage.addTest(first.decisions);
  const counterRules = counterRulesOf(pack);
  for (const e of [t.expect, ...t.occurrences.map((o) => o.expect)]) {
    for (const key of Object.keys((e?.counters as Obj | undefined) ?? {})) {
      // A key no rule can write would make an asserted zero pass whatever the rules do.
      const problem = counterKeyProblem(key, counterRules);
      if (problem !== undefined) return { ...base, status: 'failed', mismatches: [], error: `expect.counters names ${problem}` };
    }
  }
  const mismatches: Mismatch[] = [];
  const prefix = (i: number) => (t.sequence ? `occurrences[${i}].` : '');
  t.occurrences.forEach((o, i) => {
    const decision = first.decisions[i] as Decision;
    if (o.expect) mismatches.push(...compareExpected(o.expect, { decision, counters: decision.counters }, counterRules, prefix(i)));
  });
  if (t.expect) {
    // As a fixture's `expected`: the last decision, and the counters over the whole session.
    const last = first.decisions[first.decisions.length - 1] as Decision;
    mismatches.push(...compareExpected(t.expect, { decision: last, counters: first.counters }, counterRules));
  }
  const other = runs[1];
  if (other !== undefined) mismatches.push(...backendDifferences(first, other, prefix));
  return { ...base, status: mismatches.length === 0 ? 'passed' : 'failed', mismatches };
}

function decideAll(t: TestCase, tf: TestFile, bundle: Bundle, detectors: Record<string, Detector>): Run {
  const engine = createEngine(bundle, { counters: new MemoryCounterStore(), detectors });
  const decisions: Decision[] = [];
  const counters: Record<string, CounterValues> = {};
  for (const o of t.occurrences) {
    // The JSON reading names members in the JSON spelling, decide() in the TypeScript one.
    let occurrence;
    try {
      occurrence = occurrenceFromJson(o.json);
    } catch (e) {
      if (e instanceof HostInputError) return { error: located(tf, o.path, e.path, e) };
      throw e;
    }
    try {
      const decision = engine.decide(occurrence);
      for (const [name, v] of Object.entries(decision.counters)) counters[name] = { ...v };
      decisions.push(decision);
    } catch (e) {
      if (e instanceof HostInputError) return { error: located(tf, o.path, occurrencePathToJson(e.path), e) };
      throw e;
    }
  }
  return { decisions, counters };
}

/** A refused occurrence, pointed at the member in the test file: `file:line: \`facts.x\`: …`. */
function located(tf: TestFile, at: readonly (string | number)[], member: readonly (string | number)[], e: HostInputError): string {
  const where = tf.locate([...at, ...member]);
  return `${where.file}:${where.line}: ${member.length === 0 ? 'the occurrence' : `\`${member.join('.')}\``}: ${e.message.replace(/^decide: /, '')}`;
}

/** `both`: every member of every decision must be the same on the two back ends. */
function backendDifferences(compiled: Run, interpreter: Run, prefix: (i: number) => string): Mismatch[] {
  if ('error' in compiled) return [];
  if ('error' in interpreter) {
    return [{ key: 'backends', entry: { expected: 'a decision', actual: interpreter.error }, note: `the interpreter back end refused an occurrence the compiled one decided: ${interpreter.error}` }];
  }
  const out: Mismatch[] = [];
  compiled.decisions.forEach((d, i) => {
    const a = decisionToJson(d) as unknown as Obj;
    const b = decisionToJson(interpreter.decisions[i] as Decision) as unknown as Obj;
    for (const member of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (jsonEqual(a[member], b[member])) continue;
      const key = `${prefix(i)}${member}`;
      out.push({ key, entry: { expected: a[member] ?? null, actual: b[member] ?? null }, note: `${key}: the back ends differ: compiled ${show(a[member])}, interpreter ${show(b[member])}` });
    }
  });
  return out;
}
