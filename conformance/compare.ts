/**
 * Comparing a fixture's `expected` with what the engine did ([OAR-CONF-21]). Only the members a
 * fixture carries are compared; each mismatch becomes a diff entry with the expected value, the
 * actual value (projected onto the members the fixture asserts, so the diff shows like with like)
 * and a one-line note saying where the two first differ.
 *
 * Readings (each also in docs of the runner's report):
 * - `on_fire` items are either a side-effect name (`"increment_counter"`, compared with the applied
 *   action) or an object `{ rule?, action? }` whose present members are compared. Both spellings
 *   compare by length and order: the list is "the side-effects the engine applied, in application
 *   order" ([OAR-CONF-21]).
 * - `transforms`, `advisories` ([OAR-CONF-37]) and `events` compare by length and order, and per
 *   item only the members present; `copy` — top level or inside an advisory — compares the copy
 *   members present (`what`, `fix`, ...), so two engines that differ only in rendering an absent
 *   member as `""` or not at all agree.
 * - `skipped_transforms` compares length, order, and every entry's `rule`, `start`, `end` and
 *   `reason` ([OAR-CONF-39], [OAR-OPS-23]).
 * - `applied` compares the `<qualified id>:<outcome>` strings in order ([OAR-OPS-9]).
 * - `content` compares code point by code point ([OAR-CONF-34]) with the content after the applied
 *   transforms — at a block none is applied ([OAR-OPS-17]), so it is the input unchanged. `null` is
 *   not content and never matches.
 * - `counters` ([OAR-CONF-21], [OAR-CONF-33]): keys are `<qid>` or `<qid>#<scope>`; only the keys
 *   asserted are compared, and a missing actual entry reads as all zeroes, so an asserted zero
 *   matches an absent entry. A value that is an object compares its members (`fire_count`,
 *   `breaker_count`); a plain number compares `fire_count`, unless the rule declares breaker
 *   actions and no counter action, when it compares `breaker_count`.
 */
import type { CounterValues, Decision } from '../runtime/index.js';
import type { DiffEntry } from './result.js';
import { plural } from '../runtime/plural.js';

/** What one occurrence (or, for counters, a whole run) produced, in the shape `expected` asserts. */
export interface Actual {
  decision: Decision;
  /** Counters that changed over the span the expectation describes ([OAR-CONF-21]). */
  counters: Readonly<Record<string, CounterValues>>;
}

/** How a plain-number counter expectation reads a rule's counters. */
export interface CounterRule {
  /** The rule declares `counter_scope`, so its keys are written `<qid>#<scope>` ([OAR-CONF-33]). */
  scoped: boolean;
  /** The rule declares breaker actions and no counter action: a plain number is `breaker_count`. */
  breakerOnly: boolean;
}

export interface Mismatch {
  /** Where in the fixture: `decision`, `occurrences[2].applied`. */
  key: string;
  entry: DiffEntry;
  /** One line: where the two differ. */
  note: string;
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** JSON equality, with an integer and its exact `bigint` spelling equal. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b) || a === b;
    try {
      return BigInt(a) === BigInt(b);
    } catch {
      return false; // a non-integer number cannot equal a bigint
    }
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return a === b;
}

