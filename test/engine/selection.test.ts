/**
 * Selection (section 3): selectors over declared string and list<string> facts, conjunction, the
 * empty clause, enforcement `off`, and anchor resolution through the capability's anchor map.
 */
import { describe, expect, it } from 'vitest';
import { cap, harness, head, IDENTITY, load, rule, trace } from './harness.js';
import { HostInputError } from '../../runtime/index.js';

const TOOL_SESSION = cap({
  profiles: ['tool', 'session'],
  hostFacts: [{ name: 'acme.gw.lane', type: 'string' }],
});

/** A policy rule at tool.pre_invoke that fires with `warn` unless told otherwise. */
function r(id: string, extra: Record<string, unknown> = {}): string {
  return rule({ id, namespace: 'acme', anchor: 'tool.pre_invoke', effect: 'warn', requires: { profiles: ['tool', 'session'], facts: ['acme.gw.lane'] }, ...extra });
}

const PRE = 'tool.pre_invoke';

describe('selection', () => {
  it('[OAR-SEL-1] a string clause matches when the fact value is a member of the clause list', () => {
    const h = harness({ capability: TOOL_SESSION, rules: [r('READS', { selector: { tool: ['read', 'write'] } })] });
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'read' } }))).toEqual(['acme/READS:fired']);
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'write' } }))).toEqual(['acme/READS:fired']);
    // Not selected: absent from the trace altogether, not `passed` ([OAR-OPS-9] lists selected rules).
    const miss = h.decide({ anchor: PRE, toolCall: { name: 'bash' } });
    expect(trace(miss)).toEqual([]);
    expect(head(miss)).toEqual({ decision: 'none', code: null, rule: null });
    // Membership is exact: no prefix, substring or case folding ([OAR-SEL-8]).
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'Read' } }))).toEqual([]);
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'rea' } }))).toEqual([]);
    // An unpublished string fact is "" ([OAR-FACT-25]), which is not in the list.
    expect(trace(h.decide({ anchor: PRE }))).toEqual([]);
  });

  it('[OAR-SEL-1] a clause listing "" selects exactly the occurrences where the fact is empty', () => {
    const h = harness({ capability: TOOL_SESSION, rules: [r('NO_TOOL', { selector: { tool: [''] } })] });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['acme/NO_TOOL:fired']);
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'read' } }))).toEqual([]);
  });

  it('[OAR-SEL-2] a list<string> clause matches when any member of the fact is in the clause list', () => {
    const h = harness({ capability: TOOL_SESSION, rules: [r('ADMINS', { selector: { principal_roles: ['admin', 'root'] } })] });
    expect(trace(h.decide({ anchor: PRE, facts: { principal_roles: ['dev', 'root'] } }))).toEqual(['acme/ADMINS:fired']);
    expect(trace(h.decide({ anchor: PRE, facts: { principal_roles: ['admin'] } }))).toEqual(['acme/ADMINS:fired']);
    expect(trace(h.decide({ anchor: PRE, facts: { principal_roles: ['dev', 'ops'] } }))).toEqual([]);
    // The empty list has no member in common with anything.
    expect(trace(h.decide({ anchor: PRE, facts: { principal_roles: [] } }))).toEqual([]);
    expect(trace(h.decide({ anchor: PRE }))).toEqual([]);
  });

  it('[OAR-SEL-4] clauses are conjunctive: every clause must match', () => {
    const h = harness({
      capability: TOOL_SESSION,
      rules: [r('BOTH', { selector: { tool: ['read'], principal_roles: ['admin'], 'acme.gw.lane': ['fast'] } })],
    });
    const facts = (tool: string, roles: string[], lane: string) => ({ anchor: PRE, toolCall: { name: tool }, facts: { principal_roles: roles, 'acme.gw.lane': lane } });
    expect(trace(h.decide(facts('read', ['admin'], 'fast')))).toEqual(['acme/BOTH:fired']);
    expect(trace(h.decide(facts('write', ['admin'], 'fast')))).toEqual([]);
    expect(trace(h.decide(facts('read', ['dev'], 'fast')))).toEqual([]);
    expect(trace(h.decide(facts('read', ['admin'], 'slow')))).toEqual([]);
  });

  it('[OAR-SEL-5] an empty selector and an absent selector match every occurrence of the anchor', () => {
    const h = harness({ capability: TOOL_SESSION, rules: [r('ABSENT'), r('EMPTY', { selector: {} })] });
    expect(trace(h.decide({ anchor: PRE }))).toEqual(['acme/ABSENT:fired', 'acme/EMPTY:fired']);
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'anything' } }))).toEqual(['acme/ABSENT:fired', 'acme/EMPTY:fired']);
  });

  it('[OAR-SEL-6] a clause whose list is empty loads with a warning and is never selected', () => {
    const rules = [r('NEVER', { selector: { tool: [] } }), r('NEVER_LIST', { selector: { principal_roles: [] } })];
    const pack = load({ capability: TOOL_SESSION, rules });
    expect(pack.rules.map((x) => x.qid)).toEqual(['acme/NEVER', 'acme/NEVER_LIST']);
    expect(pack.diagnostics.filter((d) => d.clause === 'OAR-SEL-6').map((d) => d.severity)).toEqual(['warning', 'warning']);
    const h = harness({ capability: TOOL_SESSION, rules });
    expect(trace(h.decide({ anchor: PRE }))).toEqual([]);
    expect(trace(h.decide({ anchor: PRE, facts: { tool: '', principal_roles: [''] } }))).toEqual([]);
  });

  it('[OAR-SEL-6] a rule with an empty clause is never selected, even when another clause cannot be read', () => {
    // JSON objects are unordered, so whether the unreadable clause comes first must not matter.
    const h = harness({
      capability: TOOL_SESSION,
      rules: [
        r('EMPTY_LAST', { selector: { 'acme.gw.lane': ['fast'], tool: [] } }),
        r('EMPTY_FIRST', { selector: { tool: [], 'acme.gw.lane': ['fast'] } }),
        r('EMPTY_AND_BAD', { selector: { 'acme.gw.lane': [] } }),
      ],
    });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.lane': 42 } });
    expect(trace(d)).toEqual([]);
    expect(head(d)).toEqual({ decision: 'none', code: null, rule: null });
  });

  it('[OAR-SEL-4] [OAR-FACT-26] a clause that does not match deselects the rule whichever clause is unreadable', () => {
    // Reading chosen: a definite non-match of one clause deselects; an unreadable clause makes the
    // rule selected-and-errored only when every readable clause matches. Clause order is object
    // member order, which JSON does not define, so it cannot be allowed to decide.
    const h = harness({
      capability: TOOL_SESSION,
      rules: [
        r('BAD_FIRST', { selector: { 'acme.gw.lane': ['fast'], tool: ['read'] }, on_error: 'fail_open' }),
        r('BAD_LAST', { selector: { tool: ['read'], 'acme.gw.lane': ['fast'] }, on_error: 'fail_open' }),
      ],
    });
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'bash' }, facts: { 'acme.gw.lane': 42 } }))).toEqual([]);
    const d = h.decide({ anchor: PRE, toolCall: { name: 'read' }, facts: { 'acme.gw.lane': 42 } });
    expect(trace(d)).toEqual(['acme/BAD_FIRST:errored', 'acme/BAD_LAST:errored']);
    expect(d.applied.map((t) => t.error?.code)).toEqual(['wrong_type', 'wrong_type']);
  });

  it('[OAR-FACT-26] a selector fact of the wrong type makes the rule selected and errored (fail_closed blocks)', () => {
    const h = harness({ capability: TOOL_SESSION, rules: [r('LANE', { selector: { 'acme.gw.lane': ['fast'] } })] });
    const d = h.decide({ anchor: PRE, facts: { 'acme.gw.lane': ['fast'] } });
    expect(head(d)).toEqual({ decision: 'block', code: 'LANE', rule: 'acme/LANE' });
    expect(trace(d)).toEqual(['acme/LANE:errored']);
    expect(d.applied[0]?.error?.clause).toBe('OAR-FACT-26');
  });

  it('[OAR-SEL-7] only rules bound to the occurrence anchor are selected', () => {
    const h = harness({
      capability: TOOL_SESSION,
      rules: [r('PRE'), rule({ id: 'POST', namespace: 'acme', anchor: 'tool.post_invoke', effect: 'nudge' })],
    });
    expect(trace(h.decide({ anchor: 'tool.pre_invoke' }))).toEqual(['acme/PRE:fired']);
    expect(trace(h.decide({ anchor: 'tool.post_invoke' }))).toEqual(['acme/POST:fired']);
    expect(trace(h.decide({ anchor: 'model.output' }))).toEqual([]);
    // An anchor the host does not know is the host's mistake, never a silent `none`.
    expect(() => h.decide({ anchor: 'no.such_anchor' })).toThrow(HostInputError);
  });

  it('[OAR-SEL-7] [OAR-EVAL-11] [OAR-OPS-2] a rule with enforcement off is never selected, evaluated or traced', () => {
    let asked = 0;
    const h = harness({
      capability: TOOL_SESSION,
      rules: [
        r('OFF_BLOCK', { enforcement: 'off', effect: 'block', when: 'acme.gw.lane == "x"', on_fire: ['increment_counter', 'publish_event'] }),
        r('ON'),
      ],
    });
    const d = h.decide(() => ({ anchor: PRE, facts: { 'acme.gw.lane': () => (asked++, 'x') } }));
    expect(trace(d)).toEqual(['acme/ON:fired']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'ON', rule: 'acme/ON' });
    expect(d.onFire).toEqual([]);
    expect(d.events).toEqual([]);
    expect(d.counters).toEqual({});
    expect(asked).toBe(0); // its condition was never evaluated, on either back end
  });

  it('[OAR-OPS-2] [OAR-CFG-2] [OAR-CFG-3] a configuration turning a rule off removes it from the trace; monitor keeps it', () => {
    const rules = [r('A', { effect: 'block' }), r('B'), r('C', { effect: 'nudge' })];
    const configs = [JSON.stringify({ oar_config: '1.0', disable: ['acme/A'], enforcement: { 'acme/C': 'monitor' } })];
    const h = harness({ capability: TOOL_SESSION, rules, configs });
    const d = h.decide({ anchor: PRE });
    expect(trace(d)).toEqual(['acme/B:fired', 'acme/C:monitored_fired']);
    expect(head(d)).toEqual({ decision: 'warn', code: 'B', rule: 'acme/B' });
  });
});

