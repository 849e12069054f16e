/**
 * What oarc's own fact providers and evaluator owe the rules that read them:
 *
 * - [OAR-FACT-5] a fact is an observation, never a verdict; [OAR-FACT-7] it bakes in no threshold
 *   and combines no facts in a policy-meaningful way; [OAR-FACT-9] an observation function obeys
 *   both exactly as a fact does. oarc derives some facts and functions itself (runtime/occurrence.ts,
 *   docs/decisions.md): `tool`, `tool_args`, `tool_args_fingerprint` from the tool call; `tool_arg_string`,
 *   `tool_arg_int`, `tool_arg_bool` from its arguments; `content_length` from the content;
 *   `content_contains_untrusted` and `content_segment_count` from the provenance lists. These tests
 *   read every one of them through the engine's own fact reader (a probe detector is handed the
 *   reader of the rule that invoked it) and through copy, under two packs whose rules draw opposite
 *   conclusions from them: the values must be the same measurements in both, equal to what an
 *   independent computation of the observation gives, and dependent only on what they observe.
 * - [OAR-FACT-10] condition evaluation is free of side-effects: with every host-supplied value deep
 *   frozen (a write would throw in this strict-mode module and in the engine's), conditions using
 *   every operator, built-in, index form and observation function evaluate without error and leave
 *   every input unchanged; the counter store is written only by declared `on_fire` actions and the
 *   activity window only by admitted tool calls ([OAR-PROF-9]); the same occurrence decided twice
 *   with no `on_fire` yields identical decisions and untouched counters; and no I/O is performed.
 *
 * Every decision is made on both back ends (the harness compares them).
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Backend } from '../../compiler/index.js';
import {
  MemoryCounterStore,
  type CounterKey,
  type CounterOp,
  type CounterStore,
  type CounterValues,
  type Decision,
  type Detector,
  type Occurrence,
} from '../../runtime/index.js';
import { cap, harness, rule, trace, type Harness } from './harness.js';

const PRE = 'tool.pre_invoke';
const PROFILES = ['tool', 'content', 'content-provenance'];
const PROBE_REF = 'detector://probe';

// ---------------------------------------------------------------------------------------------
// Reading derived values through the engine's own fact reader

const DERIVED_FACTS = ['tool', 'tool_args', 'tool_args_fingerprint', 'content_length', 'content_contains_untrusted', 'content_segment_count'] as const;
const DERIVED_FUNCTIONS = ['tool_arg_string', 'tool_arg_int', 'tool_arg_bool'] as const;
const ARG_NAMES = ['path', 'n', 'neg', 'flag', 'ratio', 'nested', 'missing'] as const;

interface Observed {
  facts: Record<string, unknown>;
  functions: Record<string, Record<string, unknown>>;
}

/**
 * A detector that only looks: it reads every derived fact and function through the fact reader the
 * engine hands the invoking rule, records what it read, and reports no findings.
 */
function probe(log: Observed[], slots: () => ReadonlyMap<string, number>): Detector {
  return (input) => {
    const s = slots();
    const slot = (n: string) => {
      const i = s.get(n);
      if (i === undefined) throw new Error(`no symbol ${n}`);
      return i;
    };
    const facts: Record<string, unknown> = {};
    for (const f of DERIVED_FACTS) facts[f] = input.facts.fact(slot(f));
    const functions: Record<string, Record<string, unknown>> = {};
    for (const fn of DERIVED_FUNCTIONS) {
      functions[fn] = {};
      for (const a of ARG_NAMES) functions[fn]![a] = input.facts.call(slot(fn), a);
    }
    log.push({ facts, functions });
    return {};
  };
}

/** The observations as a copy template: every derived fact copy can interpolate ([OAR-COPY-4]). */
const TEMPLATE = 'tool={{tool}} fp={{tool_args_fingerprint}} len={{content_length}} segments={{content_segment_count}} untrusted={{content_contains_untrusted}}';

/**
 * A pack reading the derived values: PROBE (a detector rule, which invokes the probe and then tests
 * `when`) and OBSERVE (a warn rule with no condition, so its copy is always presented).
 */
