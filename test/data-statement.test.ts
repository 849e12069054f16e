/**
 * The self-check's fast path for data statements (compiler/emit/data-statement.ts, DESIGN rule 5)
 * against acorn: whatever it reads as data must be, to acorn, exactly one statement of that kind
 * whose value is made only of literals, arrays, objects with string keys, names and negated numbers,
 * and whose names are exactly the references it reports. Checked on statements astring prints
 * from random data, and on those statements mutated a character at a time (which must either leave
 * the grammar — and go to acorn, as every statement did before — or stay sound).
 */
import { parse } from 'acorn';
import { generate } from 'astring';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dataStatement } from '../compiler/emit/data-statement.js';
import { ProgramVerifier } from '../compiler/emit/verify.js';

const RUNS = Number(process.env.OARC_PROPERTY_RUNS ?? 1000);

interface Node {
  type: string;
  [k: string]: unknown;
}

/** Acorn's view: the statement kind, the declared name, the value's names; undefined when not data-shaped. */
function acornView(text: string): { kind: string; declares?: string; names: string[] } | undefined {
  let ast: Node;
  try {
    ast = parse(text, { ecmaVersion: 2022, sourceType: 'module', allowReturnOutsideFunction: true }) as unknown as Node;
  } catch {
    return undefined;
  }
  const body = ast.body as Node[];
  if (body.length !== 1 || body[0]!.end !== text.length) return undefined;
  const st = body[0]!;
  let value: Node;
  let declares: string | undefined;
  if (st.type === 'VariableDeclaration' && st.kind === 'const' && (st.declarations as Node[]).length === 1) {
    const d = (st.declarations as Node[])[0]!;
    declares = (d.id as Node).name as string;
    value = d.init as Node;
  } else if (st.type === 'ExportDefaultDeclaration') {
    value = st.declaration as Node;
  } else if (st.type === 'ReturnStatement') {
    value = st.argument as Node;
  } else {
    return undefined;
  }
  const names: string[] = [];
  const visit = (n: Node): boolean => {
    switch (n.type) {
      case 'Literal':
        return !('regex' in n) && !('bigint' in n);
      case 'Identifier':
        names.push(n.name as string);
        return true;
      case 'UnaryExpression':
        return n.operator === '-' && (n.argument as Node).type === 'Literal' && typeof (n.argument as Node).value === 'number';
      case 'ArrayExpression':
        return (n.elements as (Node | null)[]).every((e) => e !== null && visit(e));
      case 'ObjectExpression':
        return (n.properties as Node[]).every((p) => {
          if (p.type !== 'Property' || p.kind !== 'init' || p.method || p.shorthand) return false;
          const key = p.key as Node;
          if (key.type !== 'Literal' || typeof key.value !== 'string') return false;
          // A non-computed "__proto__" sets the prototype: never data.
          if (!p.computed && key.value === '__proto__') return false;
          return visit(p.value as Node);
        });
      default:
        return false;
    }
  };
  if (!visit(value)) return undefined;
  return { kind: st.type, ...(declares !== undefined ? { declares } : {}), names: [...new Set(names)] };
}

function agree(text: string): boolean {
  const d = dataStatement(text);
  if (d === undefined) return false;
  const a = acornView(text);
  expect(a, text).toBeDefined();
  expect(a!.kind, text).toBe(d.declares !== undefined ? 'VariableDeclaration' : d.exportsDefault ? 'ExportDefaultDeclaration' : 'ReturnStatement');
  expect(a!.declares, text).toBe(d.declares);
  expect([...d.references.keys()], text).toEqual(a!.names);
  return true;
}

type Data = null | boolean | number | string | { name: string } | Data[] | { [k: string]: Data };

const NAMES = ['w0', 'c12', 'T2', 'B7', '$x', '_y', 'undefined', 'NaN', 'eval', 'this', 'let', 'await', 'yield', 'arguments'];
const STRINGS = ['', 'a', '"', '\\', '\n', '\u2028', '\u0000', '</script>', '${x}', '`', "'", '__proto__', 'é', '😀', '\ud800'];

const dataTree: fc.Arbitrary<Data> = fc.letrec<{ d: Data }>((tie) => ({
  d: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom<Data>(null, true, false, 0, -0, -1, 1.5, -2.5e-7, 1e21, 1e300, 9007199254740993),
    fc.constantFrom(...STRINGS),
    fc.string({ maxLength: 5 }),
    fc.constantFrom(...NAMES).map((name) => ({ name })),
    fc.array(tie('d'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...STRINGS), fc.string({ maxLength: 3 })), tie('d'), { maxKeys: 4 }),
  ),
})).d;

/** ESTree for data, as bundle.ts builds it: string keys, `__proto__` computed, names as identifiers. */
function estree(v: Data): unknown {
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && 'name' in v && typeof v.name === 'string' && Object.keys(v).length === 1) {
    return { type: 'Identifier', name: v.name };
  }
  if (Array.isArray(v)) return { type: 'ArrayExpression', elements: v.map(estree) };
  if (v !== null && typeof v === 'object') {
    return {
      type: 'ObjectExpression',
      properties: Object.entries(v).map(([k, x]) => ({ type: 'Property', key: { type: 'Literal', value: k }, value: estree(x), kind: 'init', method: false, shorthand: false, computed: k === '__proto__' })),
    };
  }
  if (typeof v === 'number' && v < 0) return { type: 'UnaryExpression', operator: '-', prefix: true, argument: { type: 'Literal', value: -v } };
  return { type: 'Literal', value: v };
}

