/**
 * Hostile input against the condition compiler (DESIGN: code generation rules 1 and 5).
 *
 * Rule text reaches generated code only as ESTree literals; fact names never reach it at all (a
 * fact is read by slot). So for every hostile string and every hostile identifier:
 * - the compiled closure returns exactly what the interpreter returns;
 * - the printed code, parsed back with acorn, names nothing but `f`, the helpers it declares, its
 *   `k<n>` constants, `Set` and the one-letter parameters of functions it declares itself (plus
 *   the fixed member names `fact`, `call`, `has`, `length`), and
 *   outside its string literals it is plain ASCII punctuation, words and digits — the hostile
 *   string is inside a literal, whole, and nowhere else;
 * - and the self-check rejects code that reaches for `eval`, `Function`, `globalThis`, `process`,
 *   `require`, `import()` or `this`.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parse as acornParse } from 'acorn';
import {
  checkConditionSource, interpret, loadCondition, printCondition, type TExpr,
} from '../compiler/expr/index.js';
import { generate } from 'astring';
import { verifyGenerated, CompilerBug, ProgramVerifier } from '../compiler/emit/verify.js';
import { compile, COMPILER_ID, loadPackTexts } from '../compiler/index.js';
import { BUNDLE_HELPERS } from '../runtime/helpers.js';
import { ObjectFactReader } from '../runtime/facts.js';
import { Raise } from '../runtime/raise.js';
import { symbolTable, type SymbolTable } from '../runtime/types.js';
import { encodeString } from './property/generators.js';
import { HOSTILE } from './support/hostile.js';

const host = { kind: 'host' } as const;

/** Facts named after JS prototype members, the emitter's own locals, and dangerous globals. */
const SYMBOLS: SymbolTable = symbolTable([
  { kind: 'fact', name: 's', type: 'string', tier: host },
  { kind: 'fact', name: 'm', type: 'map', tier: host },
  { kind: 'fact', name: 'ms', type: 'map<string,string>', tier: host },
  { kind: 'fact', name: 'ls', type: 'list<string>', tier: host },
  { kind: 'fact', name: 'constructor', type: 'string', tier: host },
  { kind: 'fact', name: '__proto__', type: 'map<string,string>', tier: host },
  { kind: 'fact', name: 'toString', type: 'string', tier: host },
  { kind: 'fact', name: 'hasOwnProperty', type: 'int', tier: host },
  { kind: 'fact', name: 'prototype', type: 'list<string>', tier: host },
  { kind: 'fact', name: 'valueOf', type: 'bool', tier: host },
  { kind: 'fact', name: 'f', type: 'string', tier: host },
  { kind: 'fact', name: 'k0', type: 'string', tier: host },
  { kind: 'fact', name: 'Set', type: 'list<string>', tier: host },
  { kind: 'fact', name: 'iadd', type: 'int', tier: host },
  { kind: 'fact', name: 'this', type: 'int', tier: host },
  { kind: 'fact', name: 'process', type: 'string', tier: host },
  { kind: 'fact', name: 'globalThis.x', type: 'string', tier: host },
  { kind: 'function', name: 'eval', param: 'string', result: 'bool', tier: host },
  { kind: 'function', name: 'require', param: 'string', result: 'string', tier: host },
]);


type Outcome = { value: unknown } | { raise: string };

function run(typed: TExpr, facts: Record<string, unknown>): { interpreted: Outcome; compiled: Outcome } {
  const r = interpret(typed, new ObjectFactReader(SYMBOLS, facts));
  const interpreted: Outcome = r.ok ? { value: r.value } : { raise: r.raise.code };
  const fn = loadCondition(typed);
  let compiled: Outcome;
  try {
    compiled = { value: fn(new ObjectFactReader(SYMBOLS, facts)) };
  } catch (e) {
    if (!(e instanceof Raise)) throw e;
    compiled = { raise: e.code };
  }
  return { interpreted, compiled };
}

