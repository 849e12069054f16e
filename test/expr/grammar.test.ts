/**
 * Appendix A.1 (grammar, lexing) and A.4 (node counting, limits) of the condition language.
 *
 * Every rejection asserts the clause, the construct the error names and its code-point offset
 * ([OAR-EXPR-1]); every grouping claim is checked on the parse tree itself and, where the grouping
 * changes a value, on both back ends through `run`/`value` (test/expr/env.ts).
 */
import { describe, expect, it } from 'vitest';
import { countNodes, type Expr } from '../../compiler/expr/ast.js';
import { parseCondition } from '../../compiler/expr/parser.js';
import {
  checkConditionSource, interpret, loadCondition, DEFAULT_MAX_NODES, MIN_MAX_NODES, MAX_MAX_NODES,
  type ConditionError, type ConditionOptions,
} from '../../compiler/expr/index.js';
import { ObjectFactReader } from '../../runtime/facts.js';
import { Raise } from '../../runtime/raise.js';
import { symbolTable, type FactType, type SymbolTable } from '../../runtime/types.js';
import { SYMBOLS, run, value } from './env.js';

// --- helpers -------------------------------------------------------------------------------------

/** The parse tree as an S-expression, so a test can state the grouping the grammar produces. */
function sx(e: Expr): string {
  switch (e.type) {
    case 'bool':
      return String(e.value);
    case 'int':
      return e.value.toString();
    case 'double':
      return e.text;
    case 'string':
      return JSON.stringify(e.value);
    case 'list':
      return `[${e.elements.map(sx).join(' ')}]`;
    case 'ident':
      return e.name;
    case 'call':
      return `(${e.callee}${e.args.map((a) => ' ' + sx(a)).join('')})`;
    case 'index':
      return `(idx ${sx(e.object)} ${sx(e.index)})`;
    case 'unary':
      return `(${e.op} ${sx(e.operand)})`;
    case 'binary':
      return `(${e.op} ${sx(e.left)} ${sx(e.right)})`;
    case 'ternary':
      return `(? ${sx(e.test)} ${sx(e.consequent)} ${sx(e.alternate)})`;
  }
}

const tree = (src: string) => sx(parseCondition(src));

/** The single load error of a condition (any type); fails the test when it loads. */
function error(src: string, opts: ConditionOptions = {}, symbols: SymbolTable = SYMBOLS): ConditionError {
  const c = checkConditionSource(src, symbols, { requireBool: false, ...opts });
  if (c.ok) throw new Error(`${JSON.stringify(src)}: expected a load error, it loaded`);
  expect(c.errors).toHaveLength(1);
  return c.errors[0] as ConditionError;
}

/** Assert the error names the clause, the construct and its code-point offset. */
function expectError(src: string, clause: string, token: string, offset: number, opts: ConditionOptions = {}): ConditionError {
  const e = error(src, opts);
  expect({ clause: e.clause, token: e.token, offset: e.offset }).toEqual({ clause, token, offset });
  return e;
}

function accepts(src: string, symbols: SymbolTable = SYMBOLS, opts: ConditionOptions = {}): void {
  const c = checkConditionSource(src, symbols, { requireBool: false, ...opts });
  if (!c.ok) throw new Error(`${JSON.stringify(src)}: expected to load, got ${JSON.stringify(c.errors)}`);
}

/** Evaluate on both back ends with any symbol table and options; each result separately. */
function evalBoth(src: string, symbols: SymbolTable, facts: Record<string, unknown>, opts: ConditionOptions = {}) {
  const c = checkConditionSource(src, symbols, { requireBool: false, ...opts });
  if (!c.ok) throw new Error(`${src.slice(0, 60)}: ${JSON.stringify(c.errors)}`);
  const typed = c.condition.typed;
  const i = interpret(typed, new ObjectFactReader(symbols, facts));
  const interpreted = i.ok ? { value: i.value } : { raise: i.raise.code };
  const compiled = (() => {
    try {
      return { value: loadCondition(typed)(new ObjectFactReader(symbols, facts)) };
    } catch (e) {
      if (e instanceof Raise) return { raise: e.code };
      throw e;
    }
  })();
  return { interpreted, compiled, nodes: c.condition.nodes };
}

const host = { kind: 'host' } as const;
const fact = (name: string, type: FactType) => ({ kind: 'fact', name, type, tier: host }) as const;

/** A condition of exactly `n` nodes (n even, ≥ 4): `size(s) + i + … + i > 0`. */
function boolOfNodes(n: number): string {
  const k = (n - 2) / 2; // terms: size(s) is 2 nodes, each further `+ i` adds 2, `> 0` adds 2
  return ['size(s)', ...Array<string>(k - 1).fill('i')].join(' + ') + ' > 0';
}

const ms = (f: () => void): number => {
  const t = performance.now();
  f();
  return performance.now() - t;
};

// --- [OAR-EXPR-1] accept what the grammar derives ---------------------------------------------

