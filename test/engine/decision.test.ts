/**
 * Resolving a decision: short-circuit ([OAR-EVAL-4], [OAR-EVAL-5]), precedence ([OAR-EVAL-6]),
 * allow ([OAR-EVAL-7]), the identifiers a decision carries ([OAR-EVAL-8], [OAR-EVAL-19]), its
 * advisories ([OAR-EVAL-20]), and monitor mode ([OAR-EVAL-10], [OAR-OPS-1], [OAR-CONF-11]).
 */
import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../runtime/index.js';
import { cap, fired, harness, head, rule, trace } from './harness.js';

const CAP = cap({ profiles: ['tool'], transform: true, hostFacts: [{ name: 'acme.gw.n', type: 'int' }] });
const PRE = 'tool.pre_invoke';

/** A rule in namespace `t` at tool.pre_invoke. */
function r(id: string, effect: string, extra: Record<string, unknown> = {}): string {
  return rule({
    id,
    namespace: 't',
    anchor: PRE,
    effect,
    requires: { facts: ['acme.gw.n'] },
    ...(effect === 'transform' ? { transform: { action: 'replace', target: 'content', replacement: `<${id}>` } } : {}),
    ...extra,
  });
}

describe('[OAR-EVAL-4] [OAR-EVAL-5] short-circuit', () => {
  it('[OAR-EVAL-4] [OAR-EVAL-12] [OAR-CONF-13] the first enforced block stops evaluation; later rules are not evaluated', () => {
    let asked = 0;
    const h = harness({
      capability: CAP,
      rules: [
        r('A', 'warn', { on_fire: ['increment_counter'] }),
        r('B', 'block', { on_fire: ['increment_counter'] }),
        r('C', 'block', { on_fire: ['increment_counter'] }),
        r('D', 'warn', { when: 'acme.gw.n > 0' }),
      ],
    });
    const d = h.decide(() => ({ anchor: PRE, facts: { 'acme.gw.n': () => (asked++, 1) } }));
    expect(trace(d)).toEqual(['t/A:fired', 't/B:fired']);
    expect(head(d)).toEqual({ decision: 'block', code: 'B', rule: 't/B' });
    expect(asked).toBe(0);
    // A lost precedence but fired: its side-effect applies. C was never reached: its does not.
    expect(fired(d)).toEqual(['t/A:increment_counter', 't/B:increment_counter']);
    expect(Object.keys(d.counters)).toEqual(['t/A', 't/B']);
  });

  it('[OAR-EVAL-4] a block that does not fire, or fires in monitor mode, stops nothing', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A', 'block', { when: 'false' }), r('B', 'block', { enforcement: 'monitor' }), r('C', 'nudge')],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['t/A:passed', 't/B:monitored_fired', 't/C:fired']);
    expect(head(d)).toEqual({ decision: 'nudge', code: 'C', rule: 't/C' });
  });

  it('[OAR-EVAL-5] [OAR-CONF-13] a transform does not short-circuit; a later block still wins', () => {
    const h = harness({ capability: CAP, rules: [r('A', 'transform'), r('B', 'warn'), r('C', 'transform')] });
    const d = h.decide({ anchor: PRE, content: 'abc' });
    expect(trace(d)).toEqual(['t/A:fired', 't/B:fired', 't/C:fired']);
    expect(head(d)).toEqual({ decision: 'transform', code: 'A', rule: 't/A' });
    const g = harness({ capability: CAP, rules: [r('A', 'transform'), r('Z', 'block')] });
    const e = g.decide({ anchor: PRE, content: 'abc' });
    expect(trace(e)).toEqual(['t/A:fired', 't/Z:fired']);
    expect(head(e)).toEqual({ decision: 'block', code: 'Z', rule: 't/Z' });
  });
});

describe('[OAR-EVAL-6] precedence: block, transform, nudge, warn, none', () => {
  const cases: [string, string[], string, string][] = [
    ['warn then nudge', ['A:warn', 'B:nudge'], 'nudge', 'B'],
    ['nudge then warn', ['A:nudge', 'B:warn'], 'nudge', 'A'],
    ['nudge then transform', ['A:nudge', 'B:transform'], 'transform', 'B'],
    ['warn, transform, nudge', ['A:warn', 'B:transform', 'C:nudge'], 'transform', 'B'],
    ['transform then block', ['A:transform', 'B:block'], 'block', 'B'],
    ['nudge then block', ['A:nudge', 'B:block'], 'block', 'B'],
    ['warn alone', ['A:warn'], 'warn', 'A'],
    ['allow alone', ['A:allow'], 'none', ''],
  ];
  for (const [name, specs, decision, code] of cases) {
    it(`[OAR-EVAL-6] [OAR-CONF-14] ${name} → ${decision}`, () => {
      const h = harness({ capability: CAP, rules: specs.map((s) => { const [id, effect] = s.split(':') as [string, string]; return r(id, effect); }) });
      const d = h.decide({ anchor: PRE, content: 'abc' });
      expect(head(d)).toEqual(code === '' ? { decision, code: null, rule: null } : { decision, code, rule: `t/${code}` });
      expect(trace(d)).toEqual(specs.map((s) => `t/${s.split(':')[0]}:fired`));
    });
  }

  it('[OAR-EVAL-6] [OAR-EVAL-2] the decision depends on effects, not on kind', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A', 'warn', { kind: 'schema' }), r('B', 'nudge', { kind: 'invariant' })],
    });
    expect(head(h.decide({ anchor: PRE }))).toEqual({ decision: 'nudge', code: 'B', rule: 't/B' });
  });
});

