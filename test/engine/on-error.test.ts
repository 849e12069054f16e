/**
 * A rule that cannot be evaluated ([OAR-OPS-3]): provider failures, detector failures, raises,
 * wrong-typed facts ([OAR-FACT-26]) — and where none of those may happen: facts a rule never reads
 * ([OAR-FACT-11], [OAR-EXPR-5]). `fail_closed`, `fail_open` and substitution ([OAR-OPS-3] to
 * [OAR-OPS-6]).
 */
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../compiler/index.js';
import type { DetectorInput } from '../../runtime/index.js';
import { cap, errorOf, fired, harness, head, rule, trace } from './harness.js';

const CAP = cap({
  profiles: ['tool', 'prompt-injection'],
  transform: true,
  detectors: ['detector://noop', 'detector://error', 'detector://fixture', 'detector://counting'],
  hostFacts: [
    { name: 'acme.gw.n', type: 'int' },
    { name: 'acme.gw.x', type: 'double' },
    { name: 'acme.gw.s', type: 'string' },
    { name: 'acme.gw.roles', type: 'list<string>' },
    { name: 'acme.gw.labels', type: 'map<string,string>' },
    { name: 'acme.gw.check', type: '(string) -> bool' },
  ],
});
const PRE = 'tool.pre_invoke';
const HOST = ['acme.gw.n', 'acme.gw.x', 'acme.gw.s', 'acme.gw.roles', 'acme.gw.labels', 'acme.gw.check'];

function r(id: string, effect: string, extra: Record<string, unknown> = {}): string {
  return rule({
    id,
    namespace: 'e',
    anchor: PRE,
    effect,
    requires: { profiles: ['tool', 'prompt-injection'], facts: HOST },
    ...(effect === 'transform' ? { transform: { action: 'replace', target: 'content', replacement: '<T>' } } : {}),
    ...extra,
  });
}

const DIV0 = '1 / acme.gw.n > 0';

describe('[OAR-OPS-3] fail_closed', () => {
  it('[OAR-OPS-3] blocks with the failing rule\'s identifiers and copy, and evaluates nothing after it', () => {
    let asked = 0;
    const h = harness({
      capability: CAP,
      rules: [
        r('A_COUNT', 'nudge', { on_fire: ['increment_counter'] }),
        r('B_RAISES', 'warn', { when: DIV0, copy: { what: 'B could not decide for {{ tool }}' } }),
        r('C_LATER', 'warn', { when: 'acme.gw.s == "x"', on_fire: ['increment_counter'] }),
      ],
    });
    const d = h.decide(() => ({ anchor: PRE, toolCall: { name: 'bash' }, facts: { 'acme.gw.s': () => (asked++, 'x') } }));
    expect(head(d)).toEqual({ decision: 'block', code: 'B_RAISES', rule: 'e/B_RAISES' });
    expect(d.copy).toEqual({ what: 'B could not decide for bash' });
    expect(trace(d)).toEqual(['e/A_COUNT:fired', 'e/B_RAISES:errored']);
    expect(d.applied[1]?.error).toMatchObject({ code: 'division_by_zero', clause: 'OAR-EXPR-14' });
    expect(d.advisories).toEqual([]);
    expect(asked).toBe(0);
    // [OAR-EVAL-12] the rule that fired before the failure keeps its side-effect.
    expect(fired(d)).toEqual(['e/A_COUNT:increment_counter']);
  });

  it('[OAR-OPS-6] [OAR-OPS-17] an on_error block outranks every effect already recorded, and discards transforms', () => {
    const h = harness({ capability: CAP, rules: [r('A_TRANSFORM', 'transform'), r('B_NUDGE', 'nudge'), r('C_RAISES', 'allow', { when: DIV0 })] });
    const d = h.decide({ anchor: PRE, content: 'secret' });
    expect(head(d)).toEqual({ decision: 'block', code: 'C_RAISES', rule: 'e/C_RAISES' });
    expect(trace(d)).toEqual(['e/A_TRANSFORM:fired', 'e/B_NUDGE:fired', 'e/C_RAISES:errored']);
    expect(d.transforms).toEqual([]);
    expect(d.skippedTransforms).toEqual([]);
    // [OAR-CONF-34] no transform applied: the content is the input unchanged (not to be delivered).
    expect(d.content).toBe('secret');
    expect(d.advisories).toEqual([]);
  });

  it('[OAR-DOC-18] on_error defaults to fail_closed', () => {
    const d = harness({ capability: CAP, rules: [r('RAISES', 'allow', { when: DIV0 })] }).decide({ anchor: PRE });
    expect(head(d)).toEqual({ decision: 'block', code: 'RAISES', rule: 'e/RAISES' });
  });
});

