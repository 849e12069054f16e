/**
 * The conformance runner (section 10.2): every fixture given is one case, with one verdict.
 *
 *   const report = runFixtures(['conformance/fixtures']);
 *
 * Per fixture:
 *   1. parse it as JSON, integers beyond 2^53 kept exact (and `1e400` as Infinity); the case is
 *      named by the file's stem;
 *   2. check its shape — the fixture schema and the checks across members (`validateFixtureDocument`),
 *      then the runner's own checks below. A malformed fixture is `errored`, never run and never
 *      passed: an unknown `expected` key ([OAR-CONF-22]), both occurrence spellings or neither
 *      ([OAR-CONF-18]), no `input.capability` ([OAR-CONF-19]), `expected.content` without content
 *      ([OAR-CONF-34]), a counter supplied as a fact ([OAR-CONF-32]), an `id` that is not the file
 *      name stem, a `covers` naming a clause the specification does not define ([OAR-CONF-17]);
 *   3. decide whether the fixture's capability document can be adopted: one from a later minor
 *      revision (`laterRevisionGaps`) cannot, unless its rejection is asserted; otherwise from
 *      `ADOPTABLE` alone. A fixture that cannot be adopted is `skipped`, naming what could not be
 *      adopted ([OAR-CONF-20], [OAR-CONF-24]) — except a baseline fixture, which is always run
 *      ([OAR-CONF-35]);
 *   4. load the rules through the real loader against the fixture's capability document and
 *      configuration ([OAR-CONF-20], [OAR-CONF-38]). `expected.error` asserts that loading fails
 *      with a diagnostic naming the token ([OAR-CONF-21], [OAR-CONF-30]); otherwise loading must
 *      succeed;
 *   5. compile, and run the occurrence — or the `occurrences`, in order, as one session against
 *      one counter store ([OAR-CONF-31]) — through the real engine, with the reserved detectors
 *      ([OAR-CONF-25]) and the production tool-call adapter ([OAR-CONF-40]);
 *   6. compare the members `expected` carries (compare.ts).
 *
 * Nothing a fixture contains can make the runner throw: any internal failure is the case's
 * `errored` verdict, with the reason.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, extname, join, relative, resolve } from 'node:path';
import { compileToBundle, formatDiagnostic, loadPack, parseSource, type Backend, type Diagnostic, type LoadedPack, type SourceDoc } from '../compiler/index.js';
import { DEFAULT_MAX_BYTES, ioReason } from '../compiler/load/source.js';
import { CAPABILITY_VERSION, isBaselineCapability, loadCapability, localToCore, type Capability } from '../compiler/load/capability.js';
import { validateFixtureDocument } from '../compiler/load/schema.js';
import { MAX_MAX_NODES } from '../compiler/expr/parser.js';
import { CORE_ANCHORS, STANDARD_PROFILE_NAMES } from '../compiler/load/vocabulary.js';
import {
  createEngine,
  HostInputError,
  MemoryCounterStore,
  RESERVED_DETECTORS,
  type CounterValues,
  type Decision,
  type Detector,
  type Occurrence,
  occurrenceFromJson,
} from '../runtime/index.js';
import { didYouMean } from '../runtime/suggest.js';
import { undefinedClause } from './covers.js';
import { compareExpected, show, splitCounterKey, type CounterRule, type Mismatch } from './compare.js';
import { MANIFEST, corpusIdentity, manifestCases, readManifest, type ManifestRead } from './corpus.js';
import { buildReport, type AdoptableCapabilities, type CaseResult, type ConformanceReport, type DiffEntry } from './result.js';

// ---------------------------------------------------------------------------------------------
// What the runner can adopt

/**
 * Everything the runner can adopt from a fixture's capability document. This one constant decides
 * skips (`adoptionGaps`) and is what the report publishes (`capabilities`), so the published set
 * cannot drift from the behaviour — narrowing it is a code change with tests behind it.
 *
 * - profiles: all standard profiles. A fixture supplies every observation in its `facts`, so the
 *   runner can stand behind any profile; the detector-backed ones still need a detector the
 *   capability registers ([OAR-OPS-22]), which `detectors` governs.
 * - core anchors: all eight, under any host-local spelling the fixture maps them to.
 * - host anchors and host facts: yes — declared in the fixture, valued by the fixture.
 * - detectors: exactly the implementations the runtime ships — the three the corpus reserves
 *   ([OAR-CONF-25]). A fixture registering any other detector needs a model or a service we do
 *   not have.
 * - transforms: implemented ([OAR-OPS-13] to [OAR-OPS-23]).
 * - activity window: any size — the engine keeps whatever window the capability declares.
 * - expression_nodes_max: the parser's own ceiling; a fixture declaring more asks for conditions
 *   this engine would refuse.
 */
