/**
 * The copy compiler (compiler/emit/copy.ts): a compiled bundle renders each rule's copy with an
 * emitted closure, the interpreter back end with `renderCopyObject` over the template data. The
 * two must agree on every template and every fact environment — the same text, or the same raise
 * first, having read the same facts in the same order ([OAR-COPY-3], [OAR-COPY-4], [OAR-COPY-7],
 * [OAR-COPY-11]) — and copy text must reach the code only inside string literals.
 */
import { parse as acornParse } from 'acorn';
import { generate } from 'astring';
import type * as ES from 'estree';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EmitScope } from '../compiler/emit/condition.js';
import { emitCopyFunction } from '../compiler/emit/copy.js';
import { verifyGenerated } from '../compiler/emit/verify.js';
import { COPY_MEMBERS, renderCopyObject, type CopyMember, type CopyPart, type CopyProgram, type CopyRenderer, type CopyType } from '../runtime/copy.js';
import type { FactReader } from '../runtime/facts.js';
import { BUNDLE_HELPERS, type BundleHelper } from '../runtime/helpers.js';
import * as runtime from '../runtime/index.js';
import { Raise } from '../runtime/raise.js';
import { propertyConfig, runProperty } from './property/run.js';
import { HOSTILE } from './support/hostile.js';

type Members = Partial<Record<CopyMember, CopyProgram>>;

/** Compile `members` as a bundle would, self-check the code, and load it (test-only `Function`). */
function compiled(members: Members): { render: CopyRenderer; code: string } {
  const scope = new EmitScope();
  const program: ES.Program = { type: 'Program', sourceType: 'script', body: [{ type: 'ReturnStatement', argument: emitCopyFunction(members, scope) }] };
  const code = generate(program);
  const helpers = [...scope.helpers];
  verifyGenerated(code, new Set(helpers));
  const render = new Function(...helpers, code)(...helpers.map((h) => BUNDLE_HELPERS[h])) as CopyRenderer;
  return { render, code };
}

/** The slots' types, and a reader over `values` that records each read and raises where told. */
const TYPES: readonly CopyType[] = ['string', 'bool', 'int', 'double', 'list<string>'];

class RecordingReader implements FactReader {
  readonly reads: number[] = [];
  constructor(private readonly values: readonly unknown[]) {}
  fact(slot: number): unknown {
    this.reads.push(slot);
    const v = this.values[slot];
    if (v instanceof Raise) throw v;
    return v;
  }
  call(): unknown {
    throw new Error('copy never calls an observation function');
  }
}

type Outcome = { copy: Record<string, string>; reads: number[] } | { raise: string; message: string; reads: number[] };

function outcome(render: CopyRenderer, values: readonly unknown[]): Outcome {
  const reader = new RecordingReader(values);
  try {
    return { copy: render(reader), reads: reader.reads };
  } catch (e) {
    if (!(e instanceof Raise)) throw e;
    return { raise: e.code, message: e.message, reads: reader.reads };
  }
}

// ---------------------------------------------------------------------------------------------
// Generators: templates over slots 0..4 (typed as TYPES[slot]); values of the right type, the
// wrong type, or a raise.

const text = fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', '\n', '${x}', '\u2028', '😀', '\uD800', '+'), maxLength: 6 });
const slot = fc.integer({ min: 0, max: TYPES.length - 1 });

const program: fc.Arbitrary<CopyProgram> = fc.letrec<{ program: CopyProgram; part: CopyPart }>((tie) => ({
  part: fc.oneof(
    { weight: 3, arbitrary: text },
    { weight: 3, arbitrary: slot.map((s) => ({ slot: s, type: TYPES[s] as CopyType })) },
    { weight: 1, arbitrary: fc.record({ test: slot, nonzero: tie('program'), zero: tie('program') }) },
  ),
  program: fc.array(tie('part'), { maxLength: 4 }),
})).program;

