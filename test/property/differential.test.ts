/**
 * The differential check (DESIGN: "The interpreter and the differential check"): for every
 * generated well-typed condition and fact environment, the tree-walking interpreter (the oracle)
 * and the compiled closure must agree exactly — the same value, or the same raise.
 *
 * Exactness, decided:
 * - `int` values are compared in their canonical runtime form (a safe integer as `number`, anything
 *   else as `bigint`), so `5` and `5n` disagree: one canonical form per value is a runtime contract
 *   (runtime/int64.ts), not an accident.
 * - `double` values are compared with `Object.is`, so `-0.0` and `0.0` DISAGREE here. The spec makes
 *   the two indistinguishable to a rule — `==` holds between them ([OAR-EXPR-11]), dividing by
 *   either raises ([OAR-EXPR-14]), the language has no double-to-string conversion, and copy and
 *   fingerprints render both as `0.0` ([OAR-COPY-10], [OAR-FACT-28]) — so a back end MAY differ in
 *   the sign of a zero. We hold ours to more than that anyway: both back ends implement the same
 *   IEEE operations on the same JS numbers, so a differing sign can only mean the two took
 *   different arithmetic paths, which is worth hearing about. Relax `sameDouble` if a future
 *   optimisation legitimately changes the sign of a zero.
 * - lists are compared member by member, maps by own enumerable keys and members.
 * - a raise is compared by its code (`absent_key`, `overflow`, `wrong_type`, …).
 *
 * Beyond agreement, every value produced must be a canonical value of the condition's type: a
 * wrong-typed fact must raise ([OAR-FACT-26]) rather than leak into a result.
 *
 * Replay: the seed comes from OARC_PROPERTY_SEED (default below), the run count from
 * OARC_PROPERTY_RUNS (default 10,000, the CI run; `npm run test:long` runs 200,000), and a failing
 * path from OARC_PROPERTY_PATH. A failure prints all three and the counterexample.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parse as acornParse } from 'acorn';
import { generate } from 'astring';
import {
  checkConditionSource, interpret, loadCondition, printCondition, type TExpr,
} from '../../compiler/expr/index.js';
import { countNodes, type Expr } from '../../compiler/expr/ast.js';
import { parseCondition } from '../../compiler/expr/parser.js';
import { ObjectFactReader } from '../../runtime/facts.js';
import { Raise } from '../../runtime/raise.js';
import { INT64_MAX, INT64_MIN } from '../../runtime/int64.js';
import { isMap, mapGet, mapHas } from '../../runtime/values.js';
import type { FactType } from '../../runtime/types.js';
import { propertyConfig, runProperty as runShared } from './run.js';
import { PROPERTY_SYMBOLS as SYMBOLS, anyCondition, differentialCondition, factsArb, type GeneratedCondition } from './generators.js';

const CONFIG = propertyConfig(20240917, 10_000);
const SEED = CONFIG.seed;
const RUNS = CONFIG.runs;
const PATH = CONFIG.path;
/** Generous: 10,000 runs take a few seconds; the long run scales with the count. */
const TIMEOUT = Math.max(120_000, RUNS * 3);

/** `name` is a substring of the test's title, so the replay command selects that test alone. */
function runProperty<T>(name: string, arb: fc.Arbitrary<T>, predicate: (x: T) => void, runs: number): void {
  runShared(CONFIG, name, arb, predicate, runs, `npx vitest run test/property -t "${name}"`, true);
}

// --- evaluating on both back ends ---------------------------------------------------------------

type Outcome =
  | { kind: 'value'; value: unknown }
  | { kind: 'raise'; code: string; message: string }
  | { kind: 'crash'; error: string };