describe('anchor resolution', () => {
  const MAPPED = cap({
    profiles: ['tool'],
    core: { 'tool.pre_invoke': 'gw.before_call', 'tool.post_invoke': 'tool.pre_invoke', 'model.output': 'content.output' },
    hostAnchors: ['gw.render'],
  });
  const anchorRule = (id: string, anchor: string) =>
    rule({ id, namespace: 'acme', anchor, effect: 'warn', copy: { what: 'at {{ anchor }}' } });
  const rules = [
    anchorRule('PRE', 'tool.pre_invoke'),
    anchorRule('POST', 'tool.post_invoke'),
    anchorRule('OUT', 'model.output'),
    anchorRule('RENDER', 'gw.render'),
  ];

  it('[OAR-CONF-29] [OAR-PROF-4] an occurrence names the host-local anchor; rules are resolved through the map', () => {
    const h = harness({ capability: MAPPED, rules });
    const pre = h.decide({ anchor: 'gw.before_call' });
    expect(trace(pre)).toEqual(['acme/PRE:fired']);
    expect(pre.copy).toEqual({ what: 'at tool.pre_invoke' });
    const out = h.decide({ anchor: 'content.output' });
    expect(trace(out)).toEqual(['acme/OUT:fired']);
    expect(out.copy).toEqual({ what: 'at model.output' });
    // The core spelling of a remapped anchor is not a host-local anchor: a host error naming the
    // local spelling, never a silent `none`.
    expect(() => h.decide({ anchor: 'model.output' })).toThrow('spells core anchor model.output as `content.output`');
  });

  it('[OAR-CONF-29] a host-local spelling equal to a different core identifier means what the map says', () => {
    const h = harness({ capability: MAPPED, rules });
    // Locally, `tool.pre_invoke` is where this host implements the core anchor tool.post_invoke.
    const d = h.decide({ anchor: 'tool.pre_invoke' });
    expect(trace(d)).toEqual(['acme/POST:fired']);
    expect(d.copy).toEqual({ what: 'at tool.post_invoke' });
  });

  it('[OAR-PROF-5] a rule at a catalogued host anchor is selected there, and `anchor` is the host-native id', () => {
    const h = harness({ capability: MAPPED, rules });
    const d = h.decide({ anchor: 'gw.render' });
    expect(trace(d)).toEqual(['acme/RENDER:fired']);
    expect(d.copy).toEqual({ what: 'at gw.render' });
  });

  it('[OAR-SEL-1] [OAR-CONF-29] a selector on the anchor fact compares the core identifier, not the local spelling', () => {
    const h = harness({
      capability: MAPPED,
      rules: [
        rule({ id: 'CORE', namespace: 'acme', anchor: 'model.output', effect: 'warn', selector: { anchor: ['model.output'] } }),
        rule({ id: 'LOCAL', namespace: 'acme', anchor: 'model.output', effect: 'warn', selector: { anchor: ['content.output'] } }),
      ],
    });
    expect(trace(h.decide({ anchor: 'content.output' }))).toEqual(['acme/CORE:fired']);
  });

  it('[OAR-SEL-7] the identity map: occurrence and rule spell the anchor alike', () => {
    const h = harness({ capability: cap({ core: IDENTITY }), rules: [anchorRule('OUT', 'model.output')] });
    const d = h.decide({ anchor: 'model.output' });
    expect(trace(d)).toEqual(['acme/OUT:fired']);
    expect(d.copy).toEqual({ what: 'at model.output' });
  });
});