describe('[OAR-EXPR-1] every production of A.1 is accepted', () => {
  const derivable = [
    'true', 'false', '0', '42', '0.0', '3.25', '"s"', "'s'", '""', "''", '["a"]', '["a", "b", s]',
    'b', 'acme.tier', 'size(s)', 'starts_with(s, t)', '(b)', '((b))', 'ls[0]', 'ls[i]', 'lm[0]',
    'ms["k"]', '!b', '-i', '-1.5', 'i * j', 'i / j', 'i % j', 'd * e / d', 'i + j - 1', 's + t',
    'i == j', 'i != j', 'i < j', 'i <= j', 'i > j', 'i >= j', 's in ls', '"k" in ms', '"k" in m',
    'b && c', 'b || c', 'b ? c : b', 'b ? i : j', 'b ? c : b ? c : b', 'b ? b ? c : b : c',
    'tool_arg_string("x")', 'acme.score("x") > 0.5', '[lm[0], lm[1]]', 'size([lm[0]]) == 1',
    '(i + j) * (i - j) % 7 == -1', '!(i < j) && (s in ls || "k" in ms) ? i : -j',
  ];
  it.each(derivable)('[OAR-EXPR-1] accepts %s', (src) => {
    accepts(src);
  });

  it('[OAR-EXPR-1] a condition using every production at once evaluates on both back ends', () => {
    const src =
      '!(i < j) && (s in ls || "k" in ms) && starts_with(acme.tier, \'go\') && size(["a", s]) == 2 && ' +
      '(b ? -i : i % 4) * 2 - 1 >= -3 && lm[0] == lm[0] == false || d / 2.0 > 1.0';
    // `lm[0] == lm[0] == false` has two relational operators, so the whole thing is rejected…
    expectError(src, 'OAR-EXPR-4', '==', src.indexOf('== false'));
    // …and without it, it loads and evaluates.
    const ok = src.replace(' && lm[0] == lm[0] == false', '');
    expect(value(ok, { i: 5, j: 3, ms: { k: 'v' }, 'acme.tier': 'gold' })).toBe(true);
    expect(value(ok, { i: 5, j: 3, ms: {}, 'acme.tier': 'gold', d: 1.0 })).toBe(false);
  });

  it('[OAR-EXPR-1] an empty condition is rejected, naming the end of the condition', () => {
    expectError('', 'OAR-EXPR-1', 'end of condition', 0);
    expectError('  \t\n', 'OAR-EXPR-1', 'end of condition', 4);
  });

  it('[OAR-EXPR-1] an incomplete condition names the end of the condition and its offset', () => {
    expectError('i +', 'OAR-EXPR-1', 'end of condition', 3);
    expectError('b ? i', 'OAR-EXPR-1', 'end of condition', 5);
    expectError('size(s', 'OAR-EXPR-1', 'end of condition', 6);
    expectError('ls[0', 'OAR-EXPR-1', 'end of condition', 4);
    expectError('(b', 'OAR-EXPR-1', 'end of condition', 2);
  });

  it('[OAR-EXPR-1] stray and unbalanced tokens are named with their offsets', () => {
    expectError('b)', 'OAR-EXPR-1', ')', 1);
    expectError('()', 'OAR-EXPR-1', ')', 1);
    expectError('b c', 'OAR-EXPR-1', 'c', 2);
    expectError('i = 1', 'OAR-EXPR-1', '=', 2);
    expectError('b & c', 'OAR-EXPR-1', '&', 2);
    expectError('b | c', 'OAR-EXPR-1', '|', 2);
    expectError('i == 1 @', 'OAR-EXPR-1', '@', 7);
    expectError('b ? i : ', 'OAR-EXPR-1', 'end of condition', 8);
    expectError('b : i', 'OAR-EXPR-1', ':', 2);
    expectError('[s', 'OAR-EXPR-1', 'end of condition', 2);
    expectError('i ^ j', 'OAR-EXPR-1', '^', 2);
    expectError('#b', 'OAR-EXPR-1', '#', 0);
  });

  it('[OAR-EXPR-1] a trailing comma is rejected in calls and lists', () => {
    expectError('size(s,)', 'OAR-EXPR-1', ')', 7);
    expectError('["a",]', 'OAR-EXPR-1', ']', 5);
    expectError('starts_with(s, t,)', 'OAR-EXPR-1', ')', 17);
    expectError('[,]', 'OAR-EXPR-1', ',', 1);
    expectError('size(,s)', 'OAR-EXPR-1', ',', 5);
  });

  it('[OAR-EXPR-1] empty parentheses call a 1-argument function with no argument, which the checker rejects', () => {
    // `call = identifier "(" [ … ] ")"` derives `f()`; the arity error is a type error.
    expect(tree('tool_arg_string()')).toBe('(tool_arg_string)');
    expectError('tool_arg_string() == ""', 'OAR-FACT-27', 'tool_arg_string', 0);
    expectError('size() == 0', 'OAR-EXPR-16', 'size', 0);
    expectError('fire_count_of() == 0', 'OAR-FACT-27', 'fire_count_of', 0);
  });

  it('[OAR-EXPR-1] whitespace between tokens (spaces, tabs, CR, LF) is insignificant', () => {
    expect(value('i\t+\n1\r\n==\t\t2', { i: 1 })).toBe(true);
    expect(value('  size( ls )>0 ', { ls: ['x'] })).toBe(true);
    expect(value('size(ls)>0&&b', { ls: ['x'], b: true })).toBe(true);
    expect(tree('i\n*\tj')).toBe(tree('i*j'));
    expect(tree('"a"in["a"]')).toBe('(in "a" ["a"])');
    // whitespace is counted in offsets
    expectError('\t\n i == 1 1', 'OAR-EXPR-1', '1', 10);
  });

  it('[OAR-EXPR-1] leading zeros make an ordinary int or double', () => {
    expect(tree('007')).toBe('7');
    expect(value('007 == 7')).toBe(true);
    expect(value('00.50 == 0.5')).toBe(true);
    expect(value('000')).toBe(0);
  });

  it('[OAR-EXPR-1] offsets are in code points, so a non-BMP character counts once', () => {
    // "😀" is two UTF-16 units but one code point: the second `s` is at code point 9, unit 10.
    expectError('"😀" == s s', 'OAR-EXPR-1', 's', 9);
    expectError('"😀" & s', 'OAR-EXPR-1', '&', 4);
    expectError("'😀😀' 1", 'OAR-EXPR-1', '1', 5);
    expectError('i == 😀', 'OAR-EXPR-1', '😀', 5);
    expectError('"😀" == "\\q"', 'OAR-EXPR-3', '\\q', 8);
    // type errors count the same way
    expectError('"😀" == 1', 'OAR-EXPR-11', '==', 4);
    expectError('b || "😀" == s + 1', 'OAR-EXPR-9', '+', 14);
    expectError('"😀" == s && ms[0] == ""', 'OAR-EXPR-13', 'ms', 12);
  });
});

