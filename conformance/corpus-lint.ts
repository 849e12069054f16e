/**
 * Lints of the fixture corpus itself — obligations section 10.2 places on fixtures rather than on
 * engines, checked by `coverage.ts` on every run so a fixture breaking them fails CI:
 *
 * [OAR-CONF-36] — a fixture's capability document declares nothing it does not need. The clause
 * makes the test behavioural ("a declaration is permitted exactly when removing it would change the
 * fixture's outcome"), so that is what `lintCapabilityNeeds` does: for every removable declaration
 * of `input.capability` it runs the fixture again through the real runner (`runFixtureText`, in
 * process) with that one declaration removed, and flags the declaration when the fixture's outcome
 * is unchanged. The removable declarations are exactly the ones that narrow the set of engines
 * able to adopt the fixture ([OAR-CONF-20]) or lower the baseline floor ([OAR-CONF-35]):
 *   - each profile of `profiles`;
 *   - each entry of `host_facts`;
 *   - each reference of `detectors`;
 *   - each host anchor of `anchors.host`;
 *   - `supports_transform: true` (removed: `false`);
 *   - a non-zero `activity_window` (removed: `0`).
 * The anchor map is left alone: moving a core anchor from `core` to `unsupported` declares a
 * different host, not a smaller one, and [OAR-PROF-2] makes both spellings mandatory reading.
 * `host`, `oar_capability_version` and `expression_nodes_max` are not capabilities an engine can
 * lack in the sense of [OAR-CONF-20] and are left alone too.
 *
 * "Outcome" is read as the runner sees it: the verdict, and — so that a fixture cannot keep passing
 * for a different reason — what the real loader and engine produced (`RunOptions.observe`): the
 * load errors (clause, named token, path, message) and each occurrence's decision (effect, identifiers,
 * copy, advisories, transforms, content, skipped transforms, trace outcomes with error code and
 * clause, applied side-effects, events, counters). A declaration is flagged only when the fixture
 * still passes AND all of that is identical. The second half matters for rejection fixtures: a
 * fixture proving that a host fact named only in `copy` must be reached through `requires`
 * ([OAR-FACT-20]) still "passes" once the host fact is undeclared — the loader now rejects the
 * binding as an unknown identifier ([OAR-COPY-2]), naming the same token — but it then passes for
 * a reason that is not the clause it covers, and the declaration is exactly what it needs. The
 * message is compared too because one clause can be broken two ways naming the same token: a host
 * fact `permission_profile` redefines a claimed profile's fact, or takes an unclaimed profile's
 * name ([OAR-FACT-17]) — removing the claimed `tool` profile turns the first fixture into the
 * second. (No loader message enumerates the capability, so an unrelated removal cannot change one.)
 * A fixture whose own run is not a pass cannot be judged (every removal "changes nothing" about a
 * failure); it is reported as not judged, and the conformance run reports the failure itself. A
 * skipped fixture is judged only by removals that make it pass: such a declaration made the fixture
 * unadoptable while buying nothing.
 *
 * [OAR-CONF-23] — a fixture restricts itself to core anchors and to facts of the `core` tier or of
 * a declared profile, except where the clause it covers is itself about host-tier behaviour, and
 * declares the host facts it uses in `input.capability.host_facts`. `lintHostTier` checks:
 *   - a fixture declaring host anchors (`anchors.host`) cites in `covers` a clause of
 *     `HOST_TIER_CLAUSES`;
 *   - a fixture declaring host facts (`host_facts`) cites a clause of `HOST_TIER_CLAUSES`, or a
 *     clause of the condition language (Appendix A, `OAR-EXPR-*`) or of copy (Appendix C,
 *     `OAR-COPY-*`). That second allowance is a reading, stated here: a fixture about how a typed
 *     value behaves in a condition or a copy binding — interpolating sixteen doubles, indexing a
 *     `map<string,string>`, overflowing an int, several facts of one type side by side — needs
 *     typed data no core or profile fact provides: every profile fact has a fixed observation
 *     meaning (a score between 0 and 1, the code-point length of the content), `double` and
 *     `list<map>` exist only in detector-backed profiles, and `map<string,string>` in none. A host
 *     fact declared in `host_facts` is then the honest carrier of test data. Only those two
 *     appendices get the allowance; a fixture about fact typing or provider failure
 *     ([OAR-FACT-23], [OAR-FACT-26]) can and must use a profile fact;
 *   - every fact a fixture supplies (`facts`, `detector_facts`, on `input` or on any member of
 *     `occurrences`) is a core fact, a fact or function of a declared profile, or a declared host
 *     fact — so a host fact used is a host fact declared, and nothing is supplied outside the
 *     fixture's declared vocabulary.
 * The list of host-tier clauses is a judgement over the specification's text, made once here with
 * the reason for each; `lintCorpus` reports an entry the specification does not define, so the
 * list cannot silently drift from the text.
 */