export const ADOPTABLE: AdoptableCapabilities = Object.freeze({
  profiles: Object.freeze([...STANDARD_PROFILE_NAMES]),
  core_anchors: Object.freeze([...CORE_ANCHORS]),
  host_anchors: true,
  host_facts: true,
  detectors: Object.freeze(Object.keys(RESERVED_DETECTORS)),
  supports_transform: true,
  activity_window_max: Number.MAX_SAFE_INTEGER,
  expression_nodes_max: MAX_MAX_NODES,
});

/** One declared capability the runner cannot adopt: `detector:detector://acme-pii`, with why. */
export interface AdoptionGap {
  capability: string;
  why: string;
}

/** What in a (valid) capability document lies outside `ADOPTABLE`; empty when it can be adopted. */
export function adoptionGaps(c: Capability, adoptable: AdoptableCapabilities = ADOPTABLE): AdoptionGap[] {
  const gaps: AdoptionGap[] = [];
  for (const p of c.profiles) {
    if (!adoptable.profiles.includes(p)) gaps.push({ capability: `profile:${p}`, why: `profile \`${p}\` cannot be provided` });
  }
  for (const a of c.coreAnchors.keys()) {
    if (!adoptable.core_anchors.includes(a)) gaps.push({ capability: `anchor:${a}`, why: `core anchor \`${a}\` cannot be bound` });
  }
  if (c.hostAnchors.size > 0 && !adoptable.host_anchors) gaps.push({ capability: 'host_anchors', why: 'a host-native anchor catalogue cannot be adopted' });
  if (c.hostFacts.length > 0 && !adoptable.host_facts) gaps.push({ capability: 'host_facts', why: 'host-tier facts cannot be adopted' });
  for (const d of c.detectors) {
    if (!adoptable.detectors.includes(d)) {
      gaps.push({ capability: `detector:${d}`, why: `detector \`${d}\` is not implemented (this runner resolves ${adoptable.detectors.join(', ')})` });
    }
  }
  if (c.supportsTransform && !adoptable.supports_transform) gaps.push({ capability: 'supports_transform', why: 'content mutation is not implemented' });
  if (c.activityWindow > adoptable.activity_window_max) {
    gaps.push({ capability: `activity_window:${c.activityWindow}`, why: `an activity window of ${c.activityWindow} exceeds the ${adoptable.activity_window_max} this runner keeps` });
  }
  if (c.expressionNodesMax > adoptable.expression_nodes_max) {
    gaps.push({
      capability: `expression_nodes_max:${c.expressionNodesMax}`,
      why: `a condition limit of ${c.expressionNodesMax} nodes exceeds this engine's ceiling of ${adoptable.expression_nodes_max}`,
    });
  }
  return gaps;
}

/**
 * What in a raw capability document belongs to a later minor revision than this engine's: its
 * `oar_capability_version`, or profiles it does not know ([OAR-VER-1], [OAR-VER-5]). The loader
 * rejects both; a runner reports them as capabilities it cannot adopt ([OAR-CONF-20]).
 */
export function laterRevisionGaps(doc: unknown): AdoptionGap[] {
  if (!isObject(doc)) return [];
  const gaps: AdoptionGap[] = [];
  const v = doc.oar_capability_version;
  const m = typeof v === 'string' ? /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/.exec(v) : null;
  if (m !== null && Number(m[1]) === CAPABILITY_VERSION.major && Number(m[2]) > CAPABILITY_VERSION.minor) {
    gaps.push({ capability: `oar_capability_version:${v as string}`, why: `capability version ${v as string} is newer than the ${CAPABILITY_VERSION.major}.${CAPABILITY_VERSION.minor} this engine implements` });
  }
  if (Array.isArray(doc.profiles)) {
    for (const p of doc.profiles) {
      if (typeof p === 'string' && !STANDARD_PROFILE_NAMES.includes(p)) {
        // A profile added by a later revision is skipped; a misspelt one most likely is not that.
        gaps.push({ capability: `profile:${p}`, why: `profile \`${p}\` is not one of the profiles of OAR 1.0 this engine knows${didYouMean(p, STANDARD_PROFILE_NAMES)}` });
      }
    }
  }
  return gaps;
}

