/**
 * Appendix A.2 (types), A.3 (built-ins) and the load-time rules of [OAR-EXPR-21], against the
 * closed, typed environment of [OAR-FACT-1] to [OAR-FACT-4]. Every rejection names its clause, the
 * token it reports and that token's code-point offset; every acceptance states the type produced.
 */
import { describe, expect, it } from 'vitest';
import { checkConditionSource, type ConditionError, type TExpr } from '../../compiler/expr/index.js';
import { BUILTINS } from '../../compiler/expr/checker.js';
import { symbolTable, type FactType, type SymbolTable } from '../../runtime/types.js';
import { SYMBOLS, rejects, value } from './env.js';

// --- helpers -------------------------------------------------------------------------------------

/** The typed tree of an expression of any type. */
function typed(src: string, symbols: SymbolTable = SYMBOLS): TExpr {
  const c = checkConditionSource(src, symbols, { requireBool: false });
  if (!c.ok) throw new Error(`${src}: expected to type-check, got ${JSON.stringify(c.errors)}`);
  return c.condition.typed;
}

const typeOf = (src: string, symbols: SymbolTable = SYMBOLS) => typed(src, symbols).ty;

/** The errors of a condition checked as a rule condition (`bool` required unless told otherwise). */
function errors(src: string, symbols: SymbolTable = SYMBOLS, requireBool = false): ConditionError[] {
  const c = checkConditionSource(src, symbols, { requireBool });
  if (c.ok) throw new Error(`${src}: expected a load error, it type-checked as ${c.condition.typed.ty}`);
  return c.errors;
}

/** An operator's offset: the first place it stands as a token, with a blank either side. */
function opAt(src: string, op: string): number {
  const i = src.indexOf(` ${op} `);
  return i < 0 ? src.indexOf(op) : i + 1;
}

/** Exactly one error, naming the clause, the token and the offset (an operator's own, for an operator). */
function expectReject(src: string, clause: string, token: string, offset: number, symbols: SymbolTable = SYMBOLS): ConditionError {
  const es = errors(src, symbols);
  expect(es).toHaveLength(1);
  const e = es[0] as ConditionError;
  expect({ clause: e.clause, token: e.token, offset: e.offset }).toEqual({ clause, token, offset });
  return e;
}

const host = { kind: 'host' } as const;
const fact = (name: string, type: FactType) => ({ kind: 'fact', name, type, tier: host }) as const;

// Declared apart: `Omit` over the SymbolEntry union keeps only the shared keys, so an inline
// function literal would fail the excess-property check on `param`.
const scoreAt = { kind: 'function', name: 'score_at', param: 'double', result: 'bool', tier: host } as const;
const nth = { kind: 'function', name: 'nth', param: 'int', result: 'string', tier: host } as const;
const flag = { kind: 'function', name: 'flag', param: 'bool', result: 'int', tier: host } as const;
const FNS = symbolTable([fact('i', 'int'), fact('d', 'double'), fact('b', 'bool'), fact('s', 'string'), scoreAt, nth, flag]);

// --- [OAR-FACT-1] … [OAR-FACT-4] ------------------------------------------------------------------