import { runFixtureText, type RunObservation } from './runner.js';
import type { CaseResult } from './result.js';
import { CORE_FACTS, STANDARD_PROFILES } from '../compiler/load/vocabulary.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------
// [OAR-CONF-23] which clauses are about host-tier behaviour

/** Clauses whose subject is host-tier behaviour (host facts, host anchors, host declarations). */
export const HOST_TIER_CLAUSES: Readonly<Record<string, string>> = Object.freeze({
  'OAR-FACT-2': 'a fact and a function under one name can only be declared through host_facts',
  'OAR-FACT-14': 'the tier every declared fact belongs to, the host tier among them',
  'OAR-FACT-17': 'a host declaration taking a profile name or redefining a core or profile fact',
  'OAR-FACT-18': 'the namespace a host-tier fact is published under',
  'OAR-FACT-20': 'reaching a non-core fact through requires; requires.facts is how a rule reaches a host fact',
  'OAR-FACT-21': 'the capability document publishing host facts and the host anchor catalogue',
  'OAR-FACT-22': 'the types a fact may be declared with; only host_facts declares a type',
  'OAR-FACT-24': "the engine validating the host's own declarations",
  'OAR-FACT-27': 'host_facts entries declaring facts or functions in the shared environment',
  'OAR-EXPR-2': 'a dotted identifier is the single name of a host-tier fact',
  'OAR-EXPR-24': 'a host declaration taking a reserved word',
  'OAR-SEL-9': 'a selector clause naming a fact outside the core tier',
  'OAR-PROF-5': 'the host-native anchor catalogue',
  'OAR-PROF-6': 'portability: what host anchors and host facts take away',
  'OAR-PROF-7': 'what the specification does not promise for host-tier rules',
  'OAR-PROF-8': 'the portability report naming host anchors and host facts',
  'OAR-CONF-3': 'resolving an anchor against the declared host catalogue',
  'OAR-CONF-23': 'the host-tier obligations of fixtures themselves',
});

/** Clause families whose fixtures may carry typed test data in host facts (see the module comment). */
export const TYPED_DATA_CLAUSE_PREFIXES: readonly string[] = Object.freeze(['OAR-EXPR-', 'OAR-COPY-']);

function justifiesHostFacts(clause: string): boolean {
  return Object.hasOwn(HOST_TIER_CLAUSES, clause) || TYPED_DATA_CLAUSE_PREFIXES.some((p) => clause.startsWith(p));
}

const PROFILE_NAMES: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  [...STANDARD_PROFILES].map(([p, ds]) => [p, new Set(ds.map((d) => d.name))]),
);
const CORE_NAMES: ReadonlySet<string> = new Set(CORE_FACTS.map((d) => d.name));

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * [OAR-CONF-23] problems in one fixture's use of the host tier, one line each (empty: none). Works
 * on the fixture's text alone; an unreadable fixture yields no problem here (coverage reports it).
 */
export function lintHostTier(text: string, file: string): string[] {
  let fx: unknown;
  try {
    fx = JSON.parse(text);
  } catch {
    return [];
  }
  if (!isObject(fx) || !isObject(fx.input) || !isObject(fx.input.capability)) return [];
  const covers = strings(fx.covers);
  const cap = fx.input.capability;
  const problems: string[] = [];
  const hostAnchors = strings(isObject(cap.anchors) ? cap.anchors.host : undefined);
  const hostFacts = Array.isArray(cap.host_facts) ? cap.host_facts.filter(isObject).map((h) => h.name).filter((n): n is string => typeof n === 'string') : [];

  if (hostAnchors.length > 0 && !covers.some((c) => Object.hasOwn(HOST_TIER_CLAUSES, c))) {
    problems.push(
      `${file}: declares host anchor${hostAnchors.length > 1 ? 's' : ''} ${hostAnchors.join(', ')} but covers no clause about host-tier behaviour ` +
        `(${covers.join(', ') || 'none'}); use a core anchor [OAR-CONF-23]`,
    );
  }
  if (hostFacts.length > 0 && !covers.some(justifiesHostFacts)) {
    problems.push(
      `${file}: declares host fact${hostFacts.length > 1 ? 's' : ''} ${hostFacts.join(', ')} but covers no clause about host-tier behaviour, ` +
        `the condition language or copy (${covers.join(', ') || 'none'}); use a core fact or a fact of a declared profile [OAR-CONF-23]`,
    );
  }

  const known = new Set<string>([...CORE_NAMES, ...hostFacts]);
  for (const p of strings(cap.profiles)) for (const n of PROFILE_NAMES.get(p) ?? []) known.add(n);
  const input = fx.input;
  const occurrences = Array.isArray(input.occurrences) ? input.occurrences : [input];
  const seen = new Set<string>();
  occurrences.forEach((o, i) => {
    if (!isObject(o)) return;
    for (const member of ['facts', 'detector_facts'] as const) {
      const facts = o[member];
      if (!isObject(facts)) continue;
      for (const name of Object.keys(facts)) {
        if (known.has(name) || seen.has(name)) continue;
        seen.add(name);
        const where = `input.${Array.isArray(input.occurrences) ? `occurrences[${i}].` : ''}${member}`;
        problems.push(
          name.includes('.')
            ? `${file}: ${where} supplies host fact ${name}, which input.capability.host_facts does not declare [OAR-CONF-23]`
            : `${file}: ${where} supplies ${name}, which is neither a core fact, nor of a declared profile, nor a declared host fact [OAR-CONF-23]`,
        );
      }
    }
  });
  return problems;
}