// --- [OAR-EXPR-4] precedence and associativity ------------------------------------------------

describe('[OAR-EXPR-4] precedence and associativity follow the grammar', () => {
  it.each([
    ['1 + 2 * 3', '(+ 1 (* 2 3))'],
    ['1 * 2 + 3', '(+ (* 1 2) 3)'],
    ['10 - 4 - 3', '(- (- 10 4) 3)'],
    ['8 / 4 / 2', '(/ (/ 8 4) 2)'],
    ['7 % 4 % 2', '(% (% 7 4) 2)'],
    ['2 * 3 % 4', '(% (* 2 3) 4)'],
    ['2 - 1 + 1', '(+ (- 2 1) 1)'],
    ['"a" + "b" + "c"', '(+ (+ "a" "b") "c")'],
    ['a || b && c', '(|| a (&& b c))'],
    ['a && b || c', '(|| (&& a b) c)'],
    ['a || b || c', '(|| (|| a b) c)'],
    ['a && b && c', '(&& (&& a b) c)'],
    ['i + j < 3', '(< (+ i j) 3)'],
    ['"a" + s in ls', '(in (+ "a" s) ls)'],
    ['b == c && i < j', '(&& (== b c) (< i j))'],
    ['b ? 1 : c ? 2 : 3', '(? b 1 (? c 2 3))'],
    ['b ? c ? 1 : 2 : 3', '(? b (? c 1 2) 3)'],
    ['b || c ? 1 : 2', '(? (|| b c) 1 2)'],
    ['b && c ? i + 1 : j * 2', '(? (&& b c) (+ i 1) (* j 2))'],
    ['!b == c', '(== (! b) c)'],
    ['!b && c', '(&& (! b) c)'],
    ['-i * j', '(* (- i) j)'],
    ['-ls[0]', '(- (idx ls 0))'],
    ['!ms["k"]', '(! (idx ms "k"))'],
    ['ls[0][1]', '(idx (idx ls 0) 1)'],
    ['f(x)[0]', '(idx (f x) 0)'],
    ['(1 + 2) * 3', '(* (+ 1 2) 3)'],
    ['i - -1', '(- i (- 1))'],
    ['i--1', '(- i (- 1))'],
    ['-2 * -3', '(* (- 2) (- 3))'],
  ])('[OAR-EXPR-4] %s groups as %s', (src, expected) => {
    expect(tree(src)).toBe(expected);
  });

  it('[OAR-EXPR-4] grouping decides values on both back ends', () => {
    expect(value('1 + 2 * 3')).toBe(7);
    expect(value('10 - 4 - 3')).toBe(3);
    expect(value('100 / 10 / 5')).toBe(2);
    expect(value('2 * 3 % 4')).toBe(2);
    expect(value('2 - 1 + 1')).toBe(2);
    expect(value('7 % 4 % 2')).toBe(1); // right-grouped it would be 7 % 0 and raise
    expect(value('true || false && false')).toBe(true);
    expect(value('(true || false) && false')).toBe(false);
    expect(value('false && true || true')).toBe(true);
    expect(value('false ? 1 : false ? 2 : 3')).toBe(3);
    expect(value('true ? false ? 1 : 2 : 3')).toBe(2);
    expect(value('false || true ? 1 == 2 : true')).toBe(false);
    expect(value('-2 * 3 + 10')).toBe(4);
  });

  it('[OAR-EXPR-4] unary binds tighter than ==, so `!i == 1` is a type error, not !(i == 1)', () => {
    expectError('!i == 1', 'OAR-EXPR-8', '!', 0);
    expect(value('!(i == 1)', { i: 2 })).toBe(true);
  });

  it('[OAR-EXPR-4] index binds tighter than unary: `!ms["k"]` negates the member, not the map', () => {
    const e = expectError('!ms["k"]', 'OAR-EXPR-8', '!', 0);
    expect(e.message).toContain('got string'); // the indexed member, not map<string,string>
    const e2 = expectError('-ls[0]', 'OAR-EXPR-9', '-', 0);
    expect(e2.message).toContain('got string');
  });

  it('[OAR-EXPR-4] a relation admits one relational operator: a < b < c is rejected, not grouped', () => {
    expectError('i < j < 3', 'OAR-EXPR-4', '<', 6);
    expectError('i == j == 3', 'OAR-EXPR-4', '==', 7);
    expectError('s in ls in ls', 'OAR-EXPR-4', 'in', 8);
    expectError('1 < 2 == true', 'OAR-EXPR-4', '==', 6);
    expectError('b == i < j', 'OAR-EXPR-4', '<', 7);
    expectError('i <= j >= 1', 'OAR-EXPR-4', '>=', 7);
    expectError('"a" in ls == true', 'OAR-EXPR-4', '==', 10);
    expectError('size(i < j < 3) == 1', 'OAR-EXPR-4', '<', 11);
    expectError('(i < j < 3)', 'OAR-EXPR-4', '<', 7);
    expectError('ls[i < j < 3]', 'OAR-EXPR-4', '<', 9);
    expectError('b ? i < j < 3 : c', 'OAR-EXPR-4', '<', 10);
  });

  it('[OAR-EXPR-4] parentheses make a second comparison derivable', () => {
    expect(tree('(i < j) == b')).toBe('(== (< i j) b)');
    expect(value('(1 < 2) == true')).toBe(true);
    expect(value('(1 == 1) == (2 == 3)')).toBe(false);
    expect(value('("a" in ls) == false', { ls: ['b'] })).toBe(true);
  });

  it('[OAR-EXPR-4] unary admits one prefix operator: !!b and - -1 are rejected', () => {
    expectError('!!b', 'OAR-EXPR-1', '!', 1);
    expectError('- -1', 'OAR-EXPR-1', '-', 2);
    expectError('--1', 'OAR-EXPR-1', '-', 1);
    expectError('!-i', 'OAR-EXPR-1', '-', 1);
    expectError('-!b', 'OAR-EXPR-1', '!', 1);
    expectError('b && !!c', 'OAR-EXPR-1', '!', 6);
    expect(value('!(!b)', { b: true })).toBe(true);
    expect(value('-(-1)')).toBe(1);
  });
});