describe('[OAR-FACT-1] [OAR-FACT-2] the environment is closed, typed and has one namespace', () => {
  it('[OAR-FACT-1] an identifier resolves to its declared fact, with its declared type and slot', () => {
    const t = typed('i');
    const sym = SYMBOLS.lookup('i');
    expect(t).toMatchObject({ k: 'fact', ty: 'int', sym: { name: 'i', type: 'int', slot: sym?.slot } });
    expect(typed('acme.tier')).toMatchObject({ k: 'fact', ty: 'string', sym: { name: 'acme.tier' } });
  });

  it('[OAR-FACT-1] the same condition is judged against whichever environment is declared', () => {
    const asInt = symbolTable([fact('x', 'int')]);
    const asString = symbolTable([fact('x', 'string')]);
    expect(typed('x > 1', asInt).ty).toBe('bool');
    expectReject('x > 1', 'OAR-EXPR-10', '>', 2, asString);
    expectReject('x > 1', 'OAR-FACT-3', 'x', 0, symbolTable([]));
  });

  it('[OAR-FACT-2] a fact and a function cannot share a name', () => {
    const fn = { kind: 'function', name: 'x', param: 'string', result: 'int', tier: host } as const;
    expect(() => symbolTable([fact('x', 'int'), fn])).toThrow(/symbol declared twice: x \[OAR-FACT-2\]/);
    expect(() => symbolTable([fact('x', 'int'), fact('x', 'string')])).toThrow(/OAR-FACT-2/);
  });

  it('[OAR-FACT-2] a function must be called and a fact cannot be called', () => {
    const e = expectReject('tool_arg_string == "x"', 'OAR-FACT-3', 'tool_arg_string', 0);
    expect(e.message).toContain('observation function');
    const f = expectReject('tool("x") == ""', 'OAR-FACT-3', 'tool', 0);
    expect(f.message).toContain('is a fact, not a function');
    expectReject('b && acme.score > 0.5', 'OAR-FACT-3', 'acme.score', 5);
    expectReject('acme.tier("x") == ""', 'OAR-FACT-3', 'acme.tier', 0);
  });
});

describe('[OAR-FACT-3] an unknown identifier is a load error naming it', () => {
  it.each([
    ['nope == 1', 'nope', 0],
    ['b && Tool == "x"', 'Tool', 5],
    ['frobnicate(s)', 'frobnicate', 0],
    ['acme.nope == ""', 'acme.nope', 0],
    ['size(nope)', 'nope', 5],
    ['"k" in undefined', 'undefined', 7],
    ['NaN == d', 'NaN', 0],
    ['Infinity > d', 'Infinity', 0],
  ])('[OAR-FACT-3] %s names %s at %i', (src, token, offset) => {
    const e = expectReject(src, 'OAR-FACT-3', token, offset);
    expect(e.message).toContain(`'${token}'`);
  });

  it('[OAR-FACT-3] every unknown identifier is reported, in one pass', () => {
    const es = errors('nope1 || nope2 && b');
    expect(es.map((e) => [e.clause, e.token, e.offset])).toEqual([
      ['OAR-FACT-3', 'nope1', 0],
      ['OAR-FACT-3', 'nope2', 9],
    ]);
  });

  it('[OAR-FACT-3] names on Object.prototype are unknown identifiers like any other', () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf']) {
      const e = expectReject(`${name}(s)`, 'OAR-FACT-3', name, 0);
      expect(typeof e.clause).toBe('string');
      expectReject(`${name} == 1`, 'OAR-FACT-3', name, 0);
    }
  });
});

describe('[OAR-FACT-4] the condition must be type-correct and produce bool', () => {
  it.each([
    ['i + 1', 'int'],
    ['1.5', 'double'],
    ['s', 'string'],
    ['ls', 'list<string>'],
    ['lm', 'list<map>'],
    ['m', 'map'],
    ['ms', 'map<string,string>'],
    ['lm[0]', 'map'],
    ['b ? i : j', 'int'],
    ['size(s)', 'int'],
    ['tool_arg_string("x")', 'string'],
  ])('[OAR-FACT-4] %s is rejected as a rule condition, naming %s and bool', (src, ty) => {
    const e = rejects(src, true);
    expect(e.clause).toBe('OAR-FACT-4');
    expect(e.token).toBe(ty);
    expect(e.offset).toBe(0);
    expect(e.message).toContain(ty);
    expect(e.message).toContain('bool');
  });

  it('[OAR-FACT-4] a bool condition is accepted, and rule conditions require bool by default', () => {
    const c = checkConditionSource('i + 1', SYMBOLS);
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.errors[0]).toMatchObject({ clause: 'OAR-FACT-4', token: 'int', message: 'condition produces int, not bool' });
    for (const src of ['b', 'i > 0', '!b', 'b ? c : false', 'starts_with(s, "a")', 's in ls']) {
      const ok = checkConditionSource(src, SYMBOLS);
      expect(ok.ok).toBe(true);
      if (ok.ok) expect(ok.condition.typed.ty).toBe('bool');
    }
  });

  it('[OAR-FACT-4] a type error inside reports the operator rather than the result type', () => {
    expect(rejects('i + s > 0', true)).toMatchObject({ clause: 'OAR-EXPR-9', token: '+', offset: 2 });
  });
});