function pack(when: string, logs: Record<Backend, Observed[]>, extra: string[] = []): Harness {
  let table: ReadonlyMap<string, number> | undefined;
  const h = harness({
    capability: cap({ profiles: PROFILES, detectors: [PROBE_REF] }),
    rules: [
      rule({ id: 'PROBE', kind: 'detector', anchor: PRE, detector: { ref: PROBE_REF }, requires: { profiles: PROFILES }, when, effect: 'warn', copy: { what: TEMPLATE } }),
      rule({ id: 'OBSERVE', anchor: PRE, requires: { profiles: PROFILES }, effect: 'warn', copy: { what: TEMPLATE } }),
      ...extra,
    ],
    options: (b) => ({ detectors: { [PROBE_REF]: probe(logs[b], () => table!) } }),
  });
  table = new Map(h.engines.compiled.bundle.symbols.map((s, i) => [s.name, i]));
  expect(h.engines.interpreter.bundle.symbols.map((s) => s.name)).toEqual(h.engines.compiled.bundle.symbols.map((s) => s.name));
  return h;
}

function fingerprint(canonical: string): string {
  return createHash('sha256').update(`oar-tool-1.0\u0000${canonical}`, 'utf8').digest('hex');
}

const ARGS = { path: '/srv/data.csv', n: 7, neg: -3, flag: true, ratio: 2.5, nested: { k: ['v'] } };
/** The canonical JSON of [OAR-FACT-28] for the call `export(ARGS)`, written out by hand. */
const ARGS_CANONICAL = '["export",{"flag":true,"n":7.0,"neg":-3.0,"nested":{"k":["v"]},"path":"/srv/data.csv","ratio":2.5}]';

/** Two occurrences on opposite sides of every threshold below. */
const LONG_TRUSTED: Occurrence = {
  anchor: PRE,
  toolCall: { name: 'export', arguments: ARGS },
  content: 'Quarterly numbers, with a fox 🦊 in them',
  facts: {
    content_roles: ['user', 'tool'],
    content_origins: ['user', 'tool'],
    content_authorities: ['user', 'none'],
    content_trust_tiers: ['trusted', 'trusted'],
    content_sources: ['', 'export'],
  },
};
const SHORT_UNTRUSTED: Occurrence = {
  anchor: PRE,
  toolCall: { name: 'export', arguments: { ...ARGS, n: 3 } },
  content: 'tiny',
  facts: {
    content_roles: ['system', 'user', 'tool'],
    content_origins: ['host', 'user', 'retrieval'],
    content_authorities: ['system', 'user', 'none'],
    content_trust_tiers: ['trusted', 'unknown', 'untrusted'],
    content_sources: ['', '', 'web'],
  },
};

/** What each occurrence's derived values are, computed here from the observation definitions. */
function truth(o: Occurrence): Observed {
  const args = o.toolCall!.arguments as Record<string, unknown>;
  const tiers = o.facts!.content_trust_tiers as string[];
  const str = (a: string) => (typeof args[a] === 'string' ? args[a] : '');
  const int = (a: string) => (Number.isInteger(args[a]) ? args[a] : 0);
  const bool = (a: string) => (typeof args[a] === 'boolean' ? args[a] : false);
  return {
    facts: {
      tool: o.toolCall!.name,
      tool_args: args,
      tool_args_fingerprint: fingerprint(
        o === LONG_TRUSTED ? ARGS_CANONICAL : ARGS_CANONICAL.replace('"n":7.0', '"n":3.0'),
      ),
      content_length: [...o.content!].length,
      content_contains_untrusted: tiers.includes('untrusted'),
      content_segment_count: tiers.length,
    },
    functions: {
      tool_arg_string: Object.fromEntries(ARG_NAMES.map((a) => [a, str(a)])),
      tool_arg_int: Object.fromEntries(ARG_NAMES.map((a) => [a, int(a)])),
      tool_arg_bool: Object.fromEntries(ARG_NAMES.map((a) => [a, bool(a)])),
    },
  };
}

