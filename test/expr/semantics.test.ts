/**
 * Run-time meaning of the condition language (Appendix A.2, A.3) and of the values a host hands in
 * ([OAR-FACT-11], [OAR-FACT-23], [OAR-FACT-25], [OAR-FACT-26]). Every evaluation runs on BOTH back
 * ends — the interpreter and the compiled closure — through `run`/`value`/`raises`, which throw when
 * the two disagree; every raise is asserted by its exact code.
 */
import { describe, expect, it } from 'vitest';
import { checkConditionSource, interpret, loadCondition } from '../../compiler/expr/index.js';
import { ObjectFactReader, type FactReader } from '../../runtime/facts.js';
import { Raise } from '../../runtime/raise.js';
import { symbolTable, type FactType, type SymbolTable } from '../../runtime/types.js';
import { SYMBOLS, raises, run, value } from './env.js';

// --- helpers -------------------------------------------------------------------------------------

type Outcome = { value: unknown } | { raise: string };

/** Evaluate on both back ends with a reader built per back end; returns both outcomes. */
function both(src: string, makeReader: () => FactReader, symbols: SymbolTable = SYMBOLS): { interpreted: Outcome; compiled: Outcome } {
  const c = checkConditionSource(src, symbols, { requireBool: false });
  if (!c.ok) throw new Error(`${src}: ${JSON.stringify(c.errors)}`);
  const i = interpret(c.condition.typed, makeReader());
  const interpreted: Outcome = i.ok ? { value: i.value } : { raise: i.raise.code };
  let compiled: Outcome;
  try {
    compiled = { value: loadCondition(c.condition.typed)(makeReader()) };
  } catch (e) {
    if (!(e instanceof Raise)) throw e;
    compiled = { raise: e.code };
  }
  return { interpreted, compiled };
}

/**
 * A reader that records every fact read and function call by name, and throws a non-Raise error
 * for a poisoned name — so a test fails loudly if a guarded operand is ever evaluated.
 */
class SpyReader implements FactReader {
  readonly reads: string[] = [];
  private readonly inner: ObjectFactReader;

  constructor(
    private readonly symbols: SymbolTable,
    facts: Record<string, unknown>,
    private readonly poisoned: ReadonlySet<string> = new Set(),
  ) {
    this.inner = new ObjectFactReader(symbols, facts);
  }

  private touch(slot: number): void {
    const name = (this.symbols.symbols[slot] as { name: string }).name;
    this.reads.push(name);
    if (this.poisoned.has(name)) throw new Error(`guarded ${name} was evaluated`);
  }

  fact(slot: number): unknown {
    this.touch(slot);
    return this.inner.fact(slot);
  }

  call(slot: number, arg: unknown): unknown {
    this.touch(slot);
    return this.inner.call(slot, arg);
  }
}

/** Both back ends with spies; returns the outcomes and what each read. */
function spied(src: string, facts: Record<string, unknown>, poisoned: string[] = []) {
  const readers: SpyReader[] = [];
  const r = both(src, () => {
    const s = new SpyReader(SYMBOLS, facts, new Set(poisoned));
    readers.push(s);
    return s;
  });
  return { ...r, interpreterReads: readers[0]?.reads, compiledReads: readers[1]?.reads };
}

const host = { kind: 'host' } as const;
const fact = (name: string, type: FactType) => ({ kind: 'fact', name, type, tier: host }) as const;

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
/** The greatest finite double, written as a literal of the grammar (no exponent). */
const MAX_DOUBLE = BigInt(Number.MAX_VALUE).toString() + '.0';

// --- [OAR-EXPR-5] short-circuit ------------------------------------------------------------------