// --- [OAR-EXPR-8] -------------------------------------------------------------------------------

describe('[OAR-EXPR-8] &&, || and ! take and produce bool; the ternary is typed', () => {
  it('[OAR-EXPR-8] accepts bool operands and types the ternary by its branches', () => {
    expect(typeOf('!b')).toBe('bool');
    expect(typeOf('b && c')).toBe('bool');
    expect(typeOf('b || c')).toBe('bool');
    expect(typeOf('b ? i : j')).toBe('int');
    expect(typeOf('b ? d : e')).toBe('double');
    expect(typeOf('b ? s : "x"')).toBe('string');
    expect(typeOf('b ? ls : ["x"]')).toBe('list<string>');
    expect(typeOf('b ? lm[0] : m')).toBe('map');
    expect(typeOf('(b ? i : j) == 1')).toBe('bool');
  });

  it.each([
    ['!i', 'OAR-EXPR-8', '!', 0],
    ['!s', 'OAR-EXPR-8', '!', 0],
    ['i && b', 'OAR-EXPR-8', '&&', 2],
    ['b || s', 'OAR-EXPR-8', '||', 2],
    ['b && 1', 'OAR-EXPR-8', '&&', 2],
    ['i ? b : c', 'OAR-EXPR-8', '?', 2],
    ['s ? 1 : 2', 'OAR-EXPR-8', '?', 2],
    ['b ? 1 : "a"', 'OAR-EXPR-8', ':', 6],
    ['b ? 1 : 1.0', 'OAR-EXPR-8', ':', 6],
    ['b ? ls : lm', 'OAR-EXPR-8', ':', 7],
    ['b ? ms : m', 'OAR-EXPR-8', ':', 7],
    ['c && (b ? s : i) == s', 'OAR-EXPR-8', ':', 12],
  ])('[OAR-EXPR-8] %s is rejected (%s names %s at %i)', (src, clause, token, offset) => {
    const e = expectReject(src, clause, token, offset);
    expect(e.message.length).toBeGreaterThan(0);
  });

  it('[OAR-EXPR-8] the branch mismatch names both types', () => {
    expect(expectReject('b ? 1 : 1.0', 'OAR-EXPR-8', ':', 6).message).toContain('int and double');
  });
});

// --- [OAR-EXPR-9] -------------------------------------------------------------------------------

describe('[OAR-EXPR-9] arithmetic operand pairs', () => {
  it.each([
    ['i + j', 'int'], ['i - j', 'int'], ['i * j', 'int'], ['i / j', 'int'], ['i % j', 'int'],
    ['d + e', 'double'], ['d - e', 'double'], ['d * e', 'double'], ['d / e', 'double'],
    ['s + t', 'string'], ['"a" + s', 'string'], ['-i', 'int'], ['-d', 'double'], ['-1.5', 'double'],
    ['tool_arg_int("n") + 1', 'int'],
  ])('[OAR-EXPR-9] %s is %s', (src, ty) => {
    expect(typeOf(src)).toBe(ty);
  });

  it.each([
    ['i + d', '+'], ['d - i', '-'], ['1 + 1.0', '+'], ['i * 2.0', '*'], ['d / 2', '/'],
    ['d % e', '%'], ['5.0 % 2.0', '%'], ['i % 2.0', '%'],
    ['s - t', '-'], ['s * 2', '*'], ['s / t', '/'], ['s % t', '%'], ['s + 1', '+'], ['1 + s', '+'],
    ['b + c', '+'], ['ls + ls', '+'], ['ms + ms', '+'], ['s + ls', '+'], ['lm[0] + lm[0]', '+'],
  ])('[OAR-EXPR-9] %s is rejected naming %s', (src, op) => {
    const e = expectReject(src, 'OAR-EXPR-9', op, opAt(src, op));
    expect(e.message).toContain(`'${op}'`);
  });

  it.each([['-s'], ['-b'], ['-ls'], ['-"1"']])('[OAR-EXPR-9] unary minus on %s is rejected', (src) => {
    expectReject(src, 'OAR-EXPR-9', '-', 0);
  });
});

