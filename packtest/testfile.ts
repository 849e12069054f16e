/**
 * Reading a pack's test file (`*.test.yaml`, `*.test.yml`, `*.test.json`): which pack it tests and
 * the tests, each with its position in the file. The form, which later versions keep accepting:
 *
 *   capability: ../capability.yaml        # paths relative to the test file
 *   rules: [../rules/]                    # files or directories, as for `oarc check`
 *   configs: [../operator.yaml]           # optional: configuration documents, applied in order
 *   detectors: ./detectors.mjs            # optional: a module like `oarc eval --detectors`
 *   injection_corpus: [./corpus.jsonl]    # optional: detector://injection-corpus over these files
 *   tests:
 *     - name: blocks a recursive delete
 *       occurrence: { anchor: tool.pre_invoke, tool_call: { … } }
 *       expect: { decision: block }
 *     - name: nudges on the third identical read
 *       occurrences: [ { anchor: …, … }, { anchor: …, expect: { decision: nudge } } ]
 *       expect: { counters: { … } }       # optional: the last decision, counters over the run
 *
 * An occurrence is the one JSON form (`occurrenceFromJson`); `expect` names members of a
 * decision's JSON form, compared as the conformance runner compares a fixture's `expected`
 * (conformance/compare.ts). A mistake in the file-level members makes the whole file unrunnable;
 * a mistake inside one test fails that test alone, so the others still run.
 */
import { dirname, isAbsolute, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { parseSource, type SourceDoc } from '../compiler/load/source.js';
import { formatDiagnostic } from '../compiler/diagnostics.js';
import { didYouMean } from '../runtime/suggest.js';

export type Obj = Record<string, unknown>;
type Path = (string | number)[];

export interface Located {
  file: string;
  line: number;
}

/** One occurrence of a test: its JSON form, what it asserts, and where it is in the file. */
export interface TestOccurrence {
  json: Obj;
  expect?: Obj;
  /** The occurrence's path in the test file, to locate a mistake inside it. */
  path: Path;
}

export interface TestCase extends Located {
  name: string;
  /** `true` when written with `occurrences` (expectation keys are then `occurrences[i].…`). */
  sequence: boolean;
  occurrences: TestOccurrence[];
  /** For `occurrences`: the last decision, and counters over the run, as a fixture's `expected`. */
  expect?: Obj;
  /** Why this test cannot run as written (it fails with this, and the others still run). */
  problem?: string;
}

export interface TestFile {
  file: string;
  capability: string;
  rules: string[];
  configs: string[];
  detectors?: string;
  /** Corpus files for detector://injection-corpus (injection/), loaded when a rule first invokes it. */
  injectionCorpus: string[];
  tests: TestCase[];
  /** Position of a path inside the file. */
  locate(path: readonly (string | number)[]): Located;
}

/** The file could not be read as a test file at all; `lines` say why, each `file:line: …`. */
export class TestFileError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
  }
}

const FILE_MEMBERS = ['capability', 'rules', 'configs', 'detectors', 'injection_corpus', 'tests'];
const TEST_MEMBERS = ['name', 'occurrence', 'occurrences', 'expect'];
/** The members of a decision's JSON form an `expect` may assert (compare.ts compares each). */
export const EXPECT_MEMBERS = ['decision', 'code', 'rule', 'copy', 'content', 'advisories', 'applied', 'counters', 'events', 'transforms', 'on_fire', 'skipped_transforms'];
const EFFECTS = ['block', 'transform', 'nudge', 'warn', 'none'];
const LISTS = ['advisories', 'applied', 'events', 'transforms', 'on_fire', 'skipped_transforms'];

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `*.test.yaml`, `*.test.yml`, `*.test.json`. */
export const TEST_FILE = /\.test\.(ya?ml|json)$/i;