describe('[OAR-EXPR-5] && and || short-circuit', () => {
  it('[OAR-EXPR-5] false && (raising operand) is false', () => {
    expect(value('false && 1 / 0 == 1')).toBe(false);
    expect(value('b && ls[5] == "x"', { b: false })).toBe(false);
  });

  it('[OAR-EXPR-5] true || (raising operand) is true', () => {
    expect(value('true || ms["nope"] == ""')).toBe(true);
    expect(value('b || 9223372036854775807 + 1 > 0', { b: true })).toBe(true);
  });

  it('[OAR-EXPR-5] the right operand is evaluated when the left does not decide', () => {
    expect(raises('true && 1 / 0 == 1')).toBe('division_by_zero');
    expect(raises('false || ms["nope"] == ""')).toBe('absent_key');
  });

  it('[OAR-EXPR-5] [OAR-FACT-11] a fact behind a deciding guard is never read, on either back end', () => {
    const r = spied('b && i > 0', { b: false, i: 1 }, ['i']);
    expect(r).toMatchObject({ interpreted: { value: false }, compiled: { value: false } });
    expect(r.interpreterReads).toEqual(['b']);
    expect(r.compiledReads).toEqual(['b']);

    const o = spied('b || ls[0] == "x"', { b: true }, ['ls']);
    expect(o).toMatchObject({ interpreted: { value: true }, compiled: { value: true } });
    expect(o.interpreterReads).toEqual(['b']);
    expect(o.compiledReads).toEqual(['b']);
  });

  it('[OAR-EXPR-5] when the guard does not decide, the guarded fact is read exactly once', () => {
    const r = spied('b && i > 0', { b: true, i: 1 });
    expect(r).toMatchObject({ interpreted: { value: true }, compiled: { value: true } });
    expect(r.interpreterReads).toEqual(['b', 'i']);
    expect(r.compiledReads).toEqual(['b', 'i']);
  });

  it('[OAR-EXPR-5] [OAR-EXPR-19] the presence guard keeps the observation function from being called', () => {
    const src = '"path" in tool_args && tool_arg_string("path") == "/etc/passwd"';
    const absent = spied(src, { tool_args: {} }, ['tool_arg_string']);
    expect(absent).toMatchObject({ interpreted: { value: false }, compiled: { value: false } });
    expect(absent.compiledReads).toEqual(['tool_args']);
    const present = spied(src, { tool_args: { path: '/etc/passwd' }, tool_arg_string: (k: unknown) => (k === 'path' ? '/etc/passwd' : '') });
    expect(present).toMatchObject({ interpreted: { value: true }, compiled: { value: true } });
    expect(present.compiledReads).toEqual(['tool_args', 'tool_arg_string']);
  });

  it('[OAR-EXPR-5] [OAR-FACT-26] a wrong-typed fact behind a deciding guard does not fail the condition', () => {
    expect(value('false && i == 1', { i: 'not an int' })).toBe(false);
    expect(value('b && i == 1', { b: false, i: 'not an int' })).toBe(false);
    expect(raises('b && i == 1', { b: true, i: 'not an int' })).toBe('wrong_type');
  });

  it('[OAR-FACT-11] the ternary evaluates only the branch it selects', () => {
    expect(value('b ? 1 / 0 : 2', { b: false })).toBe(2);
    expect(value('b ? 2 : size(ls[9])', { b: true })).toBe(2);
    const r = spied('b ? i : j', { b: true, i: 1 }, ['j']);
    expect(r).toMatchObject({ interpreted: { value: 1 }, compiled: { value: 1 } });
    expect(r.compiledReads).toEqual(['b', 'i']);
  });
});

// --- [OAR-EXPR-21] [OAR-EXPR-15] integer arithmetic ----------------------------------------------

describe('[OAR-EXPR-21] integer division truncates toward zero', () => {
  it.each([
    ['-7 / 2', -3], ['-7 % 2', -1], ['7 % -2', 1], ['7 / -2', -3], ['-7 / -2', 3], ['-7 % -2', -1],
    ['7 / 2', 3], ['7 % 2', 1], ['0 / -5', 0], ['-4 % 2', 0],
  ])('[OAR-EXPR-21] %s is %i', (src, expected) => {
    expect(value(src)).toBe(expected);
  });

  it('[OAR-EXPR-21] the same holds for fact operands', () => {
    expect(value('i / j', { i: -7, j: 2 })).toBe(-3);
    expect(value('i % j', { i: -7, j: 2 })).toBe(-1);
    expect(value('i % j', { i: 7, j: -2 })).toBe(1);
  });

  it('[OAR-EXPR-21] division is exact for large operands', () => {
    expect(value('9007199254740991 / 2 == 4503599627370495')).toBe(true);
    expect(value('9007199254740991 / 2')).toBe(4503599627370495);
    expect(value('-9007199254740991 / 2')).toBe(-4503599627370495);
    expect(value('9007199254740991 % 2')).toBe(1);
    expect(value('9223372036854775807 / 3')).toBe(3074457345618258602n);
    expect(value('9223372036854775807 % 10')).toBe(7);
    expect(value('-9223372036854775808 / 2')).toBe(-4611686018427387904n);
    expect(value('i / j', { i: 2n ** 62n + 1n, j: 3 })).toBe((2n ** 62n + 1n) / 3n);
    expect(value('i / j', { i: 9007199254740991, j: 9007199254740990 })).toBe(1);
  });
});