const renderedTemplate = (t: Observed) =>
  `tool=${String(t.facts.tool)} fp=${String(t.facts.tool_args_fingerprint)} len=${String(t.facts.content_length)} ` +
  `segments=${String(t.facts.content_segment_count)} untrusted=${String(t.facts.content_contains_untrusted)}`;

const HIGH = 'content_length > 10 && tool_arg_int("n") > 5 && !content_contains_untrusted && content_segment_count < 3 && tool == "export"';
const LOW = 'content_length <= 10 || tool_arg_int("n") <= 5 || content_contains_untrusted || content_segment_count >= 3 || tool != "export"';

describe('[OAR-FACT-5] [OAR-FACT-7] derived facts are observations', () => {
  it('[OAR-FACT-5] [OAR-FACT-7] [OAR-FACT-9] two packs with opposite thresholds observe identical values, equal to the measurements', () => {
    const logsHigh: Record<Backend, Observed[]> = { specialised: [], compiled: [], interpreter: [] };
    const logsLow: Record<Backend, Observed[]> = { specialised: [], compiled: [], interpreter: [] };
    const high = pack(HIGH, logsHigh);
    const low = pack(LOW, logsLow);

    for (const [o, highFires] of [[LONG_TRUSTED, true], [SHORT_UNTRUSTED, false]] as const) {
      const dh = high.decide(o);
      const dl = low.decide(o);
      // The rules conclude opposite things…
      expect(trace(dh)).toEqual([`OBSERVE:fired`, `PROBE:${highFires ? 'fired' : 'passed'}`]);
      expect(trace(dl)).toEqual([`OBSERVE:fired`, `PROBE:${highFires ? 'passed' : 'fired'}`]);
      // …from the same observations: the copy each pack presents renders the same values.
      const expected = truth(o);
      const observeCopy = (d: Decision) => d.advisories.find((a) => a.rule === 'OBSERVE')!.copy.what;
      expect(observeCopy(dh)).toBe(renderedTemplate(expected));
      expect(observeCopy(dl)).toBe(renderedTemplate(expected));
    }
    // What the engine's own fact reader produced, per occurrence, on both back ends and both packs.
    const want = [truth(LONG_TRUSTED), truth(SHORT_UNTRUSTED)];
    for (const b of ['compiled', 'interpreter'] as const) {
      expect(logsHigh[b]).toEqual(want);
      expect(logsLow[b]).toEqual(want);
    }
    // No threshold is baked in: each value carries its declared type, not a boolean verdict about it.
    const first = logsHigh.compiled[0]!;
    expect(typeof first.facts.content_length).toBe('number');
    expect(first.facts.content_length).toBe(39);
    expect(typeof first.facts.content_segment_count).toBe('number');
    expect(first.functions.tool_arg_int).toMatchObject({ n: 7, neg: -3 });
    expect(logsHigh.compiled[1]!.functions.tool_arg_int).toMatchObject({ n: 3, neg: -3 });
  });

  it('[OAR-FACT-5] the values do not depend on how the reading rule is enforced, and nothing is produced for a rule never evaluated', () => {
    const logs = (): Record<Backend, Observed[]> => ({ specialised: [], compiled: [], interpreter: [] });
    const plain = logs();
    const monitored = logs();
    const suppressed = logs();
    const blockFirst = logs();
    pack(HIGH, plain).decide(LONG_TRUSTED);
    // The same PROBE rule in monitor mode (a configuration), and one whose conclusion is overridden.
    expect(trace(harnessWithConfig(HIGH, monitored).decide(LONG_TRUSTED))).toEqual(['OBSERVE:fired', 'PROBE:monitored_fired']);
    const ds = pack(HIGH, suppressed, [rule({ id: 'A_OVERRIDES', anchor: PRE, effect: 'nudge', overrides: ['PROBE'] })]).decide(LONG_TRUSTED);
    expect(trace(ds)).toEqual(['A_OVERRIDES:fired', 'OBSERVE:fired', 'PROBE:suppressed']);
    // A schema rule that blocks whenever the tool call is large: PROBE is never reached, so nothing
    // is observed for it, and what it would have read is not computed on its behalf.
    const d = pack(HIGH, blockFirst, [rule({ id: 'BIG_CALL', kind: 'schema', anchor: PRE, requires: { profiles: ['tool'] }, when: 'size(tool_args) > 3', effect: 'block' })]).decide(LONG_TRUSTED);
    expect(trace(d)).toEqual(['BIG_CALL:fired']);
    // A rule suppressed before it is reached, or short-circuited, is not evaluated: nothing is
    // observed on its behalf. Where it is evaluated, enforced or monitored, it observes the same.
    expect(blockFirst.compiled).toEqual([]);
    expect(suppressed.compiled).toEqual([]);
    expect(monitored.compiled).toEqual(plain.compiled);
    expect(monitored.interpreter).toEqual(plain.interpreter);
    expect(plain.compiled).toEqual([truth(LONG_TRUSTED)]);
  });

  it('[OAR-FACT-7] content_contains_untrusted observes content_trust_tiers alone; content_segment_count the segments alone', () => {
    const logs: Record<Backend, Observed[]> = { specialised: [], compiled: [], interpreter: [] };
    const h = pack('true', logs);
    // The other provenance lists vary adversarially: a fact combining them with trust ("untrusted
    // and carrying system authority", "untrusted tool output") would disagree with the plain test.
    const cases: [string[], string[], string[]][] = [
      [['trusted'], ['system'], ['host']],
      [['untrusted'], ['none'], ['tool']],
      [['untrusted'], ['system'], ['host']],
      [['unknown', 'trusted'], ['user', 'user'], ['user', 'user']],
      [['trusted', 'trusted', 'untrusted', 'unknown'], ['system', 'developer', 'delegated', 'none'], ['host', 'user', 'peer', 'resource']],
      [[], [], []],
    ];
    for (const [tiers, authorities, origins] of cases) {
      const occ: Occurrence = {
        anchor: PRE,
        facts: {
          content_trust_tiers: tiers,
          content_authorities: authorities,
          content_origins: origins,
          content_roles: tiers.map(() => 'tool'),
          content_sources: tiers.map(() => ''),
        },
      };
      h.decide(occ);
      const seen = logs.compiled.at(-1)!.facts;
      expect(seen.content_contains_untrusted, JSON.stringify(tiers)).toBe(tiers.includes('untrusted'));
      expect(seen.content_segment_count).toBe(tiers.length);
    }
  });

  it('[OAR-FACT-7] tool_args_fingerprint observes the tool name and arguments alone — not the anchor, session, content or other facts', () => {
    const logs: Record<Backend, Observed[]> = { specialised: [], compiled: [], interpreter: [] };
    const h = pack('true', logs);
    const want = fingerprint(ARGS_CANONICAL);
    const variants: Occurrence[] = [
      { anchor: PRE, toolCall: { name: 'export', arguments: ARGS } },
      { anchor: PRE, session: 'other', toolCall: { name: 'export', arguments: { nested: { k: ['v'] }, ratio: 2.5, path: '/srv/data.csv', neg: -3, n: 7, flag: true } } },
      { ...LONG_TRUSTED, content: 'something else entirely' },
      { ...SHORT_UNTRUSTED, toolCall: { name: 'export', arguments: ARGS } },
    ];
    for (const v of variants) {
      h.decide(v);
      expect(logs.compiled.at(-1)!.facts.tool_args_fingerprint).toBe(want);
    }
    h.decide({ anchor: PRE, toolCall: { name: 'import', arguments: ARGS } });
    expect(logs.compiled.at(-1)!.facts.tool_args_fingerprint).not.toBe(want);
  });
});

