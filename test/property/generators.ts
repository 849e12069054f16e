/**
 * fast-check arbitraries for the differential check (DESIGN: "The interpreter and the differential
 * check"): well-typed conditions as *source text* for a requested type, and fact environments full
 * of boundary values, absent facts and wrong-typed values.
 *
 * A generated condition is a `Gen`: its source, the node count [OAR-EXPR-20] assigns it (computed
 * here independently of the parser), and the grammar level it sits at, so a composite wraps an
 * operand in parentheses exactly when the grammar of A.1 requires it — and sometimes when it does
 * not, since parentheses are free ([OAR-EXPR-20]: they are not nodes).
 *
 * Sizes are bounded by a fixed depth and short lists, so 10,000 cases stay in the low seconds.
 */
import fc from 'fast-check';
import { symbolTable, type FactType, type SymbolTable } from '../../runtime/types.js';
import { CODE_UNIT_POOL, I53, I63, INT_MAGNITUDES, STRING_POOL } from '../../fuzz/pools.js';

// --- the symbol environment ---------------------------------------------------------------------

const core = { kind: 'core' } as const;
const tool = { kind: 'profile', profile: 'tool' } as const;
const host = { kind: 'host' } as const;

/** Facts of every type (two of most), a dotted host fact, and observation functions of every scalar
 *  result and of int and double parameters. `fire_count_of` is the core counter reader, which takes
 *  only a string literal ([OAR-FIRE-11]). */
export const PROPERTY_SYMBOLS: SymbolTable = symbolTable([
  { kind: 'fact', name: 'b', type: 'bool', tier: host },
  { kind: 'fact', name: 'c', type: 'bool', tier: host },
  { kind: 'fact', name: 'i', type: 'int', tier: host },
  { kind: 'fact', name: 'j', type: 'int', tier: host },
  { kind: 'fact', name: 'fire_count', type: 'int', tier: core },
  { kind: 'fact', name: 'd', type: 'double', tier: host },
  { kind: 'fact', name: 'e', type: 'double', tier: host },
  { kind: 'fact', name: 's', type: 'string', tier: host },
  { kind: 'fact', name: 't', type: 'string', tier: host },
  { kind: 'fact', name: 'acme.tier', type: 'string', tier: host },
  { kind: 'fact', name: 'ls', type: 'list<string>', tier: host },
  { kind: 'fact', name: 'lt', type: 'list<string>', tier: host },
  { kind: 'fact', name: 'lm', type: 'list<map>', tier: host },
  { kind: 'fact', name: 'm', type: 'map', tier: host },
  { kind: 'fact', name: 'tool_args', type: 'map', tier: tool },
  { kind: 'fact', name: 'ms', type: 'map<string,string>', tier: host },
  { kind: 'fact', name: 'hdrs', type: 'map<string,string>', tier: host },
  { kind: 'function', name: 'fire_count_of', param: 'string', result: 'int', tier: core },
  { kind: 'function', name: 'obs.flag', param: 'string', result: 'bool', tier: host },
  { kind: 'function', name: 'obs.count', param: 'string', result: 'int', tier: host },
  { kind: 'function', name: 'obs.score', param: 'string', result: 'double', tier: host },
  { kind: 'function', name: 'obs.label', param: 'int', result: 'string', tier: host },
  { kind: 'function', name: 'obs.bucket', param: 'double', result: 'int', tier: host },
]);

const factsOf = (ty: FactType): string[] =>
  PROPERTY_SYMBOLS.symbols.filter((x) => x.kind === 'fact' && x.type === ty).map((x) => x.name);

export const GEN_TYPES: readonly FactType[] = [
  'bool', 'int', 'double', 'string', 'list<string>', 'list<map>', 'map', 'map<string,string>',
];

// --- shared value pools -------------------------------------------------------------------------

export { STRING_POOL };

/** A few keys most maps and lists carry and most lookups ask for, so indexing often succeeds. */
const HOT_STRINGS: readonly string[] = ['a', 'b', '', 'constructor', '__proto__', '😀', 'a😀', '\uD83D', '\uDE00'];

/** Short strings dense in surrogates, where code-point and code-unit answers part: whether
 *  "\uDE00" ends "😀", whether U+FF5E sorts before U+1F600, how long "\uD83D\uDE00\uDE00" is. */