describe('[OAR-EVAL-10] monitor and unreadable selectors', () => {
  it('[OAR-EVAL-10] [OAR-FACT-26] a monitor rule whose selector cannot be read is monitored_errored, and nothing more', () => {
    const h = harness({ capability: CAP, rules: [r('A', 'block', { enforcement: 'monitor', selector: { 'acme.gw.s': ['x'] } }), r('B', 'nudge')] });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.s': false } });
    expect(trace(d)).toEqual(['e/A:monitored_errored', 'e/B:fired']);
    expect(head(d)).toEqual({ decision: 'nudge', code: 'B', rule: 'e/B' });
  });
});

describe('[OAR-OPS-4] fail_open', () => {
  it('[OAR-OPS-4] records the failure and continues; the rule contributes no decision and no side-effect', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_RAISES', 'block', { when: DIV0, on_error: 'fail_open', on_fire: ['increment_counter', 'publish_event'] }), r('B_WARN', 'warn')],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['e/A_RAISES:errored', 'e/B_WARN:fired']);
    expect(errorOf(d, 'e/A_RAISES')).toBe('division_by_zero');
    expect(head(d)).toEqual({ decision: 'warn', code: 'B_WARN', rule: 'e/B_WARN' });
    expect(d.onFire).toEqual([]);
    expect(d.events).toEqual([]);
    expect(d.counters).toEqual({});
  });
});

describe('[OAR-OPS-5] substitution', () => {
  it('[OAR-OPS-5] the worked example: block carrying FALLBACK\'s identifiers though FALLBACK is not selected', () => {
    const h = harness({
      capability: cap({ detectors: ['detector://error'] }),
      rules: [
        [
          'oar: "1.0"',
          'id: A_DETECTOR',
          'namespace: oar.test',
          'kind: detector',
          'anchor: tool.pre_invoke',
          'detector: { ref: "detector://error" }',
          'effect: warn',
          'on_error: FALLBACK',
          'copy: { what: "A_DETECTOR copy" }',
        ].join('\n'),
        [
          'oar: "1.0"',
          'id: FALLBACK',
          'namespace: oar.test',
          'kind: policy',
          'anchor: model.output',
          'effect: nudge',
          'copy:',
          '  title: Detector unavailable',
          '  what: "Refused at {{ anchor }}"',
        ].join('\n'),
      ],
    });
    const d = h.decide({ anchor: PRE });
    expect(head(d)).toEqual({ decision: 'block', code: 'FALLBACK', rule: 'oar.test/FALLBACK' });
    // The substitute's copy is rendered against this occurrence.
    expect(d.copy).toEqual({ title: 'Detector unavailable', what: 'Refused at tool.pre_invoke' });
    // Reading chosen: only selected rules are traced, so FALLBACK appears on the decision only.
    expect(trace(d)).toEqual(['oar.test/A_DETECTOR:errored']);
    expect(d.applied[0]?.error).toMatchObject({ code: 'provider_failure', clause: 'OAR-OPS-3' });
    expect(d.advisories).toEqual([]);
  });

  it('[OAR-OPS-5] a qualified on_error names a rule in another namespace; nothing after the failure runs', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A_RAISES', 'warn', { when: DIV0, on_error: 'ops.fallback/REFUSED' }),
        r('B_LATER', 'block'),
        rule({ id: 'REFUSED', namespace: 'ops.fallback', anchor: PRE, effect: 'allow', when: 'false', copy: { what: 'refused' } }),
      ],
    });
    const d = h.decide({ anchor: PRE });
    // REFUSED is selected here too, but sorts after the failure ("e/" < "ops."), so neither it nor
    // B_LATER is reached: the substitution does not evaluate it.
    expect(trace(d)).toEqual(['e/A_RAISES:errored']);
    expect(head(d)).toEqual({ decision: 'block', code: 'REFUSED', rule: 'ops.fallback/REFUSED' });
    expect(d.copy).toEqual({ what: 'refused' });
  });

  it('[OAR-OPS-5] [OAR-OPS-2] a substitute may be a rule that is off: loaded, never evaluated, still nameable', () => {
    const h = harness({
      capability: CAP,
      rules: [r('A_RAISES', 'warn', { when: DIV0, on_error: 'OFF_SUB' }), r('OFF_SUB', 'nudge', { enforcement: 'off', copy: { what: 'off but named' } })],
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['e/A_RAISES:errored']);
    expect(head(d)).toEqual({ decision: 'block', code: 'OFF_SUB', rule: 'e/OFF_SUB' });
    expect(d.copy).toEqual({ what: 'off but named' });
  });

  it('[OAR-OPS-5] a substitute that was selected and evaluated keeps its own trace outcome', () => {
    const h = harness({ capability: CAP, rules: [r('A_SUB', 'nudge', { when: 'false', copy: { what: 'sub' } }), r('B_RAISES', 'warn', { when: DIV0, on_error: 'A_SUB' })] });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['e/A_SUB:passed', 'e/B_RAISES:errored']);
    expect(head(d)).toEqual({ decision: 'block', code: 'A_SUB', rule: 'e/A_SUB' });
    expect(d.copy).toEqual({ what: 'sub' });
  });
});