// --- [OAR-EXPR-10] [OAR-EXPR-11] ------------------------------------------------------------------

describe('[OAR-EXPR-10] ordering comparisons', () => {
  it.each([
    ['i < j', 'int'], ['d <= e', 'double'], ['i > d', 'int_double'], ['d >= i', 'double_int'],
    ['s < t', 'string'], ['"a" <= "b"', 'string'], ['1 < 1.5', 'int_double'],
  ])('[OAR-EXPR-10] %s compares as %s', (src, mode) => {
    expect(typed(src)).toMatchObject({ k: 'cmp', ty: 'bool', mode });
  });

  it.each([
    ['b < c', '<'], ['true > false', '>'], ['s < 1', '<'], ['i > "1"', '>'], ['ls <= ls', '<='],
    ['m >= m', '>='], ['d < s', '<'], ['ms < ms', '<'], ['lm[0] < lm[0]', '<'],
  ])('[OAR-EXPR-10] %s is rejected naming %s', (src, op) => {
    expectReject(src, 'OAR-EXPR-10', op, opAt(src, op));
  });
});

describe('[OAR-EXPR-11] equality', () => {
  it.each([
    ['b == c', 'bool'], ['i == j', 'int'], ['d != e', 'double'], ['s == t', 'string'],
    ['i == d', 'int_double'], ['d != i', 'double_int'], ['1 == 1.0', 'int_double'],
  ])('[OAR-EXPR-11] %s compares as %s', (src, mode) => {
    expect(typed(src)).toMatchObject({ k: 'cmp', ty: 'bool', mode });
  });

  it.each([
    ['s == 1', '=='], ['b == 1', '=='], ['b != "true"', '!='], ['i == "1"', '=='], ['d == s', '=='],
    ['ls == s', '=='], ['ms == m', '=='], ['lm == ls', '=='], ['lm[0] == ms', '=='], ['b == ls', '=='],
  ])('[OAR-EXPR-11] %s is rejected at load naming %s, never false at run time', (src, op) => {
    expectReject(src, 'OAR-EXPR-11', op, opAt(src, op));
  });
});

// --- [OAR-EXPR-12] [OAR-EXPR-13] [OAR-EXPR-19] ----------------------------------------------------

describe('[OAR-EXPR-12] in', () => {
  it.each([
    ['s in ls', 'list'], ['"a" in ["a", "b"]', 'list'], ['s in ms', 'map'], ['s in m', 'map'],
    ['"k" in lm[0]', 'map'], ['"path" in tool_args', 'map'],
  ])('[OAR-EXPR-12] %s is a %s membership test', (src, of) => {
    expect(typed(src)).toMatchObject({ k: 'in', ty: 'bool', of });
  });

  it.each([
    ['1 in ls'], ['s in s'], ['s in lm'], ['ls in ls'], ['b in m'], ['lm[0] in lm'], ['i in ms'], ['s in [lm[0]]'],
  ])('[OAR-EXPR-12] %s is rejected', (src) => {
    expectReject(src, 'OAR-EXPR-12', 'in', opAt(src, 'in'));
  });
});