// --- [OAR-EXPR-6] comments ---------------------------------------------------------------------

describe('[OAR-EXPR-6] comments are rejected', () => {
  it.each([
    ['b // trailing', 2],
    ['b /* block */', 2],
    ['i /*x*/ + 1 == 2', 2],
    ['i / /* */ 2 == 1', 4],
    ['//', 0],
    ['/**/ b', 0],
    ['"😀" == s //', 9],
  ])('[OAR-EXPR-6] %s is rejected as a comment at offset %i', (src, offset) => {
    expectError(src, 'OAR-EXPR-6', 'comment', offset);
  });

  it('[OAR-EXPR-6] comment markers inside a string literal are string content', () => {
    expect(value('s == "http://x/*y*/"', { s: 'http://x/*y*/' })).toBe(true);
    expect(value("size('//') == 2")).toBe(true);
  });

  it('[OAR-EXPR-6] two divisions separated by whitespace are not a comment (and not derivable)', () => {
    expectError('i / / 2', 'OAR-EXPR-1', '/', 4);
  });
});

// --- [OAR-EXPR-3] string literals and escapes --------------------------------------------------

describe('[OAR-EXPR-3] string literals accept exactly seven escapes', () => {
  it.each([
    ['"\\\\"', '\\'],
    ['"\\""', '"'],
    ['"\\\'"', "'"],
    ["'\\''", "'"],
    ["'\\\"'", '"'],
    ['"\\n"', '\n'],
    ['"\\r"', '\r'],
    ['"\\t"', '\t'],
    ['"\\u0041"', 'A'],
    ['"\\u00e9\\u00E9"', 'éé'],
    ['"a\\tb\\nc"', 'a\tb\nc'],
    ['"\\uD83D\\uDE00"', '😀'],
  ])('[OAR-EXPR-3] %s is accepted and decodes on both back ends', (src, decoded) => {
    expect(value(src)).toBe(decoded);
  });

  it('[OAR-EXPR-3] a \\u escape pair forms one code point; a lone surrogate escape stays one code point', () => {
    expect(value('size("\\uD83D\\uDE00") == 1')).toBe(true);
    expect(value('size("\\uD83D") == 1')).toBe(true);
  });

  it.each([
    ['"\\x41"', '\\x', 1],
    ['"\\u12"', '\\u12', 1],
    ['"\\u12G4"', '\\u12', 1],
    ['"\\u"', '\\u', 1],
    ['"\\U0001F600"', '\\U', 1],
    ['"\\a"', '\\a', 1],
    ['"\\0"', '\\0', 1],
    ['"\\/"', '\\/', 1],
    ['"\\b"', '\\b', 1],
    ['"\\f"', '\\f', 1],
    ['"\\v"', '\\v', 1],
    ["'ab\\q'", '\\q', 3],
    ['"😀\\q"', '\\q', 2],
    ['s == "ok" || s == "\\e"', '\\e', 19],
  ])('[OAR-EXPR-3] %s is rejected naming the escape %s at offset %i', (src, token, offset) => {
    expectError(src, 'OAR-EXPR-3', token, offset);
  });

  it('[OAR-EXPR-1] a raw line break inside a string literal is rejected', () => {
    expectError('"a\nb"', 'OAR-EXPR-1', 'line break', 2);
    expectError('"a\rb"', 'OAR-EXPR-1', 'line break', 2);
    expectError("s == 'x\r\ny'", 'OAR-EXPR-1', 'line break', 7);
  });

  it('[OAR-EXPR-1] a raw tab is ordinary string content', () => {
    expect(value('"a\tb" == "a\\tb"')).toBe(true);
  });

  it('[OAR-EXPR-1] single- and double-quoted strings denote the same values', () => {
    expect(value('\'abc\' == "abc"')).toBe(true);
    expect(value('\'a"b\' == "a\\"b"')).toBe(true);
    expect(value('"a\'b" == \'a\\\'b\'')).toBe(true);
  });

  it('[OAR-EXPR-1] an unterminated string names its opening quote', () => {
    expectError('s == "abc', 'OAR-EXPR-1', '"', 5);
    expectError("s == 'abc", 'OAR-EXPR-1', "'", 5);
    expectError('"abc\'', 'OAR-EXPR-1', '"', 0);
  });
});

