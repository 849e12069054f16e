/**
 * `flow` and recent activity: flow is tested before `when` ([OAR-EVAL-3]), matches as an ordered,
 * possibly non-contiguous subsequence ([OAR-FACT-12]), over a per-session window the engine keeps
 * as [OAR-PROF-9] describes (and an occurrence may replace for itself, [OAR-CONF-40]).
 */
import { describe, expect, it } from 'vitest';
import { cap, harness, head, rule, trace } from './harness.js';

const PRE = 'tool.pre_invoke';
const POST = 'tool.post_invoke';

function r(id: string, extra: Record<string, unknown> = {}): string {
  return rule({ id, anchor: PRE, effect: 'warn', requires: { profiles: ['tool'] }, ...extra });
}

const call = (name: string, extra: Record<string, unknown> = {}) => ({ anchor: PRE, toolCall: { name }, ...extra });

describe('[OAR-EVAL-3] flow before when', () => {
  const h = () =>
    harness({
      capability: cap({ profiles: ['tool'], window: 4 }),
      rules: [r('F', { flow: ['read', 'write'], when: '1 / tool_arg_int("n") > 0' })],
    });

  it('[OAR-EVAL-3] a rule whose when would raise but whose flow does not match is passed, not errored', () => {
    const d = h().decide(call('x', { recentActivity: ['write', 'read'], toolCall: { name: 'x', arguments: { n: 0 } } }));
    expect(trace(d)).toEqual(['F:passed']);
    expect(head(d)).toEqual({ decision: 'none', code: null, rule: null });
  });

  it('[OAR-EVAL-3] once flow matches, when is evaluated: its raise takes the rule down on_error', () => {
    const d = h().decide(call('x', { recentActivity: ['read', 'write'], toolCall: { name: 'x', arguments: { n: 0 } } }));
    expect(trace(d)).toEqual(['F:errored']);
    expect(d.applied[0]?.error?.code).toBe('division_by_zero');
    expect(head(d)).toEqual({ decision: 'block', code: 'F', rule: 'F' });
  });

  it('[OAR-EVAL-3] a rule fires when selected, its flow matches and its condition holds', () => {
    const d = h().decide(call('x', { recentActivity: ['read', 'write'], toolCall: { name: 'x', arguments: { n: 1 } } }));
    expect(trace(d)).toEqual(['F:fired']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'F', rule: 'F' });
  });

  it('[OAR-EVAL-3] a rule with neither when nor flow fires whenever it is selected', () => {
    const g = harness({ capability: cap({ profiles: ['tool'], window: 4 }), rules: [r('ALWAYS')] });
    expect(trace(g.decide({ anchor: PRE }))).toEqual(['ALWAYS:fired']);
  });
});

describe('[OAR-FACT-12] flow is an ordered subsequence of the window, oldest first', () => {
  const h = harness({
    capability: cap({ profiles: ['tool'], window: 6 }),
    rules: [r('A_THEN_C', { flow: ['a', 'c'] }), r('A_TWICE', { flow: ['a', 'a'] })],
  });
  const with_ = (window: string[]) => trace(h.decide({ anchor: PRE, recentActivity: window }));

  it('[OAR-FACT-12] steps in order, not necessarily contiguous', () => {
    expect(with_(['a', 'c'])).toEqual(['A_THEN_C:fired', 'A_TWICE:passed']);
    expect(with_(['a', 'b', 'c'])).toEqual(['A_THEN_C:fired', 'A_TWICE:passed']);
    expect(with_(['x', 'a', 'y', 'b', 'c', 'z'])).toEqual(['A_THEN_C:fired', 'A_TWICE:passed']);
  });

  it('[OAR-FACT-12] the order is the order the steps happened: a reversed pair does not match', () => {
    expect(with_(['c', 'a'])).toEqual(['A_THEN_C:passed', 'A_TWICE:passed']);
    expect(with_(['c', 'b', 'a'])).toEqual(['A_THEN_C:passed', 'A_TWICE:passed']);
  });

  it('[OAR-FACT-12] a repeated step needs as many occurrences; an empty window matches no flow', () => {
    expect(with_(['a'])).toEqual(['A_THEN_C:passed', 'A_TWICE:passed']);
    expect(with_(['a', 'b', 'a'])).toEqual(['A_THEN_C:passed', 'A_TWICE:fired']);
    expect(with_(['a', 'a', 'c'])).toEqual(['A_THEN_C:fired', 'A_TWICE:fired']);
    expect(with_([])).toEqual(['A_THEN_C:passed', 'A_TWICE:passed']);
  });
});