describe('[OAR-EVAL-7] allow', () => {
  it('[OAR-EVAL-7] an allow fires, is traced, and contributes no decision', () => {
    const h = harness({ capability: CAP, rules: [r('A', 'allow'), r('B', 'allow')] });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['t/A:fired', 't/B:fired']);
    expect(d).toMatchObject({ decision: 'none', code: null, rule: null, copy: null, advisories: [] });
  });

  it('[OAR-EVAL-7] an allow overrides none of block, transform, nudge or warn', () => {
    for (const effect of ['block', 'transform', 'nudge', 'warn']) {
      const h = harness({ capability: CAP, rules: [r('A', 'allow'), r('B', effect), r('C', 'allow')] });
      const d = h.decide({ anchor: PRE, content: 'x' });
      expect(head(d)).toEqual({ decision: effect, code: 'B', rule: 't/B' });
    }
  });
});

describe('[OAR-EVAL-8] [OAR-EVAL-19] the identifiers a decision carries', () => {
  it('[OAR-EVAL-8] [OAR-EVAL-9] the bare id and the qualified identifier of the rule that produced it', () => {
    const h = harness({
      capability: CAP,
      rules: [rule({ id: 'SAME', namespace: 'beta.pub', anchor: PRE, effect: 'block', when: 'false' }), rule({ id: 'SAME', namespace: 'acme.pub', anchor: PRE, effect: 'block' })],
    });
    expect(head(h.decide({ anchor: PRE }))).toEqual({ decision: 'block', code: 'SAME', rule: 'acme.pub/SAME' });
    const bare = harness({ capability: CAP, rules: [rule({ id: 'LOCAL', anchor: PRE, effect: 'warn' })] });
    expect(head(bare.decide({ anchor: PRE }))).toEqual({ decision: 'warn', code: 'LOCAL', rule: 'LOCAL' });
  });

  it('[OAR-EVAL-19] several rules fired with the winning effect: the first in evaluation order is named', () => {
    const h = harness({ capability: CAP, rules: [r('A', 'warn'), r('B', 'nudge'), r('C', 'warn'), r('D', 'nudge')] });
    expect(head(h.decide({ anchor: PRE }))).toEqual({ decision: 'nudge', code: 'B', rule: 't/B' });
    const g = harness({ capability: CAP, rules: [r('A', 'transform'), r('B', 'transform')] });
    expect(head(g.decide({ anchor: PRE, content: 'x' }))).toEqual({ decision: 'transform', code: 'A', rule: 't/A' });
  });

  it('[OAR-EVAL-19] [OAR-EVAL-18] "first" is evaluation order, which a suppressor can amend, not identifier order', () => {
    // Sorted C_N, D_X, Z_N; D_X overrides C_N, Z_N overrides D_X. Evaluated: Z_N, D_X, C_N.
    const h = harness({
      capability: CAP,
      rules: [r('C_N', 'nudge'), r('D_X', 'allow', { overrides: ['C_N'] }), r('Z_N', 'nudge', { overrides: ['D_X'] })],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['t/Z_N:fired', 't/D_X:suppressed', 't/C_N:fired']);
    expect(head(d)).toEqual({ decision: 'nudge', code: 'Z_N', rule: 't/Z_N' });
    expect(d.advisories.map((a) => a.rule)).toEqual(['t/Z_N', 't/C_N']);
  });
});

describe('[OAR-EVAL-20] advisories', () => {
  const copied = (id: string, effect: string, extra: Record<string, unknown> = {}) =>
    r(id, effect, { copy: { what: `${id} what`, fix: `${id} fix n={{ acme.gw.n }}` }, ...extra });

  it('[OAR-EVAL-20] [OAR-COPY-9] every enforced nudge, in evaluation order, each with its own copy', () => {
    const h = harness({
      capability: CAP,
      rules: [
        copied('A', 'nudge'),
        copied('B', 'warn'),
        copied('C', 'nudge', { copy: { title: 'C only' } }),
        copied('D', 'nudge', { enforcement: 'monitor' }),
        copied('E', 'nudge', { when: 'false' }),
        copied('F', 'allow'),
        copied('G', 'nudge'),
      ],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.n': 7 } });
    expect(d.advisories).toEqual([
      { code: 'A', rule: 't/A', copy: { what: 'A what', fix: 'A fix n=7' } },
      { code: 'C', rule: 't/C', copy: { title: 'C only' } },
      { code: 'G', rule: 't/G', copy: { what: 'G what', fix: 'G fix n=7' } },
    ]);
    // [OAR-COPY-7] the decision's copy is the first item's copy.
    expect(d.copy).toEqual({ what: 'A what', fix: 'A fix n=7' });
    expect(head(d)).toEqual({ decision: 'nudge', code: 'A', rule: 't/A' });
  });

  it('[OAR-EVAL-20] a warn decision lists every enforced warn; suppressed ones are left out', () => {
    const h = harness({
      capability: CAP,
      rules: [copied('A', 'warn'), copied('B', 'warn'), copied('C', 'warn', { overrides: ['B'] }), copied('D', 'warn', { enforcement: 'monitor' })],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['t/A:fired', 't/C:fired', 't/B:suppressed', 't/D:monitored_fired']);
    expect(d.advisories).toEqual([
      { code: 'A', rule: 't/A', copy: { what: 'A what', fix: 'A fix n=0' } },
      { code: 'C', rule: 't/C', copy: { what: 'C what', fix: 'C fix n=0' } },
    ]);
  });

  it('[OAR-EVAL-20] block, transform and none carry no advisories', () => {
    const block = harness({ capability: CAP, rules: [copied('A', 'warn'), copied('B', 'block')] }).decide({ anchor: PRE });
    expect(block.decision).toBe('block');
    expect(block.advisories).toEqual([]);
    expect(block.copy).toEqual({ what: 'B what', fix: 'B fix n=0' });
    const transform = harness({ capability: CAP, rules: [copied('A', 'nudge'), copied('B', 'transform')] }).decide({ anchor: PRE, content: 'x' });
    expect(transform.decision).toBe('transform');
    expect(transform.advisories).toEqual([]);
    const none = harness({ capability: CAP, rules: [copied('A', 'nudge', { enforcement: 'monitor' }), copied('B', 'allow')] }).decide({ anchor: PRE });
    expect(none).toMatchObject({ decision: 'none', advisories: [], copy: null });
  });
});

describe('[OAR-EVAL-10] [OAR-OPS-1] monitor', () => {
  it('[OAR-OPS-9] [OAR-EVAL-10] monitored_fired, monitored_passed, monitored_errored', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A', 'block', { enforcement: 'monitor' }),
        r('B', 'block', { enforcement: 'monitor', when: 'false' }),
        r('C', 'block', { enforcement: 'monitor', when: '1 / acme.gw.n > 0' }),
      ],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['t/A:monitored_fired', 't/B:monitored_passed', 't/C:monitored_errored']);
    expect(d.applied[2]?.error?.code).toBe('division_by_zero');
    expect(head(d)).toEqual({ decision: 'none', code: null, rule: null });
  });

  it('[OAR-EVAL-10] a monitor rule that raises never applies its on_error (fail_closed, or a substitute)', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A', 'warn', { enforcement: 'monitor', when: '1 / acme.gw.n > 0', on_error: 'fail_closed' }),
        r('B', 'warn', { enforcement: 'monitor', when: '1 / acme.gw.n > 0', on_error: 'SUB' }),
        r('C', 'nudge'),
        r('SUB', 'block', { when: 'false' }),
      ],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['t/A:monitored_errored', 't/B:monitored_errored', 't/C:fired', 't/SUB:passed']);
    expect(head(d)).toEqual({ decision: 'nudge', code: 'C', rule: 't/C' });
  });

  it('[OAR-EVAL-10] [OAR-CONF-11] monitor: no effect, no side-effect, no suppression, no short-circuit', () => {
    const log: EventRecord[] = [];
    const h = harness({
      capability: CAP,
      rules: [
        r('A_BLOCK', 'block', { enforcement: 'monitor', overrides: ['B_WARN'], on_fire: ['increment_counter', 'increment_breaker', 'publish_event'] }),
        r('B_WARN', 'warn'),
        r('C_READ', 'nudge', { when: 'fire_count_of("A_BLOCK") == 0 && breaker_count_of("A_BLOCK") == 0' }),
        r('D_TRANSFORM', 'transform', { enforcement: 'monitor' }),
      ],
      options: (b) => ({ events: { publish: (e) => { if (b === 'compiled') log.push(e); } } }),
    });
    for (let i = 0; i < 2; i++) {
      const d = h.decide({ anchor: PRE, content: 'abc' });
      expect(trace(d)).toEqual(['t/A_BLOCK:monitored_fired', 't/B_WARN:fired', 't/C_READ:fired', 't/D_TRANSFORM:monitored_fired']);
      expect(head(d)).toEqual({ decision: 'nudge', code: 'C_READ', rule: 't/C_READ' });
      expect(d.advisories.map((a) => a.rule)).toEqual(['t/C_READ']);
      expect(d.onFire).toEqual([]);
      expect(d.events).toEqual([]);
      expect(d.counters).toEqual({});
      expect(d.transforms).toEqual([]);
      expect(d.content).toBe('abc');
    }
    expect(log).toEqual([]);
  });

  it('[OAR-EVAL-18] a monitor suppressor is still ordered before the rule it names', () => {
    // Reading: ordering follows selection, whatever the enforcement; only suppression is withheld.
    const h = harness({ capability: CAP, rules: [r('A', 'warn'), r('B', 'allow', { enforcement: 'monitor', overrides: ['A'] })] });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['t/B:monitored_fired', 't/A:fired']);
  });
});