function settle(f: () => unknown): Outcome {
  try {
    return { kind: 'value', value: f() };
  } catch (e) {
    if (e instanceof Raise) return { kind: 'raise', code: e.code, message: e.message };
    return { kind: 'crash', error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
  }
}

function interpreted(typed: TExpr, facts: Record<string, unknown>): Outcome {
  return settle(() => {
    const r = interpret(typed, new ObjectFactReader(SYMBOLS, facts));
    if (!r.ok) throw r.raise;
    return r.value;
  });
}

function compiled(typed: TExpr, facts: Record<string, unknown>): Outcome {
  const fn = loadCondition(typed);
  return settle(() => fn(new ObjectFactReader(SYMBOLS, facts)));
}

// --- exact agreement ----------------------------------------------------------------------------

const sameDouble = (a: unknown, b: unknown): boolean => Object.is(a, b);

function sameValue(ty: FactType, a: unknown, b: unknown): boolean {
  switch (ty) {
    case 'bool':
    case 'string':
      return a === b;
    case 'int':
      // Canonical forms: the same type of value, and no -0 (which `===` would not notice).
      return typeof a === typeof b && Object.is(a, b);
    case 'double':
      return sameDouble(a, b);
    case 'list<string>':
    case 'list<map>': {
      if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
      const member: FactType = ty === 'list<string>' ? 'string' : 'map';
      for (let k = 0; k < a.length; k++) {
        if ((k in a) !== (k in b) || !sameValue(member, a[k], b[k])) return false;
      }
      return true;
    }
    case 'map':
    case 'map<string,string>':
      return a === b || sameMap(a, b);
  }
}

function keysOf(m: object): string[] {
  return m instanceof Map ? [...m.keys()].map(String) : Object.keys(m);
}

function sameMap(a: unknown, b: unknown): boolean {
  if (!isMap(a) || !isMap(b) || (a instanceof Map) !== (b instanceof Map)) return false;
  const ka = keysOf(a).sort();
  const kb = keysOf(b).sort();
  return ka.length === kb.length && ka.every((k, n) => k === kb[n] && Object.is(mapGet(a, k), mapGet(b, k)));
}

function sameOutcome(ty: FactType, a: Outcome, b: Outcome): boolean {
  if (a.kind === 'value' && b.kind === 'value') return sameValue(ty, a.value, b.value);
  if (a.kind === 'raise' && b.kind === 'raise') return a.code === b.code;
  return false;
}

/** Is `v` a canonical run-time value of `ty` (DESIGN "Values and types")? */
function conforms(ty: FactType, v: unknown): boolean {
  switch (ty) {
    case 'bool':
      return typeof v === 'boolean';
    case 'int':
      if (typeof v === 'number') return Number.isSafeInteger(v) && !Object.is(v, -0);
      return typeof v === 'bigint' && (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) && v <= INT64_MAX && v >= INT64_MIN;
    case 'double':
      return typeof v === 'number' && Number.isFinite(v);
    case 'string':
      return typeof v === 'string';
    case 'list<string>':
    case 'list<map>': {
      if (!Array.isArray(v)) return false;
      for (let k = 0; k < v.length; k++) {
        if (!(k in v) || !conforms(ty === 'list<string>' ? 'string' : 'map', v[k])) return false;
      }
      return true;
    }
    case 'map':
      return isMap(v);
    case 'map<string,string>': {
      if (!isMap(v)) return false;
      // Every key the language can see (`in`, indexing) must hold a string.
      const names = v instanceof Map ? [...v.keys()] : Object.getOwnPropertyNames(v);
      return names.every((k) => typeof k !== 'string' || !mapHas(v, k) || typeof mapGet(v, k) === 'string');
    }
  }
}

const show = (o: Outcome): string =>
  o.kind === 'value' ? `value ${fc.stringify(o.value)}` : o.kind === 'raise' ? `raise ${o.code} (${o.message})` : `CRASH ${o.error}`;

// --- an independent printer for the round trip --------------------------------------------------

const LEVEL: Record<string, number> = {
  '||': 1, '&&': 2, '==': 3, '!=': 3, '<': 3, '<=': 3, '>': 3, '>=': 3, in: 3, '+': 4, '-': 4, '*': 5, '/': 5, '%': 5,
};

function quote(s: string): string {
  let out = '"';
  for (let k = 0; k < s.length; k++) {
    const ch = s[k] as string;
    const u = s.charCodeAt(k);
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (u < 0x20 || (u >= 0xd800 && u <= 0xdfff)) out += `\\u${u.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out + '"';
}

/** Print a parsed condition back as source with the fewest parentheses the grammar needs. */
function printOar(e: Expr): { src: string; level: number } {
  const at = (x: Expr, min: number): string => {
    const p = printOar(x);
    return p.level >= min ? p.src : `(${p.src})`;
  };
  switch (e.type) {
    case 'bool':
      return { src: String(e.value), level: 7 };
    case 'int':
      return { src: e.value.toString(), level: 7 };
    case 'double':
      return { src: e.text, level: 7 };
    case 'string':
      return { src: quote(e.value), level: 7 };
    case 'ident':
      return { src: e.name, level: 7 };
    case 'list':
      return { src: `[${e.elements.map((x) => printOar(x).src).join(', ')}]`, level: 7 };
    case 'call':
      return { src: `${e.callee}(${e.args.map((x) => printOar(x).src).join(', ')})`, level: 7 };
    case 'index':
      return { src: `${at(e.object, 7)}[${printOar(e.index).src}]`, level: 7 };
    case 'unary':
      return { src: `${e.op}${at(e.operand, 7)}`, level: 6 };
    case 'binary': {
      const level = LEVEL[e.op] as number;
      // Left-associative; a relation's operands are additions ([OAR-EXPR-4]).
      const lmin = level === 3 ? 4 : level;
      return { src: `${at(e.left, lmin)} ${e.op} ${at(e.right, level + 1)}`, level };
    }
    case 'ternary':
      return { src: `${at(e.test, 1)} ? ${at(e.consequent, 0)} : ${at(e.alternate, 0)}`, level: 0 };
  }
}

/** Where nodes and operators are in the source: not part of a tree's shape. */
const POSITIONS = new Set(['offset', 'opOffset', 'question', 'colon']);

const withoutOffsets = (e: Expr): string =>
  JSON.stringify(e, (k, v) => (POSITIONS.has(k) ? undefined : typeof v === 'bigint' ? `${v}n` : v));

// --- coverage of the language -------------------------------------------------------------------

/** What a typed tree exercises: node kinds with their operator, mode and type. */
function features(e: TExpr, out: Set<string>): Set<string> {
  switch (e.k) {
    case 'lit':
      out.add(`lit:${e.ty}`);
      break;
    case 'list':
      out.add(`list:${e.ty}`);
      e.items.forEach((x) => features(x, out));
      break;
    case 'fact':
      out.add(`fact:${e.ty}`);
      break;
    case 'call':
      out.add(`call:${e.sym.param}->${e.sym.result}`);
      features(e.arg, out);
      break;
    case 'size':
      out.add(`size:${e.arg.ty}`);
      features(e.arg, out);
      break;
    case 'strfn':
      out.add(`strfn:${e.fn}`);
      features(e.s, out);
      features(e.t, out);
      break;
    case 'not':
    case 'neg':
      out.add(`${e.k}:${e.ty}`);
      features(e.operand, out);
      break;
    case 'and':
    case 'or':
      out.add(e.k);
      features(e.left, out);
      features(e.right, out);
      break;
    case 'arith':
      out.add(`arith:${e.ty}:${e.op}`);
      features(e.left, out);
      features(e.right, out);
      break;
    case 'cmp':
      out.add(`cmp:${e.mode}:${e.op}`);
      features(e.left, out);
      features(e.right, out);
      break;
    case 'in':
      out.add(`in:${e.right.ty}`);
      features(e.left, out);
      features(e.right, out);
      break;
    case 'index':
      out.add(`index:${e.object.ty}`);
      features(e.object, out);
      features(e.index, out);
      break;
    case 'cond':
      out.add(`cond:${e.ty}`);
      features(e.test, out);
      features(e.then, out);
      features(e.else, out);
      break;
  }
  return out;
}

const ALL_TYPES: FactType[] = ['bool', 'int', 'double', 'string', 'list<string>', 'list<map>', 'map', 'map<string,string>'];
const ORDER_OPS = ['==', '!=', '<', '<=', '>', '>='];
/** Everything Appendix A lets a condition do, as `features` names it. */
const EXPECTED_FEATURES: readonly string[] = [
  'lit:bool', 'lit:int', 'lit:double', 'lit:string', 'list:list<string>', 'list:list<map>',
  ...ALL_TYPES.map((t) => `fact:${t}`),
  ...ALL_TYPES.map((t) => `cond:${t}`),
  'call:string->bool', 'call:string->int', 'call:string->double', 'call:int->string', 'call:double->int',
  ...['string', 'list<string>', 'list<map>', 'map', 'map<string,string>'].map((t) => `size:${t}`),
  'strfn:starts_with', 'strfn:ends_with', 'strfn:contains',
  'not:bool', 'neg:int', 'neg:double', 'and', 'or',
  ...['+', '-', '*', '/', '%'].map((op) => `arith:int:${op}`),
  ...['+', '-', '*', '/'].map((op) => `arith:double:${op}`),
  'arith:string:+',
  ...['int', 'double', 'int_double', 'double_int', 'string'].flatMap((m) => ORDER_OPS.map((op) => `cmp:${m}:${op}`)),
  'cmp:bool:==', 'cmp:bool:!=',
  'in:list<string>', 'in:map', 'in:map<string,string>',
  'index:map<string,string>', 'index:list<string>', 'index:list<map>',
];

// --- the properties -----------------------------------------------------------------------------

describe('differential: interpreter vs compiled closure', () => {
  it(
    `agrees on every generated condition and fact environment (seed ${SEED}, ${RUNS} runs)`,
    () => {
      const tally = new Map<string, number>();
      const seen = new Set<string>();
      const count = (k: string) => tally.set(k, (tally.get(k) ?? 0) + 1);
      const started = performance.now();
      runProperty(
        'agrees on every generated condition',
        fc.tuple(differentialCondition, factsArb),
        ([c, facts]: [GeneratedCondition, Record<string, unknown>]) => {
          const checked = checkConditionSource(c.src, SYMBOLS, { requireBool: false });
          if (!checked.ok) throw new Error(`the checker rejects a generated ${c.type} condition: ${JSON.stringify(checked.errors)}`);
          const { typed, ast, nodes } = checked.condition;
          if (typed.ty !== c.type) throw new Error(`expected a ${c.type} condition, the checker typed it ${typed.ty}`);
          // [OAR-EXPR-20]: the count the generator kept, the parser's and countNodes agree.
          if (nodes !== c.nodes || countNodes(ast) !== c.nodes) {
            throw new Error(`node count: generated ${c.nodes}, checker ${nodes}, countNodes ${countNodes(ast)}`);
          }
          if (c.type === 'bool' && !checkConditionSource(c.src, SYMBOLS).ok) throw new Error('a bool condition is rejected as a rule condition');
          features(typed, seen);
          const a = interpreted(typed, facts);
          const b = compiled(typed, facts);
          if (a.kind === 'crash' || b.kind === 'crash' || !sameOutcome(c.type, a, b)) {
            throw new Error(`back ends disagree on ${c.type} condition ${JSON.stringify(c.src)}\n  interpreter: ${show(a)}\n  compiled:    ${show(b)}`);
          }
          for (const [side, o] of [['interpreter', a], ['compiled closure', b]] as const) {
            if (o.kind === 'value' && !conforms(c.type, o.value)) {
              throw new Error(`the ${side} evaluated ${c.type} condition ${JSON.stringify(c.src)} to a value that is not a canonical ${c.type}: ${show(o)}`);
            }
          }
          count(a.kind === 'value' ? 'value' : `raise:${a.code}`);
        },
        RUNS,
      );
      const ms = performance.now() - started;
      const summary = [...tally].sort().map(([k, n]) => `${k}=${n}`).join(' ');
      console.log(`differential: ${RUNS} runs in ${(ms / 1000).toFixed(2)}s (seed ${SEED}): ${summary}`);
      // The environments must actually exercise raises, or the check is only half a check.
      if (PATH === undefined && RUNS >= 1000) {
        for (const code of ['wrong_type', 'provider_failure', 'overflow', 'division_by_zero', 'index_out_of_range', 'absent_key']) {
          expect(tally.get(`raise:${code}`) ?? 0, code).toBeGreaterThan(0);
        }
        // …and the conditions must cover the whole language.
        expect(EXPECTED_FEATURES.filter((x) => !seen.has(x))).toStrictEqual([]);
      }
    },
    TIMEOUT,
  );

  it(
    'round-trips every generated condition through an independent printer, and the emitted JavaScript through acorn and astring',
    () => {
      runProperty(
        'round-trips every generated condition',
        anyCondition,
        (c: GeneratedCondition) => {
          const ast = parseCondition(c.src);
          const printed = printOar(ast).src;
          const again = parseCondition(printed);
          if (withoutOffsets(again) !== withoutOffsets(ast)) throw new Error(`re-parsing ${JSON.stringify(printed)} changes the tree`);
          if (printOar(again).src !== printed) throw new Error(`printing is not stable for ${JSON.stringify(printed)}`);
          if (countNodes(again) !== c.nodes) throw new Error(`node count ${countNodes(again)} after the round trip, ${c.nodes} generated`);
          const checked = checkConditionSource(c.src, SYMBOLS, { requireBool: false });
          if (!checked.ok) throw new Error(`the checker rejects ${JSON.stringify(c.src)}`);
          const { code } = printCondition(checked.condition.typed);
          const reprinted = generate(acornParse(code, { ecmaVersion: 2022, sourceType: 'script', allowReturnOutsideFunction: true }) as never);
          if (reprinted !== code) throw new Error(`emitted JavaScript is not stable under acorn + astring:\n${code}\n---\n${reprinted}`);
        },
        Math.max(200, Math.floor(RUNS / 5)),
      );
    },
    TIMEOUT,
  );
});