// ---------------------------------------------------------------------------------------------
// [OAR-CONF-36] every declaration changes the outcome

/** One removable declaration of a capability document. */
export interface CapabilityDeclaration {
  /** How it is written: `profiles: pii`, `host_facts: acme.tier`, `supports_transform: true`. */
  label: string;
  /** Remove it from (a copy of) the capability document. */
  remove: (capability: Obj) => void;
}

/** The removable declarations of a capability document, in document order of kind. */
export function removableDeclarations(capability: unknown): CapabilityDeclaration[] {
  if (!isObject(capability)) return [];
  const out: CapabilityDeclaration[] = [];
  const listItems = (member: string, label: (v: unknown) => string, get: (c: Obj) => unknown[] | undefined) => {
    const list = get(capability);
    if (!Array.isArray(list)) return;
    list.forEach((v, i) => out.push({ label: `${member}: ${label(v)}`, remove: (c) => void get(c)?.splice(i, 1) }));
  };
  const arr = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);
  listItems('profiles', String, (c) => arr(c.profiles));
  listItems('host_facts', (v) => (isObject(v) && typeof v.name === 'string' ? v.name : JSON.stringify(v)), (c) => arr(c.host_facts));
  listItems('detectors', String, (c) => arr(c.detectors));
  listItems('anchors.host', String, (c) => (isObject(c.anchors) ? arr(c.anchors.host) : undefined));
  if (capability.supports_transform === true) out.push({ label: 'supports_transform: true', remove: (c) => void (c.supports_transform = false) });
  if (typeof capability.activity_window === 'number' && capability.activity_window !== 0) {
    out.push({ label: `activity_window: ${capability.activity_window}`, remove: (c) => void (c.activity_window = 0) });
  }
  return out;
}

/** Where a JSON value starting at `start` ends (exclusive). The text is valid JSON. */
function valueEnd(text: string, start: number): number {
  const c = text[start];
  if (c === '"') {
    let i = start + 1;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    return i + 1;
  }
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (ch === '"') i = valueEnd(text, i) - 1;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return text.length;
  }
  const m = /-?[0-9.eE+-]+|true|false|null/y;
  m.lastIndex = start;
  return m.exec(text) ? m.lastIndex : start;
}

/** The span of `input.capability`'s value in a fixture's text, or undefined. */
function capabilitySpan(text: string): { start: number; end: number } | undefined {
  // Find the members by walking the top-level object and `input` with the same scanner.
  const member = (objStart: number, key: string): number | undefined => {
    let i = objStart + 1;
    for (;;) {
      while (/\s|,/.test(text[i] ?? '')) i++;
      if (text[i] !== '"') return undefined;
      const keyEnd = valueEnd(text, i);
      const k = JSON.parse(text.slice(i, keyEnd)) as string;
      i = keyEnd;
      while (/\s|:/.test(text[i] ?? '')) i++;
      if (k === key) return i;
      i = valueEnd(text, i);
    }
  };
  let root = 0;
  while (/\s/.test(text[root] ?? '')) root++;
  if (text[root] !== '{') return undefined;
  const input = member(root, 'input');
  if (input === undefined || text[input] !== '{') return undefined;
  const cap = member(input, 'capability');
  if (cap === undefined || text[cap] !== '{') return undefined;
  return { start: cap, end: valueEnd(text, cap) };
}

/**
 * The fixture's text with `input.capability` replaced by the given document, every other byte
 * kept — the rest of a fixture may hold integers beyond 2^53 that a parse and re-serialisation
 * would round.
 */
export function withCapability(text: string, capability: Obj): string {
  const span = capabilitySpan(text);
  if (span === undefined) throw new Error('the fixture has no input.capability object');
  return text.slice(0, span.start) + JSON.stringify(capability) + text.slice(span.end);
}