describe('[OAR-FACT-9] observation functions', () => {
  it('[OAR-FACT-9] tool_arg_* return the named argument itself (or the zero value), whatever threshold a rule applies to it', () => {
    // Sweep a threshold across the argument in two packs with opposite comparisons: the firings are
    // exact complements, and they switch exactly at the argument's value.
    const thresholds = [-10, -4, -3, -2, 0, 6, 7, 8, 100];
    const fires = (when: (t: number) => string, arg: string) => {
      const h = harness({
        capability: cap({ profiles: ['tool'] }),
        rules: thresholds.map((t, i) => rule({ id: `T${i}`, anchor: PRE, requires: { profiles: ['tool'] }, when: when(t).replace('$', arg), effect: 'warn' })),
      });
      const d = h.decide({ anchor: PRE, toolCall: { name: 'export', arguments: ARGS } });
      return trace(d).filter((t) => t.endsWith(':fired')).map((t) => thresholds[Number(t.slice(1, t.indexOf(':')))]);
    };
    const lit = (t: number) => (t < 0 ? `(0 - ${-t})` : String(t));
    for (const [arg, value] of [['n', 7], ['neg', -3], ['ratio', 0], ['missing', 0]] as const) {
      const above = fires((t) => `tool_arg_int("$") > ${lit(t)}`, arg);
      const atOrBelow = fires((t) => `tool_arg_int("$") <= ${lit(t)}`, arg);
      expect(above, arg).toEqual(thresholds.filter((t) => value > t));
      expect(atOrBelow, arg).toEqual(thresholds.filter((t) => value <= t));
    }
    // Strings and booleans: the value itself, compared in the rule.
    const h = harness({
      capability: cap({ profiles: ['tool'] }),
      rules: [
        rule({ id: 'S', anchor: PRE, requires: { profiles: ['tool'] }, when: 'tool_arg_string("path") == "/srv/data.csv" && tool_arg_string("n") == ""', effect: 'warn' }),
        rule({ id: 'B', anchor: PRE, requires: { profiles: ['tool'] }, when: 'tool_arg_bool("flag") && !tool_arg_bool("n") && !tool_arg_bool("missing")', effect: 'warn' }),
        rule({ id: 'P', anchor: PRE, requires: { profiles: ['tool'] }, when: 'starts_with(tool_arg_string("path"), "/srv/")', effect: 'warn' }),
        rule({ id: 'Q', anchor: PRE, requires: { profiles: ['tool'] }, when: '!starts_with(tool_arg_string("path"), "/srv/")', effect: 'warn' }),
      ],
    });
    expect(trace(h.decide({ anchor: PRE, toolCall: { name: 'export', arguments: ARGS } }))).toEqual(['B:fired', 'P:fired', 'Q:passed', 'S:fired']);
  });

  it('[OAR-FACT-9] a function result depends on its argument and the tool call, not on which rule or pack asks', () => {
    const logsA: Record<Backend, Observed[]> = { specialised: [], compiled: [], interpreter: [] };
    const logsB: Record<Backend, Observed[]> = { specialised: [], compiled: [], interpreter: [] };
    pack('tool_arg_int("n") > 5', logsA).decide(LONG_TRUSTED);
    pack('tool_arg_int("n") <= 5', logsB, [rule({ id: 'READS_TOO', anchor: PRE, requires: { profiles: ['tool'] }, when: 'tool_arg_int("n") == 7 && tool_arg_string("path") != ""', effect: 'nudge' })]).decide(LONG_TRUSTED);
    expect(logsA.compiled[0]!.functions).toEqual(truth(LONG_TRUSTED).functions);
    expect(logsB.compiled[0]!.functions).toEqual(logsA.compiled[0]!.functions);
  });
});