/** `"block"`, `2`, `null`, `["a","b"]` — short, for notes. */
export function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'bigint') return v.toString();
  try {
    const s = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
    return s.length > 160 ? `${s.slice(0, 157)}...` : s;
  } catch {
    return String(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Item matchers: does an actual item satisfy an expected one, and what does it look like projected

interface ItemRule {
  /** The expected item's members that are compared. */
  members: (expected: unknown) => string[];
  /** Compare one member. */
  member: (name: string, expected: unknown, actual: unknown) => boolean;
  /** An expected item that is not an object (a plain `on_fire` action name). */
  scalar?: { field: string };
}

const exactMembers: ItemRule['member'] = (_n, e, a) => jsonEqual(e, a);

/** `copy` compares the copy members present; other members compare exactly. */
const copyAware: ItemRule['member'] = (n, e, a) => (n === 'copy' ? copyMatches(e, a) : jsonEqual(e, a));

function copyMatches(expected: unknown, actual: unknown): boolean {
  if (!isObject(expected)) return jsonEqual(expected, actual);
  if (!isObject(actual)) return false;
  return Object.keys(expected).every((k) => jsonEqual(expected[k], actual[k]));
}

const presentMembers = (e: unknown): string[] => (isObject(e) ? Object.keys(e) : []);

const RULES = {
  present: { members: presentMembers, member: exactMembers } satisfies ItemRule,
  advisory: { members: presentMembers, member: copyAware } satisfies ItemRule,
  skipped: { members: () => ['rule', 'start', 'end', 'reason'], member: exactMembers } satisfies ItemRule,
  onFire: { members: presentMembers, member: exactMembers, scalar: { field: 'action' } } satisfies ItemRule,
} as const;

function itemMatches(rule: ItemRule, expected: unknown, actual: unknown): boolean {
  if (!isObject(expected)) {
    if (rule.scalar) return isObject(actual) && jsonEqual(expected, actual[rule.scalar.field]);
    return jsonEqual(expected, actual);
  }
  if (!isObject(actual)) return false;
  return rule.members(expected).every((m) => rule.member(m, expected[m], actual[m]));
}

/**
 * The actual item shown in the expected item's terms: only the members the fixture asserts. An
 * actual item with no expected counterpart is shown with the members the fixture's other items
 * use (`fallback`), or as a bare action name when the fixture spells every item that way.
 */
function project(rule: ItemRule, expected: unknown, actual: unknown, fallback: readonly string[], bare: boolean): unknown {
  if (!isObject(actual)) return actual ?? null;
  if (rule.scalar && (expected === undefined ? bare : !isObject(expected))) return actual[rule.scalar.field] ?? null;
  const names = isObject(expected) ? rule.members(expected) : fallback;
  if (names.length === 0) return actual;
  const expectedCopy = isObject(expected) && isObject(expected.copy) ? Object.keys(expected.copy) : undefined;
  const out: Obj = {};
  for (const n of names) {
    const v = actual[n];
    out[n] = n === 'copy' && expectedCopy && isObject(v) ? pick(v, expectedCopy) : (v ?? null);
  }
  return out;
}

function pick(o: Obj, names: readonly string[]): Obj {
  const out: Obj = {};
  for (const n of names) out[n] = o[n] ?? null;
  return out;
}

/** Compare two lists by length, order and item; the note names the first difference. */
function compareList(key: string, rule: ItemRule, expected: readonly unknown[], actual: readonly unknown[]): Mismatch | undefined {
  const fallback = [...new Set(expected.flatMap((e) => (isObject(e) ? rule.members(e) : [])))];
  const bare = expected.length > 0 && expected.every((e) => !isObject(e));
  const shown = actual.map((a, i) => project(rule, expected[i], a, fallback, bare));
  let note: string | undefined;
  const n = Math.min(expected.length, actual.length);
  for (let i = 0; i < n; i++) {
    if (!itemMatches(rule, expected[i], actual[i])) {
      note = `${key}[${i}]: expected ${show(expected[i])}, actual ${show(shown[i])}`;
      break;
    }
  }
  if (note === undefined && expected.length !== actual.length) {
    const extra = actual.length > expected.length ? `; first extra: ${show(shown[expected.length])}` : `; first missing: ${show(expected[actual.length])}`;
    note = `${key}: expected ${plural(expected.length, 'item')}, actual ${actual.length}${extra}`;
  }
  if (note === undefined) return undefined;
  return { key, entry: { expected: [...expected], actual: shown }, note };
}

function compareScalar(key: string, expected: unknown, actual: unknown): Mismatch | undefined {
  if (jsonEqual(expected, actual)) return undefined;
  return { key, entry: { expected, actual: actual ?? null }, note: `${key}: expected ${show(expected)}, actual ${show(actual ?? null)}` };
}

/** Content, code point by code point ([OAR-CONF-34]); the note names the first differing position. */
function compareContent(key: string, expected: unknown, actual: string | undefined): Mismatch | undefined {
  // [OAR-CONF-34] content is a string, compared by code point; `null` is not content. At a block
  // no transform is applied ([OAR-OPS-17]), so the expected content is the input unchanged.
  if (typeof expected !== 'string') return { key, entry: { expected, actual: actual ?? null }, note: `${key}: expected ${show(expected)} is not a string: content is compared by code point ([OAR-CONF-34])` };
  if (actual === undefined) {
    return { key, entry: { expected, actual: null }, note: `${key}: expected ${show(expected)}, actual no content (the decision carries none)` };
  }
  const e = [...expected];
  const a = [...actual];
  let i = 0;
  while (i < e.length && i < a.length && e[i] === a[i]) i++;
  if (i === e.length && i === a.length) return undefined;
  const cp = (s: string | undefined) => (s === undefined ? 'end of content' : `U+${s.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} ${show(s)}`);
  return {
    key,
    entry: { expected, actual },
    note: `${key}: first difference at code point ${i}: expected ${cp(e[i])}, actual ${cp(a[i])} (lengths ${e.length} and ${a.length} code points)`,
  };
}

function compareCopy(key: string, expected: unknown, actual: Record<string, string> | null): Mismatch | undefined {
  if (copyMatches(expected, actual)) return undefined;
  const shown = isObject(actual) && isObject(expected) ? pick(actual, Object.keys(expected)) : actual;
  return { key, entry: { expected, actual: shown }, note: `${key}: expected ${show(expected)}, actual ${show(shown)}` };
}

/** Split `<qid>#<scope>`: a qualified identifier never contains `#` ([OAR-DOC-6], [OAR-DOC-7]). */
export function splitCounterKey(key: string): { qid: string; scope?: string } {
  const i = key.indexOf('#');
  return i < 0 ? { qid: key } : { qid: key.slice(0, i), scope: key.slice(i + 1) };
}

function compareCounters(
  key: string,
  expected: Readonly<Record<string, unknown>>,
  actual: Readonly<Record<string, CounterValues>>,
  rules: ReadonlyMap<string, CounterRule>,
): Mismatch | undefined {
  const notes: string[] = [];
  const shownActual: Obj = {};
  for (const [name, want] of Object.entries(expected)) {
    const have: CounterValues = actual[name] ?? { fire_count: 0, breaker_count: 0 };
    const rule = rules.get(splitCounterKey(name).qid);
    if (isObject(want)) {
      const projected = pick(have as unknown as Obj, Object.keys(want));
      shownActual[name] = projected;
      for (const [m, v] of Object.entries(want)) {
        if (!jsonEqual(v, (have as unknown as Obj)[m] ?? 0)) notes.push(`${name}.${m}: expected ${show(v)}, actual ${show((have as unknown as Obj)[m] ?? 0)}`);
      }
    } else {
      const field = rule?.breakerOnly ? 'breaker_count' : 'fire_count';
      shownActual[name] = have[field];
      if (!jsonEqual(want, have[field])) notes.push(`${name} (${field}): expected ${show(want)}, actual ${show(have[field])}`);
    }
  }
  if (notes.length === 0) return undefined;
  return { key, entry: { expected: { ...expected }, actual: shownActual }, note: `${key}: ${notes.join('; ')}` };
}

/**
 * Compare every member `expected` carries (except `error`, which is about loading) with what the
 * engine produced. `prefix` places the keys (`''` or `occurrences[2].`).
 */
export function compareExpected(
  expected: Readonly<Obj>,
  actual: Actual,
  counterRules: ReadonlyMap<string, CounterRule>,
  prefix = '',
): Mismatch[] {
  const d = actual.decision;
  const out: (Mismatch | undefined)[] = [];
  const k = (name: string) => `${prefix}${name}`;
  const has = (name: string) => hasOwn(expected, name);
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  if (has('decision')) out.push(compareScalar(k('decision'), expected.decision, d.decision));
  if (has('code')) out.push(compareScalar(k('code'), expected.code, d.code));
  if (has('rule')) out.push(compareScalar(k('rule'), expected.rule, d.rule));
  if (has('on_fire')) out.push(compareList(k('on_fire'), RULES.onFire, list(expected.on_fire), d.onFire));
  if (has('transforms')) out.push(compareList(k('transforms'), RULES.present, list(expected.transforms), d.transforms));
  if (has('advisories')) out.push(compareList(k('advisories'), RULES.advisory, list(expected.advisories), d.advisories));
  if (has('applied')) {
    const applied = d.applied.map((t) => `${t.rule}:${t.outcome}`);
    out.push(compareList(k('applied'), RULES.present, list(expected.applied), applied));
  }
  if (has('counters')) out.push(compareCounters(k('counters'), (expected.counters ?? {}) as Obj, actual.counters, counterRules));
  if (has('events')) out.push(compareList(k('events'), RULES.present, list(expected.events), d.events));
  if (has('content')) out.push(compareContent(k('content'), expected.content, d.content));
  if (has('copy')) out.push(compareCopy(k('copy'), expected.copy, d.copy));
  if (has('skipped_transforms')) out.push(compareList(k('skipped_transforms'), RULES.skipped, list(expected.skipped_transforms), d.skippedTransforms));
  return out.filter((m): m is Mismatch => m !== undefined);
}