const statementOf = (kind: number, value: unknown): string => {
  const node =
    kind === 0
      ? { type: 'VariableDeclaration', kind: 'const', declarations: [{ type: 'VariableDeclarator', id: { type: 'Identifier', name: 'B3' }, init: value }] }
      : kind === 1
        ? { type: 'ExportDefaultDeclaration', declaration: value }
        : { type: 'ReturnStatement', argument: value };
  return generate(node as never);
};

const MUTATIONS = [' ', '\n', '\t', ',', ':', '[', ']', '{', '}', '"', '\\', '.', '(', ')', '-', '+', 'e', 'x', '0', ';', '`', '/'];

describe('data statements: read as acorn reads them', () => {
  it('astring-printed data (arrays, objects, names, numbers, hostile strings) is read as data', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.nat(2), fc.oneof(fc.array(dataTree, { maxLength: 5 }), fc.dictionary(fc.string({ maxLength: 4 }), dataTree, { maxKeys: 5 })), (kind, v) => {
        if (agree(statementOf(kind, estree(v as Data)))) accepted++;
      }),
      { numRuns: RUNS },
    );
    // Reserved names go to acorn; the rest must be read here, or the fast path is dead.
    expect(accepted).toBeGreaterThan(RUNS / 3);
  });

  it('a one-character edit either leaves the grammar or is read as acorn reads it', () => {
    fc.assert(
      fc.property(fc.nat(2), fc.array(dataTree, { minLength: 1, maxLength: 4 }), fc.nat(), fc.constantFrom(...MUTATIONS), fc.nat(2), (kind, v, at, ch, op) => {
        const text = statementOf(kind, estree(v));
        const i = at % text.length;
        const edited = op === 0 ? text.slice(0, i) + ch + text.slice(i) : op === 1 ? text.slice(0, i) + text.slice(i + 1) : text.slice(0, i) + ch + text.slice(i + 1);
        agree(edited);
      }),
      { numRuns: RUNS },
    );
  });

  it('leaves to acorn what is not data', () => {
    for (const t of [
      'const x = [a.b];',
      'const x = [f()];',
      'const x = "a" + "b";',
      'const x = [1in];',
      'const x = {a: 1};',
      'const x = {"a": 1,};',
      'const x = [1,];',
      'const x = [,1];',
      'export default {"__proto__": null};',
      // The same member with its name escaped (found by an attacker probe): still the prototype.
      'export default {"\\u005f_proto__": x};',
      'const A = {"__prot\\u006f__": 1};',
      'return {"a": {"\\u005f\\u005fproto\\u005f\\u005f": x}};',
      'export default {"\\u005f_proto__": a, "\\u005f_proto__": b};',
      'export default function () {};',
      'const x = [eval];',
      'const let = [1];',
      'const x = [this];',
      'const x = `a`;',
      'const x = "a\nb";',
      'const x = "\\x41";',
      'const x = [0x1];',
      'const x = [01];',
      'const x = [.5];',
      'const x = [1.];',
      'const x = [- 1];',
      'const x = [1]; const y = [2];',
      'const x = [1]',
      'const x = [\t1];',
      `const x = ${'['.repeat(300)}${']'.repeat(300)};`,
    ]) {
      expect(dataStatement(t), t).toBeUndefined();
    }
    expect(dataStatement('const B3 = [T2, "a", w0, -1.5e3, {"k": [null, true]}, {["__proto__"]: c1}];')).toEqual({
      declares: 'B3',
      exportsDefault: false,
      references: new Map([
        ['T2', 12],
        ['w0', 21],
        ['c1', 70],
      ]),
    });
  });

  it('the verifier still refuses what data statements name and declare wrongly', () => {
    const check = (...statements: string[]) => {
      const v = new ProgramVerifier(new Set(), { from: 'oarc/runtime/internal', names: new Set<string>() });
      for (const t of statements) v.statement(t);
      v.finish();
    };
    for (const t of ['const B1 = [w9];', 'export default {"a": B1};']) expect(dataStatement(t), t).toBeDefined();
    expect(() => check('const B1 = [w9];', 'export default {"a": B1};')).toThrow(/references 'w9'/);
    expect(() => check('const B1 = [1];', 'const B1 = [2];')).toThrow(/declares 'B1' twice/);
    expect(() => check('export default [1];', 'export default [2];')).toThrow(/two default exports/);
    expect(() => check('const B1 = [1];', 'export default {"a": B1, "b": undefined};')).not.toThrow();
    // A script has no exports: `export default` there goes to acorn, which refuses it.
    const script = new ProgramVerifier(new Set());
    expect(() => {
      script.statement('export default [1];');
      script.finish();
    }).toThrow(/does not parse/);
  });
});