/** The reserved detectors, taken from `ADOPTABLE` so the engine resolves exactly what is published. */
function fixtureDetectors(): Record<string, Detector> {
  const out: Record<string, Detector> = {};
  for (const ref of ADOPTABLE.detectors) {
    const d = RESERVED_DETECTORS[ref];
    if (d !== undefined) out[ref] = d;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fixture shape (after schema validation)

type Obj = Record<string, unknown>;

interface OccurrenceSpec {
  anchor: string;
  facts?: Obj;
  detector_facts?: Obj;
  recent_activity?: string[];
  content?: string;
  tool_call?: { name: string; arguments: Obj };
  expected?: Obj;
}

interface FixtureInput extends Partial<OccurrenceSpec> {
  capability: Obj;
  session_id?: string;
  config?: Obj | Obj[];
  occurrences?: OccurrenceSpec[];
}

interface Fixture {
  id: string;
  title?: string;
  covers: string[];
  rules: unknown[];
  input: FixtureInput;
  expected: Obj;
}

/** A fixture the schema accepts but that cannot be run as written. */
class MalformedFixture extends Error {
  constructor(
    readonly clause: string,
    message: string,
  ) {
    super(message);
  }
}

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

// ---------------------------------------------------------------------------------------------
// Running

export interface RunOptions {
  /** Run conditions compiled (default) or through the tree-walking interpreter. */
  backend?: Backend;
  /**
   * Called with what the real loader and engine produced, whatever the verdict: the load's error
   * diagnostics (empty when the rules loaded) and, when they loaded, each occurrence's decision in
   * order. Not called for a case errored or skipped before loading, or one whose engine threw. The
   * corpus lint ([OAR-CONF-36]) compares these between a fixture and the fixture with one
   * capability declaration removed.
   */
  observe?: (o: RunObservation) => void;
}

/** What one run of a fixture produced, for `RunOptions.observe`. */
export interface RunObservation {
  loadErrors: readonly Diagnostic[];
  decisions: readonly Decision[];
}

/**
 * Run every fixture under `paths` (files, or directories searched for `*.json`) and report. A
 * directory's `manifest.json` listing fixture ids adds an errored case for each listed id with no
 * file (corpus.ts), and the report identifies the corpus it measured.
 */
export function runFixtures(paths: readonly string[], opts: RunOptions = {}): ConformanceReport {
  const { entries, manifests } = collect(paths);
  const cases: CaseResult[] = [];
  const under = new Map<string, Set<string>>();
  for (const e of entries) {
    if ('reason' in e) {
      cases.push({ id: stemOf(e.path), file: e.path, verdict: 'errored', reason: e.reason });
      continue;
    }
    const c = runFixture(e.file, opts);
    // Say why a file that looks like a copy of another fixture is errored under its own name.
    if (e.linkTo !== undefined && c.verdict === 'errored') c.reason = `${c.reason ?? ''}\n${e.file} is a symbolic link to ${e.linkTo}: a link is a fixture of its own, named by its own file name`;
    if (e.root !== undefined) under.set(e.root, (under.get(e.root) ?? new Set()).add(c.id));
    cases.push(c);
  }
  for (const m of manifests) cases.push(...manifestCases(m, under.get(m.dir) ?? new Set()));
  disambiguateIds(cases);
  const files = entries.flatMap((e) => ('file' in e ? [{ file: e.file, rel: e.rel }] : []));
  return buildReport(cases, ADOPTABLE, corpusIdentity(paths, files, manifests));
}

/** Run one fixture file. Never throws. */
export function runFixture(file: string, opts: RunOptions = {}): CaseResult {
  let bytes: Buffer;
  try {
    // Refused before it is read: a fixture of tens of megabytes is not parsed anyway.
    const size = statSync(file).size;
    if (size > DEFAULT_MAX_BYTES) return errored(stemOf(file), file, `the fixture is too large: ${size} bytes, more than the ${DEFAULT_MAX_BYTES}-byte limit on a document; it was not read`);
    bytes = readFileSync(file);
  } catch (e) {
    return errored(stemOf(file), file, `cannot read the fixture: ${ioReason(e)}`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return errored(stemOf(file), file, 'the fixture is not valid UTF-8: JSON text is UTF-8 [OAR-DOC-1]');
  }
  return runFixtureText(text, file, opts);
}

/** Run one fixture from its text; `file` is its path, whose stem the `id` must equal. Never throws. */
export function runFixtureText(text: string, file: string, opts: RunOptions = {}): CaseResult {
  // A case is named by its file's stem, which its `id` must equal ([OAR-CONF-17]): a fixture
  // claiming another fixture's id is errored under its own name and takes nothing from that one.
  const id = stemOf(file);
  try {
    // A number too large for binary64 is kept as ±Infinity: it is how a fixture hands the engine a
    // non-finite double, which the engine must refuse as a provider failure ([OAR-FACT-23]).
    const parsed = parseSource(text, file, { bigInts: true, nonFinite: true, expandSequences: false, format: 'json' });
    const parseErrors = parsed.diagnostics.filter((d) => d.severity === 'error');
    const doc = parsed.docs[0];
    if (parseErrors.length > 0 || doc === undefined) {
      // Valid JSON beyond the reader's limits (nesting, size) is not a syntax error: say which.
      const syntax = parseErrors.length === 0 || parseErrors.some((d) => d.message.startsWith('JSON syntax error'));
      return errored(id, file, `${syntax ? 'the fixture is not valid JSON' : 'the fixture was not parsed'}: ${describeDiagnostics(parseErrors)}`);
    }
    const shape = validateFixtureDocument(doc.value, doc.locate).filter((d) => d.severity === 'error');
    if (shape.length > 0) return errored(id, file, `malformed fixture: ${describeDiagnostics(shape)}`);
    return run(doc, doc.value as Fixture, id, file, opts);
  } catch (e) {
    if (e instanceof MalformedFixture) return errored(id, file, `malformed fixture: ${e.message} [${e.clause}]`);
    return errored(id, file, `internal error while running the fixture: ${message(e)}`);
  }
}

function run(doc: SourceDoc, fx: Fixture, id: string, file: string, opts: RunOptions): CaseResult {
  // The schema check makes this comparison for `.json` files; a file given under another name too.
  if (fx.id !== stemOf(file)) throw new MalformedFixture('OAR-CONF-17', `fixture id \`${fx.id}\` must equal its file name stem \`${stemOf(file)}\``);
  const unknown = undefinedClause(fx.covers);
  if (unknown !== undefined) {
    throw new MalformedFixture('OAR-CONF-17', `covers names \`${unknown.id}\`, which this specification does not define${unknown.nearest !== undefined ? ` (the nearest defined clause is \`${unknown.nearest}\`)` : ''}`);
  }
  checkExpectedError(fx);
  const sub = (path: (string | number)[], index = 0, inCollection = false): SourceDoc => ({
    value: valueAt(doc.value, path),
    file: doc.file,
    index,
    inCollection,
    locate: (p) => doc.locate([...path, ...p]),
    locateText: (p, offset, length) => doc.locateText([...path, ...p], offset, length),
  });

  // [OAR-CONF-20], [OAR-CONF-35]: adopt the fixture's capability, or skip it — never a baseline one.
  const capDoc = sub(['input', 'capability']);
  // A capability from a later minor revision (a newer version, a profile added since,
  // [OAR-VER-5]) is one this engine cannot adopt: skipped, not failed — unless the fixture asserts
  // that loading it is rejected.
  const newer = hasOwn(fx.expected, 'error') ? [] : laterRevisionGaps(capDoc.value);
  if (newer.length > 0) {
    return {
      id,
      file,
      verdict: 'skipped',
      skipped_capability: newer.map((g) => g.capability).join(', '),
      reason: `the fixture's capability document cannot be adopted: ${newer.map((g) => g.why).join('; ')} [OAR-CONF-20]`,
    };
  }
  // Read with no ceiling: a limit above ours is an adoption gap to report, not a load error.
  const cap = loadCapability(capDoc.value, capDoc.locate, { engineMaxNodes: Number.POSITIVE_INFINITY }).capability;
  const baseline = cap !== undefined && isBaselineCapability(cap);
  const gaps = cap === undefined ? [] : adoptionGaps(cap);
  const base: CaseResult = { id, file, verdict: 'passed', ...(cap !== undefined ? { baseline } : {}) };
  if (gaps.length > 0 && !baseline) {
    return {
      ...base,
      verdict: 'skipped',
      skipped_capability: gaps.map((g) => g.capability).join(', '),
      reason: `the fixture's capability document cannot be adopted: ${gaps.map((g) => g.why).join('; ')} [OAR-CONF-20]`,
    };
  }
  const notes: string[] = [];
  if (gaps.length > 0) {
    notes.push(`baseline fixture run although ${gaps.map((g) => g.capability).join(', ')} cannot be adopted: a baseline fixture is never skipped [OAR-CONF-35]`);
  }

  // [OAR-CONF-38] the real loader, against the fixture's capability and configuration.
  const configs = fx.input.config === undefined ? [] : Array.isArray(fx.input.config) ? fx.input.config.map((_, i) => sub(['input', 'config', i], i, true)) : [sub(['input', 'config'])];
  const loaded = loadPack({
    capability: capDoc,
    rules: fx.rules.map((_, i) => sub(['rules', i], i, true)),
    configs,
    // A baseline fixture run despite a gap in its node limit is loaded as far as this engine can:
    // conditions are still held to the parser's own ceiling.
    ...(gaps.length > 0 ? { capabilityOptions: { engineMaxNodes: Number.POSITIVE_INFINITY } } : {}),
  });
  const loadErrors = loaded.ok ? [] : loaded.diagnostics.filter((d) => d.severity === 'error');
  if (!loaded.ok) opts.observe?.({ loadErrors, decisions: [] });

  if (hasOwn(fx.expected, 'error')) {
    const token = fx.expected.error as string;
    if (loaded.ok) {
      return failed(base, notes, [{ key: 'error', entry: { expected: token, actual: null }, note: `error: expected a load-time rejection naming ${show(token)}, but the rules loaded` }]);
    }
    if (loadErrors.some((d) => names(d, token))) return finish(base, notes);
    return failed(base, notes, [
      {
        key: 'error',
        entry: { expected: token, actual: loadErrors.map(formatDiagnostic) },
        note: `error: no diagnostic names ${show(token)}; the loader reported: ${loadErrors.map(formatDiagnostic).join(' | ')}`,
      },
    ]);
  }
  if (!loaded.ok) {
    return failed(base, notes, [
      {
        key: 'error',
        entry: { expected: null, actual: loadErrors.map(formatDiagnostic) },
        note: `error: the fixture expects the rules to load, but the loader rejected them: ${loadErrors.map(formatDiagnostic).join(' | ')}`,
      },
    ]);
  }

  const pack = loaded.pack;
  const counterRules = counterRulesOf(pack);
  const occurrences = fx.input.occurrences ?? [fx.input as OccurrenceSpec];
  occurrences.forEach((o, i) => checkAnchor(pack.capability, o.anchor, fx.input.occurrences ? `input.occurrences[${i}].anchor` : 'input.anchor'));
  checkCounterKeys(fx.expected, 'expected', counterRules);
  occurrences.forEach((o, i) => o.expected && checkCounterKeys(o.expected, `input.occurrences[${i}].expected`, counterRules));

  // [OAR-CONF-31] one engine, one session, one counter store; side-effects land before the next.
  const engine = createEngine(compileToBundle(pack, opts.backend), { counters: new MemoryCounterStore(), detectors: fixtureDetectors() });
  const mismatches: Mismatch[] = [];
  const runCounters: Record<string, CounterValues> = {};
  let last: Decision | undefined;
  const decisions: Decision[] = [];
  occurrences.forEach((o, i) => {
    let decision: Decision;
    try {
      decision = engine.decide(occurrence(o, fx.input.session_id));
    } catch (e) {
      if (e instanceof HostInputError) throw refusedOccurrence(e, fx.input.occurrences ? `input.occurrences[${i}]` : 'input');
      throw new Error(`the engine threw at ${fx.input.occurrences ? `occurrence ${i}` : 'the occurrence'}: ${message(e)}`);
    }
    for (const [name, v] of Object.entries(decision.counters)) runCounters[name] = { ...v };
    if (fx.input.occurrences && o.expected) {
      mismatches.push(...compareExpected(o.expected, { decision, counters: decision.counters }, counterRules, `occurrences[${i}].`));
    }
    last = decision;
    decisions.push(decision);
  });
  if (last === undefined) throw new Error('no occurrence was evaluated');
  // [OAR-CONF-21] over the run, a counter changed only if it ends other than where it began: the
  // store starts empty, so one back at zero (counted, then reset) is not reported.
  for (const [name, v] of Object.entries(runCounters)) if (v.fire_count === 0 && v.breaker_count === 0) delete runCounters[name];
  opts.observe?.({ loadErrors: [], decisions });
  // The fixture-level expectation describes the final occurrence, and counters the whole run.
  mismatches.push(...compareExpected(fx.expected, { decision: last, counters: runCounters }, counterRules));
  return mismatches.length === 0 ? finish(base, notes) : failed(base, notes, mismatches);
}

/**
 * The host occurrence a fixture describes: exactly what it states, nothing from the process, read
 * by the same JSON mapping the CLI uses (`occurrenceFromJson`). [OAR-CONF-25] detector facts reach
 * the environment only through detector://fixture; [OAR-CONF-40] an explicit window replaces the
 * maintained one for this occurrence only, and the engine's own tool adapter derives `tool`,
 * `tool_args` and the fingerprint from `tool_call` — the production adapter, which lets explicit
 * `facts` win under their own names, so `tool_call` and `facts` pass untouched (docs/decisions.md
 * "A tool call and explicit facts").
 */
function occurrence(o: OccurrenceSpec, session: string | undefined): Occurrence {
  // The occurrence's own members: the single-occurrence spelling keeps them beside `capability`,
  // `config` and `session_id` in `input` ([OAR-CONF-18]).
  const json: Obj = {};
  for (const key of OCCURRENCE_MEMBERS) if (o[key] !== undefined) json[key] = o[key];
  if (session !== undefined) json.session_id = session;
  return occurrenceFromJson(json);
}

const OCCURRENCE_MEMBERS = ['anchor', 'facts', 'detector_facts', 'recent_activity', 'content', 'tool_call'] as const;

/** The fixture's spelling of an `Occurrence` member (runtime/host-input.ts names the TypeScript one). */
const FIXTURE_MEMBER: Readonly<Record<string, string>> = { session: 'session_id', toolCall: 'tool_call', recentActivity: 'recent_activity', detectorFacts: 'detector_facts' };

/**
 * The engine refused the occurrence a fixture describes (a `HostInputError`: an undeclared fact, a
 * member of the wrong shape). That is the fixture's mistake, not the runner's: name the member.
 */
function refusedOccurrence(e: HostInputError, where: string): MalformedFixture {
  const [member, ...rest] = e.path;
  const path = member === undefined ? where : `${where}.${FIXTURE_MEMBER[member] ?? member}${rest.map((seg) => (typeof seg === 'number' ? `[${seg}]` : `.${seg}`)).join('')}`;
  const what = e.message.replace(/^decide: /, '');
  const facts = member === 'facts' || member === 'detectorFacts';
  const clause = facts ? 'OAR-CONF-23' : member === 'toolCall' ? 'OAR-CONF-40' : 'OAR-CONF-18';
  const hint = facts ? '; a fixture supplies only facts its capability declares: core, of a declared profile, or listed in host_facts' : '';
  return new MalformedFixture(clause, `${path}: the engine refuses the occurrence the fixture describes: ${what}${hint}`);
}

// ---------------------------------------------------------------------------------------------
// The runner's own checks of a fixture's meaning

/**
 * `expected.error` asserts that the rules do not load ([OAR-CONF-21]); nothing is then evaluated,
 * so any other assertion beside it would be silently ignored. Refuse rather than pass it.
 */
function checkExpectedError(fx: Fixture): void {
  const inOccurrence = (fx.input.occurrences ?? []).findIndex((o) => o.expected !== undefined && hasOwn(o.expected, 'error'));
  if (inOccurrence >= 0) {
    throw new MalformedFixture('OAR-CONF-31', `input.occurrences[${inOccurrence}].expected.error: the rules load once, before any occurrence, so a load-time rejection is asserted in the fixture-level expected`);
  }
  if (!hasOwn(fx.expected, 'error')) return;
  const others = Object.keys(fx.expected).filter((k) => k !== 'error');
  if (others.length > 0) {
    throw new MalformedFixture('OAR-CONF-21', `expected.error asserts a load-time rejection, so nothing is evaluated and expected.${others[0]} could never be compared`);
  }
  const withExpected = (fx.input.occurrences ?? []).findIndex((o) => o.expected !== undefined);
  if (withExpected >= 0) {
    throw new MalformedFixture('OAR-CONF-21', `expected.error asserts a load-time rejection, so input.occurrences[${withExpected}].expected could never be compared`);
  }
}

/** [OAR-CONF-29] an occurrence names a host-local anchor of the fixture's capability. */
function checkAnchor(cap: Capability, anchor: string, where: string): void {
  if (localToCore(cap, anchor) !== undefined) return;
  const local = [...cap.coreAnchors.values(), ...cap.hostAnchors];
  const core = cap.coreAnchors.has(anchor) ? ` — \`${anchor}\` is a core identifier; its host-local spelling is \`${cap.coreAnchors.get(anchor)}\`` : '';
  throw new MalformedFixture('OAR-CONF-29', `${where} \`${anchor}\` is not a host-local anchor of the fixture's capability${core} (declared: ${local.join(', ') || 'none'})`);
}

/**
 * [OAR-CONF-33] a counter key names a loaded rule, with `#<scope>` exactly when that rule has a
 * `counter_scope`. A key that can never match would make an asserted zero pass vacuously.
 */
function checkCounterKeys(expected: Obj, where: string, rules: ReadonlyMap<string, CounterRule>): void {
  if (!isObject(expected.counters)) return;
  for (const key of Object.keys(expected.counters)) {
    const problem = counterKeyProblem(key, rules);
    if (problem !== undefined) throw new MalformedFixture('OAR-CONF-33', `${where}.counters names ${problem}`);
  }
}

/**
 * Why an asserted counter key can never match a counter of the loaded rules ([OAR-CONF-33]), or
 * `undefined` when it can. Shared with `oarc test`, whose expectations are compared the same way.
 */
export function counterKeyProblem(key: string, rules: ReadonlyMap<string, CounterRule>): string | undefined {
  const { qid, scope } = splitCounterKey(key);
  const rule = rules.get(qid);
  if (rule === undefined) return `\`${key}\`, but no loaded rule has the qualified identifier \`${qid}\``;
  if (rule.scoped && scope === undefined) return `\`${key}\`, but rule \`${qid}\` declares counter_scope: write \`${qid}#<scope value>\``;
  if (!rule.scoped && scope !== undefined) return `\`${key}\`, but rule \`${qid}\` declares no counter_scope: write \`${qid}\``;
  return undefined;
}

/** How each loaded rule's counters are asserted (compare.ts's `CounterRule`), by qualified id. */
export function counterRulesOf(pack: LoadedPack): Map<string, CounterRule> {
  const out = new Map<string, CounterRule>();
  for (const r of pack.rules) {
    const counter = r.onFire.some((a) => a === 'increment_counter' || a === 'reset_counter');
    const breaker = r.onFire.some((a) => a === 'increment_breaker' || a === 'reset_breaker');
    out.set(r.qid, { scoped: r.counterScope !== undefined, breakerOnly: breaker && !counter });
  }
  return out;
}

/** [OAR-CONF-21] the error "contains the given text": its message, its named token, or its clause. */
function names(d: Diagnostic, token: string): boolean {
  return d.message.includes(token) || (d.token?.includes(token) ?? false) || d.clause.includes(token);
}

// ---------------------------------------------------------------------------------------------
// Results

function errored(id: string, file: string, reason: string): CaseResult {
  return { id, file, verdict: 'errored', reason };
}

function finish(base: CaseResult, notes: readonly string[]): CaseResult {
  return notes.length > 0 ? { ...base, reason: notes.join('\n') } : base;
}

function failed(base: CaseResult, notes: readonly string[], mismatches: readonly Mismatch[]): CaseResult {
  const diff: Record<string, DiffEntry> = {};
  for (const m of mismatches) diff[m.key] = m.entry;
  return { ...base, verdict: 'failed', diff, reason: [...notes, ...mismatches.map((m) => m.note)].join('\n') };
}

function describeDiagnostics(ds: readonly Diagnostic[]): string {
  if (ds.length === 0) return 'no document';
  return ds.map(formatDiagnostic).join(' | ');
}

/** Case ids are unique in a report; a second fixture claiming an id is named by its file too. */
function disambiguateIds(cases: CaseResult[]): void {
  const first = new Map<string, CaseResult>();
  for (const c of cases) {
    const seen = first.get(c.id);
    if (seen === undefined) {
      first.set(c.id, c);
      continue;
    }
    const original = c.id;
    c.id = `${original} (${c.file})`;
    c.verdict = 'errored';
    delete c.diff;
    delete c.skipped_capability;
    c.reason = `fixture id \`${original}\` is also the id of ${seen.file}: a fixture id names one fixture [OAR-CONF-17]`;
  }
}

// ---------------------------------------------------------------------------------------------
// Files

/**
 * A fixture file to run, or a path given that could not be read (reported as an errored case).
 * `linkTo` is the real file when `file` is a link to a file of another name.
 */
export type FixtureEntry = { file: string; linkTo?: string } | { path: string; reason: string };

/** A file found, with what the corpus identity and the manifest check need to know of it. */
type Found = { file: string; linkTo?: string; rel: string; root?: string } | { path: string; reason: string };

/**
 * Fixture files under `paths`, in the order given: a file is taken whatever its name; a directory
 * is searched recursively for `*.json`, sorted by path (code-unit order) so every run lists the
 * same way. A path that cannot be read is reported, not dropped.
 *
 * A file reached twice under the same name (named twice, or through a linked directory) is run
 * once. A link giving a file another name is a case of its own: the case is named by the stem, so
 * the alias cannot stand in for the real file (which would vanish from the report) — it is run
 * under its own name, and errored there since its stem is not the id ([OAR-CONF-17]).
 */
export function collectFixtureFiles(paths: readonly string[]): FixtureEntry[] {
  return collect(paths).entries.map((e) => ('reason' in e ? e : e.linkTo === undefined ? { file: e.file } : { file: e.file, linkTo: e.linkTo }));
}

function collect(paths: readonly string[]): { entries: Found[]; manifests: ManifestRead[] } {
  const out: Found[] = [];
  const manifests: ManifestRead[] = [];
  const seen = new Set<string>();
  const add = (f: string, root?: string) => {
    let real: string;
    try {
      real = realpathSync(f);
    } catch {
      real = resolve(f);
    }
    const key = `${real}\0${stemOf(f)}`;
    if (seen.has(key)) return;
    seen.add(key);
    const rel = root === undefined ? basename(f) : relative(root, f);
    out.push({ file: f, rel, ...(root !== undefined ? { root } : {}), ...(basename(real) === basename(f) ? {} : { linkTo: real }) });
  };
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch (e) {
      out.push({ path: p, reason: `cannot read \`${p}\`: ${ioReason(e)}; give a conformance fixture file (*.json) or a directory of them` });
      continue;
    }
    if (!isDir) {
      add(p);
      continue;
    }
    const found: string[] = [];
    const unreadable: Found[] = [];
    walk(p, found, new Set(), unreadable);
    found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).forEach((f) => add(f, p));
    out.push(...unreadable);
    const m = readManifest(p);
    if (m !== undefined) manifests.push(m);
  }
  return { entries: out, manifests };
}

function walk(dir: string, out: string[], visited: Set<string>, unreadable: FixtureEntry[]): void {
  try {
    const real = realpathSync(dir);
    if (visited.has(real)) return;
    visited.add(real);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      try {
        const st = entry.isSymbolicLink() ? statSync(full) : entry;
        if (st.isDirectory()) walk(full, out, visited, unreadable);
        else if (st.isFile() && extname(entry.name).toLowerCase() === '.json' && entry.name !== MANIFEST) out.push(full);
      } catch (e) {
        // A dangling link is reported only where a fixture was expected.
        if (extname(entry.name).toLowerCase() === '.json') unreadable.push({ path: full, reason: `cannot read \`${full}\`: ${ioReason(e)}` });
      }
    }
  } catch (e) {
    unreadable.push({ path: dir, reason: `cannot read directory \`${dir}\`: ${ioReason(e)}` });
  }
}

function stemOf(file: string): string {
  return basename(file, extname(file)) || file;
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let node = root;
  for (const seg of path) {
    if (Array.isArray(node) && typeof seg === 'number') node = node[seg];
    else if (isObject(node) && typeof seg === 'string' && hasOwn(node, seg)) node = node[seg];
    else return undefined;
  }
  return node;
}

function message(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
