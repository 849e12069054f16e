/**
 * Facts at an occurrence: zero values ([OAR-FACT-25]), the tool-call adapter ([OAR-FACT-28],
 * [OAR-CONF-40]) and the functions derived from it, explicit facts winning ([OAR-CONF-26]), the
 * `anchor` core fact (5.3), and detector observations staying local ([OAR-FACT-11]) even through
 * facts derived from them.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cap, harness, rule, trace } from './harness.js';

const PRE = 'tool.pre_invoke';
const TOOL = cap({ profiles: ['tool', 'content', 'content-provenance'] });

/** One rule per condition, each warn; the trace says which held. */
function checks(conditions: Record<string, string>, capability = TOOL, profiles = ['tool', 'content', 'content-provenance']): ReturnType<typeof harness> {
  return harness({
    capability,
    rules: Object.entries(conditions).map(([id, when]) => rule({ id, anchor: PRE, effect: 'warn', requires: { profiles }, when })),
  });
}

const held = (trace: string[]) => trace.filter((t) => t.endsWith(':fired')).map((t) => t.slice(0, -':fired'.length));

function fingerprint(canonical: string): string {
  return createHash('sha256').update(`oar-tool-1.0\u0000${canonical}`, 'utf8').digest('hex');
}

describe('[OAR-FACT-25] zero values', () => {
  it('[OAR-FACT-25] every fact the host did not publish is its type\'s zero, never a failure', () => {
    const conditions = {
      TOOL: 'tool == ""',
      ARGS: 'size(tool_args) == 0',
      FINGERPRINT: 'tool_args_fingerprint == ""',
      ERRORS: 'size(arg_validation_errors) == 0',
      REASON: 'arg_validation_reason == ""',
      DENIED: '!policy_denied',
      ARG_STRING: 'tool_arg_string("path") == ""',
      ARG_INT: 'tool_arg_int("n") == 0',
      ARG_BOOL: '!tool_arg_bool("b")',
      LENGTH: 'content_length == 0',
      SEGMENTS: 'content_segment_count == 0',
      UNTRUSTED: '!content_contains_untrusted',
      ROLES: 'size(content_roles) == 0',
      FIRE_COUNT: 'fire_count == 0 && breaker_count == 0 && fire_count_of("TOOL") == 0',
    };
    const d = checks(conditions).decide({ anchor: PRE });
    expect(held(trace(d)).sort()).toEqual(Object.keys(conditions).sort());
    expect(d.applied.every((t) => t.outcome === 'fired')).toBe(true);
  });
});