describe('[OAR-EXPR-15] integer arithmetic is exact and raises on overflow', () => {
  it('[OAR-EXPR-15] results beyond 2^53 are exact, not rounded', () => {
    expect(value('9007199254740991 + 2')).toBe(9007199254740993n);
    expect(value('9007199254740991 + 2 == 9007199254740993')).toBe(true);
    expect(value('9007199254740993 - 9007199254740992')).toBe(1);
    expect(value('94906267 * 94906267')).toBe(9007199515875289n);
    expect(value('3037000499 * 3037000499')).toBe(9223372030926249001n);
    expect(value('9223372036854775807 + -9223372036854775808')).toBe(-1);
    expect(value('-9223372036854775807 - 1 == -9223372036854775808')).toBe(true);
    expect(value('i + 1', { i: INT64_MAX - 1n })).toBe(INT64_MAX);
  });

  it.each([
    ['9223372036854775807 + 1'],
    ['-9223372036854775808 - 1'],
    ['9223372036854775807 - -1'],
    ['4611686018427387904 * 2'],
    ['3037000500 * 3037000500'],
    ['-9223372036854775808 * -1'],
    ['-(-9223372036854775808)'],
    ['-9223372036854775808 / -1'],
    ['-3037000500 * 3037000500'],
  ])('[OAR-EXPR-15] %s raises overflow', (src) => {
    expect(raises(src)).toBe('overflow');
  });

  it('[OAR-EXPR-15] overflow from fact values, including unary minus of the least int', () => {
    expect(raises('i + 1 > 0', { i: INT64_MAX })).toBe('overflow');
    expect(raises('-i > 0', { i: INT64_MIN })).toBe('overflow');
    expect(raises('i * j > 0', { i: 2 ** 32, j: 2 ** 31 })).toBe('overflow');
    expect(raises('i - j > 0', { i: INT64_MIN, j: 1 })).toBe('overflow');
    expect(raises('i / j > 0', { i: INT64_MIN, j: -1 })).toBe('overflow');
  });

  it('[OAR-EXPR-15] -9223372036854775808 % -1 is 0, which fits', () => {
    expect(value('-9223372036854775808 % -1')).toBe(0);
  });

  it('[OAR-EXPR-15] int results are canonical: no -0, number when safe, bigint beyond', () => {
    for (const src of ['0 * -1', '-4 % 2', '0 / -5', '-0']) {
      const r = both(src, () => new ObjectFactReader(SYMBOLS, {}));
      expect(Object.is((r.interpreted as { value: unknown }).value, 0)).toBe(true);
      expect(Object.is((r.compiled as { value: unknown }).value, 0)).toBe(true);
    }
    expect(value('9007199254740991 + 1 - 1')).toBe(9007199254740991);
    expect(typeof value('9007199254740991 + 1')).toBe('bigint');
  });
});

// --- [OAR-EXPR-14] division by zero and non-finite doubles -----------------------------------------

describe('[OAR-EXPR-14] division by zero raises; no arithmetic produces an infinity or NaN', () => {
  it.each([
    ['1 / 0'], ['1 % 0'], ['0 / 0'], ['-9223372036854775808 / 0'], ['-9223372036854775808 % 0'],
    ['1.0 / 0.0'], ['0.0 / 0.0'], ['1.0 / -0.0'], ['-1.0 / 0.0'],
  ])('[OAR-EXPR-14] %s raises division_by_zero', (src) => {
    expect(raises(src)).toBe('division_by_zero');
  });

  it('[OAR-EXPR-14] division by a zero-valued fact raises for int and double alike', () => {
    expect(raises('i / j > 0', { i: 1 })).toBe('division_by_zero');
    expect(raises('i % j > 0', { i: 1 })).toBe('division_by_zero');
    expect(raises('d / e > 0.0', { d: 1.5 })).toBe('division_by_zero');
  });

  it.each([
    ['d * d > 0.0', { d: 1e200 }],
    ['d + d > 0.0', { d: Number.MAX_VALUE }],
    ['d - e < 0.0', { d: -Number.MAX_VALUE, e: Number.MAX_VALUE }],
    ['d / e > 0.0', { d: 1e300, e: 1e-300 }],
    [`${MAX_DOUBLE} * 2.0 > 0.0`, {}],
    [`${MAX_DOUBLE} + ${MAX_DOUBLE} > 0.0`, {}],
    [`-${MAX_DOUBLE} - ${MAX_DOUBLE} < 0.0`, {}],
  ])('[OAR-EXPR-14] %s raises non_finite', (src, facts) => {
    expect(raises(src, facts)).toBe('non_finite');
  });

  it('[OAR-EXPR-14] finite results, including underflow to zero, are ordinary values', () => {
    expect(value('d * e == 0.0', { d: 1e-300, e: 1e-300 })).toBe(true);
    expect(value(`${MAX_DOUBLE} * 1.0 > 0.0`)).toBe(true);
    expect(value('7.0 / 2.0')).toBe(3.5);
    expect(value('0.1 + 0.2 == 0.30000000000000004')).toBe(true);
    expect(value('-d', { d: 1.5 })).toBe(-1.5);
  });
});