// ---------------------------------------------------------------------------------------------
// [OAR-FACT-10]

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Reflect.ownKeys(v)) deepFreeze((v as Record<PropertyKey, unknown>)[k]);
  }
  return v;
}

/** A counter store that records every write. */
class SpyStore implements CounterStore {
  readonly inner = new MemoryCounterStore();
  readonly writes: CounterOp[] = [];
  reads = 0;
  read(key: CounterKey): CounterValues {
    this.reads++;
    return this.inner.read(key);
  }
  apply(ops: readonly CounterOp[]): void {
    this.writes.push(...ops.map((o) => ({ key: { ...o.key }, action: o.action })));
    this.inner.apply(ops);
  }
}

const HOST_FACTS = [
  { name: 'acme.n', type: 'int' },
  { name: 'acme.score', type: 'double' },
  { name: 'acme.tags', type: 'list<string>' },
  { name: 'acme.labels', type: 'map<string,string>' },
  { name: 'acme.items', type: 'list<map>' },
  { name: 'acme.quota_for', type: '(string) -> int' },
];

/** Every operator, built-in, index form and function kind of Appendix A, each in a rule that must fire. */
const EVERY_OPERATOR: Record<string, string> = {
  INT_ARITH: '(acme.n + 2) * 3 - 4 == 17 && acme.n / 2 == 2 && acme.n % 3 == 2 && -acme.n == 0 - 5',
  DOUBLE_ARITH: 'acme.score * 2.0 > 1.0 && acme.score - 0.25 < 0.5 && acme.score / 2.0 >= 0.3 && acme.score + 0.0 <= 0.75',
  MIXED: 'acme.n > 4.5 && acme.n == 5.0 && acme.n != 4',
  STRINGS: 'starts_with(tool_arg_string("path"), "/etc") && ends_with(tool_arg_string("path"), "wd") && contains(tool_arg_string("path"), "pass") && size(tool_arg_string("path")) == 11 && tool_arg_string("path") + "!" == "/etc/passwd!" && "a" < "b"',
  LISTS: '"b" in acme.tags && acme.tags[1] == "b" && size(acme.tags) == 3 && "x" in ["x", "y"] && !("z" in acme.tags)',
  MAPS: '"env" in acme.labels && acme.labels["env"] == "prod" && size(acme.labels) == 2 && "path" in tool_args && size(tool_args) == 3',
  LIST_OF_MAPS: 'size(acme.items) == 2 && size(acme.items[0]) == 1 && "k" in acme.items[1]',
  LOGIC: '(acme.n > 3 ? "big" : "small") == "big" && (false || true) && !(true && false)',
  FUNCTIONS: 'tool_arg_bool("force") && tool_arg_int("count") == 2 && acme.quota_for("gold") == 10',
  COUNTERS: 'fire_count == 0 && breaker_count == 0 && fire_count_of("INT_ARITH") == 0 && breaker_count_of("INT_ARITH") == 0',
  PROVENANCE: 'content_contains_untrusted && content_segment_count == 2 && content_trust_tiers[1] == "untrusted" && content_length == 5',
  ANCHOR: 'anchor == "tool.pre_invoke" && tool == "read" && size(tool_args_fingerprint) == 64',
};