/** Read and check a test file. Throws `TestFileError` when it cannot be run at all. */
export function readTestFile(file: string): TestFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new TestFileError([`${file}: cannot read the test file: ${(e as Error).message}`]);
  }
  const parsed = parseSource(text, file, { bigInts: true, expandSequences: false });
  const errors = parsed.diagnostics.filter((d) => d.severity === 'error');
  const doc = parsed.docs[0];
  if (errors.length > 0) throw new TestFileError(errors.map(formatDiagnostic));
  if (doc === undefined) throw new TestFileError([`${file}:1: the test file is empty`]);
  if (parsed.docs.length > 1) throw new TestFileError([`${at(doc.file, doc.locate([]).line)}: a test file is one document; this one has ${parsed.docs.length}`]);
  return fromDocument(doc);
}

function at(file: string, line: number): string {
  return `${file}:${line}`;
}

function fromDocument(doc: SourceDoc): TestFile {
  const locate = (path: readonly (string | number)[]): Located => ({ file: doc.file, line: doc.locate(path).line });
  const problems: string[] = [];
  const fail = (path: Path, message: string) => problems.push(`${at(doc.file, locate(path).line)}: ${message}`);
  const v = doc.value;
  if (!isObject(v)) throw new TestFileError([`${at(doc.file, locate([]).line)}: a test file is a mapping with capability, rules and tests`]);
  for (const key of Object.keys(v)) if (!FILE_MEMBERS.includes(key)) fail([key], `unknown member \`${key}\`${didYouMean(key, FILE_MEMBERS)}; a test file has ${FILE_MEMBERS.join(', ')}`);
  const dir = dirname(doc.file);
  const path = (p: string) => (isAbsolute(p) ? p : join(dir, p));
  const paths = (key: string, required: boolean): string[] => {
    const x = v[key];
    if (x === undefined) {
      if (required) fail([], `missing \`${key}\`: ${key === 'rules' ? 'the rule files or directories to test' : 'the capability document of the host'} (relative to the test file)`);
      return [];
    }
    const list = Array.isArray(x) ? x : [x];
    if (list.length === 0 || !list.every((p) => typeof p === 'string' && p !== '')) {
      fail([key], `\`${key}\` must be a path or a list of paths`);
      return [];
    }
    return (list as string[]).map(path);
  };
  const capability = paths('capability', true);
  if (capability.length > 1) fail(['capability'], '`capability` is one document');
  const rules = paths('rules', true);
  const configs = paths('configs', false);
  const injectionCorpus = paths('injection_corpus', false);
  let detectors: string | undefined;
  if (v.detectors !== undefined) {
    if (typeof v.detectors === 'string' && v.detectors !== '') detectors = path(v.detectors);
    else fail(['detectors'], '`detectors` must be the path of a JavaScript module');
  }
  let tests: TestCase[] = [];
  if (!Array.isArray(v.tests) || v.tests.length === 0) fail(v.tests === undefined ? [] : ['tests'], '`tests` must be a non-empty list of tests');
  else tests = v.tests.map((t, i) => readTest(t, ['tests', i], locate));
  if (problems.length > 0) throw new TestFileError(problems);
  const seen = new Map<string, number>();
  for (const t of tests) {
    const first = seen.get(t.name);
    if (first !== undefined && t.problem === undefined) t.problem = `another test in this file is named ${JSON.stringify(t.name)} (line ${first}); a name says which test failed`;
    else seen.set(t.name, t.line);
  }
  return { file: doc.file, capability: capability[0] ?? '', rules, configs, ...(detectors !== undefined ? { detectors } : {}), injectionCorpus, tests, locate };
}