describe('[OAR-PROF-9] activity is kept per session', () => {
  const CAP3 = cap({ profiles: ['tool'], window: 3 });

  it('[OAR-PROF-9] a call is a step after its own pre_invoke: its own rules see only earlier steps', () => {
    const h = harness({ capability: CAP3, rules: [r('AFTER_READ', { flow: ['read'] })] });
    expect(trace(h.decide(call('read')))).toEqual(['AFTER_READ:passed']);
    expect(h.activity()).toEqual(['read']);
    expect(trace(h.decide(call('write')))).toEqual(['AFTER_READ:fired']);
    expect(h.activity()).toEqual(['read', 'write']);
  });

  it('[OAR-PROF-9] a blocked pre_invoke appends no step', () => {
    const h = harness({
      capability: CAP3,
      rules: [r('NO_RM', { selector: { tool: ['rm'] }, effect: 'block' }), r('READ_RM', { flow: ['read', 'rm'] })],
    });
    h.decide(call('read'));
    const blocked = h.decide(call('rm'));
    expect(head(blocked)).toEqual({ decision: 'block', code: 'NO_RM', rule: 'NO_RM' });
    expect(h.activity()).toEqual(['read']);
    expect(trace(h.decide(call('ls')))).toEqual(['READ_RM:passed']);
    expect(h.activity()).toEqual(['read', 'ls']);
  });

  it('[OAR-PROF-9] an on_error block appends no step; a warn, a monitor block or no rule at all does', () => {
    const h = harness({
      capability: CAP3,
      rules: [
        r('RAISES', { selector: { tool: ['boom'] }, when: '1 / tool_arg_int("n") > 0' }),
        r('WATCH_RM', { selector: { tool: ['rm'] }, effect: 'block', enforcement: 'monitor' }),
        r('WARN_LS', { selector: { tool: ['ls'] } }),
      ],
    });
    expect(h.decide(call('boom')).decision).toBe('block');
    expect(h.decide(call('rm')).decision).toBe('none');
    expect(h.decide(call('ls')).decision).toBe('warn');
    expect(h.decide(call('cat')).decision).toBe('none');
    expect(h.activity()).toEqual(['rm', 'ls', 'cat']);
  });

  it('[OAR-PROF-9] the window keeps the last activity_window steps, oldest first', () => {
    const h = harness({ capability: CAP3, rules: [r('A_B', { flow: ['a', 'b'] })] });
    const outcomes = ['a', 'b', 'c', 'd', 'e'].map((t) => trace(h.decide(call(t)))[0]);
    // Windows seen: [], [a], [a,b], [a,b,c], [b,c,d].
    expect(outcomes).toEqual(['A_B:passed', 'A_B:passed', 'A_B:fired', 'A_B:fired', 'A_B:passed']);
    expect(h.activity()).toEqual(['c', 'd', 'e']);
  });

  it('[OAR-PROF-9] other anchors append nothing, even with a tool call', () => {
    const h = harness({ capability: CAP3, rules: [rule({ id: 'POST', anchor: POST, effect: 'allow' })] });
    h.decide(call('read'));
    h.decide({ anchor: POST, toolCall: { name: 'read' } });
    h.decide({ anchor: 'model.output', toolCall: { name: 'write' } });
    expect(h.activity()).toEqual(['read']);
  });

  it('[OAR-PROF-9] sessions are separate; no session is the default session', () => {
    const h = harness({ capability: CAP3, rules: [r('AFTER_READ', { flow: ['read'] })] });
    h.decide(call('read', { session: 's1' }));
    expect(trace(h.decide(call('x', { session: 's2' })))).toEqual(['AFTER_READ:passed']);
    expect(trace(h.decide(call('x')))).toEqual(['AFTER_READ:passed']);
    expect(trace(h.decide(call('x', { session: 's1' })))).toEqual(['AFTER_READ:fired']);
    expect(h.activity('s1')).toEqual(['read', 'x']);
    expect(h.activity('s2')).toEqual(['x']);
    expect(h.activity('')).toEqual(['x']);
  });

  it('[OAR-PROF-9] a session that ended starts again with an empty window; other sessions keep theirs', () => {
    const h = harness({ capability: CAP3, rules: [r('AFTER_READ', { flow: ['read'] })] });
    h.run([call('read', { session: 's1' }), call('read', { session: 's2' })]);
    h.endSession('s1');
    expect(h.activity('s1')).toEqual([]);
    expect(trace(h.decide(call('x', { session: 's1' })))).toEqual(['AFTER_READ:passed']);
    expect(trace(h.decide(call('x', { session: 's2' })))).toEqual(['AFTER_READ:fired']);
    expect(h.activity('s1')).toEqual(['x']);
    h.endSession('never-seen'); // nothing to forget
  });

  it('[OAR-PROF-9] [OAR-CONF-40] an explicit window replaces the kept one for that occurrence only', () => {
    const h = harness({ capability: CAP3, rules: [r('W_D', { flow: ['write', 'deploy'] })] });
    h.decide(call('read'));
    expect(trace(h.decide(call('x', { recentActivity: ['write', 'deploy'] })))).toEqual(['W_D:fired']);
    // The kept window was not replaced: it holds the admitted steps, including the last one.
    expect(h.activity()).toEqual(['read', 'x']);
    expect(trace(h.decide(call('y')))).toEqual(['W_D:passed']);
    // An explicit empty window is a window too.
    h.decide(call('write'));
    h.decide(call('deploy'));
    expect(trace(h.decide(call('z', { recentActivity: [] })))).toEqual(['W_D:passed']);
    expect(trace(h.decide(call('z')))).toEqual(['W_D:fired']);
  });

  it('[OAR-PROF-9] the step is the `tool` observation: explicit facts win over the tool call', () => {
    const h = harness({ capability: CAP3, rules: [] });
    h.decide(call('raw_name', { facts: { tool: 'observed' } }));
    h.decide({ anchor: PRE, facts: { tool: 'fact_only' } });
    h.decide({ anchor: PRE }); // no tool: no step
    expect(h.activity()).toEqual(['observed', 'fact_only']);
  });

  it('[OAR-PROF-9] [OAR-FACT-11] a detector observation is local to its rule and never becomes the step', () => {
    const h = harness({
      capability: cap({ profiles: ['tool'], window: 3, detectors: ['detector://fixture'] }),
      rules: [rule({ id: 'SEES', kind: 'detector', anchor: PRE, effect: 'warn', detector: { ref: 'detector://fixture' }, requires: { profiles: ['tool'] }, when: 'tool == "spoofed"' })],
    });
    const d = h.decide(call('real', { detectorFacts: { tool: 'spoofed' } }));
    expect(trace(d)).toEqual(['SEES:fired']);
    expect(h.activity()).toEqual(['real']);
  });
});