// --- [OAR-EXPR-10] [OAR-EXPR-11] comparisons --------------------------------------------------------

describe('[OAR-EXPR-10] [OAR-EXPR-11] mixed comparisons promote the int to double', () => {
  it('[OAR-EXPR-11] int and double compare by value', () => {
    expect(value('1 == 1.0')).toBe(true);
    expect(value('1 != 1.5')).toBe(true);
    expect(value('i == d', { i: 3, d: 3 })).toBe(true);
    expect(value('d != i', { i: 3, d: 3.5 })).toBe(true);
  });

  it('[OAR-EXPR-10] ordering across int and double', () => {
    expect(value('1 < 1.5')).toBe(true);
    expect(value('2.5 > 2')).toBe(true);
    expect(value('-1 >= -1.0')).toBe(true);
    expect(value('i < d', { i: -3, d: -2.5 })).toBe(true);
  });

  it('[OAR-EXPR-11] the promotion rounds: 9007199254740993 promoted to double is 9007199254740992.0', () => {
    // "the int is promoted to double for the comparison": 2^53 + 1 has no double, it rounds to 2^53.
    expect(value('9007199254740993 == 9007199254740992.0')).toBe(true);
    expect(value('9007199254740993 != 9007199254740992.0')).toBe(false);
    expect(value('9007199254740993 > 9007199254740992.0')).toBe(false);
    expect(value('9223372036854775807 == 9223372036854775808.0')).toBe(true);
    expect(value('9223372036854775807 < 9223372036854775808.0')).toBe(false);
    expect(value('i == d', { i: 2n ** 53n + 1n, d: 2 ** 53 })).toBe(true);
    // two ints compare exactly
    expect(value('9007199254740993 == 9007199254740992')).toBe(false);
    expect(value('9007199254740993 > 9007199254740992')).toBe(true);
    expect(value('i > j', { i: 2n ** 53n + 1n, j: 2 ** 53 })).toBe(true);
  });

  it('[OAR-EXPR-11] equality of bools, strings and negative zero', () => {
    expect(value('b == c', { b: true, c: true })).toBe(true);
    expect(value('b != c', { b: true })).toBe(true);
    expect(value('s == t', { s: '😀', t: '\uD83D\uDE00' })).toBe(true);
    expect(value('-0.0 == 0.0')).toBe(true);
    expect(value('-0.0 < 0.0')).toBe(false);
  });

  it('[OAR-EXPR-10] strings order by code point, not UTF-16 unit', () => {
    // JavaScript's own `<` says the opposite for this pair:
    expect('\uFF5E' < '😀').toBe(false);
    expect(value('s < t', { s: '\uFF5E', t: '😀' })).toBe(true);
    expect(value('s > t', { s: '\uFF5E', t: '😀' })).toBe(false);
    expect(value('"\\uFF5E" < "😀"')).toBe(true);
    expect(value('"\\uFFFF" < "😀"')).toBe(true);
    expect(value('"a\\uFF5E" < "a😀"')).toBe(true);
    expect(value('"😀" < "😁"')).toBe(true);
    expect(value('"\\uD83D" < "😀"')).toBe(true);
    expect(value('"\\uDE00" < "😀"')).toBe(true);
  });

  it.each([
    ['"a" < "b"', true], ['"a" < "aa"', true], ['"" < "a"', true], ['"B" < "a"', true], ['"é" > "z"', true],
    ['"abc" <= "abc"', true], ['"abc" >= "abd"', false], ['"Z" > "a"', false],
  ])('[OAR-EXPR-10] %s is %s', (src, expected) => {
    expect(value(src)).toBe(expected);
  });
});

// --- [OAR-EXPR-16] [OAR-EXPR-22] built-ins ----------------------------------------------------------

describe('[OAR-EXPR-16] size', () => {
  it.each([
    ['size("😀")', {}, 1],
    ['size(s)', { s: 'a😀b' }, 3],
    ['size(s)', { s: 'e\u0301' }, 2],
    ['size(s)', { s: '\u00e9' }, 1],
    ['size("")', {}, 0],
    ['size(s)', { s: '\uD83D' }, 1],
    ['size(ls)', { ls: ['a', 'b'] }, 2],
    ['size(["a", "b", "c"])', {}, 3],
    ['size(lm)', { lm: [{}, {}, {}] }, 3],
    ['size(m)', { m: { a: 1, b: 'x' } }, 2],
    ['size(m)', { m: new Map<string, unknown>([['a', 1]]) }, 1],
    ['size(ms)', { ms: { a: 'x', b: 'y', c: 'z' } }, 3],
    ['size(lm[0])', { lm: [{ a: 1, b: 2 }] }, 2],
    ['size(tool_args)', { tool_args: { path: '/x' } }, 1],
  ])('[OAR-EXPR-16] %s with %o is %i', (src, facts, n) => {
    expect(value(src, facts)).toBe(n);
  });
});