describe('the selection index (rules indexed by their most common string selector fact)', () => {
  const rules = [
    r('A_READ', { selector: { tool: ['read'] } }),
    r('B_READ_WRITE', { selector: { tool: ['read', 'write'], 'acme.gw.lane': ['fast'] } }),
    r('C_ANY_TOOL', { selector: { 'acme.gw.lane': ['fast'] } }),
    r('D_WRITE', { selector: { tool: ['write'] } }),
    r('E_NO_SELECTOR'),
  ];

  it('[OAR-SEL-4] [OAR-SEL-7] selects exactly what a full scan selects, in evaluation order', () => {
    const h = harness({ capability: TOOL_SESSION, rules });
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'read' }, facts: { 'acme.gw.lane': 'fast' } }))).toEqual([
      'acme/A_READ:fired', 'acme/B_READ_WRITE:fired', 'acme/C_ANY_TOOL:fired', 'acme/E_NO_SELECTOR:fired',
    ]);
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'write' }, facts: { 'acme.gw.lane': 'slow' } }))).toEqual([
      'acme/D_WRITE:fired', 'acme/E_NO_SELECTOR:fired',
    ]);
    // A value no clause lists: only the rules with no clause on the indexed fact remain candidates.
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'bash' }, facts: { 'acme.gw.lane': 'fast' } }))).toEqual([
      'acme/C_ANY_TOOL:fired', 'acme/E_NO_SELECTOR:fired',
    ]);
  });

  it('[OAR-FACT-26] an unreadable indexed fact falls back to the full scan: every rule naming it errs', () => {
    const h = harness({ capability: TOOL_SESSION, rules });
    const d = h.decide({ anchor: PRE, facts: { tool: 5, 'acme.gw.lane': 'slow' } });
    // A_READ is first in order and fails closed on the wrong-typed `tool` it selects on.
    expect(head(d)).toEqual({ decision: 'block', code: 'A_READ', rule: 'acme/A_READ' });
    expect(trace(d)).toEqual(['acme/A_READ:errored']);
  });
});
