/**
 * Copy (Appendix C) as the engine renders it: after the decision, for the rules the decision
 * presents ([OAR-COPY-1], [OAR-COPY-7], [OAR-COPY-9]), with the interpolation of [OAR-COPY-4] and
 * [OAR-COPY-10], never influencing the decision ([OAR-COPY-6]), and an `on_error` block whose copy
 * cannot render keeping its identifiers ([OAR-COPY-11]).
 */
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../runtime/index.js';
import { cap, harness, head, rule, trace } from './harness.js';

const FACTS = ['acme.gw.s', 'acme.gw.b', 'acme.gw.i', 'acme.gw.d', 'acme.gw.l'];
const CAP = cap({
  hostFacts: [
    { name: 'acme.gw.s', type: 'string' },
    { name: 'acme.gw.b', type: 'bool' },
    { name: 'acme.gw.i', type: 'int' },
    { name: 'acme.gw.d', type: 'double' },
    { name: 'acme.gw.l', type: 'list<string>' },
  ],
});
const PRE = 'tool.pre_invoke';

function r(id: string, effect: string, copy: Record<string, string> | undefined, extra: Record<string, unknown> = {}): string {
  return rule({ id, namespace: 'p', anchor: PRE, effect, requires: { facts: FACTS }, ...(copy ? { copy } : {}), ...extra });
}

function render(template: string, facts: Record<string, unknown>): string | undefined {
  const h = harness({ capability: CAP, rules: [r('C', 'warn', { what: template })] });
  return h.decide({ anchor: PRE, facts }).copy?.what;
}

describe('[OAR-COPY-4] [OAR-COPY-10] interpolation', () => {
  it('[OAR-COPY-4] string as itself, bool as true/false, int in base 10, list<string> joined by ", "', () => {
    expect(render('s={{ acme.gw.s }} b={{ acme.gw.b }} i={{ acme.gw.i }} l={{ acme.gw.l }}', {
      'acme.gw.s': 'héllo 😀 {{ not a binding }}',
      'acme.gw.b': true,
      'acme.gw.i': -42,
      'acme.gw.l': ['a', 'b c', ''],
    })).toBe('s=héllo 😀 {{ not a binding }} b=true i=-42 l=a, b c, ');
    expect(render('{{ acme.gw.l }}|{{ acme.gw.b }}|{{ acme.gw.i }}', { 'acme.gw.l': [], 'acme.gw.i': 9007199254740993n })).toBe('|false|9007199254740993');
    expect(render('{{ acme.gw.i }}', { 'acme.gw.i': -9223372036854775808n })).toBe('-9223372036854775808');
  });

  it('[OAR-COPY-10] doubles: shortest round-trip significand, no exponent, a leading zero, ".0" when integral', () => {
    const cases: [number, string][] = [
      [1e21, '1000000000000000000000.0'],
      [1e-7, '0.0000001'],
      [-0.0, '0.0'],
      [0, '0.0'],
      [1, '1.0'],
      [-2.5, '-2.5'],
      [0.1, '0.1'],
      [123456789.125, '123456789.125'],
      [5e-324, '0.' + '0'.repeat(323) + '5'],
      [1.7976931348623157e308, '17976931348623157' + '0'.repeat(292) + '.0'],
    ];
    const h = harness({ capability: CAP, rules: [r('C', 'warn', { what: '{{ acme.gw.d }}' })] });
    for (const [value, text] of cases) {
      expect(h.decide({ anchor: PRE, facts: { 'acme.gw.d': value } }).copy, String(value)).toEqual({ what: text });
    }
  });

  it('[OAR-COPY-3] [OAR-COPY-8] conditionals test non-zero; whitespace inside delimiters is insignificant', () => {
    const template = '{%if acme.gw.b%}B{% else %}b{%endif%}{% if not acme.gw.l %}-{% else %}[{{acme.gw.l}}]{% endif %}{%  if acme.gw.i  %}{% if acme.gw.s %}IS{% else %}I{% endif %}{% endif %}';
    expect(render(template, {})).toBe('b-');
    expect(render(template, { 'acme.gw.b': true, 'acme.gw.l': ['x'], 'acme.gw.i': 3, 'acme.gw.s': 'y' })).toBe('B[x]IS');
    expect(render(template, { 'acme.gw.i': -1 })).toBe('b-I');
    expect(render('{% if acme.gw.d %}D{% else %}zero{% endif %}', { 'acme.gw.d': -0.0 })).toBe('zero');
  });

  it('[OAR-COPY-7] [OAR-FACT-25] a binding the host has nothing to report for renders the zero value', () => {
    expect(render('[{{ acme.gw.s }}|{{ acme.gw.b }}|{{ acme.gw.i }}|{{ acme.gw.d }}|{{ acme.gw.l }}]', {})).toBe('[|false|0|0.0|]');
  });
});