function check(src: string): TExpr {
  const c = checkConditionSource(src, SYMBOLS, { requireBool: false });
  if (!c.ok) throw new Error(`${src}: ${JSON.stringify(c.errors)}`);
  return c.condition.typed;
}

/** Evaluate on both back ends; they must agree exactly. */
function agree(src: string, facts: Record<string, unknown> = {}): Outcome {
  const { interpreted, compiled } = run(check(src), facts);
  expect(compiled, src).toStrictEqual(interpreted);
  return interpreted;
}

interface AnyNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

function nodes(n: AnyNode, out: { node: AnyNode; parent: AnyNode | null; key: string | null }[] = [], parent: AnyNode | null = null, key: string | null = null) {
  out.push({ node: n, parent, key });
  for (const k of Object.keys(n)) {
    const v = n[k];
    const kids = Array.isArray(v) ? v : [v];
    for (const c of kids) if (c && typeof c === 'object' && typeof (c as AnyNode).type === 'string') nodes(c as AnyNode, out, n, k);
  }
  return out;
}

const MEMBER_NAMES = new Set(['fact', 'call', 'has', 'length']);

/** The printed code names only what it may, and carries rule text only inside string literals. */
function inspectCode(typed: TExpr): { code: string; strings: string[] } {
  const { code, helpers } = printCondition(typed);
  for (const h of helpers) expect(Object.keys(BUNDLE_HELPERS)).toContain(h);
  const ast = acornParse(code, { ecmaVersion: 2022, sourceType: 'script', allowReturnOutsideFunction: true }) as unknown as AnyNode;
  const all = nodes(ast);
  // The emitter's own locals: parameters of the functions it prints (`f`, and e.g. the `x` of a
  // hoisted membership test). Plain ASCII names, and never a global worth reaching for.
  const locals = all
    .filter(({ parent, key }) => parent?.type === 'FunctionExpression' && key === 'params')
    .map(({ node }) => node.name as string);
  for (const name of locals) expect(name, code).toMatch(/^[a-z]$/);
  const allowed = new Set<string>(['f', 'Set', ...helpers, ...locals]);
  const strings: string[] = [];
  const literalRanges: [number, number][] = [];
  for (const { node, parent, key } of all) {
    if (node.type === 'Identifier') {
      const name = node.name as string;
      const isProperty = parent?.type === 'MemberExpression' && key === 'property' && parent.computed === false;
      if (isProperty) expect(MEMBER_NAMES, `member .${name} in ${code}`).toContain(name);
      else expect(allowed.has(name) || /^k\d+$/.test(name), `identifier ${name} in ${code}`).toBe(true);
    }
    if (node.type === 'MemberExpression') expect(node.computed, `computed member access in ${code}`).toBe(false);
    if (node.type === 'Literal') {
      const v = node.value;
      expect(['string', 'number', 'boolean', 'bigint'], `literal in ${code}`).toContain(typeof v);
      if (typeof v === 'string') {
        strings.push(v);
        literalRanges.push([node.start, node.end]);
      }
    }
    expect(['TemplateLiteral', 'TaggedTemplateExpression', 'ThisExpression', 'ImportExpression'], code).not.toContain(node.type);
  }
  // Outside string literals: ASCII words, digits, whitespace and JS punctuation; no quotes,
  // backslashes, backticks or `$`, so nothing of a hostile string survives there.
  let outside = '';
  let at = 0;
  for (const [a, b] of literalRanges.sort((x, y) => x[0] - y[0])) {
    outside += code.slice(at, a) + ' ';
    at = b;
  }
  outside += code.slice(at);
  expect(outside, code).toMatch(/^[A-Za-z0-9_\s(){}[\],.;:?!=<>&|+\-*/%]*$/);
  return { code, strings };
}