function readTest(t: unknown, path: Path, locate: (p: readonly (string | number)[]) => Located): TestCase {
  const line = locate(path).line;
  const file = locate(path).file;
  const name = isObject(t) && typeof t.name === 'string' && t.name !== '' ? t.name : `test ${(path[1] as number) + 1}`;
  const base = { file, line, name, sequence: false, occurrences: [] };
  if (!isObject(t)) return { ...base, problem: 'a test is a mapping with name, occurrence (or occurrences) and expect' };
  const problem = (p: string): TestCase => ({ ...base, problem: p });
  for (const key of Object.keys(t)) if (!TEST_MEMBERS.includes(key)) return problem(`unknown member \`${key}\`${didYouMean(key, TEST_MEMBERS)}; a test has ${TEST_MEMBERS.join(', ')}`);
  if (typeof t.name !== 'string' || t.name === '') return problem('a test needs a `name`, a non-empty string');
  const one = t.occurrence !== undefined;
  const many = t.occurrences !== undefined;
  if (one === many) return problem('a test has either `occurrence` (with `expect`) or `occurrences` (a session, decided in order)');
  const expect = t.expect === undefined ? undefined : checkExpect(t.expect, 'expect');
  if (typeof expect === 'string') return problem(expect);
  if (one) {
    if (!isObject(t.occurrence)) return problem('`occurrence` must be a mapping: an occurrence in its JSON form');
    if (expect === undefined) return problem('missing `expect`: what the decision must be (a test that asserts nothing cannot fail)');
    return { ...base, occurrences: [{ json: t.occurrence, path: [...path, 'occurrence'] }], expect };
  }
  if (!Array.isArray(t.occurrences) || t.occurrences.length === 0) return problem('`occurrences` must be a non-empty list of occurrences');
  const occurrences: TestOccurrence[] = [];
  for (const [i, o] of t.occurrences.entries()) {
    if (!isObject(o)) return problem(`occurrences[${i}] must be a mapping: an occurrence in its JSON form`);
    const { expect: own, ...json } = o;
    const checked = own === undefined ? undefined : checkExpect(own, `occurrences[${i}].expect`);
    if (typeof checked === 'string') return problem(checked);
    occurrences.push({ json, path: [...path, 'occurrences', i], ...(checked !== undefined ? { expect: checked } : {}) });
  }
  if (expect === undefined && occurrences.every((o) => o.expect === undefined)) {
    return problem('nothing is expected: give `expect` on an occurrence, or on the test for the last decision (a test that asserts nothing cannot fail)');
  }
  return { ...base, sequence: true, occurrences, ...(expect !== undefined ? { expect } : {}) };
}

/**
 * The expectation, or a message saying what is wrong with it. The shapes are checked here because
 * the comparison reads a malformed list as empty, which would make a typo pass.
 */
function checkExpect(e: unknown, where: string): Obj | string {
  if (!isObject(e)) return `\`${where}\` must be a mapping of decision members (${EXPECT_MEMBERS.join(', ')})`;
  const keys = Object.keys(e);
  if (keys.length === 0) return `\`${where}\` is empty: it must assert at least one member of the decision`;
  for (const k of keys) {
    const x = e[k];
    const bad = (what: string) => `\`${where}.${k}\` must be ${what}`;
    if (!EXPECT_MEMBERS.includes(k)) return `unknown member \`${where}.${k}\`${didYouMean(k, EXPECT_MEMBERS)}; expect names members of the decision: ${EXPECT_MEMBERS.join(', ')}`;
    if (k === 'decision' && !EFFECTS.includes(x as string)) return bad(`one of ${EFFECTS.join(', ')}${typeof x === 'string' ? `; got \`${x}\`${didYouMean(x, EFFECTS)}` : ''}`);
    if ((k === 'code' || k === 'rule') && x !== null && typeof x !== 'string') return bad('a string, or null for no deciding rule');
    if (k === 'content' && typeof x !== 'string') return bad('a string');
    if (k === 'copy' && !(x === null || (isObject(x) && Object.values(x).every((s) => typeof s === 'string')))) return bad('a mapping of copy members to strings, or null');
    if (k === 'counters' && !isObject(x)) return bad('a mapping of counter keys (<qualified id> or <qualified id>#<scope>) to counts');
    if (LISTS.includes(k) && !Array.isArray(x)) return bad('a list');
    if (k === 'applied' && !(x as unknown[]).every((s) => typeof s === 'string' && s.includes(':'))) return bad('a list of "<qualified id>:<outcome>" strings');
  }
  return e;
}