export const surrogateString: fc.Arbitrary<string> = fc
  .array(fc.constantFrom('\uD83D', '\uDE00', '😀', 'a', '\uFF5E', '\uDBFF', '\uDFFF', '\uD800\uDC00'), { maxLength: 3 })
  .map((xs) => xs.join(''));

export const stringValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...STRING_POOL) },
  { weight: 3, arbitrary: surrogateString },
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.oneof(fc.constantFrom(...CODE_UNIT_POOL), fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c))),
      maxLength: 4,
    }),
  },
);

const TWO = 2n;

/** Arithmetic operands whose sums, differences, products and quotients land on the edges: ±2^53
 *  (where the fast path must hand over to exact arithmetic), ±2^63 (overflow, [OAR-EXPR-15]),
 *  square roots of both, and zero ([OAR-EXPR-14]). Chosen on purpose, since a random pair of ints
 *  almost never sums to exactly 2^53. */
const EDGE_INTS: readonly string[] = [
  '0', '1', '-1', '2', '-2', '3', '7', '9007199254740991', '-9007199254740991', '9007199254740992', '-9007199254740992',
  '9007199254740993', '4503599627370496', '94906265', '94906266', '3037000499', '3037000500', '4294967296',
  '9223372036854775807', '-9223372036854775808', '-9223372036854775807', '4611686018427387904',
];

// --- condition source -------------------------------------------------------------------------

/** Grammar levels of A.1, loosest first. An operand at a level below what its slot needs is
 *  parenthesised. */
export const P = { TERNARY: 0, OR: 1, AND: 2, REL: 3, ADD: 4, MUL: 5, UNARY: 6, POSTFIX: 7 } as const;

export interface Gen {
  /** Condition source text. */
  readonly src: string;
  /** Node count per [OAR-EXPR-20], computed while generating. */
  readonly nodes: number;
  /** The grammar level of the outermost construct. */
  readonly prec: number;
}

const wrap = (g: Gen, min: number): string => (g.prec >= min ? g.src : `(${g.src})`);
const primary = (src: string, nodes: number): Gen => ({ src, nodes, prec: P.POSTFIX });

/** Whitespace around a symbolic operator is insignificant ([OAR-EXPR-24]); vary it. */
const space = fc.constantFrom(' ', ' ', ' ', '', '  ', '\n', '\t', '\r\n');

function binary(op: string, prec: number, lmin: number, rmin: number, l: fc.Arbitrary<Gen>, r: fc.Arbitrary<Gen>): fc.Arbitrary<Gen> {
  // `in` is a word: it needs whitespace on both sides.
  const sp = op === 'in' ? fc.constant(' ') : space;
  return fc.tuple(l, r, sp).map(([a, b, w]) => ({
    src: `${wrap(a, lmin)}${w}${op}${w}${wrap(b, rmin)}`,
    nodes: a.nodes + b.nodes + 1,
    prec,
  }));
}

const relation = (op: string, l: fc.Arbitrary<Gen>, r: fc.Arbitrary<Gen>) => binary(op, P.REL, P.ADD, P.ADD, l, r);

function unary(op: '!' | '-', x: fc.Arbitrary<Gen>): fc.Arbitrary<Gen> {
  return x.map((a) => ({ src: `${op}${wrap(a, P.POSTFIX)}`, nodes: a.nodes + 1, prec: P.UNARY }));
}

function callOf(name: string, args: fc.Arbitrary<Gen>[]): fc.Arbitrary<Gen> {
  return fc.tuple(...args).map((xs) => primary(`${name}(${xs.map((x) => x.src).join(', ')})`, 1 + xs.reduce((n, x) => n + x.nodes, 0)));
}

function listOf(member: fc.Arbitrary<Gen>): fc.Arbitrary<Gen> {
  return fc.array(member, { minLength: 1, maxLength: 3 }).map((xs) =>
    primary(`[${xs.map((x) => x.src).join(', ')}]`, 1 + xs.reduce((n, x) => n + x.nodes, 0)),
  );
}