describe('[OAR-EXPR-13] indexing', () => {
  it.each([
    ['ms["k"]', 'string', 'map'], ['ms[s]', 'string', 'map'], ['ls[0]', 'string', 'list'], ['ls[i]', 'string', 'list'],
    ['ls[i + 1]', 'string', 'list'], ['lm[0]', 'map', 'list'], ['["a", s][1]', 'string', 'list'],
  ])('[OAR-EXPR-13] %s yields %s', (src, ty, of) => {
    expect(typed(src)).toMatchObject({ k: 'index', ty, of });
  });

  // [OAR-CONF-30] the diagnostic names the indexed fact; an indexed expression, the bracket.
  it.each([
    ['ms[0]', 'ms', 0], ['ls["0"]', 'ls', 0], ['ls[0.0]', 'ls', 0], ['ls[b]', 'ls', 0], ['lm["a"]', 'lm', 0], ['s[0]', 's', 0], ['i[0]', 'i', 0],
    ['b && ms[0] == ""', 'ms', 5], ['ls[ls]', 'ls', 0], ['d[0]', 'd', 0], ['ls[0][0]', '[', 0],
  ])('[OAR-EXPR-13] %s is rejected at load', (src, token, offset) => {
    expectReject(src, 'OAR-EXPR-13', token, offset);
  });
});

describe('[OAR-EXPR-19] an unparameterised map is never indexed', () => {
  it.each([['tool_args["path"]', 'tool_args', 0], ['m[0]', 'm', 0], ['lm[0]["k"]', '[', 0], ['b && m[s] == ""', 'm', 5]])('[OAR-EXPR-19] %s is rejected, naming the map', (src, token, offset) => {
    const e = expectReject(src, 'OAR-EXPR-19', token, offset);
    expect(e.message).toContain(token === '[' ? 'a map cannot be indexed' : `'${token}' is a map and cannot be indexed`);
  });

  it('[OAR-EXPR-19] in, size() and a typed observation function are the ways in', () => {
    expect(typeOf('"path" in tool_args')).toBe('bool');
    expect(typeOf('size(tool_args)')).toBe('int');
    expect(typeOf('"path" in tool_args && tool_arg_string("path") == "/etc/passwd"')).toBe('bool');
  });
});

// --- [OAR-EXPR-21] literal rules ----------------------------------------------------------------

describe('[OAR-EXPR-21] integer literals fit 64 bits', () => {
  it('[OAR-EXPR-21] the greatest int literal is accepted', () => {
    expect(typed('9223372036854775807')).toMatchObject({ k: 'lit', ty: 'int', value: 2n ** 63n - 1n });
  });

  it('[OAR-EXPR-21] 9223372036854775808 alone is rejected naming the literal', () => {
    const e = expectReject('9223372036854775808 > 0', 'OAR-EXPR-21', '9223372036854775808', 0);
    expect(e.message).toContain('64-bit');
    expectReject('i == 99999999999999999999', 'OAR-EXPR-21', '99999999999999999999', 5);
    expectReject('[9223372036854775808]', 'OAR-EXPR-21', '9223372036854775808', 1);
  });

  it('[OAR-EXPR-21] -9223372036854775808 is accepted and folds to the least int', () => {
    expect(typed('-9223372036854775808')).toMatchObject({ k: 'lit', ty: 'int', value: -(2n ** 63n), offset: 0 });
    expect(typed('- 9223372036854775808')).toMatchObject({ k: 'lit', value: -(2n ** 63n) });
    expect(value('-9223372036854775808 < -9223372036854775807')).toBe(true);
  });

  it('[OAR-EXPR-21] the magnitude 2^63 is admitted only as the immediate operand of unary minus', () => {
    // Parenthesised, it is no longer the immediate operand: this engine rejects it.
    expectReject('-(9223372036854775808)', 'OAR-EXPR-21', '9223372036854775808', 2);
    expectReject('i - 9223372036854775808 > 0', 'OAR-EXPR-21', '9223372036854775808', 4);
    expectReject('-9223372036854775809', 'OAR-EXPR-21', '9223372036854775809', 1);
    expectReject('!9223372036854775808', 'OAR-EXPR-21', '9223372036854775808', 1);
    // binary minus followed by unary minus: the unary's operand is immediate
    expect(typed('i --9223372036854775808')).toMatchObject({ k: 'arith', op: '-', right: { k: 'lit', value: -(2n ** 63n) } });
  });
});