describe('codegen safety: hostile string literals', () => {
  for (const h of HOSTILE) {
    const lit = encodeString(h, '"', 0);
    const lit2 = encodeString(h, "'", 0x9e3779b9);
    it(`keeps ${JSON.stringify(h)} inside a literal and evaluates it as the interpreter does`, () => {
      const conditions: [string, string][] = [
        [`s == ${lit}`, 'bool'],
        [`${lit2} == s`, 'bool'],
        [`${lit} in m`, 'bool'],
        [`${lit} in ms`, 'bool'],
        [`${lit} in [${lit2}, "x"]`, 'bool'],
        [`${lit} in ls`, 'bool'],
        [`ms[${lit}]`, 'string'],
        [`s + ${lit}`, 'string'],
        [`[${lit}, s]`, 'list<string>'],
        [`[s, ${lit}][1]`, 'string'],
        [`contains(s, ${lit}) || starts_with(${lit}, s) || ends_with(s, ${lit2})`, 'bool'],
        [`size(${lit}) == size(s) && ${lit} < s`, 'bool'],
        [`eval(${lit}) ? require(${lit2}) : constructor + ${lit}`, 'string'],
        [`__proto__[${lit}] == toString`, 'bool'],
      ];
      const own = (entries: [string, unknown][]) => JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`) as Record<string, unknown>;
      const environments: Record<string, unknown>[] = [
        {},
        { s: h, m: own([[h, 1]]), ms: own([[h, h]]), ls: [h] },
        { s: 'x', m: new Map([[h, null]]), ms: new Map([[h, 'v']]), ls: ['x', h], eval: () => true, require: (a: unknown) => a, constructor: h },
        JSON.parse(`{"__proto__": ${JSON.stringify(own([[h, h]]))}, "toString": ${JSON.stringify(h)}, "eval": false}`) as Record<string, unknown>,
      ];
      for (const [src, ty] of conditions) {
        const typed = check(src);
        expect(typed.ty, src).toBe(ty);
        const { strings } = inspectCode(typed);
        expect(strings, src).toContain(h);
        for (const facts of environments) agree(src, facts);
      }
      // Both quotings decode to the same value: the literal is the string, not its spelling.
      expect(agree(`${lit} == ${lit2}`)).toStrictEqual({ value: true });
      expect(agree(`s == ${lit}`, { s: h })).toStrictEqual({ value: true });
      expect(agree(`${lit} in m`, { m: {} })).toStrictEqual({ value: false });
    });
  }

  it('compiles any string value to a literal that acorn reads back as the same value', () => {
    const unit = fc.oneof(
      fc.constantFrom('"', "'", '\\', '`', '$', '{', '}', '\n', '\r', '\u2028', '\u2029', '\u0000', '\uD800', '\uDFFF', '😀', '*', '/', '<', '>'),
      fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 12 }), fc.nat(), (v, seed) => {
        const typed = check(`s == ${encodeString(v, seed % 2 ? '"' : "'", seed)}`);
        const { strings } = inspectCode(typed);
        expect(strings).toStrictEqual([v]);
        expect(agree(`s == ${encodeString(v, '"', seed)}`, { s: v })).toStrictEqual({ value: true });
      }),
      { seed: 7, numRuns: 300 },
    );
  });
});