function index(obj: fc.Arbitrary<Gen>, idx: fc.Arbitrary<Gen>): fc.Arbitrary<Gen> {
  return fc.tuple(obj, idx).map(([o, k]) => primary(`${wrap(o, P.POSTFIX)}[${k.src}]`, o.nodes + k.nodes + 1));
}

function ternary(test: fc.Arbitrary<Gen>, a: fc.Arbitrary<Gen>, b: fc.Arbitrary<Gen>): fc.Arbitrary<Gen> {
  return fc.tuple(test, a, b).map(([x, y, z]) => ({
    src: `${wrap(x, P.OR)} ? ${wrap(y, P.TERNARY)} : ${wrap(z, P.TERNARY)}`,
    nodes: x.nodes + y.nodes + z.nodes + 1,
    prec: P.TERNARY,
  }));
}

/** Occasionally parenthesise something that did not need it. */
function maybeParens(a: fc.Arbitrary<Gen>): fc.Arbitrary<Gen> {
  return fc.oneof(
    { weight: 8, arbitrary: a },
    { weight: 1, arbitrary: a.map((g) => primary(`(${g.src})`, g.nodes)) },
  );
}

const factRef = (ty: FactType): fc.Arbitrary<Gen> => fc.constantFrom(...factsOf(ty)).map((n) => primary(n, 1));

/** Encode a string value as a literal of A.1, choosing quotes and escapes at random
 *  ([OAR-EXPR-3]): a line break must be escaped; anything else may be raw or `\uXXXX`. */
export function encodeString(value: string, quote: '"' | "'", seed: number): string {
  let state = seed >>> 0 || 1;
  const coin = (): boolean => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 16) % 4 === 0;
  };
  const hex = (u: number) => `\\u${u.toString(16).padStart(4, '0')}`;
  let out = quote;
  for (const ch of value) {
    const u = ch.charCodeAt(0);
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '"' || ch === "'") out += coin() ? `\\${ch}` : ch;
    else if (ch === '\n') out += coin() ? hex(u) : '\\n';
    else if (ch === '\r') out += coin() ? hex(u) : '\\r';
    else if (ch === '\t') out += coin() ? '\\t' : ch;
    else if (coin()) out += [...Array(ch.length).keys()].map((k) => hex(ch.charCodeAt(k))).join('');
    else out += ch;
  }
  return out + quote;
}

export const stringLiteral: fc.Arbitrary<Gen> = fc
  .tuple(fc.oneof(stringValue, fc.constantFrom(...HOT_STRINGS)), fc.constantFrom<'"' | "'">('"', "'"), fc.nat())
  .map(([v, q, seed]) => primary(encodeString(v, q, seed), 1));

/** An int literal: a boundary magnitude or a random one, sometimes negated (`-N` is two nodes:
 *  a unary minus and a literal, [OAR-EXPR-20]); `-9223372036854775808` is the least int. */
export const intLiteral: fc.Arbitrary<Gen> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...INT_MAGNITUDES).map((v) => primary(`${v}`, 1)) },
  { weight: 3, arbitrary: fc.bigInt({ min: 0n, max: 20n }).map((v) => primary(`${v}`, 1)) },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: I63 - 1n }).map((v) => primary(`${v}`, 1)) },
  { weight: 2, arbitrary: fc.constantFrom(...INT_MAGNITUDES, I63, 5n).map((v) => ({ src: `-${v}`, nodes: 2, prec: P.UNARY })) },
);

/** Small indexes, so list indexing hits a member more often than it raises. */
const smallIntLiteral: fc.Arbitrary<Gen> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(0n, 1n, 2n).map((v) => primary(`${v}`, 1)) },
  { weight: 1, arbitrary: fc.constantFrom(1n, I53, I63).map((v) => ({ src: `-${v}`, nodes: 2, prec: P.UNARY })) },
);

const MAX_DOUBLE_TEXT = `${BigInt(Number.MAX_VALUE)}.0`;
const EDGE_DOUBLES: readonly string[] = [
  '0.0', '-0.0', '1.0', '-1.0', '0.5', '2.0', '10.0', '0.1', '9007199254740992.0', MAX_DOUBLE_TEXT, `-${MAX_DOUBLE_TEXT}`,
  `0.${'0'.repeat(323)}5`, `0.${'0'.repeat(307)}22250738585072014`,
];