describe('[OAR-EXPR-21] double literals must be finite', () => {
  const huge = '1' + '0'.repeat(400) + '.0';
  // 2^1024 - 2^970 is the midpoint between the greatest double and 2^1024: it rounds to infinity.
  const midpoint = (2n ** 1024n - 2n ** 970n).toString() + '.0';
  const belowMidpoint = (2n ** 1024n - 2n ** 970n - 1n).toString() + '.0';

  it('[OAR-EXPR-21] 1 followed by 400 zeros .0 is rejected naming the literal', () => {
    const e = expectReject(`${huge} > d`, 'OAR-EXPR-21', huge, 0);
    expect(e.message).toContain('finite');
  });

  it('[OAR-EXPR-21] the rounding boundary: the midpoint to 2^1024 is rejected, one below is the greatest double', () => {
    expectReject(midpoint, 'OAR-EXPR-21', midpoint, 0);
    expect(typed(belowMidpoint)).toMatchObject({ k: 'lit', ty: 'double', value: Number.MAX_VALUE });
  });

  it('[OAR-EXPR-21] a literal that underflows to zero is finite and accepted', () => {
    expect(value(`0.${'0'.repeat(400)}1 == 0.0`)).toBe(true);
  });
});

describe('[OAR-EXPR-21] list literals are list<string> or list<map>, and nothing else', () => {
  it('[OAR-EXPR-21] all-string members make list<string>; all-map members make list<map>', () => {
    expect(typed('["a", s, "b" + t]')).toMatchObject({ k: 'list', ty: 'list<string>' });
    expect(typed('[lm[0], lm[1]]')).toMatchObject({ k: 'list', ty: 'list<map>' });
    expect(typed('[tool_args, lm[0], m]')).toMatchObject({ k: 'list', ty: 'list<map>' });
    expect(typeOf('[lm[0]][0]')).toBe('map');
    expect(value('size([lm[0], lm[1]]) == 2', { lm: [{}, { a: 1 }] })).toBe(true);
  });

  it.each([
    ['[]', '[]', 0],
    ['size([]) == 0', '[]', 5],
    ['[1, 2]', '[', 0],
    ['["a", 1]', '[', 0],
    ['[true]', '[', 0],
    ['[1.0]', '[', 0],
    ['[ls]', '[', 0],
    ['[ms]', '[', 0],
    ['[lm[0], "a"]', '[', 0],
    ['[lm[0], ms]', '[', 0],
    ['s in [s, i]', '[', 5],
  ])('[OAR-EXPR-21] %s is rejected', (src, token, offset) => {
    expectReject(src, 'OAR-EXPR-21', token, offset);
  });

  it('[OAR-EXPR-21] the rejection of a mixed list names the member types', () => {
    expect(expectReject('["a", 1]', 'OAR-EXPR-21', '[', 0).message).toContain('string, int');
  });
});

describe('[OAR-EXPR-21] == and != on aggregates are rejected at load', () => {
  it.each([
    ['ls == ls', '=='], ['ls != ["a"]', '!='], ['["a"] == ["a"]', '=='], ['m == m', '=='], ['ms != ms', '!='],
    ['lm == lm', '=='], ['lm[0] == lm[1]', '=='], ['[lm[0]] == lm', '=='],
  ])('[OAR-EXPR-21] %s is rejected naming %s', (src, op) => {
    const e = expectReject(src, 'OAR-EXPR-21', op, opAt(src, op));
    expect(e.message).toContain('aggregates cannot be compared');
  });

  it('[OAR-EXPR-21] a map<string,string> is a map for in and size()', () => {
    expect(typed('"k" in ms')).toMatchObject({ k: 'in', of: 'map' });
    expect(typed('size(ms)')).toMatchObject({ k: 'size', of: 'map', ty: 'int' });
  });
});

// --- [OAR-EXPR-16] [OAR-EXPR-22] [OAR-EXPR-23] built-ins -----------------------------------------