describe('[OAR-EXPR-22] starts_with, ends_with, contains compare by code point with no folding', () => {
  it.each([
    ['starts_with("/etc/passwd", "/etc/")', true],
    ['ends_with("report.pdf", ".pdf")', true],
    ['contains("rm -rf /", "-rf")', true],
    ['starts_with("Hello", "hello")', false],
    ['ends_with("file.TXT", ".txt")', false],
    ['contains("straße", "SS")', false],
    ['contains("STRASSE", "ß")', false],
    ['contains("İ", "i")', false],
    ['starts_with("abc", "abcd")', false],
    ['ends_with("abc", "xabc")', false],
    ['contains("abc", "ac")', false],
  ])('[OAR-EXPR-22] %s is %s', (src, expected) => {
    expect(value(src)).toBe(expected);
  });

  it('[OAR-EXPR-22] an empty prefix, suffix or substring matches every string', () => {
    expect(value('starts_with(s, "")', {})).toBe(true);
    expect(value('starts_with(s, "")', { s: 'x' })).toBe(true);
    expect(value('ends_with("abc", "")')).toBe(true);
    expect(value('ends_with("", "")')).toBe(true);
    expect(value('contains("", "")')).toBe(true);
    expect(value('contains("😀", "")')).toBe(true);
    expect(value('contains("", "a")')).toBe(false);
  });

  it('[OAR-EXPR-22] half of a surrogate pair is not a code point of the string', () => {
    // JavaScript's own string methods say true for every one of these:
    expect('😀'.startsWith('\uD83D')).toBe(true);
    expect(value('starts_with("😀", "\\uD83D")')).toBe(false);
    expect(value('starts_with(s, t)', { s: '😀', t: '\uD83D' })).toBe(false);
    expect(value('ends_with("😀", "\\uDE00")')).toBe(false);
    expect(value('contains("a😀b", "\\uDE00")')).toBe(false);
    expect(value('contains("a😀b", "\\uD83D")')).toBe(false);
    expect(value('contains("a😀b", "😀b")')).toBe(true);
    expect(value('starts_with("😀x", "😀")')).toBe(true);
    expect(value('ends_with("x😀", "😀")')).toBe(true);
    // a lone surrogate that really is a code point of the string does match
    expect(value('contains(s, "\\uD83D")', { s: '😀\uD83D' })).toBe(true);
    expect(value('ends_with(s, "\\uD83D")', { s: '😀\uD83D' })).toBe(true);
    expect(value('starts_with(s, "\\uDE00")', { s: '\uDE00😀' })).toBe(true);
  });

  it('[OAR-EXPR-22] no normalisation: precomposed and decomposed forms differ', () => {
    expect(value('starts_with(s, "e")', { s: 'e\u0301' })).toBe(true);
    expect(value('starts_with(s, "e")', { s: '\u00e9' })).toBe(false);
    expect(value('contains(s, t)', { s: '\u00e9', t: 'e\u0301' })).toBe(false);
    expect(value('s == t', { s: '\u00e9', t: 'e\u0301' })).toBe(false);
  });
});

// --- [OAR-EXPR-12] in ------------------------------------------------------------------------------