const DOUBLE_TEXTS: readonly string[] = [
  '0.0', '0.1', '0.2', '0.3', '0.5', '1.0', '1.5', '2.0', '2.5', '3.25', '7.0', '10.0', '100.5', '0.0000001',
  '2147483648.0', '9007199254740991.0', '9007199254740992.0', '9007199254740993.0', '9007199254740994.0',
  '4611686018427387904.0', '9223372036854775807.0', '9223372036854775808.0',
  `1${'0'.repeat(308)}.0`, MAX_DOUBLE_TEXT, `0.${'0'.repeat(323)}5`, `0.${'0'.repeat(307)}22250738585072014`,
];

export const doubleLiteral: fc.Arbitrary<Gen> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...DOUBLE_TEXTS).map((t) => primary(t, 1)) },
  { weight: 1, arbitrary: fc.tuple(fc.nat({ max: 1000000 }), fc.nat({ max: 999 })).map(([a, b]) => primary(`${a}.${b}`, 1)) },
  { weight: 1, arbitrary: fc.constantFrom('0.0', '0.5', MAX_DOUBLE_TEXT, `0.${'0'.repeat(323)}5`).map((t) => ({ src: `-${t}`, nodes: 2, prec: P.UNARY })) },
);

const RULE_NAMES = ['r1', 'acme.r2', '', 'missing'];

const cache = new Map<string, fc.Arbitrary<Gen>>();

/** Well-typed conditions of type `ty`, nested at most `depth` levels; with `operatorOnly`, the
 *  outermost construct is an operator, call, index or ternary rather than a fact or literal. */
export function conditionOf(ty: FactType, depth: number, operatorOnly = false): fc.Arbitrary<Gen> {
  const key = `${ty}:${depth}:${operatorOnly}`;
  let a = cache.get(key);
  if (a === undefined) {
    a = build(ty, depth, operatorOnly);
    cache.set(key, a);
  }
  return a;
}

type Weighted = { weight: number; arbitrary: fc.Arbitrary<Gen> };

function leaves(ty: FactType): Weighted[] {
  switch (ty) {
    case 'bool':
      return [
        { weight: 2, arbitrary: fc.constantFrom('true', 'false').map((x) => primary(x, 1)) },
        { weight: 3, arbitrary: factRef('bool') },
      ];
    case 'int':
      return [
        { weight: 3, arbitrary: intLiteral },
        { weight: 3, arbitrary: factRef('int') },
      ];
    case 'double':
      return [
        { weight: 3, arbitrary: doubleLiteral },
        { weight: 3, arbitrary: factRef('double') },
      ];
    case 'string':
      return [
        { weight: 3, arbitrary: stringLiteral },
        { weight: 3, arbitrary: factRef('string') },
      ];
    case 'list<string>':
      return [
        { weight: 3, arbitrary: factRef('list<string>') },
        { weight: 1, arbitrary: listOf(stringLiteral) },
      ];
    case 'list<map>':
      return [{ weight: 1, arbitrary: factRef('list<map>') }];
    case 'map':
      return [{ weight: 1, arbitrary: factRef('map') }];
    case 'map<string,string>':
      return [{ weight: 1, arbitrary: factRef('map<string,string>') }];
  }
}

