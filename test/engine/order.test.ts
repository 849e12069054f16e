/**
 * Evaluation order: kind, then qualified identifier by code point ([OAR-EVAL-1]), amended by the
 * exact suppressor algorithm of [OAR-EVAL-18]; never by document position ([OAR-DOC-31]).
 */
import { describe, expect, it } from 'vitest';
import { compile } from '../../compiler/index.js';
import { cap, harness, load, rule, trace } from './harness.js';

const CAP = cap({ profiles: ['tool'], detectors: ['detector://noop'] });
const PRE = 'tool.pre_invoke';

/** A rule at tool.pre_invoke; `fires` decides its condition, `allow` keeps it out of the decision. */
function r(qid: string, kind: string, extra: Record<string, unknown> = {}): string {
  const [ns, id] = qid.includes('/') ? (qid.split('/') as [string, string]) : [undefined, qid];
  return rule({
    id,
    ...(ns !== undefined ? { namespace: ns } : {}),
    kind,
    anchor: PRE,
    effect: 'allow',
    ...(kind === 'detector' ? { detector: { ref: 'detector://noop' } } : {}),
    ...extra,
  });
}

const passes = { when: 'false' };

describe('[OAR-EVAL-1] kind, then qualified identifier by code point', () => {
  it('[OAR-EVAL-1] [OAR-EVAL-2] kinds run schema, policy, invariant, detector — whatever their identifiers', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_DETECTOR', 'detector'), r('B_INVARIANT', 'invariant'), r('C_POLICY', 'policy'), r('D_SCHEMA', 'schema')],
    });
    expect(trace(h.decide({ anchor: PRE }))).toEqual([
      'D_SCHEMA:fired',
      'C_POLICY:fired',
      'B_INVARIANT:fired',
      'A_DETECTOR:fired',
    ]);
  });

  it('[OAR-EVAL-1] [OAR-DOC-8] identifiers compare by code point, bare and qualified alike (not by locale, not case-folded)', () => {
    // The id and namespace grammars are ASCII ([OAR-DOC-6], [OAR-DOC-7]), so UTF-16 unit order and
    // code-point order cannot differ for a qualified identifier; what can go wrong is a locale or
    // case-insensitive comparison, and the relative order of the separators `-` `.` `/` `0` `_`.
    const qids = ['a0/X', 'a/X_', 'ZED', 'a/X1', 'a.b/X', 'A_B', '0ns/X', 'ABC', 'a-b/X', 'a/X', 'AB'];
    const h = harness({ capability: CAP, rules: qids.map((q) => r(q, 'policy')) });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(
      ['0ns/X', 'AB', 'ABC', 'A_B', 'ZED', 'a-b/X', 'a.b/X', 'a/X', 'a/X1', 'a/X_', 'a0/X'].map((q) => `${q}:fired`),
    );
  });

  it('[OAR-DOC-31] [OAR-DOC-28] document order and packaging never change the order', () => {
    const stream = [
      '# one multi-document YAML stream, deliberately out of order',
      'oar: "1.0"', 'id: ZZ', 'kind: schema', 'anchor: tool.pre_invoke', 'effect: allow',
      '---',
      'oar: "1.0"', 'id: AA', 'namespace: acme', 'kind: detector', 'anchor: tool.pre_invoke', 'effect: allow',
      'detector: { ref: "detector://noop" }',
      '---',
      'oar: "1.0"', 'id: MM', 'kind: policy', 'anchor: tool.pre_invoke', 'effect: warn',
    ].join('\n');
    const separate = [r('acme/AA', 'detector'), r('MM', 'policy', { effect: 'warn' }), r('ZZ', 'schema')];
    const expected = ['ZZ:fired', 'MM:fired', 'acme/AA:fired'];
    expect(trace(harness({ capability: CAP, rules: [stream] }).decide({ anchor: PRE }))).toEqual(expected);
    expect(trace(harness({ capability: CAP, rules: separate }).decide({ anchor: PRE }))).toEqual(expected);
    expect(trace(harness({ capability: CAP, rules: [...separate].reverse() }).decide({ anchor: PRE }))).toEqual(expected);
  });
});