describe('[OAR-EXPR-12] in tests list membership and own map keys', () => {
  it('[OAR-EXPR-12] on a list', () => {
    expect(value('"a" in ls', { ls: ['b', 'a'] })).toBe(true);
    expect(value('"c" in ls', { ls: ['b', 'a'] })).toBe(false);
    expect(value('s in ["x", "y"]', { s: 'y' })).toBe(true);
    expect(value('s in ["x", "y"]', { s: 'Y' })).toBe(false);
    expect(value('s in [t, "y"]', { s: 'q', t: 'q' })).toBe(true);
    expect(value('"length" in ls', { ls: [] })).toBe(false);
    expect(value('"0" in ls', { ls: ['a'] })).toBe(false);
  });

  it('[OAR-EXPR-12] on a map: key presence by own property only', () => {
    expect(value('"k" in m', { m: { k: 0 } })).toBe(true);
    expect(value('"k" in ms', { ms: { k: '' } })).toBe(true);
    expect(value('"k" in m', { m: new Map([['k', 1]]) })).toBe(true);
    for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(value(`"${key}" in m`, { m: {} })).toBe(false);
      expect(value(`"${key}" in ms`, { ms: {} })).toBe(false);
      expect(value(`"${key}" in tool_args`, {})).toBe(false);
    }
    expect(value('"inherited" in m', { m: Object.create({ inherited: 1 }) })).toBe(false);
    expect(value('"__proto__" in m', { m: JSON.parse('{"__proto__": 1}') })).toBe(true);
    expect(value('"k" in m', { m: Object.assign(Object.create(null), { k: 1 }) })).toBe(true);
  });

  it('[OAR-EXPR-12] [OAR-FACT-26] a non-enumerable own property is not a member, for in, size() and indexing alike', () => {
    const hidden = () => Object.defineProperty({ k: 'v' }, 'hidden', { value: 7, enumerable: false });
    expect(value('"hidden" in m', { m: hidden() })).toBe(false);
    expect(value('size(m)', { m: hidden() })).toBe(1);
    expect(value('"k" in m', { m: hidden() })).toBe(true);
    expect(raises('ms["hidden"] == ""', { ms: hidden() })).toBe('absent_key');
  });
});

// --- [OAR-EXPR-13] [OAR-EXPR-21] indexing ---------------------------------------------------------

describe('[OAR-EXPR-13] [OAR-EXPR-21] indexing raises on an absent key or an out-of-range index', () => {
  it('[OAR-EXPR-13] present members are returned', () => {
    expect(value('ms["k"]', { ms: { k: 'v' } })).toBe('v');
    expect(value('ms[s]', { ms: new Map([['k', 'v']]), s: 'k' })).toBe('v');
    expect(value('ms["__proto__"]', { ms: JSON.parse('{"__proto__": "x"}') })).toBe('x');
    expect(value('ls[0]', { ls: ['a', 'b'] })).toBe('a');
    expect(value('ls[i]', { ls: ['a', 'b'], i: 1 })).toBe('b');
    expect(value('["a", "b"][1]')).toBe('b');
    expect(value('lm[1]', { lm: [{}, { k: 'v' }] })).toEqual({ k: 'v' });
    expect(value('"k" in lm[1]', { lm: [{}, { k: 'v' }] })).toBe(true);
  });

  it.each([
    ['ms["nope"]', { ms: { k: 'v' } }],
    ['ms["k"]', {}],
    ['ms["constructor"]', { ms: {} }],
    ['ms["toString"]', { ms: {} }],
    ['ms["__proto__"]', { ms: {} }],
    ['ms["k"]', { ms: new Map() }],
  ])('[OAR-EXPR-13] %s with %o raises absent_key', (src, facts) => {
    expect(raises(src, facts)).toBe('absent_key');
  });

  it.each([
    ['ls[0]', {}],
    ['ls[1]', { ls: ['a'] }],
    ['ls[-1]', { ls: ['a'] }],
    ['ls[i]', { ls: ['a'], i: -1 }],
    ['ls[9223372036854775807]', { ls: ['a'] }],
    ['ls[-9223372036854775808]', { ls: ['a'] }],
    ['ls[i]', { ls: ['a'], i: 2n ** 60n }],
    ['["a"][1]', {}],
    ['lm[0]', { lm: [] }],
    ['size(lm[5]) > 0', { lm: [{}] }],
  ])('[OAR-EXPR-21] %s with %o raises index_out_of_range', (src, facts) => {
    expect(raises(src, facts)).toBe('index_out_of_range');
  });
});

// --- [OAR-FACT-25] absent facts -------------------------------------------------------------------

describe('[OAR-FACT-25] an absent fact reads as the zero value of its type', () => {
  it.each([
    ['b == false'], ['i == 0'], ['d == 0.0'], ['s == ""'], ['size(ls) == 0'], ['size(lm) == 0'],
    ['size(m) == 0'], ['size(ms) == 0'], ['acme.tier == ""'], ['tool_arg_string("x") == ""'],
    ['tool_arg_int("x") == 0'], ['acme.score("x") == 0.0'], ['fire_count_of("X") == 0'],
    ['breaker_count_of("X") == 0'], ['anchor == ""'], ['size(arg_validation_errors) == 0'],
  ])('[OAR-FACT-25] %s holds with no facts', (src) => {
    expect(value(src, {})).toBe(true);
  });

  it('[OAR-FACT-25] an explicitly undefined value is absence, not a failure', () => {
    expect(value('i == 0 && s == "" && size(ls) == 0', { i: undefined, s: undefined, ls: undefined })).toBe(true);
  });
});

// --- [OAR-FACT-26] [OAR-FACT-23] produced values are checked ----------------------------------------