describe('codegen safety: hostile identifiers', () => {
  it('never prints a fact or function name: facts are read by slot', () => {
    const src =
      'constructor == toString && size(__proto__) == hasOwnProperty && "x" in prototype && valueOf && ' +
      'f + k0 == process && "y" in Set && iadd + this > 0 && eval(globalThis.x) && require(s) == s';
    const typed = check(src);
    const { code } = inspectCode(typed);
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'prototype', 'valueOf', 'k0', 'process', 'this', 'eval', 'globalThis', 'require']) {
      expect(code).not.toContain(name);
    }
    // Absent, every one is its type's zero ([OAR-FACT-25]) — never the inherited JS member.
    expect(agree('constructor', {})).toStrictEqual({ value: '' });
    expect(agree('toString', {})).toStrictEqual({ value: '' });
    expect(agree('hasOwnProperty', {})).toStrictEqual({ value: 0 });
    expect(agree('valueOf', {})).toStrictEqual({ value: false });
    expect(agree('size(__proto__)', {})).toStrictEqual({ value: 0 });
    expect(agree('size(prototype)', {})).toStrictEqual({ value: 0 });
    expect(agree('f + k0', {})).toStrictEqual({ value: '' });
    expect(agree('iadd + this', {})).toStrictEqual({ value: 0 });
    expect(agree(src, {})).toStrictEqual({ value: false });
    // Present as own keys — `__proto__` through JSON.parse, as a host's JSON would carry it.
    const facts = JSON.parse(
      '{"constructor":"c","toString":"c","__proto__":{"a":"b"},"hasOwnProperty":1,"prototype":["x"],"valueOf":true,' +
        '"f":"p","k0":"q","process":"pq","Set":["y"],"iadd":2,"this":3,"globalThis.x":"g","s":"s"}',
    ) as Record<string, unknown>;
    facts.eval = (a: unknown) => a === 'g';
    facts.require = (a: unknown) => a;
    expect(Object.getPrototypeOf(facts)).toBe(Object.prototype);
    expect(agree(src, facts)).toStrictEqual({ value: true });
    expect(agree('__proto__["a"]', facts)).toStrictEqual({ value: 'b' });
    // A wrong-typed value under a hostile name raises; it is not coerced ([OAR-FACT-26]).
    expect(agree('hasOwnProperty + 1', { hasOwnProperty: '1' })).toStrictEqual({ raise: 'wrong_type' });
    expect(agree('size(__proto__)', JSON.parse('{"__proto__": {"a": 1}}') as Record<string, unknown>)).toStrictEqual({ raise: 'wrong_type' });
  });

  it('reads map keys by own enumerable property only', () => {
    for (const k of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'isPrototypeOf']) {
      expect(agree(`${JSON.stringify(k)} in m`, { m: {} }), k).toStrictEqual({ value: false });
      expect(agree(`${JSON.stringify(k)} in ms`, { ms: {} }), k).toStrictEqual({ value: false });
      expect(agree(`ms[${JSON.stringify(k)}]`, { ms: {} }), k).toStrictEqual({ raise: 'absent_key' });
      expect(agree(`${JSON.stringify(k)} in m`, { m: Object.create(null) }), k).toStrictEqual({ value: false });
    }
    const parsed = JSON.parse('{"__proto__": "x"}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    const defined = Object.defineProperty({}, '__proto__', { value: 'x', enumerable: true, writable: true, configurable: true });
    for (const m of [parsed, defined, new Map([['__proto__', 'x']])]) {
      expect(agree('"__proto__" in m', { m })).toStrictEqual({ value: true });
      expect(agree('size(m)', { m })).toStrictEqual({ value: 1 });
      expect(agree('ms["__proto__"]', { ms: m })).toStrictEqual({ value: 'x' });
      expect(agree('"constructor" in ms', { ms: m })).toStrictEqual({ value: false });
    }
    // An own `hasOwnProperty` member does not disturb the lookup of other keys.
    const shadow = { hasOwnProperty: 'h', a: 'b' };
    expect(agree('"hasOwnProperty" in ms && ms["a"] == "b" && !("c" in ms)', { ms: shadow })).toStrictEqual({ value: true });
    // A non-enumerable own property is not a key: `in`, indexing and size() agree about that.
    const hidden = Object.defineProperty({ a: 'b' }, 'secret', { value: 1, enumerable: false });
    expect(agree('"secret" in ms', { ms: hidden })).toStrictEqual({ value: false });
    expect(agree('ms["secret"]', { ms: hidden })).toStrictEqual({ raise: 'absent_key' });
    expect(agree('size(ms)', { ms: hidden })).toStrictEqual({ value: 1 });
  });
});