describe('[OAR-OPS-3] what counts as a failure', () => {
  const open = (id: string, when: string, extra: Record<string, unknown> = {}) => r(id, 'warn', { when, on_error: 'fail_open', ...extra });

  it('[OAR-OPS-3] [OAR-EXPR-13] [OAR-EXPR-14] [OAR-EXPR-15] the raises of Appendix A', () => {
    const h = harness({
      capability: CAP,
      rules: [
        open('A_DIV', '7 / acme.gw.n == 1'),
        open('B_MOD', '7 % acme.gw.n == 1'),
        open('C_DDIV', '1.0 / acme.gw.x > 0.0'),
        open('D_OVERFLOW', '9223372036854775807 + acme.gw.n + 1 > 0'),
        open('E_INDEX', 'acme.gw.roles[acme.gw.n] == "x"'),
        open('F_NEGATIVE', 'acme.gw.roles[acme.gw.n - 1] == "x"'),
        open('G_KEY', 'acme.gw.labels["missing"] == "x"'),
        r('H_FINE', 'warn', { when: 'acme.gw.n == 0' }),
      ],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.labels': { present: 'y' } } });
    expect(trace(d)).toEqual([
      'e/A_DIV:errored', 'e/B_MOD:errored', 'e/C_DDIV:errored', 'e/D_OVERFLOW:errored',
      'e/E_INDEX:errored', 'e/F_NEGATIVE:errored', 'e/G_KEY:errored', 'e/H_FINE:fired',
    ]);
    expect(d.applied.map((t) => t.error?.code)).toEqual([
      'division_by_zero', 'division_by_zero', 'division_by_zero', 'overflow',
      'index_out_of_range', 'index_out_of_range', 'absent_key', undefined,
    ]);
    expect(head(d)).toEqual({ decision: 'warn', code: 'H_FINE', rule: 'e/H_FINE' });
  });

  it('[OAR-OPS-3] a fact provider that throws, and an observation function that throws', () => {
    let asked = 0;
    const h = harness({
      capability: CAP,
      rules: [open('A_FACT', 'acme.gw.s == "x"'), open('B_FACT_AGAIN', 'size(acme.gw.s) > 0'), open('C_FN', 'acme.gw.check("p")'), r('D_OK', 'nudge')],
    });
    const d = h.decide((b: Backend) => ({
      anchor: PRE,
      facts: {
        'acme.gw.s': () => { if (b === 'compiled') asked++; throw new Error('provider down'); },
        'acme.gw.check': () => { throw new Error('function down'); },
      },
    }));
    expect(trace(d)).toEqual(['e/A_FACT:errored', 'e/B_FACT_AGAIN:errored', 'e/C_FN:errored', 'e/D_OK:fired']);
    expect(d.applied.slice(0, 3).map((t) => t.error?.code)).toEqual(['provider_failure', 'provider_failure', 'provider_failure']);
    // A failing provider is asked once per occurrence and fails every rule that reads it alike.
    expect(asked).toBe(1);
  });

  it('[OAR-FACT-26] [OAR-FACT-23] a wrong-typed or non-finite value fails only the rule that reads it', () => {
    const h = harness({
      capability: CAP,
      rules: [
        open('A_READS_N', 'acme.gw.n > 0'),
        open('B_READS_X', 'acme.gw.x > 0.5'),
        open('C_READS_ROLES', '"admin" in acme.gw.roles'),
        open('D_READS_FN', 'acme.gw.check("p")'),
        r('E_READS_OTHERS', 'nudge', { when: 'acme.gw.s == "ok"' }),
      ],
    });
    const d = h.decide({
      anchor: PRE,
      facts: { 'acme.gw.n': '5', 'acme.gw.x': Number.NaN, 'acme.gw.roles': ['admin', 3], 'acme.gw.check': () => 'yes', 'acme.gw.s': 'ok' },
    });
    expect(trace(d)).toEqual(['e/A_READS_N:errored', 'e/B_READS_X:errored', 'e/C_READS_ROLES:errored', 'e/D_READS_FN:errored', 'e/E_READS_OTHERS:fired']);
    expect(d.applied.map((t) => t.error?.code)).toEqual(['wrong_type', 'provider_failure', 'wrong_type', 'wrong_type', undefined]);
    expect(head(d)).toEqual({ decision: 'nudge', code: 'E_READS_OTHERS', rule: 'e/E_READS_OTHERS' });
  });

  it('[OAR-FACT-26] [OAR-EXPR-5] a wrong-typed fact behind a guard that decides is never read', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A_AND', 'warn', { when: 'acme.gw.s == "go" && acme.gw.n > 1' }),
        r('B_OR', 'warn', { when: 'acme.gw.s != "go" || acme.gw.n > 1' }),
        r('C_TERNARY', 'warn', { when: 'acme.gw.s == "go" ? acme.gw.n > 1 : true' }),
      ],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.s': 'stop', 'acme.gw.n': 'not an int' } });
    expect(trace(d)).toEqual(['e/A_AND:passed', 'e/B_OR:fired', 'e/C_TERNARY:fired']);
    const e = h.decide({ anchor: PRE, facts: { 'acme.gw.s': 'go', 'acme.gw.n': 'not an int' } });
    expect(trace(e)).toEqual(['e/A_AND:errored']);
    expect(errorOf(e, 'e/A_AND')).toBe('wrong_type');
  });

  it('[OAR-FACT-25] an absent fact is its zero value, never a failure', () => {
    const h = harness({
      capability: CAP,
      rules: [r('ZEROES', 'warn', { when: 'acme.gw.n == 0 && acme.gw.x == 0.0 && acme.gw.s == "" && size(acme.gw.roles) == 0 && size(acme.gw.labels) == 0 && !acme.gw.check("p")' })],
    });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['e/ZEROES:fired']);
    // A provider returning undefined has nothing to report either.
    expect(trace(h.decide({ anchor: PRE, facts: { 'acme.gw.n': () => undefined, 'acme.gw.check': () => undefined } }))).toEqual(['e/ZEROES:fired']);
  });
});