function build(ty: FactType, depth: number, operatorOnly: boolean): fc.Arbitrary<Gen> {
  const here = operatorOnly ? [] : leaves(ty);
  if (depth <= 0) return fc.oneof(...here);
  const sub = (t: FactType) => conditionOf(t, depth - 1);
  const B = sub('bool');
  const I = sub('int');
  const D = sub('double');
  const S = sub('string');
  const LS = sub('list<string>');
  const LM = sub('list<map>');
  const M = sub('map');
  const MS = sub('map<string,string>');
  const idx = fc.oneof({ weight: 3, arbitrary: smallIntLiteral }, { weight: 1, arbitrary: I });
  const key = fc.oneof({ weight: 2, arbitrary: stringLiteral }, { weight: 1, arbitrary: S });
  const numeral = (t: string): Gen => (t.startsWith('-') ? { src: t, nodes: 2, prec: P.UNARY } : primary(t, 1));
  const IE = fc.oneof(I, fc.constantFrom(...EDGE_INTS).map(numeral));
  const DE = fc.oneof(D, fc.constantFrom(...EDGE_DOUBLES).map(numeral));
  const hot = fc.constantFrom(...HOT_STRINGS).map((v) => primary(encodeString(v, '"', 0), 1));
  const ops = (xs: string[]) => fc.constantFrom(...xs);
  const relOf = (opsList: string[], l: fc.Arbitrary<Gen>, r: fc.Arbitrary<Gen>) =>
    ops(opsList).chain((op) => relation(op, l, r));
  const ORDER = ['==', '!=', '<', '<=', '>', '>='];
  const EQ = ['==', '!='];
  const composite: Weighted[] = [];
  switch (ty) {
    case 'bool':
      composite.push(
        { weight: 2, arbitrary: unary('!', B) },
        { weight: 2, arbitrary: binary('&&', P.AND, P.AND, P.REL, B, B) },
        { weight: 2, arbitrary: binary('||', P.OR, P.OR, P.AND, B, B) },
        { weight: 2, arbitrary: relOf(ORDER, I, I) },
        { weight: 2, arbitrary: relOf(ORDER, D, D) },
        { weight: 1, arbitrary: relOf(ORDER, I, D) },
        { weight: 1, arbitrary: relOf(ORDER, D, I) },
        { weight: 2, arbitrary: relOf(ORDER, S, S) },
        { weight: 1, arbitrary: relOf(EQ, B, B) },
        { weight: 2, arbitrary: relation('in', key, LS) },
        { weight: 1, arbitrary: relation('in', key, M) },
        { weight: 1, arbitrary: relation('in', key, MS) },
        { weight: 2, arbitrary: ops(['starts_with', 'ends_with', 'contains']).chain((f) => callOf(f, [S, fc.oneof(S, hot)])) },
        { weight: 1, arbitrary: callOf('obs.flag', [S]) },
        { weight: 1, arbitrary: ternary(B, B, B) },
      );
      break;
    case 'int':
      composite.push(
        { weight: 3, arbitrary: ops(['+', '-']).chain((op) => binary(op, P.ADD, P.ADD, P.MUL, IE, IE)) },
        { weight: 3, arbitrary: ops(['*', '/', '%']).chain((op) => binary(op, P.MUL, P.MUL, P.UNARY, IE, IE)) },
        { weight: 1, arbitrary: unary('-', I) },
        { weight: 2, arbitrary: fc.oneof(S, LS, LM, M, MS).map((x) => primary(`size(${x.src})`, x.nodes + 1)) },
        { weight: 1, arbitrary: callOf('obs.count', [S]) },
        { weight: 1, arbitrary: callOf('obs.bucket', [D]) },
        { weight: 1, arbitrary: fc.constantFrom(...RULE_NAMES).map((r) => primary(`fire_count_of(${JSON.stringify(r)})`, 2)) },
        { weight: 1, arbitrary: ternary(B, I, I) },
      );
      break;
    case 'double':
      composite.push(
        { weight: 3, arbitrary: ops(['+', '-']).chain((op) => binary(op, P.ADD, P.ADD, P.MUL, DE, DE)) },
        { weight: 3, arbitrary: ops(['*', '/']).chain((op) => binary(op, P.MUL, P.MUL, P.UNARY, DE, DE)) },
        { weight: 1, arbitrary: unary('-', D) },
        { weight: 1, arbitrary: callOf('obs.score', [S]) },
        { weight: 1, arbitrary: ternary(B, D, D) },
      );
      break;
    case 'string':
      composite.push(
        { weight: 2, arbitrary: binary('+', P.ADD, P.ADD, P.MUL, S, S) },
        { weight: 2, arbitrary: index(MS, key) },
        { weight: 2, arbitrary: index(LS, idx) },
        { weight: 1, arbitrary: callOf('obs.label', [I]) },
        { weight: 1, arbitrary: ternary(B, S, S) },
      );
      break;
    case 'list<string>':
      composite.push(
        { weight: 2, arbitrary: listOf(S) },
        { weight: 1, arbitrary: ternary(B, LS, LS) },
      );
      break;
    case 'list<map>':
      composite.push(
        { weight: 2, arbitrary: listOf(M) },
        { weight: 1, arbitrary: ternary(B, LM, LM) },
      );
      break;
    case 'map':
      composite.push(
        { weight: 2, arbitrary: index(LM, idx) },
        { weight: 1, arbitrary: ternary(B, M, M) },
      );
      break;
    case 'map<string,string>':
      composite.push({ weight: 1, arbitrary: ternary(B, MS, MS) });
      break;
  }
  // Leaves weigh 6 per unit, the composites of a type share about 108 between them: for every
  // type, roughly three nodes in four are composite until the depth runs out.
  const total = composite.reduce((n, x) => n + x.weight, 0);
  return fc.oneof(
    ...here.map((x) => ({ weight: x.weight * 6, arbitrary: x.arbitrary })),
    ...composite.map((x) => ({ weight: Math.max(1, Math.round((x.weight * 108) / total)), arbitrary: maybeParens(x.arbitrary) })),
  );
}