function frozenOccurrence(anchor = PRE): { occ: Occurrence; snapshot: string } {
  const quota = (plan: unknown) => (plan === 'gold' ? 10 : 1);
  const occ: Occurrence = {
    anchor,
    session: 's1',
    content: 'hello',
    toolCall: { name: 'read', arguments: { path: '/etc/passwd', force: true, count: 2 } },
    facts: {
      'acme.n': 5,
      'acme.score': 0.7,
      'acme.tags': ['a', 'b', 'c'],
      'acme.labels': { env: 'prod', team: 'core' },
      'acme.items': [{ a: '1' }, { k: 'v' }],
      'acme.quota_for': quota,
      content_trust_tiers: ['trusted', 'untrusted'],
      content_roles: ['user', 'tool'],
      content_origins: ['user', 'tool'],
      content_authorities: ['user', 'none'],
      content_sources: ['', 'web'],
    },
    detectorFacts: { prompt_injection_score: 0.9 },
  };
  const snapshot = JSON.stringify(occ);
  return { occ: deepFreeze(occ), snapshot };
}

function everyOperatorPack(stores: Record<Backend, SpyStore>, extra: string[] = []): Harness {
  return harness({
    capability: cap({ host: 'acme', profiles: [...PROFILES, 'prompt-injection'], hostFacts: HOST_FACTS, detectors: ['detector://fixture'], window: 4 }),
    rules: [
      ...Object.entries(EVERY_OPERATOR).map(([id, when]) =>
        rule({ id, anchor: PRE, requires: { profiles: PROFILES, facts: HOST_FACTS.map((f) => f.name) }, when, effect: 'warn' }),
      ),
      rule({ id: 'DETECTED', kind: 'detector', anchor: PRE, detector: { ref: 'detector://fixture' }, requires: { profiles: ['prompt-injection'] }, when: 'prompt_injection_score > 0.5', effect: 'warn' }),
      ...extra,
    ],
    options: (b) => ({ counters: stores[b] }),
  });
}