/** The observable outcome of one run, as one comparable string. */
function outcomeOf(result: CaseResult, obs: RunObservation | undefined): string {
  const view = {
    verdict: result.verdict,
    loadErrors: (obs?.loadErrors ?? []).map((d) => `${d.clause}|${d.token ?? ''}|${(d.path ?? []).join('/')}|${d.message}`).sort(),
    decisions: (obs?.decisions ?? []).map((d) => ({
      decision: d.decision,
      code: d.code,
      rule: d.rule,
      copy: d.copy,
      advisories: d.advisories,
      transforms: d.transforms,
      content: d.content ?? null,
      skipped: d.skippedTransforms,
      applied: d.applied.map((a) => [a.rule, a.outcome, a.error?.code ?? null, a.error?.clause ?? null]),
      onFire: d.onFire,
      events: d.events,
      counters: d.counters,
    })),
  };
  return JSON.stringify(view, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

function runObserved(text: string, file: string): { result: CaseResult; outcome: string } {
  let obs: RunObservation | undefined;
  const result = runFixtureText(text, file, { observe: (o) => void (obs = o) });
  return { result, outcome: outcomeOf(result, obs) };
}

export interface CapabilityNeeds {
  /** The declarations whose removal left the outcome unchanged. */
  unnecessary: string[];
  /** The declarations whose removal the fixture could not be judged on (its own run is not a pass). */
  notJudged?: string;
  /** Runs made: the fixture's own, plus one per removable declaration (0 when it has none). */
  runs: number;
}

/**
 * [OAR-CONF-36] run `text` (a fixture at `file`) once as written and once per removable capability
 * declaration with that declaration removed; report the declarations whose removal changes nothing.
 */
export function lintCapabilityNeeds(text: string, file: string): CapabilityNeeds {
  let fx: unknown;
  try {
    fx = JSON.parse(text);
  } catch {
    return { unnecessary: [], runs: 0 };
  }
  const capability = isObject(fx) && isObject(fx.input) ? fx.input.capability : undefined;
  const removals = removableDeclarations(capability);
  if (removals.length === 0 || !isObject(capability)) return { unnecessary: [], runs: 0 };
  const own = runObserved(text, file);
  let runs = 1;
  if (own.result.verdict === 'failed' || own.result.verdict === 'errored') {
    return { unnecessary: [], notJudged: `${file}: ${own.result.verdict} as written, so its capability declarations cannot be judged [OAR-CONF-36]`, runs };
  }
  const unnecessary: string[] = [];
  for (const r of removals) {
    const cap = structuredClone(capability);
    r.remove(cap);
    const changed = runObserved(withCapability(text, cap), file);
    runs++;
    const same = own.result.verdict === 'passed' ? changed.outcome === own.outcome : changed.result.verdict === 'passed';
    if (same && changed.result.verdict === 'passed') unnecessary.push(r.label);
  }
  return { unnecessary, runs };
}

// ---------------------------------------------------------------------------------------------
// The corpus

export interface CorpusLintResult {
  /** Violations, one line each; any one fails the coverage check. */
  problems: string[];
  /** Fixtures whose declarations could not be judged because they do not pass as written. */
  notJudged: string[];
  fixtures: number;
  /** Fixture runs made for [OAR-CONF-36]. */
  runs: number;
  /** Wall time of the lint, in milliseconds. */
  ms: number;
}

/**
 * Both lints over a corpus. `definedClauses`, when given, is every clause id the specification
 * defines: an entry of `HOST_TIER_CLAUSES` outside it is a problem.
 */
export function lintCorpus(fixtures: readonly { file: string; text: string }[], definedClauses?: ReadonlySet<string>): CorpusLintResult {
  const t0 = performance.now();
  const problems: string[] = [];
  const notJudged: string[] = [];
  if (definedClauses !== undefined) {
    for (const id of Object.keys(HOST_TIER_CLAUSES)) {
      if (!definedClauses.has(id)) problems.push(`corpus-lint: HOST_TIER_CLAUSES names ${id}, which the specification does not define [OAR-CONF-23]`);
    }
  }
  let runs = 0;
  for (const { file, text } of fixtures) {
    problems.push(...lintHostTier(text, file));
    const needs = lintCapabilityNeeds(text, file);
    runs += needs.runs;
    if (needs.notJudged !== undefined) notJudged.push(needs.notJudged);
    for (const d of needs.unnecessary) {
      problems.push(`${file}: declares ${d} in input.capability, but the fixture's outcome is the same without it [OAR-CONF-36]`);
    }
  }
  return { problems, notJudged, fixtures: fixtures.length, runs, ms: performance.now() - t0 };
}