const members: fc.Arbitrary<Members> = fc
  .subarray([...COPY_MEMBERS])
  .chain((ms) => fc.tuple(...ms.map(() => program)).map((ps) => Object.fromEntries(ms.map((m, i) => [m, ps[i]])) as Members));

const goodValue: Record<CopyType, fc.Arbitrary<unknown>> = {
  string: fc.constantFrom('', 'x', '😀', '\uD800'),
  bool: fc.boolean(),
  int: fc.oneof(fc.constantFrom(0, -0, 1, -7, 2 ** 53 - 1), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
  double: fc.constantFrom(0, -0, 0.1, 1e21, -1.5e-7, 5),
  'list<string>': fc.array(fc.constantFrom('a', '', 'b c'), { maxLength: 3 }),
};
const value = (t: CopyType) =>
  fc.oneof(
    { weight: 6, arbitrary: goodValue[t] },
    { weight: 1, arbitrary: fc.constantFrom<unknown>('s', 1.5, null, ['x', 1], new Map(), {}) },
    { weight: 1, arbitrary: fc.constantFrom(new Raise('provider_failure', 'provider down'), new Raise('wrong_type', 'fact: expected x')) },
  );
const values = fc.tuple(...TYPES.map(value));

describe('compiled copy renderers', () => {
  const config = propertyConfig(0xc09e, 3000);
  const name = '[OAR-COPY-3] [OAR-COPY-4] [OAR-COPY-7] [OAR-COPY-11] the emitted renderer renders, reads and raises exactly as the template interpreter';

  it(name, () => {
    runProperty(
      config,
      name,
      fc.tuple(members, values),
      ([m, vs]) => {
        const { render, code } = compiled(m);
        expect(outcome(render, vs), code).toEqual(outcome((f) => renderCopyObject(m, f), vs));
      },
      config.runs,
      `npx vitest run test/copy-emit.test.ts -t "${name}"`,
      true,
    );
  });

  it('[OAR-COPY-7] members come out in the fixed order, omitted ones absent; an empty template is ""', () => {
    const { render } = compiled({ instead: ['i'], title: [], what: ['w'] });
    const copy = render(new RecordingReader([]));
    expect(Object.keys(copy)).toEqual(['title', 'what', 'instead']);
    expect(copy).toEqual({ title: '', what: 'w', instead: 'i' });
    expect(compiled({}).render(new RecordingReader([]))).toEqual({});
  });

  it('keeps hostile copy text inside string literals, whole', () => {
    for (const h of HOSTILE) {
      const m: Members = { what: [h, { slot: 0, type: 'string' }, h], fix: [{ test: 1, nonzero: [h], zero: [] }] };
      const { render, code } = compiled(m);
      expect(render(new RecordingReader([h, true]))).toEqual({ what: h + h + h, fix: h });
      // Every identifier in the code is the reader, a helper, or a member name it may read.
      const ast = acornParse(code, { ecmaVersion: 2022, sourceType: 'script', allowReturnOutsideFunction: true });
      const names = new Set<string>();
      const strings: string[] = [];
      JSON.stringify(ast, (_k, v: { type?: string; name?: string; value?: unknown }) => {
        if (v?.type === 'Identifier') names.add(v.name as string);
        if (v?.type === 'Literal' && typeof v.value === 'string') strings.push(v.value);
        return v;
      });
      for (const n of names) expect(['f', 'fact', 'copyString', 'isZero'], code).toContain(n);
      expect(strings.filter((s) => s === h).length, code).toBe(3);
    }
  });

  it('every helper compiled code may name is an export of oarc/runtime/internal, and none is public API', async () => {
    const internal = (await import('../runtime/internal.js')) as Record<string, unknown>;
    expect(Object.keys(BUNDLE_HELPERS).sort()).toEqual(Object.keys(internal).sort());
    for (const h of Object.keys(BUNDLE_HELPERS) as BundleHelper[]) {
      expect(internal[h], h).toBe(BUNDLE_HELPERS[h]);
      expect(Object.hasOwn(runtime, h), `oarc/runtime exports ${h}`).toBe(false);
    }
  });
});
