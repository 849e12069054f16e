/**
 * `toolCall` beside explicit facts naming the same observations (docs/decisions.md "A tool call
 * and explicit facts"): [OAR-CONF-40] has the fixture host supply `tool`, `tool_args` and
 * `tool_args_fingerprint` from the tool call with its *production* adapter, and "Explicit `facts`
 * override these observations". oarc's library API is that production adapter, so it does exactly
 * the same: each explicit fact wins under its own name only, on every back end, through
 * `decideAsync` (its counter plan included), for the activity step, and for `tool_arg_*`
 * ([OAR-CONF-26]) — never a `HostInputError`, never a second behaviour behind an option.
 */
import { describe, expect, it } from 'vitest';
import type { Decision, Occurrence } from '../../runtime/index.js';
import { asyncMemory, BACKENDS, cap, harness, head, rule, trace } from './harness.js';

const PRE = 'tool.pre_invoke';
const CAP = cap({ profiles: ['tool'], window: 2 });
const tool = (fields: Record<string, unknown>) => rule({ anchor: PRE, requires: { profiles: ['tool'] }, ...fields });


/** decide on every back end (the harness asserts they agree), and decideAsync on each agreeing. */
async function everywhere(rules: string[], occ: Occurrence): Promise<Decision> {
  const d = harness({ capability: CAP, rules }).decide(occ);
  const h = harness({ capability: CAP, rules, options: () => ({ asyncCounters: asyncMemory() }) });
  for (const b of BACKENDS) {
    const a = await h.engines[b].decideAsync(occ);
    expect(head(a)).toEqual(head(d));
    expect(trace(a)).toEqual(trace(d));
    expect(a.counters).toEqual(d.counters);
    expect(a.copy).toEqual(d.copy);
  }
  return d;
}

describe('[OAR-CONF-40] explicit facts override the tool-call adapter, each under its own name', () => {
  it('the `tool` fact selects, not the call\'s name; `tool_args` still comes from the call', async () => {
    const rules = [
      tool({ id: 'A_WRITE', selector: { tool: ['write'] }, effect: 'warn', when: '"path" in tool_args' }),
      tool({ id: 'B_READ', selector: { tool: ['read'] }, effect: 'block' }),
    ];
    const d = await everywhere(rules, { anchor: PRE, toolCall: { name: 'read', arguments: { path: '/tmp/x' } }, facts: { tool: 'write' } });
    expect(trace(d)).toEqual(['A_WRITE:fired']);
  });

  it('an explicit fingerprint is used as given: the adapter never computes one (no provider failure)', async () => {
    const rules = [tool({ id: 'FP', effect: 'warn', when: 'tool_args_fingerprint == "given"' })];
    const unencodable = { anchor: PRE, toolCall: { name: 'big', arguments: { n: 9007199254740993n } } };
    expect(trace(await everywhere(rules, { ...unencodable, facts: { tool_args_fingerprint: 'given' } }))).toEqual(['FP:fired']);
    // Without it the adapter's digest is asked for, and an integer binary64 cannot hold fails it ([OAR-FACT-28]).
    expect(head(await everywhere(rules, unencodable))).toEqual({ decision: 'block', code: 'FP', rule: 'FP' });
  });

  it('a counter scoped by the fingerprint is keyed by the explicit one, in the decideAsync plan too ([OAR-FIRE-10])', async () => {
    const rules = [tool({ id: 'COUNT', effect: 'warn', counter_scope: 'tool_args_fingerprint', on_fire: ['increment_counter'] })];
    const d = await everywhere(rules, { anchor: PRE, toolCall: { name: 'read', arguments: { path: '/a' } }, facts: { tool_args_fingerprint: 'given' } });
    expect(d.counters).toEqual({ 'COUNT#given': { fire_count: 1, breaker_count: 0 } });
  });

  it('explicit `tool_args` feed `tool_arg_*`; a value under a function\'s name beats both ([OAR-CONF-26])', async () => {
    const rules = [
      tool({ id: 'ARGS', effect: 'warn', when: 'tool_arg_string("path") == "/explicit" && tool_arg_int("n") == 0' }),
      tool({ id: 'FN', effect: 'nudge', when: 'tool_arg_bool("anything")' }),
    ];
    const call = { name: 'read', arguments: { path: '/from-call', n: 3 } };
    expect(trace(await everywhere(rules, { anchor: PRE, toolCall: call, facts: { tool_args: { path: '/explicit' } } }))).toEqual(['ARGS:fired', 'FN:passed']);
    expect(trace(await everywhere(rules, { anchor: PRE, toolCall: call, facts: { tool_arg_string: '/explicit', tool_arg_bool: true } }))).toEqual(['ARGS:passed', 'FN:fired']);
  });

  it('the activity step is the explicit `tool` ([OAR-PROF-9]), through decideAsync too', async () => {
    const occ = { anchor: PRE, session: 's', toolCall: { name: 'raw' }, facts: { tool: 'observed' } };
    const h = harness({ capability: CAP, rules: [], options: () => ({ asyncCounters: asyncMemory() }) });
    h.decide(occ);
    expect(h.activity('s')).toEqual(['observed']);
    for (const b of BACKENDS) await h.engines[b].decideAsync(occ);
    expect(h.activity('s')).toEqual(['observed', 'observed']);
  });
});