describe('[OAR-EXPR-16] exactly four built-ins', () => {
  it('[OAR-EXPR-16] the built-in set is size, starts_with, ends_with, contains', () => {
    expect([...BUILTINS].sort()).toEqual(['contains', 'ends_with', 'size', 'starts_with']);
  });

  it.each([
    ['size(s)', 'string'], ['size("😀")', 'string'], ['size(ls)', 'list'], ['size(lm)', 'list'], ['size(["a"])', 'list'],
    ['size(m)', 'map'], ['size(ms)', 'map'], ['size(lm[0])', 'map'],
  ])('[OAR-EXPR-16] %s is an int over a %s', (src, of) => {
    expect(typed(src)).toMatchObject({ k: 'size', ty: 'int', of });
  });

  it.each([['starts_with'], ['ends_with'], ['contains']])('[OAR-EXPR-16] %s(string, string) is bool', (fn) => {
    expect(typed(`${fn}(s, "x")`)).toMatchObject({ k: 'strfn', fn, ty: 'bool' });
  });

  it.each([
    ['size()', 'size', 0], ['size(s, t)', 'size', 0], ['starts_with(s)', 'starts_with', 0],
    ['ends_with(s, t, "x")', 'ends_with', 0], ['contains()', 'contains', 0], ['b && size(ls, ls) > 0', 'size', 5],
  ])('[OAR-EXPR-16] wrong arity: %s', (src, token, offset) => {
    const e = expectReject(src, 'OAR-EXPR-16', token, offset);
    expect(e.message).toMatch(/takes \d arguments?, got \d/);
  });

  it.each([
    ['size(1)', 'size'], ['size(b)', 'size'], ['size(d)', 'size'], ['starts_with(s, 1)', 'starts_with'],
    ['ends_with(ls, "a")', 'ends_with'], ['contains(ls, "a")', 'contains'], ['contains(s, ["a"])', 'contains'],
    ['starts_with(1, 2)', 'starts_with'], ['contains(ms, "k")', 'contains'],
  ])('[OAR-EXPR-16] wrong argument types: %s', (src, token) => {
    expectReject(src, 'OAR-EXPR-16', token, 0);
  });

  it.each([
    ['startsWith(s, "a")', 'OAR-EXPR-16'], ['endsWith(s, "a")', 'OAR-EXPR-16'], ['has(m)', 'OAR-EXPR-16'],
    ['int(d) == 1', 'OAR-EXPR-16'], ['string(i) == ""', 'OAR-EXPR-16'], ['double(i) > 0.0', 'OAR-EXPR-16'],
    ['type(i) == "int"', 'OAR-EXPR-16'], ['timestamp(s) == 1', 'OAR-EXPR-16'], ['duration(s) == 1', 'OAR-EXPR-16'],
  ])('[OAR-EXPR-16] no fifth built-in: %s', (src, clause) => {
    const token = src.slice(0, src.indexOf('('));
    const e = expectReject(src, clause, token, 0);
    expect(e.message).toContain('exactly size, starts_with, ends_with and contains');
  });

  it('[OAR-EXPR-16] a built-in name is not an identifier', () => {
    expectReject('size == 1', 'OAR-FACT-3', 'size', 0);
    expectReject('contains', 'OAR-FACT-3', 'contains', 0);
  });
});

describe('[OAR-EXPR-22] [OAR-EXPR-23] no case folding and no regular expressions', () => {
  it.each([['lower(s) == "a"', 'lower'], ['upper(s) == "A"', 'upper'], ['lowerAscii(s) == "a"', 'lowerAscii']])(
    '[OAR-EXPR-22] %s is rejected: no case-folding built-in',
    (src, token) => {
      expectReject(src, 'OAR-EXPR-22', token, 0);
    },
  );

  it('[OAR-EXPR-23] matches() is rejected: no regular-expression built-in', () => {
    const e = expectReject('matches(s, "^a.*")', 'OAR-EXPR-23', 'matches', 0);
    expect(e.message).toContain("'matches' is not a built-in");
    expectReject('b || matches(s, t)', 'OAR-EXPR-23', 'matches', 5);
  });

  it('[OAR-EXPR-23] a member-call spelling of matches is rejected too', () => {
    expectReject('s.matches("a")', 'OAR-EXPR-2', 's.matches', 0);
  });
});