describe('codegen safety: the self-check rejects what generated code must never contain', () => {
  const wrapFn = (body: string) => `const k0 = ["a"];\nreturn function (f) {\n  ${body}\n};`;
  const forbidden: [string, string][] = [
    ['eval', wrapFn('return eval("1");')],
    ['eval, aliased', 'const k0 = eval;\nreturn function (f) { return k0("1"); };'],
    ['Function', wrapFn('return Function("return 1")();')],
    ['new Function', wrapFn('return new Function("return 1");')],
    ['globalThis', wrapFn('return globalThis.process;')],
    ['process', wrapFn('return process.exit(1);')],
    ['require', wrapFn('return require("fs");')],
    ['import()', wrapFn('return import("fs");')],
    ['this', wrapFn('return this;')],
    ['this in a member', wrapFn('return f.fact(0) || this.x;')],
    ['with', wrapFn('with (f) { return fact; }')],
    ['a template literal', wrapFn('return `${f}`;')],
    ['an undeclared helper', wrapFn('return iadd(1, 2);')],
    ['window', wrapFn('return window;')],
  ];
  for (const [what, code] of forbidden) {
    it(`rejects ${what}`, () => {
      expect(() => verifyGenerated(code, new Set())).toThrow(CompilerBug);
    });
  }

  it('accepts what the emitter prints (the positive control)', () => {
    const typed = check('"a" in ["a", "b"] && iadd + 1 > 0 && contains(s, "x") && size(ls) == 0 && ms["k"] == s');
    const { code, helpers } = printCondition(typed);
    expect(() => verifyGenerated(code, new Set(helpers))).not.toThrow();
    expect(() => verifyGenerated(code, new Set())).toThrow(CompilerBug);
  });
});

describe('[DESIGN rule 5] a bundle module imports only runtime helpers, from the runtime', () => {
  const imports = { from: 'oarc/runtime/internal', names: new Set(Object.keys(BUNDLE_HELPERS)) };
  const body = 'export default { when: function (f) { return iadd(f.fact(0), 1); } };';

  it('accepts helper imports from the runtime specifier (the positive control)', () => {
    expect(() => verifyGenerated(`import { iadd } from "oarc/runtime/internal";\n${body}`, new Set(), imports)).not.toThrow();
  });

  it.each([
    ['another module', `import { iadd } from "node:fs";\n${body}`],
    ['the public runtime', `import { iadd } from "oarc/runtime";\n${body}`],
    ['a name that is not a helper', `import { createEngine as iadd } from "oarc/runtime/internal";\n${body}`],
    ['a helper under another name', `import { isub as iadd } from "oarc/runtime/internal";\n${body}`],
    ['a namespace import', `import * as iadd from "oarc/runtime/internal";\n${body}`],
    ['a default import', `import iadd from "oarc/runtime/internal";\n${body}`],
    ['a re-export', `export * from "node:fs";\nimport { iadd } from "oarc/runtime/internal";\n${body}`],
    ['a named export', `import { iadd } from "oarc/runtime/internal";\nexport const x = 1;\n${body}`],
  ])('rejects %s', (_what, code) => {
    expect(() => verifyGenerated(code, new Set(), imports)).toThrow(CompilerBug);
  });

  it('rejects any import in a script', () => {
    expect(() => verifyGenerated('import { iadd } from "oarc/runtime/internal";', new Set(['iadd']))).toThrow(CompilerBug);
  });
});

describe('[DESIGN rule 5] the verifier rejects reaching Function through property access', () => {
  it.each([
    'return f.constructor.constructor("return process")()',
    'return f["constructor"]["constructor"]("return 1")()',
    'return [].constructor.constructor("return 1")()',
  ])('rejects %s', (code) => {
    expect(() => verifyGenerated(code, new Set())).toThrow(CompilerBug);
  });

  it('accepts the members emitted code uses', () => {
    expect(() => verifyGenerated('const k0 = new Set(["a"]); return function (f) { return k0.has(f.fact(0)) && f.call(1, "x").length > 0; }', new Set())).not.toThrow();
  });
});