describe('[OAR-FACT-10] condition evaluation is free of side-effects', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('[OAR-FACT-10] the freeze is real: this module is strict, so a write to a frozen input throws', () => {
    const { occ } = frozenOccurrence();
    expect(() => {
      (occ.facts as Record<string, unknown>)['acme.n'] = 6;
    }).toThrow(TypeError);
    expect(() => {
      (occ.toolCall!.arguments as Record<string, unknown>).path = '/';
    }).toThrow(TypeError);
    expect(() => (occ.facts!['acme.tags'] as string[]).push('d')).toThrow(TypeError);
    expect(() => {
      (occ.detectorFacts as Record<string, unknown>).prompt_injection_score = 0;
    }).toThrow(TypeError);
  });

  it('[OAR-FACT-10] conditions using every operator read deep-frozen facts, tool arguments and detector facts without error, and change none of them', () => {
    const stores = { specialised: new SpyStore(), compiled: new SpyStore(), interpreter: new SpyStore() };
    const h = everyOperatorPack(stores);
    const { occ, snapshot } = frozenOccurrence();
    const d = h.decide(occ);
    expect(trace(d)).toEqual([...Object.keys(EVERY_OPERATOR).sort().map((id) => `${id}:fired`), 'DETECTED:fired']);
    expect(d.applied.every((t) => t.error === undefined)).toBe(true);
    expect(JSON.stringify(occ)).toBe(snapshot);
    // Counters were read (COUNTERS) but never written: no rule declares on_fire.
    for (const s of Object.values(stores)) {
      expect(s.reads).toBeGreaterThan(0);
      expect(s.writes).toEqual([]);
    }
    expect(d.counters).toEqual({});
    expect(d.onFire).toEqual([]);
  });

  it('[OAR-FACT-10] the same occurrence decided twice without on_fire: identical decisions, no counter written, activity grows only by the admitted call', () => {
    const stores = { specialised: new SpyStore(), compiled: new SpyStore(), interpreter: new SpyStore() };
    const h = everyOperatorPack(stores);
    const { occ, snapshot } = frozenOccurrence();
    const first = h.decide(occ);
    expect(h.activity('s1')).toEqual(['read']);
    const second = h.decide(occ);
    expect(second).toEqual(first);
    expect(JSON.stringify(occ)).toBe(snapshot);
    for (const s of Object.values(stores)) expect(s.writes).toEqual([]);
    // [OAR-PROF-9] the one state change a tool.pre_invoke occurrence makes: its admitted step.
    expect(h.activity('s1')).toEqual(['read', 'read']);
    // At an anchor that admits no tool call, nothing changes at all.
    const post = h.decide({ ...frozenOccurrence('tool.post_invoke').occ });
    const again = h.decide(frozenOccurrence('tool.post_invoke').occ);
    expect(again).toEqual(post);
    expect(h.activity('s1')).toEqual(['read', 'read']);
    for (const s of Object.values(stores)) expect(s.writes).toEqual([]);
  });

  it('[OAR-FACT-10] counters change only through declared on_fire: a rule that fires writes exactly its actions; reading rules, passing rules and monitored rules write nothing', () => {
    const stores = { specialised: new SpyStore(), compiled: new SpyStore(), interpreter: new SpyStore() };
    const h = everyOperatorPack(stores, [
      rule({ id: 'WRITES', anchor: PRE, when: 'fire_count_of("WRITES") < 100', effect: 'warn', on_fire: ['increment_counter', 'increment_breaker'] }),
      rule({ id: 'PASSES', anchor: PRE, when: 'fire_count > 0', effect: 'warn', on_fire: ['increment_counter'] }),
      rule({ id: 'WATCHED', anchor: PRE, effect: 'warn', enforcement: 'monitor', on_fire: ['increment_counter'] }),
    ]);
    const { occ, snapshot } = frozenOccurrence();
    h.decide(occ);
    h.decide(occ);
    expect(JSON.stringify(occ)).toBe(snapshot);
    for (const s of Object.values(stores)) {
      expect(s.writes).toEqual([
        { key: { rule: 'WRITES', session: 's1' }, action: 'increment_counter' },
        { key: { rule: 'WRITES', session: 's1' }, action: 'increment_breaker' },
        { key: { rule: 'WRITES', session: 's1' }, action: 'increment_counter' },
        { key: { rule: 'WRITES', session: 's1' }, action: 'increment_breaker' },
      ]);
      expect(s.inner.read({ rule: 'WRITES', session: 's1' })).toEqual({ fire_count: 2, breaker_count: 2 });
      expect(s.inner.read({ rule: 'PASSES', session: 's1' })).toEqual({ fire_count: 0, breaker_count: 0 });
      expect(s.inner.read({ rule: 'WATCHED', session: 's1' })).toEqual({ fire_count: 0, breaker_count: 0 });
    }
  });

  it('[OAR-FACT-10] deciding performs no I/O: no console, stdout, stderr or fetch', () => {
    const stores = { specialised: new SpyStore(), compiled: new SpyStore(), interpreter: new SpyStore() };
    const h = everyOperatorPack(stores);
    const { occ } = frozenOccurrence();
    const spies = [
      vi.spyOn(console, 'log'),
      vi.spyOn(console, 'info'),
      vi.spyOn(console, 'warn'),
      vi.spyOn(console, 'error'),
      vi.spyOn(console, 'debug'),
      vi.spyOn(process.stdout, 'write'),
      vi.spyOn(process.stderr, 'write'),
    ];
    const fetchSpy = vi.fn();
    vi.stubGlobal('fetch', fetchSpy);
    try {
      h.decide(occ);
      h.decide(occ);
    } finally {
      vi.unstubAllGlobals();
    }
    for (const s of spies) expect(s).not.toHaveBeenCalled();
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('[OAR-FACT-10] a transform reads its frozen spans without reordering them in place', () => {
    const h = harness({
      capability: cap({ host: 'acme', transform: true, hostFacts: [{ name: 'acme.spans', type: 'list<map>' }] }),
      rules: [
        rule({
          id: 'MASK',
          anchor: 'model.output',
          requires: { facts: ['acme.spans'] },
          when: 'size(acme.spans) == 3',
          effect: 'transform',
          transform: { action: 'redact', target: 'acme.spans', replacement: '#' },
        }),
      ],
    });
    const occ = deepFreeze<Occurrence>({
      anchor: 'model.output',
      content: '0123456789',
      facts: { 'acme.spans': [{ start: 8, end: 9 }, { start: 0, end: 2 }, { start: 4, end: 6 }] },
    });
    const snapshot = JSON.stringify(occ);
    const d = h.decide(occ);
    expect(trace(d)).toEqual(['MASK:fired']);
    expect(d.content).toBe('#23#67#9');
    expect(JSON.stringify(occ)).toBe(snapshot);
  });
});

/** `pack` with a configuration putting PROBE in monitor mode. */
function harnessWithConfig(when: string, logs: Record<Backend, Observed[]>): Harness {
  let table: ReadonlyMap<string, number> | undefined;
  const h = harness({
    capability: cap({ profiles: PROFILES, detectors: [PROBE_REF] }),
    rules: [
      rule({ id: 'PROBE', kind: 'detector', anchor: PRE, detector: { ref: PROBE_REF }, requires: { profiles: PROFILES }, when, effect: 'warn', copy: { what: TEMPLATE } }),
      rule({ id: 'OBSERVE', anchor: PRE, requires: { profiles: PROFILES }, effect: 'warn', copy: { what: TEMPLATE } }),
    ],
    configs: [JSON.stringify({ oar_config: '1.0', enforcement: { PROBE: 'monitor' } })],
    options: (b) => ({ detectors: { [PROBE_REF]: probe(logs[b], () => table!) } }),
  });
  table = new Map(h.engines.compiled.bundle.symbols.map((s, i) => [s.name, i]));
  return h;
}
