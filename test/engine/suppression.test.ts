/**
 * Suppression (section 4.1): an enforced rule that fires suppresses the rules it names
 * ([OAR-EVAL-14]), not transitively ([OAR-EVAL-15]), recorded even past a short-circuit
 * ([OAR-OPS-10]), withdrawing what the named rule contributed ([OAR-CONF-12]) including its
 * side-effects ([OAR-EVAL-12]).
 */
import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../runtime/index.js';
import { cap, fired, harness, head, loadErrors, rule, trace } from './harness.js';

const CAP = cap({ profiles: ['tool'], hostFacts: [{ name: 'acme.gw.n', type: 'int' }] });
const PRE = 'tool.pre_invoke';

function r(id: string, effect: string, extra: Record<string, unknown> = {}): string {
  return rule({ id, namespace: 's', anchor: PRE, effect, requires: { facts: ['acme.gw.n'] }, ...extra });
}

describe('[OAR-EVAL-14] suppression', () => {
  it('[OAR-EVAL-14] [OAR-EVAL-12] a suppressed rule contributes no decision, applies no side-effect, is recorded suppressed', () => {
    let asked = 0;
    const events: EventRecord[] = [];
    const h = harness({
      capability: CAP,
      rules: [
        r('T_BLOCK', 'block', { when: 'acme.gw.n > 0', on_fire: ['increment_counter', 'publish_event'], copy: { what: 'T' } }),
        r('U_SUP', 'nudge', { overrides: ['T_BLOCK'], on_fire: ['publish_event'], copy: { what: 'U' } }),
      ],
      options: (b) => ({ events: { publish: (e) => { if (b === 'compiled') events.push(e); } } }),
    });
    const d = h.decide(() => ({ anchor: PRE, facts: { 'acme.gw.n': () => (asked++, 5) } }));
    expect(trace(d)).toEqual(['s/U_SUP:fired', 's/T_BLOCK:suppressed']);
    expect(head(d)).toEqual({ decision: 'nudge', code: 'U_SUP', rule: 's/U_SUP' });
    expect(d.copy).toEqual({ what: 'U' });
    expect(fired(d)).toEqual(['s/U_SUP:publish_event']);
    expect(d.counters).toEqual({});
    expect(events).toEqual([{ rule: 's/U_SUP', anchor: 'tool.pre_invoke', effect: 'nudge' }]);
    expect(asked).toBe(0); // T_BLOCK's condition was never evaluated
  });

  it('[OAR-EVAL-14] only a suppressor that fires suppresses, and only for that occurrence', () => {
    const h = harness({
      capability: CAP,
      rules: [r('T', 'warn'), r('U', 'allow', { when: 'acme.gw.n == 1', overrides: ['T'] })],
    });
    expect(trace(h.decide({ anchor: PRE, facts: { 'acme.gw.n': 1 } }))).toEqual(['s/U:fired', 's/T:suppressed']);
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.n': 2 } });
    expect(trace(d)).toEqual(['s/U:passed', 's/T:fired']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'T', rule: 's/T' });
    expect(trace(h.decide({ anchor: PRE, facts: { 'acme.gw.n': 1 } }))).toEqual(['s/U:fired', 's/T:suppressed']);
  });

  it('[OAR-EVAL-14] [OAR-OPS-4] a suppressor that cannot be evaluated (fail_open) suppresses nothing', () => {
    const h = harness({
      capability: CAP,
      rules: [r('T', 'warn'), r('U', 'allow', { when: '10 / acme.gw.n > 1', on_error: 'fail_open', overrides: ['T'] })],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['s/U:errored', 's/T:fired']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'T', rule: 's/T' });
  });

  it('[OAR-EVAL-14] of two suppressors of one rule, the one that fires is enough', () => {
    const h = harness({
      capability: CAP,
      rules: [r('T', 'block'), r('U1', 'allow', { when: 'false', overrides: ['T'] }), r('U2', 'warn', { overrides: ['T'] })],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['s/U1:passed', 's/U2:fired', 's/T:suppressed']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'U2', rule: 's/U2' });
  });

  it('[OAR-EVAL-15] suppression does not transit: A suppresses B, and C (named by B) still runs', () => {
    // X3 overrides X2, X2 overrides X1: evaluated X3, X2, X1.
    const h = harness({
      capability: CAP,
      rules: [r('X1', 'warn'), r('X2', 'nudge', { overrides: ['X1'] }), r('X3', 'allow', { overrides: ['X2'] })],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['s/X3:fired', 's/X2:suppressed', 's/X1:fired']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'X1', rule: 's/X1' });
  });

  it('[OAR-EVAL-17] a mandatory rule cannot be named in overrides', () => {
    const errors = loadErrors({ capability: CAP, rules: [r('M', 'block', { mandatory: true }), r('U', 'allow', { overrides: ['M'] })] });
    expect(errors.map((e) => e.clause)).toEqual(['OAR-EVAL-17']);
    expect(errors[0]?.message).toContain('s/M');
  });
});