describe('[OAR-FACT-28] [OAR-CONF-40] the tool-call adapter', () => {
  const args = { path: '/etc/x', n: 3, b: true, f: 2.5, nested: { k: ['v'] } };
  const canonical = '["read",{"b":true,"f":2.5,"n":3.0,"nested":{"k":["v"]},"path":"/etc/x"}]';

  it('[OAR-CONF-40] tool and tool_args come from the tool call', () => {
    const h = checks({ TOOL: 'tool == "read"', HAS: '"path" in tool_args && "nested" in tool_args', SIZE: 'size(tool_args) == 5', NOT_PROTO: '!("toString" in tool_args) && !("constructor" in tool_args)' });
    expect(held(trace(h.decide({ anchor: PRE, toolCall: { name: 'read', arguments: args } })))).toEqual(['HAS', 'NOT_PROTO', 'SIZE', 'TOOL']);
  });

  it('[OAR-FACT-28] tool_args_fingerprint is SHA-256 over the domain, NUL and canonical [tool, tool_args]', () => {
    const h = harness({
      capability: TOOL,
      rules: [rule({ id: 'FP', anchor: PRE, effect: 'warn', requires: { profiles: ['tool'] }, copy: { what: '{{ tool_args_fingerprint }}' } })],
    });
    const fp = (occ: Parameters<typeof h.decide>[0]) => h.decide(occ).copy?.what;
    expect(fp({ anchor: PRE, toolCall: { name: 'read', arguments: args } })).toBe(fingerprint(canonical));
    // Key order of the host's object does not matter; the tool name does.
    expect(fp({ anchor: PRE, toolCall: { name: 'read', arguments: { nested: { k: ['v'] }, f: 2.5, path: '/etc/x', b: true, n: 3 } } })).toBe(fingerprint(canonical));
    expect(fp({ anchor: PRE, toolCall: { name: 'write', arguments: args } })).toBe(fingerprint(canonical.replace('"read"', '"write"')));
    // No arguments is the empty object; no tool call at all is the empty fingerprint.
    expect(fp({ anchor: PRE, toolCall: { name: 'ls' } })).toBe(fingerprint('["ls",{}]'));
    expect(fp({ anchor: PRE })).toBe('');
  });

  it('[OAR-FACT-28] [OAR-OPS-3] an argument with no exact binary64 value fails fingerprint production', () => {
    const h = harness({
      capability: TOOL,
      rules: [
        rule({ id: 'A_FP', anchor: PRE, effect: 'warn', requires: { profiles: ['tool'] }, when: 'tool_args_fingerprint != ""', on_error: 'fail_open' }),
        rule({ id: 'B_TOOL', anchor: PRE, effect: 'nudge', requires: { profiles: ['tool'] }, when: 'tool == "big"' }),
      ],
    });
    const d = h.decide({ anchor: PRE, toolCall: { name: 'big', arguments: { n: 9007199254740993n } } });
    expect(trace(d)).toEqual(['A_FP:errored', 'B_TOOL:fired']);
    expect(d.applied[0]?.error?.code).toBe('provider_failure');
  });

  it('[OAR-CONF-40] [OAR-CONF-26] explicit facts override the adapter, each under its own name only', () => {
    const h = harness({
      capability: TOOL,
      rules: [rule({
        id: 'SEE',
        anchor: PRE,
        effect: 'warn',
        requires: { profiles: ['tool'] },
        when: 'tool == "write" && "x" in tool_args && !("path" in tool_args) && tool_arg_int("x") == 1',
        copy: { what: '{{ tool_args_fingerprint }}' },
      })],
    });
    const d = h.decide({ anchor: PRE, toolCall: { name: 'read', arguments: args }, facts: { tool: 'write', tool_args: { x: 1 } } });
    expect(trace(d)).toEqual(['SEE:fired']);
    // tool_args_fingerprint was not given explicitly: it is still the adapter's, from the tool call.
    expect(d.copy).toEqual({ what: fingerprint(canonical) });
    const e = h.decide({ anchor: PRE, toolCall: { name: 'read', arguments: args }, facts: { tool: 'write', tool_args: { x: 1 }, tool_args_fingerprint: 'given' } });
    expect(e.copy).toEqual({ what: 'given' });
  });

  it('[OAR-CONF-40] tool_arg_string/int/bool: the named own argument of exactly that type, else zero', () => {
    // Inherited members cannot reach here: arguments with a prototype of their own are refused
    // (host-input.test.ts). A null-prototype object is read by own property like any other.
    const inherited = Object.assign(Object.create(null) as Record<string, unknown>, { s: 'own', i: 7, big: -9007199254740993n, t: false, ok: true });
    const conditions = {
      S_OWN: 'tool_arg_string("s") == "own"',
      S_NOT_STRING: 'tool_arg_string("i") == ""',
      S_INHERITED: 'tool_arg_string("inh") == ""',
      S_PROTO: 'tool_arg_string("toString") == "" && tool_arg_string("__proto__") == ""',
      I_OWN: 'tool_arg_int("i") == 7',
      I_BIG: 'tool_arg_int("big") == -9007199254740993',
      I_NOT_INT: 'tool_arg_int("s") == 0 && tool_arg_int("t") == 0',
      B_OWN: 'tool_arg_bool("ok") && !tool_arg_bool("t")',
      B_NOT_BOOL: '!tool_arg_bool("i") && !tool_arg_bool("s")',
      MISSING: 'tool_arg_string("nope") == "" && tool_arg_int("nope") == 0 && !tool_arg_bool("nope")',
    };
    const h = checks(conditions);
    const d = h.decide({ anchor: PRE, toolCall: { name: 'run', arguments: inherited }, facts: { tool_args_fingerprint: 'not computed' } });
    expect(held(trace(d)).sort()).toEqual(Object.keys(conditions).sort());
    const f = checks({ F_NOT_INT: 'tool_arg_int("f") == 0', F_NOT_STRING: 'tool_arg_string("f") == ""' });
    expect(held(trace(f.decide({ anchor: PRE, toolCall: { name: 'run', arguments: { f: 2.5 } } })))).toEqual(['F_NOT_INT', 'F_NOT_STRING']);
  });

  it('[OAR-CONF-26] a value under a function\'s name is its result for every argument; a function is called', () => {
    const h = checks({ FIXED: 'tool_arg_string("a") == "v" && tool_arg_string("b") == "v"', CALLED: 'tool_arg_int("abc") == 3' });
    expect(held(trace(h.decide({ anchor: PRE, facts: { tool_arg_string: 'v', tool_arg_int: (a: unknown) => String(a).length } })))).toEqual(['CALLED', 'FIXED']);
  });
});