// --- [OAR-EXPR-2] dotted identifiers -----------------------------------------------------------

describe('[OAR-EXPR-2] a dotted identifier is one name; there is no field selection', () => {
  it('[OAR-EXPR-2] acme.tier is a single identifier resolving to the host fact', () => {
    expect(parseCondition('acme.tier')).toMatchObject({ type: 'ident', name: 'acme.tier', offset: 0 });
    expect(tree('a.b.c == x_1.y')).toBe('(== a.b.c x_1.y)');
    expect(value('acme.tier == "gold"', { 'acme.tier': 'gold' })).toBe(true);
    expect(value('acme.score("x") > 0.5', { 'acme.score': () => 0.75 })).toBe(true);
  });

  it('[OAR-EXPR-2] tool_args.path is an unknown identifier, not a member of tool_args', () => {
    const e = expectError('tool_args.path == "/etc"', 'OAR-FACT-3', 'tool_args.path', 0);
    expect(e.message).toContain("'tool_args.path'");
    expectError('b && ms.k == "v"', 'OAR-FACT-3', 'ms.k', 5);
  });

  it.each([
    ['f(x).y', 'OAR-EXPR-2', '.', 4],
    ['ls[0].x == ""', 'OAR-EXPR-2', '.', 5],
    ['(s).x', 'OAR-EXPR-2', '.', 3],
    ['a.', 'OAR-EXPR-2', 'a.', 1],
    ['acme..tier', 'OAR-EXPR-2', 'acme.', 4],
    ['acme.1x', 'OAR-EXPR-2', 'acme.', 4],
    ['a . b', 'OAR-EXPR-2', '.', 2],
    ['.5', 'OAR-EXPR-2', '.', 0],
    ['1.', 'OAR-EXPR-1', '1.', 0],
    ['d > 1.', 'OAR-EXPR-1', '1.', 4],
    ['1.e5', 'OAR-EXPR-1', '1.', 0],
    ['1e5', 'OAR-EXPR-1', 'e5', 1],
    ['1.5e3', 'OAR-EXPR-1', 'e3', 3],
    ['1.5.3', 'OAR-EXPR-2', '.', 3],
  ])('[OAR-EXPR-2] %s is rejected (%s names %s at %i)', (src, clause, token, offset) => {
    expectError(src, clause, token, offset);
  });

  it('[OAR-EXPR-2] a member call is not part of the language: s.startsWith("a") is rejected', () => {
    const e = expectError('s.startsWith("a")', 'OAR-EXPR-2', 's.startsWith', 0);
    expect(e.message).toContain('member call');
    expectError('b && acme.tier.contains("x")', 'OAR-EXPR-2', 'acme.tier.contains', 5);
  });
});