describe('[OAR-COPY-1] [OAR-COPY-7] which copy a decision carries', () => {
  it('[OAR-COPY-1] a decision of none carries no copy', () => {
    const h = harness({ capability: CAP, rules: [r('A', 'allow', { what: 'allowed' }), r('B', 'warn', { what: 'warned' }, { when: 'false' })] });
    expect(h.decide({ anchor: PRE })).toMatchObject({ decision: 'none', copy: null, advisories: [] });
  });

  it('[OAR-COPY-7] [OAR-DOC-24] every member the rule gives, rendered; members it omits stay absent', () => {
    const all = { title: 'T {{ acme.gw.s }}', what: 'W', cause: 'C', why: 'Y', fix: 'F', instead: 'I' };
    expect(harness({ capability: CAP, rules: [r('A', 'block', all)] }).decide({ anchor: PRE, facts: { 'acme.gw.s': 's' } }).copy).toEqual({
      title: 'T s', what: 'W', cause: 'C', why: 'Y', fix: 'F', instead: 'I',
    });
    expect(harness({ capability: CAP, rules: [r('A', 'block', { fix: 'F' })] }).decide({ anchor: PRE }).copy).toEqual({ fix: 'F' });
    expect(harness({ capability: CAP, rules: [r('A', 'block', undefined)] }).decide({ anchor: PRE }).copy).toEqual({});
  });

  it('[OAR-COPY-7] [OAR-EVAL-8] the copy is that of the rule whose identifiers the decision carries', () => {
    const h = harness({ capability: CAP, rules: [r('A', 'nudge', { what: 'a' }), r('B', 'block', { what: 'b' }), r('C', 'block', { what: 'c' })] });
    const d = h.decide({ anchor: PRE });
    expect(head(d)).toEqual({ decision: 'block', code: 'B', rule: 'p/B' });
    expect(d.copy).toEqual({ what: 'b' });
  });

  it('[OAR-COPY-7] a transform decision carries the copy of the first transform rule', () => {
    const h = harness({
      capability: cap({ transform: true, hostFacts: [{ name: 'acme.gw.s', type: 'string' }] }),
      rules: ['A', 'B'].map((id) => rule({ id, namespace: 'p', anchor: PRE, effect: 'transform', transform: { action: 'annotate', target: 'content', replacement: id }, copy: { what: `${id} {{ acme.gw.s }}` }, requires: { facts: ['acme.gw.s'] } })),
    });
    const d = h.decide({ anchor: PRE, content: '>', facts: { 'acme.gw.s': 'x' } });
    expect(head(d)).toEqual({ decision: 'transform', code: 'A', rule: 'p/A' });
    expect(d.copy).toEqual({ what: 'A x' });
    expect(d.content).toBe('>AB');
    expect(d.advisories).toEqual([]);
  });

  it('[OAR-COPY-9] each advisory is rendered for its own rule: fire_count is that rule\'s own', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A', 'warn', { what: 'A has counted {{ fire_count }}' }, { on_fire: ['increment_counter'] }),
        r('B', 'warn', { what: 'B has counted {{ fire_count }}', why: '{{ breaker_count }}' }, { on_fire: ['increment_breaker'] }),
      ],
    });
    h.decide({ anchor: PRE });
    const d = h.decide({ anchor: PRE });
    expect(d.advisories).toEqual([
      { code: 'A', rule: 'p/A', copy: { what: 'A has counted 1' } },
      { code: 'B', rule: 'p/B', copy: { what: 'B has counted 0', why: '1' } },
    ]);
    expect(d.copy).toEqual({ what: 'A has counted 1' });
    expect(d.copy).not.toBe(d.advisories[1]?.copy);
  });
});