describe('the anchor core fact', () => {
  const MAPPED = cap({ core: { 'tool.pre_invoke': 'gw.pre', 'model.output': 'gw.out' }, hostAnchors: ['gw.render'] });
  const anchorRule = (id: string, anchor: string, when: string) => rule({ id, anchor, effect: 'warn', when });

  it('[OAR-FACT-15] anchor is the core identifier at a mapped anchor and the host-native one at a host anchor', () => {
    const h = harness({
      capability: MAPPED,
      rules: [
        anchorRule('PRE', 'tool.pre_invoke', 'anchor == "tool.pre_invoke"'),
        anchorRule('OUT', 'model.output', 'anchor == "model.output"'),
        anchorRule('RENDER', 'gw.render', 'anchor == "gw.render"'),
      ],
    });
    expect(trace(h.decide({ anchor: 'gw.pre' }))).toEqual(['PRE:fired']);
    expect(trace(h.decide({ anchor: 'gw.out' }))).toEqual(['OUT:fired']);
    expect(trace(h.decide({ anchor: 'gw.render' }))).toEqual(['RENDER:fired']);
  });

  it('[OAR-FACT-15] [OAR-CONF-32] core facts belong to the engine: facts under their names are not observations', () => {
    const h = harness({
      capability: MAPPED,
      rules: [anchorRule('PRE', 'tool.pre_invoke', 'anchor == "tool.pre_invoke" && fire_count == 0 && fire_count_of("PRE") == 0')],
    });
    expect(trace(h.decide({ anchor: 'gw.pre', facts: { anchor: 'spoofed', fire_count: 5, fire_count_of: 5 } }))).toEqual(['PRE:fired']);
  });
});

describe('the anchor core fact and detectors', () => {
  it('[OAR-FACT-15] [OAR-FACT-11] anchor is the same for every rule: a detector reporting one does not change it', () => {
    const h = harness({
      capability: cap({ core: { 'tool.pre_invoke': 'gw.pre' }, detectors: ['detector://fixture'] }),
      rules: [
        rule({ id: 'DET', kind: 'detector', anchor: 'tool.pre_invoke', effect: 'warn', detector: { ref: 'detector://fixture' }, when: 'anchor == "tool.pre_invoke"', copy: { what: '{{ anchor }}' } }),
      ],
    });
    const d = h.decide({ anchor: 'gw.pre', detectorFacts: { anchor: 'spoofed' } });
    expect(trace(d)).toEqual(['DET:fired']);
    expect(d.copy).toEqual({ what: 'tool.pre_invoke' });
  });
});

describe('[OAR-FACT-11] detector observations stay local, through derived facts too', () => {
  const CAP = cap({ profiles: ['content-provenance'], detectors: ['detector://fixture', 'detector://noop'] });
  const det = (id: string, ref: string, when: string) =>
    rule({ id, kind: 'detector', anchor: PRE, effect: 'warn', detector: { ref: `detector://${ref}` }, requires: { profiles: ['content-provenance'] }, when });

  it('[OAR-FACT-11] a fact derived from a detector observation does not leak to a later rule', () => {
    const h = harness({
      capability: CAP,
      rules: [det('A_FIXTURE', 'fixture', 'content_contains_untrusted && content_segment_count == 1'), det('B_NOOP', 'noop', 'content_contains_untrusted || content_segment_count > 0')],
    });
    const d = h.decide({ anchor: PRE, detectorFacts: { content_trust_tiers: ['untrusted'] } });
    expect(trace(d)).toEqual(['A_FIXTURE:fired', 'B_NOOP:passed']);
  });

  it('[OAR-FACT-11] a rule\'s own detector observation is seen through derived facts even after another rule read them', () => {
    const h = harness({
      capability: CAP,
      rules: [det('A_NOOP', 'noop', '!content_contains_untrusted && content_segment_count == 0'), det('B_FIXTURE', 'fixture', 'content_contains_untrusted && content_segment_count == 1')],
    });
    const d = h.decide({ anchor: PRE, detectorFacts: { content_trust_tiers: ['untrusted'] } });
    expect(trace(d)).toEqual(['A_NOOP:fired', 'B_FIXTURE:fired']);
  });

  it('[OAR-CONF-26] a derived fact the host supplied under its own name wins over the derivation', () => {
    const h = harness({ capability: CAP, rules: [det('A_FIXTURE', 'fixture', '!content_contains_untrusted')] });
    const d = h.decide({ anchor: PRE, facts: { content_contains_untrusted: false }, detectorFacts: { content_trust_tiers: ['untrusted'] } });
    expect(trace(d)).toEqual(['A_FIXTURE:fired']);
  });
});

describe('[OAR-FACT-25] derived content facts', () => {
  it('[OAR-FACT-25] content_length is the code-point length of the content; an explicit value wins', () => {
    const h = checks({ FIVE: 'content_length == 5', NINE: 'content_length == 9' });
    expect(held(trace(h.decide({ anchor: PRE, content: 'a😀b😀c' })))).toEqual(['FIVE']);
    expect(held(trace(h.decide({ anchor: PRE, content: 'a😀b😀c', facts: { content_length: 9 } })))).toEqual(['NINE']);
  });
});