describe('[OAR-EVAL-18] the suppressor algorithm', () => {
  it('[OAR-EVAL-18] a suppressor runs before the rule it names, even when it sorts after it', () => {
    const h = harness({ capability: CAP, rules: [r('A', 'policy'), r('B', 'policy', { ...passes, overrides: ['A'] })] });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['B:passed', 'A:fired']);
    const g = harness({ capability: CAP, rules: [r('A', 'policy'), r('B', 'policy', { overrides: ['A'] })] });
    expect(trace(g.decide({ anchor: PRE }))).toEqual(['B:fired', 'A:suppressed']);
  });

  it('[OAR-EVAL-1] [OAR-EVAL-18] a rule that suppresses nothing selected keeps its place before a later-kind suppressor', () => {
    const h = harness({
      capability: CAP,
      rules: [r('P1', 'policy'), r('P2', 'policy'), r('I', 'invariant', { ...passes, overrides: ['P2'] }), r('D', 'detector')],
    });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['P1:fired', 'I:passed', 'P2:fired', 'D:fired']);
  });

  it('[OAR-EVAL-18] a rule whose overrides name only unselected rules keeps its place too', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('Q', 'policy', { overrides: ['U'] }),
        r('T', 'policy'),
        r('U', 'policy', { selector: { tool: ['never'] }, requires: { profiles: ['tool'] } }),
        r('I', 'invariant', { ...passes, overrides: ['T'] }),
      ],
    });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['Q:fired', 'I:passed', 'T:fired']);
  });

  it('[OAR-EVAL-18] unrelated rules that sort after the target but before the suppressor run first', () => {
    // Sorted: T, U, S. T waits for S; U is free and first → U, then S, then T. Moving S to just
    // before T would give S, T, U — a valid order, but not the one the algorithm selects.
    const h = harness({ capability: CAP, rules: [r('T', 'policy'), r('U', 'policy'), r('S', 'invariant', { ...passes, overrides: ['T'] })] });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['U:fired', 'S:passed', 'T:fired']);
  });

  it('[OAR-EVAL-18] two suppressors of one target, of different kinds', () => {
    // Sorted: S(schema), A_FREE, T, Z_FREE (policy), I(invariant). S first; A_FREE; T waits for I;
    // Z_FREE is the first free rule; then I; then T.
    const h = harness({
      capability: CAP,
      rules: [
        r('A_FREE', 'policy'),
        r('T', 'policy'),
        r('Z_FREE', 'policy'),
        r('I', 'invariant', { ...passes, overrides: ['T'] }),
        r('S', 'schema', { ...passes, overrides: ['T'] }),
      ],
    });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['S:passed', 'A_FREE:fired', 'Z_FREE:fired', 'I:passed', 'T:fired']);
  });

  it('[OAR-EVAL-18] a chain across kinds: each suppressor precedes what it names, and no earlier', () => {
    // X free; Z waits for I; I waits for D; D free → X, D, I, Z.
    const h = harness({
      capability: CAP,
      rules: [
        r('X', 'policy'),
        r('Z', 'policy'),
        r('I', 'invariant', { ...passes, overrides: ['Z'] }),
        r('D', 'detector', { ...passes, overrides: ['I'] }),
      ],
    });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['X:fired', 'D:passed', 'I:passed', 'Z:fired']);
  });

  it('[OAR-EVAL-18] [OAR-EVAL-13] qualified and bare override targets, across namespaces', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('acme/T', 'policy'),
        r('beta/T', 'policy'),
        r('zeta/S', 'policy', { ...passes, overrides: ['beta/T'] }),
        r('acme/S', 'invariant', { ...passes, overrides: ['T'] }), // bare: resolved in acme
      ],
    });
    // Sorted: acme/T, beta/T, zeta/S (policy), acme/S (invariant). acme/T waits for acme/S;
    // beta/T waits for zeta/S; zeta/S is free → zeta/S, then beta/T (now free, first), acme/S, acme/T.
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['zeta/S:passed', 'beta/T:fired', 'acme/S:passed', 'acme/T:fired']);
  });

  it('[OAR-EVAL-18] ordering depends on the selected set: an unselected suppressor moves nothing', () => {
    const rules = [
      r('A', 'policy'),
      r('B', 'policy'),
      r('S', 'invariant', { selector: { tool: ['read'] }, requires: { profiles: ['tool'] }, overrides: ['A'] }),
    ];
    const h = harness({ capability: CAP, rules });
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'write' } }))).toEqual(['A:fired', 'B:fired']);
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'read' } }))).toEqual(['B:fired', 'S:fired', 'A:suppressed']);
  });
});