/** Nesting bound: at most a few hundred nodes, typically 15 (the parser's limit is 1024). */
export const MAX_DEPTH = 4;

export interface GeneratedCondition extends Gen {
  readonly type: FactType;
}

/** Conditions of a requested type, `bool` most often since a rule condition is one ([OAR-FACT-4]). */
export const anyCondition: fc.Arbitrary<GeneratedCondition> = fc
  .constantFrom<FactType>('bool', 'bool', 'bool', 'bool', ...GEN_TYPES)
  .chain((type) => conditionOf(type, MAX_DEPTH).map((g) => ({ type, ...g })));

/**
 * One or two operators over facts and literals, scalar-typed. A deep condition mostly ends in a
 * comparison, which hides an off-by-one in the arithmetic beneath it (`9007199254740991 + 2`
 * rounded to 2^53 is still `> 0`); a shallow one returns the operator's result itself, so each
 * operator and built-in is observed directly.
 */
export const shallowCondition: fc.Arbitrary<GeneratedCondition> = fc
  .tuple(fc.constantFrom<FactType>('bool', 'int', 'int', 'double', 'string'), fc.constantFrom(1, 1, 2))
  .chain(([type, depth]) => conditionOf(type, depth, true).map((g) => ({ type, ...g })));

/** The case mix of the differential check: deep conditions, and shallow ones for sensitivity. */
export const differentialCondition: fc.Arbitrary<GeneratedCondition> = fc.oneof(
  { weight: 3, arbitrary: anyCondition },
  { weight: 2, arbitrary: shallowCondition },
);

// --- fact environments --------------------------------------------------------------------------

/** Readable in a counterexample: fast-check prints values through this method when present. */
function labelled<T extends object>(v: T, text: string): T {
  Object.defineProperty(v, fc.toStringMethod, { value: () => text, enumerable: false });
  return v;
}

const jsonish = (v: unknown): string =>
  typeof v === 'bigint' ? `${v}n` : typeof v === 'string' ? JSON.stringify(v) : typeof v === 'number' && Object.is(v, -0) ? '-0' : String(v);

/** A plain object with exactly these own enumerable keys; `__proto__` becomes an own key, as
 *  JSON.parse makes it, never the prototype. */
function ownObject(entries: readonly (readonly [string, unknown])[], proto: object | null): Record<string, unknown> {
  const o = Object.create(proto) as Record<string, unknown>;
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

type MapShape = 'object' | 'null-proto' | 'Map' | 'frozen' | 'json';

function makeMap(entries: readonly (readonly [string, unknown])[], shape: MapShape): object {
  let out: object;
  switch (shape) {
    case 'object':
      out = ownObject(entries, Object.prototype);
      break;
    case 'null-proto':
      out = ownObject(entries, null);
      break;
    case 'Map':
      out = new Map(entries);
      break;
    case 'frozen':
      out = ownObject(entries, Object.prototype);
      break;
    case 'json': {
      // Only JSON-representable members survive JSON; others fall back to an own object.
      const plain = entries.every(([, v]) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)));
      out = plain ? JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`) : ownObject(entries, Object.prototype);
      break;
    }
  }
  labelled(out, `${shape}{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${jsonish(v)}`).join(', ')}}`);
  return shape === 'frozen' ? Object.freeze(out) : out;
}

const mapShape = fc.constantFrom<MapShape>('object', 'object', 'null-proto', 'Map', 'frozen', 'json');
const mapKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOT_STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...STRING_POOL) },
  { weight: 1, arbitrary: stringValue },
);