describe('[OAR-FACT-26] a wrong-typed produced value raises wrong_type, never coerces', () => {
  it.each([
    ['i == 1', { i: '1' }],
    ['i == 1', { i: 1.5 }],
    ['i == 0', { i: Number.NaN }],
    ['i > 0', { i: Number.POSITIVE_INFINITY }],
    ['i == 1', { i: true }],
    ['i == 0', { i: null }],
    ['i > 0', { i: 2 ** 63 }],
    ['i > 0', { i: 2n ** 63n }],
    ['i < 0', { i: -(2n ** 63n) - 1n }],
    ['i == 0', { i: {} }],
    ['d == 1.5', { d: '1.5' }],
    ['d == 1.0', { d: true }],
    ['b', { b: 1 }],
    ['b', { b: 'true' }],
    ['b', { b: new Boolean(true) }],
    ['s == "a"', { s: 1 }],
    ['s == "a"', { s: ['a'] }],
    ['s == "a"', { s: new String('a') }],
    ['size(ls) == 2', { ls: ['a', 1] }],
    ['size(ls) == 1', { ls: 'a' }],
    ['size(ls) == 1', { ls: [null] }],
    ['size(ls) == 1', { ls: { 0: 'a', length: 1 } }],
    ['size(lm) == 1', { lm: [1] }],
    ['size(lm) == 1', { lm: [[]] }],
    ['size(lm) == 1', { lm: [null] }],
    ['size(m) == 0', { m: [] }],
    ['size(m) == 0', { m: 'x' }],
    ['size(m) == 0', { m: null }],
    ['size(ms) == 1', { ms: { a: 1 } }],
    ['size(ms) == 1', { ms: new Map([[1, 'a']]) }],
    ['"a" in ms', { ms: { a: null } }],
  ])('[OAR-FACT-26] %s with %o raises wrong_type', (src, facts) => {
    expect(raises(src, facts)).toBe('wrong_type');
  });

  it.each([
    ['d > 0.0', { d: Number.NaN }],
    ['d > 0.0', { d: Number.POSITIVE_INFINITY }],
    ['d < 0.0', { d: Number.NEGATIVE_INFINITY }],
  ])('[OAR-FACT-23] [OAR-FACT-26] a non-finite double %s with %o is a provider failure', (src, facts) => {
    expect(raises(src, facts)).toBe('provider_failure');
  });

  it('[OAR-FACT-23] a double fact that is not finite as a double (a bigint beyond binary64) raises', () => {
    // 10^400 has no finite binary64 value; turning it into Infinity would let a non-finite double
    // reach the condition, which [OAR-FACT-23] and [OAR-EXPR-14] forbid.
    expect(run('d > 0.0', { d: 10n ** 400n })).toEqual({ raise: 'wrong_type' });
    expect(run('d < 0.0', { d: -(10n ** 400n) })).toEqual({ raise: 'wrong_type' });
    expect(value('d == 1024.0', { d: 1024n })).toBe(true);
  });

  it('[OAR-FACT-26] a list with holes is not a list<string> / list<map>: it raises, never crashes', () => {
    // eslint-disable-next-line no-sparse-arrays
    const sparse = [, 'a'];
    // eslint-disable-next-line no-sparse-arrays
    const sparseMaps = [, {}];
    expect(() => run('size(ls[0]) == 0', { ls: sparse })).not.toThrow();
    expect(run('size(ls[0]) == 0', { ls: sparse })).toEqual({ raise: 'wrong_type' });
    expect(run('size(lm[0]) == 0', { lm: sparseMaps })).toEqual({ raise: 'wrong_type' });
  });

  it('[OAR-FACT-26] int facts given as bigint or as non-safe integer numbers are exact', () => {
    expect(value('i == 9007199254740993', { i: 9007199254740993n })).toBe(true);
    expect(value('i == 1152921504606846976', { i: 2 ** 60 })).toBe(true);
    expect(value('i + 1 == 1152921504606846977', { i: 2 ** 60 })).toBe(true);
    expect(value('i == -9223372036854775808', { i: -(2 ** 63) })).toBe(true);
    expect(value('i == 9223372036854775807', { i: INT64_MAX })).toBe(true);
    expect(value('i == 5', { i: 5n })).toBe(true);
    expect(value('i', { i: 5n })).toBe(5);
    expect(value('i == 0', { i: -0 })).toBe(true);
  });

  it('[OAR-FACT-26] a double fact may be given as an integral number', () => {
    expect(value('d == 5.0', { d: 5 })).toBe(true);
    expect(value('d / 2.0', { d: 5 })).toBe(2.5);
  });
});