// --- [OAR-EXPR-7] null -------------------------------------------------------------------------

describe('[OAR-EXPR-7] there is no null', () => {
  it('[OAR-EXPR-7] null is rejected as an unknown identifier', () => {
    const e = expectError('s == null', 'OAR-FACT-3', 'null', 5);
    expect(e.message).toContain("unknown identifier 'null'");
    expectError('null', 'OAR-FACT-3', 'null', 0);
    expectError('ms["k"] != null', 'OAR-FACT-3', 'null', 11);
  });
});

// --- [OAR-EXPR-24] reserved words and greedy lexing ---------------------------------------------

describe('[OAR-EXPR-24] reserved words and greedy names', () => {
  const LEX = symbolTable([
    fact('international', 'bool'),
    fact('insize', 'int'),
    fact('trueish', 'bool'),
    fact('false_flag', 'bool'),
    fact('in_', 'string'),
    fact('truefalse', 'int'),
    fact('s', 'string'),
    fact('ls', 'list<string>'),
  ]);
  const both = (src: string, facts: Record<string, unknown>) => evalBoth(src, LEX, facts);

  it('[OAR-EXPR-24] names beginning with a reserved word are whole identifiers', () => {
    expect(parseCondition('international')).toMatchObject({ type: 'ident', name: 'international' });
    expect(parseCondition('insize')).toMatchObject({ type: 'ident', name: 'insize' });
    expect(parseCondition('trueish')).toMatchObject({ type: 'ident', name: 'trueish' });
    expect(parseCondition('false_flag')).toMatchObject({ type: 'ident', name: 'false_flag' });
    expect(both('international && !false_flag', { international: true })).toEqual({
      interpreted: { value: true }, compiled: { value: true }, nodes: 4,
    });
    expect(both('insize == 3 && trueish', { insize: 3, trueish: true })).toMatchObject({
      interpreted: { value: true }, compiled: { value: true },
    });
    expect(both('in_ in ls', { in_: 'x', ls: ['x'] })).toMatchObject({ interpreted: { value: true }, compiled: { value: true } });
    expect(both('truefalse == 1', { truefalse: 1 })).toMatchObject({ interpreted: { value: true }, compiled: { value: true } });
  });

  it('[OAR-EXPR-24] `s in ls` is a membership test and `s inls` is not derivable', () => {
    expect(value('s in ls', { s: 'a', ls: ['a'] })).toBe(true);
    expect(tree('s in ls')).toBe('(in s ls)');
    expectError('s inls', 'OAR-EXPR-1', 'inls', 2);
    expectError('s in', 'OAR-EXPR-1', 'end of condition', 4);
  });

  it('[OAR-EXPR-24] true, false and in are never identifiers', () => {
    expect(parseCondition('true')).toMatchObject({ type: 'bool', value: true });
    expect(parseCondition('false')).toMatchObject({ type: 'bool', value: false });
    expectError('in == "x"', 'OAR-EXPR-1', 'in', 0);
    expectError('true(1)', 'OAR-EXPR-1', '(', 4);
    expectError('in(s)', 'OAR-EXPR-1', 'in', 0);
    expectError('s in in', 'OAR-EXPR-1', 'in', 5);
  });

  it('[OAR-EXPR-24] a fact declared under a reserved word is unreachable: `true` stays the literal', () => {
    const reserved = symbolTable([fact('true', 'int'), fact('in', 'string')]);
    const c = checkConditionSource('true == 1', reserved);
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.errors[0]).toMatchObject({ clause: 'OAR-EXPR-11', token: '==' });
    const d = checkConditionSource('in == "x"', reserved);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.errors[0]).toMatchObject({ clause: 'OAR-EXPR-1', token: 'in', offset: 0 });
  });
});

// --- [OAR-EXPR-20] node counting ---------------------------------------------------------------