describe('[DESIGN rule 5] a program checked statement by statement is checked as the whole program would be', () => {
  const imports = { from: 'oarc/runtime/internal', names: new Set(Object.keys(BUNDLE_HELPERS)) };
  const verifyStatements = (statements: readonly string[], allowed: ReadonlySet<string> = new Set()) => {
    const v = new ProgramVerifier(allowed, imports);
    for (const s of statements) v.statement(s);
    v.finish();
  };
  const good = ['import { iadd } from "oarc/runtime/internal";', 'const w0 = function (f) {\n  return iadd(f.fact(0), 1);\n};', 'export default {\n  "when": w0\n};'];

  it('accepts statements the emitter prints, in any order (the positive control)', () => {
    expect(() => verifyStatements(good)).not.toThrow();
    expect(() => verifyStatements([...good].reverse())).not.toThrow();
  });

  it.each([
    // Without its `;`, `const a = 1` followed by `(b)` would be joined into `1(b)` by the program.
    ['a statement without its own ";"', ['const w0 = 1', '(w0);']],
    ['a ";" that is only in a comment', ['const w0 = 1 //;']],
    ['two statements in one text', ['const w0 = 1; const w1 = 2;']],
    ['an empty text', ['']],
    ['a name declared twice across statements', ['const w0 = 1;', 'const w0 = 2;']],
    ['an import and a constant of one name', ['import { iadd } from "oarc/runtime/internal";', 'const iadd = 1;']],
    ['two default exports', ['export default {};', 'export default {};']],
    ['a directive', ['"use strict";']],
    ['a reference to a name no statement declares', ['const w0 = function (f) { return w1(f); };']],
    ['a forbidden node in a later statement', ['const w0 = 1;', 'const w1 = function () { return this; };']],
  ])('rejects %s', (_what, statements) => {
    expect(() => verifyStatements(statements)).toThrow(CompilerBug);
  });

  it('names the statement a rejection is in', () => {
    expect(() => verifyStatements(['const w0 = 1;', 'const w9 = function (f) { return f.constructor; };'])).toThrow(/in the statement `const w9 = function/);
  });

  it('takes a comment line only when it parses to no statement', () => {
    const v = new ProgramVerifier(new Set(), imports);
    expect(() => v.comment('// Generated by oarc')).not.toThrow();
    expect(() => v.comment('// a\nconst x = 1;')).toThrow(CompilerBug);
    expect(() => v.comment('const x = 1;')).toThrow(CompilerBug);
  });

  it('a compiled module is the same bytes as the program printed whole, and verifies whole', async () => {
    const { generatePack, packTexts } = await import('../bench/packs.js');
    const r = loadPackTexts(packTexts(generatePack(60, 7)));
    if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
    const text = compile(r.pack);
    expect(() => verifyGenerated(text, new Set(), imports)).not.toThrow();
    const program = acornParse(text, { ecmaVersion: 2022, sourceType: 'module' });
    expect(`// Generated by ${COMPILER_ID}. Do not edit: recompile the rule pack instead.\n${generate(program)}`).toBe(text);
  });
});

describe('[DESIGN rule 5] element access is allowed only by a constant non-negative integer', () => {
  it('accepts R[0] and R[12] (a procedure bucket reading its data — the positive control)', () => {
    expect(() => verifyGenerated('return function (p, f, R) { return R[0](p, f, R) && R[12]; };', new Set())).not.toThrow();
  });
  it.each([
    ['a string key', 'return function (R) { return R["constructor"]; };'],
    ['a numeric string key', 'return function (R) { return R["0"]; };'],
    ['a negative index', 'return function (R) { return R[-1]; };'],
    ['a fractional index', 'return function (R) { return R[1.5]; };'],
    ['a computed index', 'return function (R, i) { return R[i]; };'],
    ['an index that is an expression', 'return function (R) { return R[0 + 1]; };'],
  ])('rejects %s', (_what, code) => {
    expect(() => verifyGenerated(code, new Set())).toThrow(CompilerBug);
  });
});

describe('decision procedures: buckets of one shape share one function', () => {
  it('a pack whose tenants repeat the same rules compiles to a few bucket functions, each bucket its own data', async () => {
    const { generatePack, packTexts } = await import('../bench/packs.js');
    const text = (n: number) => {
      const r = loadPackTexts(packTexts(generatePack(n, 3)));
      if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
      return compile(r.pack);
    };
    const count = (t: string, re: RegExp) => (t.match(re) ?? []).length;
    const small = text(100);
    const large = text(1000);
    const shapes = count(large, /^const T\d+ = function \(p, f, R\)/gm);
    const buckets = count(large, /^const B\d+ = \[T\d+/gm);
    expect(buckets).toBeGreaterThan(100);
    // Ten times the rules, as many more buckets, but no more shapes than the repeated rule kinds give.
    expect(shapes).toBeLessThanOrEqual(count(small, /^const T\d+ = function \(p, f, R\)/gm) + 8);
    expect(shapes * 10).toBeLessThan(buckets);
    // Rule text is data, never code: every rule's qualified id appears in a bucket's data, none in a function.
    const functions = [...large.matchAll(/^const T\d+ = function \(p, f, R\) \{\n[^]*?\n\};$/gm)].map((m) => m[0]);
    expect(functions).toHaveLength(shapes);
    expect(functions.join('\n')).toContain('R[1]');
    expect(functions.join('\n')).not.toMatch(/acme\./);
  });
});

describe('[DESIGN rule 5] the walk resolves names by scope and refuses what reaches past the allowlists', () => {
  const imports = { from: 'oarc/runtime/internal', names: new Set(Object.keys(BUNDLE_HELPERS)) };
  const module = (code: string) => verifyGenerated(code, new Set(), imports);

  it('accepts locals, parameters and top-level constants referenced across functions (the positive control)', () => {
    expect(() => module('const w1 = function (f) { var a = [], v; if (f.fact(0)) { v = 1; } return w0(f) && a.length > v; };\nconst w0 = function (f) { return f.fact(1); };\nexport default { "when": w1 };')).not.toThrow();
  });

  it.each([
    // Found by review (the walk's one flat set of names, and patterns, predate the per-statement check).
    ['a destructuring read of constructor', 'let F;\nconst g = function () { ({ constructor: F } = Set); };\nexport default F;'],
    ['a computed destructuring key', 'const g = function () { var F; ({ ["constr" + "uctor"]: F } = Set); return F; };\nexport default g;'],
    ['an array pattern', 'const g = function () { var [F] = [Set]; return F; };\nexport default g;'],
    ['a parameter default', 'const g = function (f = Set) { return f; };\nexport default g;'],
    ['a rest parameter', 'const g = function (...f) { return f; };\nexport default g;'],
    ['a name free here though a parameter elsewhere', 'const g = function (Function) { return 1; };\nconst x = function () { return Function("return process")(); };\nexport default x;'],
    ['globalThis bound only in another function', 'const g = function (globalThis) { return 1; };\nconst x = function () { return globalThis; };\nexport default x;'],
    ['a block-scoped name used outside its block', 'const x = function () { { let process = 1; } return process; };\nexport default x;'],
    ['a write to an allowed global', 'const x = function () { Set = null; return 1; };\nexport default x;'],
    ['an update of an allowed global', 'const x = function () { Map++; return 1; };\nexport default x;'],
    ['a write to a top-level constant', 'const k0 = 1;\nconst x = function () { k0 = 2; return 1; };\nexport default x;'],
    ['a write to a member', 'const x = function (f) { f.fact = null; return 1; };\nexport default x;'],
    ['a write to an element', 'const x = function (R) { R[0] = 1; return 1; };\nexport default x;'],
    ['an element of something not a local name', 'const x = function (f) { return f.fact(0)[0]; };\nexport default x;'],
    ['a top-level expression', 'Set;\nexport default {};'],
  ])('rejects %s', (_what, code) => {
    expect(() => module(code)).toThrow(CompilerBug);
  });

  it('rejects a directive wherever it falls in a batch of statements', () => {
    const v = new ProgramVerifier(new Set(), imports);
    v.statement('const k0 = 1;');
    v.statement('"use strict";');
    expect(() => v.finish()).toThrow(CompilerBug);
  });
});
