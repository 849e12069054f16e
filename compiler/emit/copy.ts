/**
 * The copy compiler: a rule's checked copy templates (`CopyProgram` data, Appendix C) → one
 * specialised renderer `function (f) { return { "what": "The " + copyString(f.fact(5)) + " …" }; }`.
 *
 * It renders exactly what `renderCopyObject` (runtime/copy.ts, the interpreter back end's renderer)
 * renders: members in the fixed order of [OAR-COPY-7], absent members absent; parts concatenated
 * left to right, so facts are read in the same order and the first raise is the same one
 * ([OAR-COPY-11]); a conditional reads its fact and takes one branch, so a fact named only in the
 * untaken branch is never read ([OAR-COPY-3]); an interpolation formats by the fact's declared
 * type ([OAR-COPY-4], [OAR-COPY-10]). Copy text reaches the code only as string literals (`lit`).
 */
import type * as ES from 'estree';
import { COPY_MEMBERS, type CopyMember, type CopyPart, type CopyProgram, type CopyType } from '../../runtime/copy.js';
import type { BundleHelper } from '../../runtime/helpers.js';
import type { EmitScope } from './condition.js';
import { READER } from './condition.js';
import { binary, call, conditional, id, lit, member } from './estree.js';

const INTERPOLATE: Readonly<Record<CopyType, BundleHelper>> = {
  string: 'copyString',
  bool: 'copyBool',
  int: 'copyInt',
  double: 'copyDouble',
  'list<string>': 'copyList',
};

export function emitCopyFunction(members: Partial<Record<CopyMember, CopyProgram>>, scope: EmitScope): ES.FunctionExpression {
  const properties: ES.Property[] = [];
  for (const m of COPY_MEMBERS) {
    const program = members[m];
    if (program === undefined) continue;
    properties.push({ type: 'Property', key: lit(m), value: emitProgram(program, scope), kind: 'init', method: false, shorthand: false, computed: false });
  }
  return {
    type: 'FunctionExpression',
    id: null,
    params: [id(READER)],
    body: { type: 'BlockStatement', body: [{ type: 'ReturnStatement', argument: { type: 'ObjectExpression', properties } }] },
    generator: false,
    async: false,
  };
}

/** Parts joined by one left-to-right `+` chain; longer texts are chains of chains. */
const CHAIN = 64;

/**
 * One member's text: the parts joined by `+`, left to right. Every part is a string, so `+` is
 * associative and the tree's shape changes nothing but its depth: a template of any length — a
 * copy with thousands of bindings passes `check`, so it must compile — becomes chains of at most
 * CHAIN parts joined as a balanced tree, whose depth (CHAIN + log2 of the chains) no printer or
 * parser recursing over it can overflow. Evaluation order, and so the first raise, is unchanged.
 */
function emitProgram(program: CopyProgram, scope: EmitScope): ES.Expression {
  if (program.length === 0) return lit('');
  const chains: ES.Expression[] = [];
  for (let at = 0; at < program.length; at += CHAIN) {
    let out = emitPart(program[at] as CopyPart, scope);
    for (let i = at + 1; i < Math.min(at + CHAIN, program.length); i++) out = binary('+', out, emitPart(program[i] as CopyPart, scope));
    chains.push(out);
  }
  return balanced(chains, 0, chains.length);
}

function balanced(xs: readonly ES.Expression[], from: number, to: number): ES.Expression {
  if (to - from === 1) return xs[from] as ES.Expression;
  const mid = (from + to) >> 1;
  return binary('+', balanced(xs, from, mid), balanced(xs, mid, to));
}

function emitPart(part: CopyPart, scope: EmitScope): ES.Expression {
  if (typeof part === 'string') return lit(part);
  const read = (slot: number) => call(member(id(READER), 'fact'), [lit(slot)]);
  if ('test' in part) {
    // [OAR-COPY-3] `{% if fact %}`: the nonzero branch unless the fact is its type's zero.
    return conditional(call(scope.helper('isZero'), [read(part.test)]), emitProgram(part.zero, scope), emitProgram(part.nonzero, scope));
  }
  return call(scope.helper(INTERPOLATE[part.type]), [read(part.slot)]); // [OAR-COPY-4]
}