describe('[OAR-EXPR-20] nodes are counted exactly as the clause defines', () => {
  it.each([
    ['true', 1],
    ['42', 1],
    ['1.5', 1],
    ['"a"', 1],
    ['s', 1],
    ['acme.tier', 1],
    ['size(s)', 2],
    ['starts_with(s, "a")', 3],
    ['tool_arg_string("x")', 2],
    ['ls[0]', 3],
    ['!b', 2],
    ['-i', 2],
    ['-1', 2],
    ['-9223372036854775808', 2],
    ['i + j', 3],
    ['b && c', 3],
    ['b ? i : j', 4],
    ['["a", "b", "c"]', 4],
    ['[lm[0]]', 4],
    ['((((i))))', 1],
    ['(i + j)', 3],
    ['(i) + ((j))', 3],
    ['size(ls) > 0 && (ls[0] == "x" || !b)', 13],
    ['b ? ls[i] : starts_with(s, t) ? "a" : s + t', 13],
  ])('[OAR-EXPR-20] %s has %i nodes', (src, n) => {
    expect(countNodes(parseCondition(src))).toBe(n);
    const c = checkConditionSource(src, SYMBOLS, { requireBool: false });
    if (c.ok) expect(c.condition.nodes).toBe(n);
  });

  it('[OAR-EXPR-20] the count is of the syntactic tree before folding the least int', () => {
    const c = checkConditionSource('-9223372036854775808 < i', SYMBOLS);
    expect(c.ok).toBe(true);
    if (!c.ok) return;
    expect(c.condition.nodes).toBe(4);
    // the checker folds the literal, but the count is the parse tree's
    expect(c.condition.typed).toMatchObject({ k: 'cmp', left: { k: 'lit', value: -(2n ** 63n) } });
  });

  it('[OAR-EXPR-20] a list literal counts as one node plus its members, at the limit boundary', () => {
    // 1 (list) + 254 members + `in`'s left and the `in` itself = 257 with `s in [...]`
    const members = Array.from({ length: 254 }, (_, k) => `"m${k}"`).join(', ');
    const src = `s in [${members}]`;
    expect(countNodes(parseCondition(src, { maxNodes: 10_000 }))).toBe(257);
    expect(error(src, { maxNodes: 256 })).toMatchObject({ clause: 'OAR-EXPR-17', token: 'condition' });
    accepts(src, SYMBOLS, { maxNodes: 257 });
  });
});

// --- [OAR-EXPR-17] limits ----------------------------------------------------------------------