describe('[OAR-FACT-11] lazy facts are produced only when a selected rule reads them', () => {
  it('[OAR-FACT-11] a provider is not called for an unselected rule, a guarded read, a rule past a block, or unpresented copy', () => {
    const calls: Record<Backend, string[]> = { specialised: [], compiled: [], interpreter: [] };
    const h = harness({
      capability: CAP,
      rules: [
        r('A_UNSELECTED', 'warn', { selector: { tool: ['other'] }, when: 'acme.gw.n > 0' }),
        r('B_GUARDED', 'warn', { when: 'tool == "nope" && acme.gw.x > 0.0' }),
        r('C_PASSES', 'warn', { when: 'false', copy: { what: '{{ acme.gw.roles }}' } }),
        r('D_LOSES', 'warn', { copy: { what: '{{ acme.gw.roles }}' } }),
        r('E_BLOCKS', 'block', { copy: { what: 'blocked' } }),
        r('F_LATER', 'warn', { when: 'acme.gw.s == "x"' }),
        rule({ id: 'G_ELSEWHERE', namespace: 'e', anchor: 'model.output', effect: 'block', requires: { facts: HOST }, when: 'acme.gw.n > 0' }),
      ],
    });
    const d = h.decide((b) => {
      const provider = (name: string, v: unknown) => () => (calls[b].push(name), v);
      return {
        anchor: PRE,
        toolCall: { name: 'bash' },
        facts: { 'acme.gw.n': provider('n', 1), 'acme.gw.x': provider('x', 1.5), 'acme.gw.s': provider('s', 'x'), 'acme.gw.roles': provider('roles', ['r']) },
      };
    });
    expect(trace(d)).toEqual(['e/B_GUARDED:passed', 'e/C_PASSES:passed', 'e/D_LOSES:fired', 'e/E_BLOCKS:fired']);
    expect(head(d)).toEqual({ decision: 'block', code: 'E_BLOCKS', rule: 'e/E_BLOCKS' });
    expect(calls).toEqual({ specialised: [], compiled: [], interpreter: [] });
  });

  it('[OAR-FACT-11] a provider read by many rules is called once per occurrence', () => {
    let asked = 0;
    const h = harness({ capability: CAP, rules: [r('A', 'warn', { when: 'acme.gw.n > 0' }), r('B', 'warn', { when: 'acme.gw.n > 1', copy: { what: '{{ acme.gw.n }}' } }), r('C', 'nudge', { selector: {}, when: 'acme.gw.n < 9' })] });
    const d = h.decide((b) => ({ anchor: PRE, facts: { 'acme.gw.n': () => { if (b === 'compiled') asked++; return 2; } } }));
    expect(trace(d)).toEqual(['e/A:fired', 'e/B:fired', 'e/C:fired']);
    expect(asked).toBe(1);
    h.decide((b) => ({ anchor: PRE, facts: { 'acme.gw.n': () => { if (b === 'compiled') asked++; return 2; } } }));
    expect(asked).toBe(2); // a new occurrence asks again
  });
});