describe('[OAR-OPS-10] suppressed rules are traced even past a short-circuit', () => {
  it('[OAR-OPS-10] a suppressor that blocks reaches its targets by suppression: they are recorded', () => {
    const h = harness({ capability: CAP, rules: [r('T1', 'warn'), r('T2', 'block'), r('U', 'block', { overrides: ['T1', 'T2'] }), r('V', 'warn')] });
    const d = h.decide({ anchor: PRE });
    // Evaluated U first (both targets wait for it); U blocks; T1 and T2 are suppressed; V is never reached.
    expect(trace(d)).toEqual(['s/U:fired', 's/T1:suppressed', 's/T2:suppressed']);
    expect(head(d)).toEqual({ decision: 'block', code: 'U', rule: 's/U' });
  });

  it('[OAR-OPS-10] a target after another rule\'s block is recorded suppressed; an unrelated rule there is omitted', () => {
    const h = harness({ capability: CAP, rules: [r('A_SUP', 'warn', { overrides: ['Z_T'] }), r('B_BLOCK', 'block'), r('C_OTHER', 'warn'), r('Z_T', 'warn')] });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['s/A_SUP:fired', 's/B_BLOCK:fired', 's/Z_T:suppressed']);
    expect(head(d)).toEqual({ decision: 'block', code: 'B_BLOCK', rule: 's/B_BLOCK' });
  });

  it('[OAR-OPS-10] [OAR-OPS-3] the same after an on_error block', () => {
    const h = harness({ capability: CAP, rules: [r('A_SUP', 'allow', { overrides: ['Z_T'] }), r('B_ERR', 'warn', { when: '1 / acme.gw.n > 0' }), r('C_OTHER', 'warn'), r('Z_T', 'warn')] });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['s/A_SUP:fired', 's/B_ERR:errored', 's/Z_T:suppressed']);
    expect(head(d)).toEqual({ decision: 'block', code: 'B_ERR', rule: 's/B_ERR' });
  });
});

describe('[OAR-CONF-12] withdrawal', () => {
  it('[OAR-CONF-12] a named rule that sorts before its suppressor contributes nothing, and evaluation continues', () => {
    // T sorts first but waits for U; once U fires, T's contribution (a block, a counter) is gone,
    // and later rules are still evaluated: suppression is not a short-circuit.
    const h = harness({
      capability: CAP,
      rules: [
        r('A_T', 'block', { on_fire: ['increment_counter'] }),
        r('B_U', 'warn', { overrides: ['A_T'] }),
        r('C_LATER', 'nudge', { when: 'fire_count_of("A_T") == 0' }),
      ],
    });
    for (let i = 0; i < 2; i++) {
      const d = h.decide({ anchor: PRE });
      expect(trace(d)).toEqual(['s/B_U:fired', 's/A_T:suppressed', 's/C_LATER:fired']);
      expect(head(d)).toEqual({ decision: 'nudge', code: 'C_LATER', rule: 's/C_LATER' });
      expect(d.advisories.map((a) => a.rule)).toEqual(['s/C_LATER']);
      expect(d.onFire).toEqual([]);
    }
  });
});