describe('[OAR-EXPR-17] node limits', () => {
  it('[OAR-EXPR-17] the engine constants: default 1024, floor 256, largest 1024', () => {
    expect(DEFAULT_MAX_NODES).toBe(1024);
    expect(MIN_MAX_NODES).toBe(256);
    expect(MAX_MAX_NODES).toBe(1024);
  });

  it('[OAR-EXPR-17] a limit above the largest is capped at it', () => {
    const src = ['size(s)', ...Array<string>(511).fill('i')].join(' + ');
    expect(checkConditionSource(src, SYMBOLS, { maxNodes: 100_000, requireBool: false }).ok).toBe(true);
    expect(error(`-(${src})`, { maxNodes: 100_000 })).toMatchObject({ clause: 'OAR-EXPR-17', token: 'condition' });
  });

  it('[OAR-EXPR-17] a condition of exactly 256 nodes is accepted with the default limit', () => {
    const src = boolOfNodes(256);
    const c = checkConditionSource(src, SYMBOLS);
    expect(c.ok).toBe(true);
    if (c.ok) expect(c.condition.nodes).toBe(256);
    expect(value(src, { s: 'ab', i: 1 })).toBe(true);
  });

  it('[OAR-EXPR-17] a left-deep condition of exactly the default limit (1024 nodes) evaluates on both back ends', () => {
    const src = boolOfNodes(DEFAULT_MAX_NODES);
    const r = evalBoth(src, SYMBOLS, { s: 'x', i: -1 });
    expect(r).toEqual({ interpreted: { value: false }, compiled: { value: false }, nodes: 1024 });
  });

  it('[OAR-EXPR-17] a maxNodes limit is enforced at N (accepted) and N + 1 (rejected)', () => {
    const at256 = boolOfNodes(256);
    const at257 = `!(${at256})`;
    expect(countNodes(parseCondition(at257))).toBe(257);
    accepts(at256, SYMBOLS, { maxNodes: 256 });
    expect(error(at257, { maxNodes: 256 })).toMatchObject({ clause: 'OAR-EXPR-17', token: 'condition', offset: 0 });
    accepts(at257, SYMBOLS, { maxNodes: 257 });

    const atDefault = boolOfNodes(DEFAULT_MAX_NODES);
    expect(countNodes(parseCondition(atDefault, { maxNodes: 10_000 }))).toBe(1024);
    accepts(atDefault);
    const e = error(`!(${atDefault})`);
    expect(e).toMatchObject({ clause: 'OAR-EXPR-17', token: 'condition' });
    expect(e.message).toContain('1024');
  });

  it('[OAR-EXPR-17] a 100,000-deep parenthesised condition is rejected quickly, not a stack overflow', () => {
    const depth = 100_000;
    const src = '('.repeat(depth) + 'b' + ')'.repeat(depth);
    let e: ConditionError | undefined;
    const t = ms(() => {
      e = error(src);
    });
    expect(t).toBeLessThan(2000);
    // the 513th nested condition starts at the 513th parenthesis
    expect(e).toMatchObject({ clause: 'OAR-EXPR-17', token: '(', offset: 512 });
    // raising the node limit does not raise the nesting bound into a stack overflow
    expect(error(src, { maxNodes: 1_000_000 })).toMatchObject({ clause: 'OAR-EXPR-17', token: '(', offset: 512 });
  });

  it('[OAR-EXPR-17] deep nesting through unary minus, subscripts and calls is rejected, not a crash', () => {
    const n = 100_000;
    expect(error('-('.repeat(n) + 'i' + ')'.repeat(n))).toMatchObject({ clause: 'OAR-EXPR-17' });
    expect(error('ls['.repeat(n) + '0' + ']'.repeat(n))).toMatchObject({ clause: 'OAR-EXPR-17' });
    expect(error('size('.repeat(n) + 's' + ')'.repeat(n))).toMatchObject({ clause: 'OAR-EXPR-17' });
    expect(error('b ? b : '.repeat(n) + 'b')).toMatchObject({ clause: 'OAR-EXPR-17' });
  });

  it('[OAR-EXPR-17] a 1,000-level parenthesised 1-node condition is rejected with an error, never a RangeError', () => {
    // At the default limit this once recursed 1,000 levels deep and overflowed the stack.
    const src = '('.repeat(1000) + 'b' + ')'.repeat(1000);
    expect(() => checkConditionSource(src, SYMBOLS)).not.toThrow();
    expect(error(src)).toMatchObject({ clause: 'OAR-EXPR-17', token: '(', offset: 512 });
  });

  it('[OAR-EXPR-1] [OAR-EXPR-20] nesting is no limit of its own below 512 levels: 300 redundant parentheses hold one node', () => {
    const src = '('.repeat(300) + 'b' + ')'.repeat(300);
    expect(countNodes(parseCondition(src))).toBe(1);
    expect(value(src, { b: true })).toBe(true);
  });

  it('[OAR-EXPR-17] nesting 512 levels deep (a 512-node condition) is accepted and evaluates', () => {
    const src = '-('.repeat(511) + 'i' + ')'.repeat(511);
    expect(countNodes(parseCondition(src))).toBe(512);
    expect(value(src, { i: 1 })).toBe(-1);
    const negations = '!('.repeat(300) + 'b' + ')'.repeat(300); // 301 nodes, 301 levels
    expect(value(negations, { b: true })).toBe(true);
    const ternary = 'b ? i : '.repeat(85) + 'j'; // 3 * 85 + 1 = 256 nodes, 86 levels
    expect(countNodes(parseCondition(ternary))).toBe(256);
    expect(value(ternary, { j: 7 })).toBe(7);
  });

  it('[OAR-EXPR-17] a 10 MB condition is rejected quickly', () => {
    const src = 'i + '.repeat((10 * 1024 * 1024) / 4) + 'i > 0';
    let e: ConditionError | undefined;
    const t = ms(() => {
      e = error(src);
    });
    expect(t).toBeLessThan(2000);
    // It stops at the node limit, a few thousand characters in: the rest is never lexed.
    expect(e).toMatchObject({ clause: 'OAR-EXPR-17', token: 'condition' });
    expect(e?.offset).toBeLessThan(10_000);
  });

  it('[OAR-EXPR-1] [OAR-EXPR-17] only nodes are limited: a 3-node condition with a 1.1-million-character literal is accepted', () => {
    const long = 'x'.repeat(1_100_000);
    const src = `s == "${long}"`;
    expect(countNodes(parseCondition(src))).toBe(3);
    expect(value(src, { s: long })).toBe(true);
  });

  describe('a 1024-node left-deep chain at the largest limit (no stack overflow)', () => {
    // size(s) + i + … + i: 2 + 2 * 511 = 1024 nodes, nested 512 deep.
    const src = ['size(s)', ...Array<string>(511).fill('i')].join(' + ');
    const facts = { s: 'x', i: 1 };

    it('[OAR-EXPR-17] it parses, counts 1024 nodes and is rejected one node over', () => {
      const c = checkConditionSource(src, SYMBOLS, { maxNodes: MAX_MAX_NODES, requireBool: false });
      expect(c.ok).toBe(true);
      if (c.ok) expect(c.condition.nodes).toBe(1024);
      expect(error(`-(${src})`, { maxNodes: MAX_MAX_NODES })).toMatchObject({ clause: 'OAR-EXPR-17', token: 'condition' });
    });

    it('[OAR-EXPR-17] it evaluates on the interpreter', () => {
      const c = checkConditionSource(src, SYMBOLS, { maxNodes: MAX_MAX_NODES, requireBool: false });
      if (!c.ok) throw new Error(JSON.stringify(c.errors));
      expect(interpret(c.condition.typed, new ObjectFactReader(SYMBOLS, facts))).toEqual({ ok: true, value: 512 });
    });

    it('[OAR-EXPR-17] it compiles and evaluates on the compiled back end', () => {
      const c = checkConditionSource(src, SYMBOLS, { maxNodes: MAX_MAX_NODES, requireBool: false });
      if (!c.ok) throw new Error(JSON.stringify(c.errors));
      const fn = loadCondition(c.condition.typed);
      expect(fn(new ObjectFactReader(SYMBOLS, facts))).toBe(512);
    });
  });
});

// --- cross-check ------------------------------------------------------------------------------

describe('[OAR-EXPR-1] a syntax error is reported by run() before either back end', () => {
  it('[OAR-EXPR-1] run() returns the error, naming the construct and the offset', () => {
    expect(run('b c')).toEqual({ error: [{ clause: 'OAR-EXPR-1', message: "unexpected identifier 'c' after a complete condition", token: 'c', offset: 2 }] });
  });
});