describe('[OAR-FACT-11] [OAR-CONF-25] detectors', () => {
  const det = (id: string, ref: string, extra: Record<string, unknown> = {}) =>
    r(id, 'warn', { kind: 'detector', detector: { ref: `detector://${ref}` }, ...extra });

  it('[OAR-CONF-25] detector://error fails its rule; detector://noop reports nothing', () => {
    const h = harness({ capability: CAP, rules: [det('A_ERROR', 'error', { on_error: 'fail_open' }), det('B_NOOP', 'noop', { when: 'prompt_injection_score == 0.0' })] });
    const d = h.decide({ anchor: PRE, detectorFacts: { prompt_injection_score: 0.9 } });
    expect(trace(d)).toEqual(['e/A_ERROR:errored', 'e/B_NOOP:fired']);
    expect(errorOf(d, 'e/A_ERROR')).toBe('provider_failure');
  });

  it('[OAR-FACT-11] [OAR-CONF-25] what a detector produces is visible to its own rule only', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A_POLICY', 'warn', { when: 'prompt_injection_score > 0.5' }),
        det('B_FIXTURE', 'fixture', { when: 'prompt_injection_score > 0.5', copy: { what: 'score {{ prompt_injection_score }}' } }),
        det('C_NOOP_AFTER', 'noop', { when: 'prompt_injection_score > 0.5' }),
        det('D_FIXTURE_AGAIN', 'fixture', { when: 'prompt_injection_score > 0.8' }),
      ],
    });
    const d = h.decide({ anchor: PRE, detectorFacts: { prompt_injection_score: 0.75 } });
    expect(trace(d)).toEqual(['e/A_POLICY:passed', 'e/B_FIXTURE:fired', 'e/C_NOOP_AFTER:passed', 'e/D_FIXTURE_AGAIN:passed']);
    // Copy of the presented rule is rendered with its own detector's facts.
    expect(d.copy).toEqual({ what: 'score 0.75' });
    // A host value under the same name is what every other rule sees.
    const e = h.decide({ anchor: PRE, facts: { prompt_injection_score: 0.6 }, detectorFacts: { prompt_injection_score: 0.1 } });
    expect(trace(e)).toEqual(['e/A_POLICY:fired', 'e/B_FIXTURE:passed', 'e/C_NOOP_AFTER:fired', 'e/D_FIXTURE_AGAIN:passed']);
  });

  it('[OAR-FACT-26] a detector fact of the wrong type fails the rule that invoked the detector', () => {
    const h = harness({ capability: CAP, rules: [det('A_FIXTURE', 'fixture', { when: 'prompt_injection_score > 0.5', on_error: 'fail_open' }), r('B', 'nudge', { when: 'prompt_injection_score == 0.0' })] });
    const d = h.decide({ anchor: PRE, detectorFacts: { prompt_injection_score: 'high' } });
    expect(trace(d)).toEqual(['e/B:fired', 'e/A_FIXTURE:errored']);
    expect(errorOf(d, 'e/A_FIXTURE')).toBe('wrong_type');
  });

  it('[OAR-FACT-11] [OAR-EVAL-3] a detector runs only when its rule is evaluated, after flow, once per rule', () => {
    const seen: Record<Backend, string[]> = { specialised: [], compiled: [], interpreter: [] };
    const counting = (b: Backend) => ({
      detectors: {
        'detector://counting': (input: DetectorInput) => {
          seen[b].push(`${input.rule}@${input.anchor}`);
          return { prompt_injection_score: 0.9 };
        },
      },
    });
    const h = harness({
      capability: cap({
        profiles: ['tool', 'prompt-injection'],
        window: 2,
        core: { ...Object.fromEntries(['tool.pre_invoke', 'model.output'].map((a) => [a, a])), 'tool.post_invoke': 'gw.post' },
        detectors: ['detector://counting'],
      }),
      rules: [
        det('A_UNSELECTED', 'counting', { selector: { tool: ['other'] }, requires: { profiles: ['tool', 'prompt-injection'] } }),
        det('B_FLOW', 'counting', { flow: ['never'], requires: { profiles: ['tool', 'prompt-injection'] } }),
        det('C_RUNS', 'counting', { effect: 'nudge', when: 'prompt_injection_score > 0.5', requires: { profiles: ['tool', 'prompt-injection'] } }),
        det('D_SUPPRESSED', 'counting', { requires: { profiles: ['tool', 'prompt-injection'] } }),
        det('E_SUPPRESSOR', 'counting', { effect: 'allow', overrides: ['D_SUPPRESSED'], requires: { profiles: ['tool', 'prompt-injection'] } }),
        det('F_BLOCKS', 'counting', { effect: 'block', requires: { profiles: ['tool', 'prompt-injection'] } }),
        det('G_AFTER', 'counting', { requires: { profiles: ['tool', 'prompt-injection'] } }),
        rule({ id: 'H_POST', namespace: 'e', kind: 'detector', anchor: 'tool.post_invoke', effect: 'warn', detector: { ref: 'detector://counting' } }),
      ],
      options: counting,
    });
    const d = h.decide({ anchor: PRE, toolCall: { name: 'bash' } });
    expect(trace(d)).toEqual(['e/B_FLOW:passed', 'e/C_RUNS:fired', 'e/E_SUPPRESSOR:fired', 'e/D_SUPPRESSED:suppressed', 'e/F_BLOCKS:fired']);
    expect(seen.compiled).toEqual(['e/C_RUNS@tool.pre_invoke', 'e/E_SUPPRESSOR@tool.pre_invoke', 'e/F_BLOCKS@tool.pre_invoke']);
    expect(seen.interpreter).toEqual(seen.compiled);
    h.decide({ anchor: 'gw.post' });
    expect(seen.compiled.slice(3)).toEqual(['e/H_POST@tool.post_invoke']);
  });

  it('[OAR-COPY-1] [OAR-FACT-11] the copy of a detector rule that raised is rendered with its detector\'s facts', () => {
    const h = harness({
      capability: CAP,
      rules: [det('A_FIXTURE', 'fixture', { when: DIV0, copy: { what: 'score {{ prompt_injection_score }}' } })],
    });
    const d = h.decide({ anchor: PRE, detectorFacts: { prompt_injection_score: 0.25 } });
    expect(head(d)).toEqual({ decision: 'block', code: 'A_FIXTURE', rule: 'e/A_FIXTURE' });
    expect(d.copy).toEqual({ what: 'score 0.25' });
  });

  it('[OAR-OPS-3] a detector that throws is a failure of its rule: fail_closed blocks with its identifiers', () => {
    const h = harness({
      capability: CAP,
      rules: [det('A_DOWN', 'counting', { copy: { what: 'scanner down' } }), r('B', 'nudge')],
      options: () => ({ detectors: { 'detector://counting': () => { throw new Error('unreachable'); } } }),
    });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['e/B:fired', 'e/A_DOWN:errored']);
    expect(head(d)).toEqual({ decision: 'block', code: 'A_DOWN', rule: 'e/A_DOWN' });
    expect(d.copy).toEqual({ what: 'scanner down' });
  });

  it('[OAR-COPY-11] a detector that failed observed nothing: a copy needing its facts is omitted, never rendered with zeros', () => {
    const copy = { title: 'Injection', what: 'score {{ prompt_injection_score }}', fix: '{% if prompt_injection_score %}high{% else %}none{% endif %}' };
    const h = harness({
      capability: CAP,
      rules: [
        det('A_ERROR', 'error', { selector: { tool: ['a'] }, when: 'prompt_injection_score > 0.5', copy }),
        // The copy reads only what the occurrence itself observes: it still renders.
        det('B_ERROR', 'error', { selector: { tool: ['b'] }, copy: { what: 'the {{ tool }} call' } }),
      ],
    });
    const d = h.decide({ anchor: PRE, toolCall: { name: 'a' } });
    expect(head(d)).toEqual({ decision: 'block', code: 'A_ERROR', rule: 'e/A_ERROR' });
    expect(d.copy).toEqual({});
    // The host observing the fact itself makes it available again.
    expect(h.decide({ anchor: PRE, toolCall: { name: 'a' }, facts: { prompt_injection_score: 0.75 } }).copy).toEqual({ title: 'Injection', what: 'score 0.75', fix: 'high' });
    expect(h.decide({ anchor: PRE, toolCall: { name: 'b' } }).copy).toEqual({ what: 'the b call' });
  });

  it('[OAR-COPY-11] [OAR-COPY-7] [OAR-FACT-25] a failed detector makes only its own facts unavailable: host facts the host did not report render as their zero', () => {
    const profiles = ['tool', 'session', 'prompt-injection'];
    const h = harness({
      capability: cap({ profiles, detectors: ['detector://error'] }),
      rules: [
        rule({
          id: 'SCAN', namespace: 'e', kind: 'detector', anchor: PRE, effect: 'warn',
          detector: { ref: 'detector://error' }, requires: { profiles },
          copy: {
            title: 'Scan failed',
            what: "posture '{{ session_posture }}' denied {{ policy_denied }} profile '{{ permission_profile }}' fp '{{ tool_args_fingerprint }}' roles '{{ principal_roles }}'",
            fix: '{% if policy_denied %}denied{% else %}retry{% endif %}',
          },
        }),
      ],
    });
    // No tool call, no facts: every one of those is a host observation with nothing to report.
    const d = h.decide({ anchor: PRE });
    expect(head(d)).toEqual({ decision: 'block', code: 'SCAN', rule: 'e/SCAN' });
    expect(d.copy).toEqual({ title: 'Scan failed', what: "posture '' denied false profile '' fp '' roles ''", fix: 'retry' });
  });

  it('[OAR-COPY-11] what a registered detector lists in `produces` is unavailable when it fails; the rest of the host facts still render', () => {
    const failing = Object.assign(() => { throw new Error('scanner down'); }, { produces: ['acme.gw.s'] });
    const h = harness({
      capability: CAP,
      rules: [
        det('A_OWN', 'counting', { selector: { tool: ['a'] }, copy: { what: 'found {{ acme.gw.s }}' } }),
        det('B_HOST', 'counting', { selector: { tool: ['b'] }, copy: { what: 'n={{ acme.gw.n }}' } }),
      ],
      options: () => ({ detectors: { 'detector://counting': failing } }),
    });
    const a = h.decide({ anchor: PRE, toolCall: { name: 'a' } });
    expect(head(a)).toEqual({ decision: 'block', code: 'A_OWN', rule: 'e/A_OWN' });
    expect(a.copy).toEqual({});
    // Supplied by the host, the same fact is an observation and renders.
    expect(h.decide({ anchor: PRE, toolCall: { name: 'a' }, facts: { 'acme.gw.s': 'x' } }).copy).toEqual({ what: 'found x' });
    expect(h.decide({ anchor: PRE, toolCall: { name: 'b' } }).copy).toEqual({ what: 'n=0' });
  });

  it('[OAR-COPY-11] [OAR-OPS-5] a substitute detector rule whose detector never ran: its copy needing detector facts is omitted', () => {
    const h = harness({
      capability: CAP,
      rules: [
        r('A_FAILS', 'warn', { when: DIV0, on_error: 'S_SCAN' }),
        det('S_SCAN', 'fixture', { selector: { tool: ['never'] }, copy: { what: 'score {{ prompt_injection_score }}' } }),
      ],
    });
    const d = h.decide({ anchor: PRE, toolCall: { name: 'a' }, facts: { 'acme.gw.n': 0 }, detectorFacts: { prompt_injection_score: 0.5 } });
    expect(head(d)).toEqual({ decision: 'block', code: 'S_SCAN', rule: 'e/S_SCAN' });
    expect(d.copy).toEqual({});
  });
});