describe('[OAR-EVAL-18] long chains of overrides', () => {
  // C0001 overrides C0000, C0002 overrides C0001, …: every rule must run before the one it names,
  // so the amended order is the kind-then-identifier order reversed. Ordered by a heap
  // (runtime/order.ts), not by rescanning the remaining rules per placement (quadratic).
  const N = 240;
  const name = (i: number) => `C${String(i).padStart(4, '0')}`;
  const chain = (extra: (i: number) => Record<string, unknown>) =>
    Array.from({ length: N }, (_, i) => r(name(i), 'policy', { ...passes, ...(i > 0 ? { overrides: [name(i - 1)] } : {}), ...extra(i) }));
  const reversed = Array.from({ length: N }, (_, i) => `${name(N - 1 - i)}:passed`);

  it('[OAR-EVAL-18] a static chain (every rule always selected) runs in reverse identifier order', () => {
    const h = harness({ capability: CAP, rules: chain(() => ({})) });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(reversed);
  });

  it('[OAR-EVAL-18] [OAR-SEL-2] a chain whose selection is decided at run time: unselected links move nothing', () => {
    const cap2 = cap({ profiles: ['tool', 'session'], detectors: ['detector://noop'] });
    const h = harness({ capability: cap2, rules: chain((i) => (i % 2 === 1 ? { selector: { principal_roles: ['admin'] }, requires: { profiles: ['session'] } } : {})) });
    expect(trace(h.decide({ anchor: PRE, facts: { principal_roles: ['admin'] } }))).toEqual(reversed);
    // Without the odd links no selected rule names another selected one: plain identifier order.
    expect(trace(h.decide({ anchor: PRE, facts: { principal_roles: ['dev'] } }))).toEqual(Array.from({ length: N / 2 }, (_, i) => `${name(2 * i)}:passed`));
  });
});

describe('determinism', () => {
  it('[OAR-EVAL-1] the same pack compiled twice gives byte-identical module text', () => {
    const rules = [
      r('acme/B', 'invariant', { when: 'fire_count_of("acme/A") > 1 && tool_arg_int("n") % 2 == 0', requires: { profiles: ['tool'] }, copy: { what: 'n is {{ tool }}' } }),
      r('acme/A', 'policy', { on_fire: ['increment_counter'], counter_scope: 'tool_args_fingerprint', requires: { profiles: ['tool'] } }),
      r('acme/D', 'detector', { overrides: ['acme/A'] }),
    ];
    const pack = load({ capability: CAP, rules });
    const first = compile(pack);
    expect(compile(pack)).toBe(first);
    // A second load of the same texts compiles to the same bytes too.
    expect(compile(load({ capability: CAP, rules }))).toBe(first);
    expect(first).toContain('"acme/A"');
  });

  it('[OAR-FACT-1] declaration order in the capability document does not change the module text', () => {
    const rules = [
      rule({ id: 'A', anchor: PRE, effect: 'warn', requires: { profiles: ['tool', 'session'], facts: ['acme.gw.a', 'acme.gw.b'] }, when: 'acme.gw.a == acme.gw.b && tool == principal' }),
    ];
    const one = cap({ profiles: ['tool', 'session'], hostAnchors: ['gw.x', 'gw.a'], detectors: ['detector://noop', 'detector://error'], hostFacts: [{ name: 'acme.gw.b', type: 'string' }, { name: 'acme.gw.a', type: 'string' }] });
    const two = cap({ profiles: ['session', 'tool'], hostAnchors: ['gw.a', 'gw.x'], detectors: ['detector://error', 'detector://noop'], hostFacts: [{ name: 'acme.gw.a', type: 'string' }, { name: 'acme.gw.b', type: 'string' }] });
    expect(compile(load({ capability: two, rules }))).toBe(compile(load({ capability: one, rules })));
  });
});