describe('[OAR-COPY-6] copy never affects the decision', () => {
  it('[OAR-COPY-6] [OAR-DOC-24] two packs differing only in copy produce identical decisions', () => {
    const pack = (copy: (id: string) => Record<string, string> | undefined) =>
      harness({
        capability: CAP,
        rules: [
          r('A', 'warn', copy('A'), { when: 'acme.gw.i > 1' }),
          r('B', 'nudge', copy('B'), { when: 'acme.gw.i > 2', on_fire: ['increment_counter'] }),
          r('C', 'block', copy('C'), { when: 'acme.gw.i > 3' }),
          r('D', 'allow', copy('D'), { overrides: ['A'], when: 'acme.gw.b' }),
        ],
      });
    const plain = pack(() => undefined);
    const rich = pack((id) => ({ title: `{% if acme.gw.b %}${id}{% endif %}`, what: '{{ acme.gw.s }} {{ acme.gw.l }} {{ acme.gw.d }}' }));
    const strip = (d: Decision) => ({ ...d, copy: d.copy === null ? null : 'copy', advisories: d.advisories.map((a) => ({ ...a, copy: 'copy' })) });
    for (const i of [0, 2, 3, 4, 3]) {
      for (const b of [false, true]) {
        const occ = { anchor: PRE, facts: { 'acme.gw.i': i, 'acme.gw.b': b, 'acme.gw.s': 'x', 'acme.gw.l': ['y'], 'acme.gw.d': 0.5 } };
        expect(strip(rich.decide(occ))).toEqual(strip(plain.decide(occ)));
      }
    }
  });
});