// --- observation functions ----------------------------------------------------------------------

describe('[OAR-FACT-4] observation functions take exactly their declared parameter type', () => {
  it('[OAR-FACT-4] the argument type must match exactly: no int to double promotion', () => {
    expect(typeOf('score_at(1.0)', FNS)).toBe('bool');
    expectReject('score_at(1)', 'OAR-FACT-4', 'score_at', 9, FNS);
    expectReject('score_at(i)', 'OAR-FACT-4', 'score_at', 9, FNS);
    expectReject('nth(d) == ""', 'OAR-FACT-4', 'nth', 4, FNS);
    expectReject('nth(1.0) == ""', 'OAR-FACT-4', 'nth', 4, FNS);
    expectReject('flag(1) == 1', 'OAR-FACT-4', 'flag', 5, FNS);
    expectReject('tool_arg_string(1) == ""', 'OAR-FACT-4', 'tool_arg_string', 16);
    expect(expectReject('score_at(i)', 'OAR-FACT-4', 'score_at', 9, FNS).message).toContain('takes double, got int');
  });

  it('[OAR-FACT-4] the result has the declared result type', () => {
    expect(typeOf('nth(i)', FNS)).toBe('string');
    expect(typeOf('flag(b) + 1', FNS)).toBe('int');
    expect(typeOf('tool_arg_int("n") * 2')).toBe('int');
    expectReject('tool_arg_int("n") == "x"', 'OAR-EXPR-11', '==', 18);
    expectReject('acme.score("x") % 2.0 > 0.0', 'OAR-EXPR-9', '%', 16);
  });

  it('[OAR-FACT-27] an observation function takes exactly one argument', () => {
    expectReject('tool_arg_string("a", "b") == ""', 'OAR-FACT-27', 'tool_arg_string', 0);
    expectReject('nth() == ""', 'OAR-FACT-27', 'nth', 0, FNS);
  });
});

describe('[OAR-FIRE-11] counter readers take a string literal', () => {
  it('[OAR-FIRE-11] fire_count_of(s) with a non-literal argument is rejected', () => {
    const e = expectReject('fire_count_of(s) > 1', 'OAR-FIRE-11', 'fire_count_of', 14);
    expect(e.message).toContain('string literal');
    expectReject('breaker_count_of(anchor) >= 1', 'OAR-FIRE-11', 'breaker_count_of', 17);
    expectReject('fire_count_of("a" + "b") > 0', 'OAR-FIRE-11', 'fire_count_of', 14);
    expectReject('fire_count_of(1) > 0', 'OAR-FIRE-11', 'fire_count_of', 14);
    expectReject('fire_count_of(b ? "x" : "y") > 0', 'OAR-FIRE-11', 'fire_count_of', 14);
  });

  it('[OAR-FIRE-11] fire_count_of("X") is accepted and exposes target "X" on the typed call node', () => {
    const t = typed('fire_count_of("X") > 1');
    expect(t).toMatchObject({ k: 'cmp', left: { k: 'call', ty: 'int', target: 'X', sym: { name: 'fire_count_of' } } });
    expect(typed("breaker_count_of('acme/r1') >= 2")).toMatchObject({ left: { k: 'call', target: 'acme/r1', sym: { name: 'breaker_count_of' } } });
    // parentheses do not survive parsing, so the argument is still the literal
    expect(typed('fire_count_of(("X")) > 1')).toMatchObject({ left: { target: 'X' } });
  });

  it('[OAR-FIRE-11] other observation functions carry no target', () => {
    const t = typed('tool_arg_string("x")');
    expect(t.k).toBe('call');
    expect('target' in t).toBe(false);
  });
});