describe('[OAR-FACT-26] observation function results are checked', () => {
  it('[OAR-FACT-26] the function receives the argument and its result is used', () => {
    const tool_arg_string = (k: unknown) => (k === 'path' ? '/etc/passwd' : '');
    expect(value('tool_arg_string("path") == "/etc/passwd"', { tool_arg_string })).toBe(true);
    expect(value('tool_arg_string("other") == ""', { tool_arg_string })).toBe(true);
    expect(value('acme.score(s) > 0.5', { s: 'k', 'acme.score': (k: unknown) => (k === 'k' ? 0.9 : 0) })).toBe(true);
  });

  it.each([
    ['tool_arg_int("n") == 3', { tool_arg_int: () => '3' }, 'wrong_type'],
    ['tool_arg_int("n") == 1', { tool_arg_int: () => 1.5 }, 'wrong_type'],
    ['tool_arg_int("n") == 0', { tool_arg_int: () => null }, 'wrong_type'],
    ['tool_arg_string("n") == ""', { tool_arg_string: () => 5 }, 'wrong_type'],
    ['acme.score("x") > 0.5', { 'acme.score': () => '0.9' }, 'wrong_type'],
    ['acme.score("x") > 0.5', { 'acme.score': () => Number.NaN }, 'provider_failure'],
    ['acme.score("x") > 0.5', { 'acme.score': () => Number.POSITIVE_INFINITY }, 'provider_failure'],
    ['tool_arg_int("n") == 0', { tool_arg_int: () => { throw new Error('down'); } }, 'provider_failure'],
  ])('[OAR-FACT-26] %s raises %s', (src, facts, code) => {
    expect(raises(src, facts as Record<string, unknown>)).toBe(code);
  });

  it('[OAR-FACT-26] an int result beyond 2^53 is exact', () => {
    expect(value('tool_arg_int("n") == 1152921504606846977', { tool_arg_int: () => 2n ** 60n + 1n })).toBe(true);
    expect(value('tool_arg_int("n") + 1 == 1152921504606846977', { tool_arg_int: () => 2 ** 60 })).toBe(true);
  });

  it('[OAR-FACT-26] a fixed value under a function name is its result for every argument', () => {
    const facts = { tool_arg_string: 'x' };
    expect(value('tool_arg_string("a") == "x" && tool_arg_string("b") == "x"', facts)).toBe(true);
    expect(value('tool_arg_int("a") + tool_arg_int("zz")', { tool_arg_int: 21 })).toBe(42);
    expect(raises('tool_arg_int("a") == 1', { tool_arg_int: 'one' })).toBe('wrong_type');
  });

  it('[OAR-FACT-26] an int argument reaches the function in canonical form', () => {
    const nth = { kind: 'function', name: 'nth', param: 'int', result: 'string', tier: { kind: 'host' } } as const;
    const table = symbolTable([fact('i', 'int'), nth]);
    const seen: unknown[] = [];
    const impl = (x: unknown) => {
      seen.push(x);
      return typeof x;
    };
    const r = both('nth(i) + nth(i - 9007199254740993)', () => new ObjectFactReader(table, { i: 9007199254740993n, nth: impl }), table);
    expect(r).toEqual({ interpreted: { value: 'bigintnumber' }, compiled: { value: 'bigintnumber' } });
    expect(seen).toEqual([9007199254740993n, 0, 9007199254740993n, 0]);
  });
});

// --- [OAR-EXPR-18] termination -------------------------------------------------------------------

describe('[OAR-EXPR-18] evaluation terminates', () => {
  it('[OAR-EXPR-18] a condition at the default node limit evaluates in bounded time on both back ends', () => {
    // 1,024 nodes: nested ternaries over string tests and arithmetic, every branch reachable.
    const unit = '(starts_with(s, "a") ? i + 1 : i - 1) > j'; // 12 nodes
    let src = unit;
    while (checkConditionSource(`${src} || ${unit}`, SYMBOLS, { maxNodes: 1024 }).ok) src = `${src} || ${unit}`;
    const c = checkConditionSource(src, SYMBOLS);
    expect(c.ok).toBe(true);
    const t = performance.now();
    for (let k = 0; k < 100; k++) expect(value(src, { s: 'abc', i: k, j: 1_000 })).toBe(false);
    expect(performance.now() - t).toBeLessThan(5_000);
  });

  it('[OAR-EXPR-18] there is no loop, recursion or user-defined function to call', () => {
    // The only calls are the four built-ins and declared observation functions; a name that
    // would be a user function is an unknown identifier.
    expect(run('f(i) == 1')).toMatchObject({ error: [{ clause: 'OAR-FACT-3', token: 'f', offset: 0 }] });
  });
});