function entriesOf(member: fc.Arbitrary<unknown>): fc.Arbitrary<[string, unknown][]> {
  return fc.uniqueArray(fc.tuple(mapKey, member), { maxLength: 4, selector: ([k]) => k });
}

/** Valid `int` values: canonical numbers, bigints in and out of the safe range, bigints that are
 *  safe (to be canonicalised), numbers beyond 2^53 (exact but not safe), and -0. */
const INT_VALUES: readonly (number | bigint)[] = [
  0, 1, -1, 2, -2, 3, 7, -7, 10, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 2 ** 32,
  Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER,
  I53, -I53, I53 + 1n, -(I53 + 1n), I63 - 1n, -(I63 - 1n), -I63, TWO ** 62n, -(TWO ** 62n),
  2 ** 53, -(2 ** 53), 2 ** 60, -(2 ** 63), 1e18,
  5n, -5n, 0n, -0,
];

const validInt: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...INT_VALUES) },
  { weight: 2, arbitrary: fc.integer({ min: -20, max: 20 }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -I63, max: I63 - 1n }) },
);

const DOUBLE_VALUES: readonly (number | bigint)[] = [
  0, -0, 0.1, 0.2, 0.3, 0.5, -0.5, 1, -1, 1.5, -2.5, 2, 7, 1e-7, 5e-324, -5e-324, 2.2250738585072014e-308,
  1e308, -1e308, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 53, 2 ** 53 + 2, 2 ** 63, -(2 ** 63), 2 ** 31,
  // A bigint from a lossless parse is accepted as a double (runtime/values.ts).
  3n, I53 + 1n,
];

const validDouble: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...DOUBLE_VALUES) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.integer({ min: -20, max: 20 }).map((n) => n / 4) },
);

/** Members of an unparameterised `map`: heterogeneously typed ([OAR-EXPR-19]). */
const anyMember: fc.Arbitrary<unknown> = fc.oneof(
  stringValue, fc.boolean(), fc.integer({ min: -5, max: 5 }), fc.constantFrom(1.5, null, 2n ** 70n),
  fc.constant([]).map(() => labelled(['x'], '["x"]')),
);

const validMap = fc.tuple(entriesOf(anyMember), mapShape).map(([e, s]) => makeMap(e, s));
const validStringMap = fc.tuple(entriesOf(stringValue), mapShape).map(([e, s]) => makeMap(e, s));

function listValue(member: fc.Arbitrary<unknown>, maxLength: number): fc.Arbitrary<unknown> {
  return fc.tuple(fc.array(member, { maxLength }), fc.boolean()).map(([xs, frozen]) => (frozen ? Object.freeze(xs) : xs));
}

/** A sparse array: a list with a hole is not a list of strings (or of maps) ([OAR-FACT-26]). */
const sparse = fc.constantFrom(1, 2).map((n) => {
  const a: unknown[] = new Array(n);
  if (n === 2) a[1] = 'a';
  return labelled(a, `sparse(${n})`);
});

/** A map whose non-enumerable own member is not one of its keys (only own enumerable keys are). */
const hiddenMember = fc.constantFrom('a', 'constructor').map((k) => {
  const o = ownObject([['b', 'x']], Object.prototype);
  Object.defineProperty(o, k, { value: 1, enumerable: false });
  return labelled(o, `{b: "x", hidden ${k}: 1}`);
});

/** Valid values of each fact type. */
export function validValue(ty: FactType): fc.Arbitrary<unknown> {
  switch (ty) {
    case 'bool':
      return fc.boolean();
    case 'int':
      return validInt;
    case 'double':
      return validDouble;
    case 'string':
      return stringValue;
    case 'list<string>':
      return listValue(fc.oneof(stringValue, fc.constantFrom(...HOT_STRINGS)), 4);
    case 'list<map>':
      return listValue(validMap, 3);
    case 'map':
      return validMap;
    case 'map<string,string>':
      return fc.oneof({ weight: 8, arbitrary: validStringMap }, { weight: 1, arbitrary: hiddenMember });
  }
}