describe('copy that cannot be rendered', () => {
  it('[OAR-COPY-1] [OAR-FACT-11] copy of a rule the decision does not present is never read', () => {
    const throws = () => { throw new Error('must not be asked'); };
    const h = harness({
      capability: CAP,
      rules: [
        r('A_LOSES', 'warn', { what: '{{ acme.gw.s }}' }),
        r('B_PASSES', 'block', { what: '{{ acme.gw.s }}' }, { when: 'false' }),
        r('C_MONITOR', 'block', { what: '{{ acme.gw.s }}' }, { enforcement: 'monitor' }),
        r('D_SUPPRESSED', 'block', { what: '{{ acme.gw.s }}' }),
        r('E_WINS', 'nudge', { what: 'fine' }, { overrides: ['D_SUPPRESSED'] }),
      ],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.s': throws } });
    expect(trace(d)).toEqual(['p/A_LOSES:fired', 'p/B_PASSES:passed', 'p/C_MONITOR:monitored_fired', 'p/E_WINS:fired', 'p/D_SUPPRESSED:suppressed']);
    expect(head(d)).toEqual({ decision: 'nudge', code: 'E_WINS', rule: 'p/E_WINS' });
    expect(d.copy).toEqual({ what: 'fine' });
  });

  it('[OAR-FACT-26] presented copy that cannot be read fails its rule: fail_open drops it from the decision', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_BAD_COPY', 'warn', { what: '{{ acme.gw.s }}' }, { on_error: 'fail_open' }), r('B_GOOD', 'warn', { what: 'good' })],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.s': 42 } });
    expect(trace(d)).toEqual(['p/A_BAD_COPY:errored', 'p/B_GOOD:fired']);
    expect(d.applied[0]?.error?.code).toBe('wrong_type');
    expect(head(d)).toEqual({ decision: 'warn', code: 'B_GOOD', rule: 'p/B_GOOD' });
    expect(d.advisories).toEqual([{ code: 'B_GOOD', rule: 'p/B_GOOD', copy: { what: 'good' } }]);
  });

  it('[OAR-FACT-26] [OAR-OPS-4] fail_open on a block whose copy cannot be read: evaluation continues after it', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_BLOCK', 'block', { what: '{{ acme.gw.s }}' }, { on_error: 'fail_open' }), r('B_WARN', 'warn', { what: 'b' }), r('C_BLOCK', 'block', { what: 'c' }, { when: 'acme.gw.b' })],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.s': 3 } });
    expect(trace(d)).toEqual(['p/A_BLOCK:errored', 'p/B_WARN:fired', 'p/C_BLOCK:passed']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'B_WARN', rule: 'p/B_WARN' });
    const e = h.decide({ anchor: PRE, facts: { 'acme.gw.s': 3, 'acme.gw.b': true } });
    expect(trace(e)).toEqual(['p/A_BLOCK:errored', 'p/B_WARN:fired', 'p/C_BLOCK:fired']);
    expect(head(e)).toEqual({ decision: 'block', code: 'C_BLOCK', rule: 'p/C_BLOCK' });
    expect(e.copy).toEqual({ what: 'c' });
  });

  it('[OAR-FACT-26] [OAR-EVAL-14] a suppressor whose copy cannot be read did not fire: it suppresses nothing', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_SUP', 'nudge', { what: '{{ acme.gw.s }}' }, { overrides: ['C_T'], on_error: 'fail_open' }), r('C_T', 'warn', { what: 'c' })],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.s': true } });
    expect(trace(d)).toEqual(['p/A_SUP:errored', 'p/C_T:fired']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'C_T', rule: 'p/C_T' });
    expect(d.copy).toEqual({ what: 'c' });
  });

  it('[OAR-COPY-11] fail_closed: the block keeps the failing rule\'s identifiers and carries an empty copy', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_BAD_COPY', 'warn', { title: 'kept?', what: '{{ acme.gw.s }}' }), r('B_GOOD', 'warn', { what: 'good' })],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.s': ['not', 'a', 'string'] } });
    expect(head(d)).toEqual({ decision: 'block', code: 'A_BAD_COPY', rule: 'p/A_BAD_COPY' });
    // The whole object is omitted: no half-rendered copy, no zero substituted.
    expect(d.copy).toEqual({});
    expect(d.advisories).toEqual([]);
    // Reading chosen: the presentation failure is A's failure at A's place, so B is not reached.
    expect(trace(d)).toEqual(['p/A_BAD_COPY:errored']);
  });

  it('[OAR-COPY-11] [OAR-OPS-10] a suppressor past the rule whose copy failed suppresses nothing in the trace', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_BAD_COPY', 'warn', { what: '{{ acme.gw.s }}' }), r('B_SUP', 'allow', undefined, { overrides: ['C_T'] }), r('C_T', 'warn', { what: 'c' })],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.s': 1.5 } });
    expect(head(d)).toEqual({ decision: 'block', code: 'A_BAD_COPY', rule: 'p/A_BAD_COPY' });
    expect(trace(d)).toEqual(['p/A_BAD_COPY:errored']);
  });

  it('[OAR-COPY-11] an on_error block whose own copy reads the failed observation keeps its identifiers, copy {}', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_RAISES', 'warn', { what: 'i={{ acme.gw.i }}', fix: 'plain' }, { when: 'acme.gw.i > 0' })],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.i': 'seven' } });
    expect(head(d)).toEqual({ decision: 'block', code: 'A_RAISES', rule: 'p/A_RAISES' });
    expect(d.copy).toEqual({});
    expect(trace(d)).toEqual(['p/A_RAISES:errored']);
    expect(d.applied[0]?.error?.code).toBe('wrong_type');
  });

  it('[OAR-COPY-11] [OAR-OPS-5] a substitute whose copy cannot render: its identifiers, an empty copy, no second on_error', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A_RAISES', 'warn', { what: 'a' }, { when: '1 / acme.gw.i > 0', on_error: 'SUB' }),
        r('SUB', 'nudge', { what: '{{ acme.gw.s }}' }, { anchor: 'model.output', on_error: 'OTHER' }),
        r('OTHER', 'nudge', { what: 'other' }, { anchor: 'model.output' }),
      ],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.s': () => { throw new Error('down'); } } });
    expect(head(d)).toEqual({ decision: 'block', code: 'SUB', rule: 'p/SUB' });
    expect(d.copy).toEqual({});
    expect(trace(d)).toEqual(['p/A_RAISES:errored']);
  });
});