/** Values of the wrong run-time type for a declared type ([OAR-FACT-23], [OAR-FACT-26]). */
export function wrongValue(ty: FactType): fc.Arbitrary<unknown> {
  switch (ty) {
    case 'bool':
      return fc.constantFrom<unknown>(0, 1, 'true', '', null, [], 0n);
    case 'int':
      return fc.constantFrom<unknown>('5', '', 1.5, -0.5, NaN, Infinity, -Infinity, 2 ** 64, -(2 ** 64), I63, -I63 - 1n, true, null, [1]);
    case 'double':
      return fc.constantFrom<unknown>(NaN, Infinity, -Infinity, '1.5', '', true, null, 2n ** 1024n, -(2n ** 1100n), [1.5]);
    case 'string':
      return fc.constantFrom<unknown>(5, 0, true, null, ['a'], {}, 5n);
    case 'list<string>':
      return fc.oneof(
        fc.constantFrom<unknown>('abc', '', 5, null, {}, [1], ['a', 2], [null], ['a', undefined], [['a']], new Map()),
        sparse,
      );
    case 'list<map>':
      return fc.oneof(fc.constantFrom<unknown>('abc', 5, null, {}, [null], [[]], ['a'], [{}, 1]), sparse);
    case 'map':
      return fc.constantFrom<unknown>('abc', 5, null, [], ['a'], true);
    case 'map<string,string>':
      return fc.oneof(
        fc.constantFrom<unknown>('abc', 5, null, [], ['a'], new Map<unknown, unknown>([[1, 'a']])),
        fc.constantFrom<[string, unknown][]>([['a', 1]], [['a', 'x'], ['b', null]], [['__proto__', 5]], [['k', ['x']]])
          .chain((e) => mapShape.map((s) => makeMap(e, s))),
      );
  }
}

/** A fact value: mostly valid, sometimes wrong-typed, occasionally an explicit `undefined`
 *  (which the reader treats as absent, [OAR-FACT-25]). */
function factValue(ty: FactType): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 30, arbitrary: validValue(ty) },
    { weight: 2, arbitrary: wrongValue(ty) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

/** What a host does for an observation function: a fixed result, a pure function of the
 *  argument, or a failure ([OAR-OPS-3]). */
function functionValue(result: FactType): fc.Arbitrary<unknown> {
  const produced = fc.oneof(
    { weight: 20, arbitrary: validValue(result) },
    { weight: 2, arbitrary: wrongValue(result) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  return fc.oneof(
    { weight: 3, arbitrary: produced },
    {
      weight: 3,
      arbitrary: fc.tuple(fc.uniqueArray(fc.tuple(stringValue, produced), { maxLength: 3, selector: ([k]) => k }), produced).map(([table, dflt]) => {
        const lookup = new Map(table);
        const text = `(arg) => ({${table.map(([k, v]) => `${JSON.stringify(k)}: ${jsonish(v)}`).join(', ')}})[String(arg)] ?? ${jsonish(dflt)}`;
        return labelled((arg: unknown) => {
          const k = String(arg);
          return lookup.has(k) ? lookup.get(k) : dflt;
        }, text);
      }),
    },
    {
      weight: 1,
      arbitrary: fc.constant(null).map(() =>
        labelled(() => {
          throw new Error('detector unavailable');
        }, '() => { throw new Error("detector unavailable") }'),
      ),
    },
  );
}

const ABSENT = Symbol('absent');

/** A fact environment: every declared name may be absent — its key omitted ([OAR-FACT-25]). */
export const factsArb: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    ...PROPERTY_SYMBOLS.symbols.map((sym) =>
      fc.oneof(
        { weight: 5, arbitrary: sym.kind === 'fact' ? factValue(sym.type) : functionValue(sym.result) },
        { weight: 1, arbitrary: fc.constant(ABSENT) },
      ),
    ),
  )
  .map((values) => {
    const facts: Record<string, unknown> = {};
    values.forEach((v, n) => {
      if (v !== ABSENT) facts[(PROPERTY_SYMBOLS.symbols[n] as { name: string }).name] = v;
    });
    return facts;
  });
