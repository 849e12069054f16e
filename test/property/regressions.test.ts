/**
 * Minimal cases of every disagreement the whole-pack cross-checks (packs.test.ts) found between the
 * engine and the spec, each as a small deterministic test pinned to the clause that decides it.
 * Every one fails on the engine of a2b7df7 (runtime/engine.ts as of 4816b11) and passes from
 * bf88303 on; every expectation here is what the spec text says, and what reference-engine.ts
 * computes.
 *
 * Every case runs on both back ends, each with its own fresh counter store and event stream.
 */
import { describe, expect, it } from 'vitest';
import { compileToBundle, loadPackTexts } from '../../compiler/index.js';
import { createEngine, type Engine, type EventSink } from '../../runtime/engine.js';
import { MemoryCounterStore } from '../../runtime/counters.js';
import type { Decision, EventRecord } from '../../runtime/decision.js';
import type { Occurrence } from '../../runtime/occurrence.js';

const CAPABILITY = `
oar_capability_version: "1.0"
host: t
anchors:
  core: { tool.pre_invoke: tool.pre_invoke, model.output: model.output }
  unsupported: [tool.handler, tool.post_invoke, agent.post_turn, agent.finalize, model.input, model.tool_result]
profiles: [tool]
activity_window: 3
supports_transform: true
host_facts:
  - { name: t.s, type: string }
detectors: [detector://fixture, detector://noop, detector://error]
`;

/** Every rule below is a policy at `tool.pre_invoke` requiring what it reads, unless it says otherwise. */
const HEAD = 'oar: "1.0"\nanchor: tool.pre_invoke\nrequires: { profiles: [tool], facts: [t.s] }\n';
const withHead = (text: string) => HEAD + (/^kind:/m.test(text) ? '' : 'kind: policy\n') + text;

class Sink implements EventSink {
  constructor(private readonly refuses: readonly string[]) {}
  publish(event: EventRecord): void {
    if (this.refuses.includes(event.rule)) throw new Error(`the event stream refuses ${event.rule}`);
  }
}

/** Engines on both back ends for `rules` (YAML documents without their common head). */
function engines(rules: string[], refuses: string[] = []): Engine[] {
  const r = loadPackTexts({ capability: CAPABILITY, rules: rules.map(withHead) });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return (['compiled', 'interpreter'] as const).map((b) =>
    createEngine(compileToBundle(r.pack, b), { counters: new MemoryCounterStore(), events: new Sink(refuses) }),
  );
}

/** Run the occurrences on every engine; both back ends must agree; return the decisions. */
function run(es: Engine[], occurrences: Occurrence[]): Decision[] {
  const [first, ...rest] = es.map((e) => occurrences.map((o) => e.decide(o)));
  for (const other of rest) expect(other).toStrictEqual(first);
  return first as Decision[];
}

const trace = (d: Decision) => d.applied.map((e) => `${e.rule}:${e.outcome}`);
const at = (facts: Record<string, unknown> = {}, extra: Partial<Occurrence> = {}): Occurrence => ({ anchor: 'tool.pre_invoke', session: 's', facts, ...extra });

describe('regressions found by the whole-pack cross-checks', () => {
  // [OAR-EVAL-14] only a rule that *fires* suppresses; [OAR-FIRE-9] a rule whose side-effect cannot
  // be applied is one that cannot be evaluated; [OAR-OPS-4] fail_open records it and continues.
  // The engine found the failure after evaluation and left the rule's suppression in place: T was
  // recorded `suppressed` by a rule recorded `errored`, and the nudge was lost.
  it('a rule whose counter scope cannot be read does not suppress what it overrides [OAR-EVAL-14] [OAR-FIRE-9]', () => {
    const es = engines([
      'id: S\neffect: warn\non_error: fail_open\ncounter_scope: t.s\non_fire: [increment_counter]\noverrides: [T]\n',
      'id: T\neffect: nudge\n',
    ]);
    const [d] = run(es, [at({ 't.s': 5 })]);
    expect(trace(d as Decision)).toEqual(['S:errored', 'T:fired']);
    expect(d?.decision).toBe('nudge');
    expect(d?.code).toBe('T');
  });

  it('a rule whose event the stream refuses does not suppress what it overrides [OAR-EVAL-14] [OAR-FIRE-9]', () => {
    const es = engines(['id: S\neffect: warn\non_error: fail_open\non_fire: [publish_event]\noverrides: [T]\n', 'id: T\neffect: nudge\n'], ['S']);
    const [d] = run(es, [at()]);
    expect(trace(d as Decision)).toEqual(['S:errored', 'T:fired']);
    expect(d?.decision).toBe('nudge');
  });

  // [OAR-OPS-3] with fail_closed the occurrence ends at the failing rule, so T is never reached —
  // and it was not suppressed either: its only suppressor did not fire ([OAR-OPS-10]).
  it('a fail_closed rule whose side-effect fails is not recorded as having suppressed anything [OAR-OPS-10]', () => {
    const es = engines(['id: S\neffect: block\non_fire: [publish_event]\noverrides: [T]\n', 'id: T\neffect: nudge\n'], ['S']);
    const [d] = run(es, [at()]);
    expect(trace(d as Decision)).toEqual(['S:errored']);
    expect(d?.decision).toBe('block');
    expect(d?.code).toBe('S');
  });

  // [OAR-OPS-4]: "record the failure and continue". A block that turns out to be a rule that cannot
  // be evaluated does not short-circuit ([OAR-EVAL-4] is about a rule that *fires* with block).
  // The engine kept the short-circuit: B was never evaluated and the decision was `none`.
  it('a fail_open block whose copy cannot be rendered does not end the occurrence [OAR-OPS-4] [OAR-FACT-26]', () => {
    const es = engines(['id: A\neffect: block\non_error: fail_open\ncopy: { what: "{{ t.s }}" }\n', 'id: B\nkind: invariant\neffect: warn\n']);
    const [d] = run(es, [at({ 't.s': 5 })]);
    expect(trace(d as Decision)).toEqual(['A:errored', 'B:fired']);
    expect(d?.decision).toBe('warn');
    expect(d?.code).toBe('B');
  });

  it('a fail_open block whose event the stream refuses does not end the occurrence [OAR-OPS-4] [OAR-FIRE-9]', () => {
    const es = engines(['id: A\neffect: block\non_error: fail_open\non_fire: [publish_event]\n', 'id: B\nkind: invariant\neffect: warn\n'], ['A']);
    const [d] = run(es, [at()]);
    expect(trace(d as Decision)).toEqual(['A:errored', 'B:fired']);
    expect(d?.decision).toBe('warn');
  });

  // 5.3: `anchor` "is a property of the occurrence, so every rule evaluated at one observes the
  // same value". The engine let a detector's report replace it for the detector's own rule.
  it('a detector cannot change the anchor its rule observes (5.3)', () => {
    const es = engines([
      'id: D\nkind: detector\ndetector: { ref: "detector://fixture" }\nwhen: anchor == "tool.pre_invoke"\neffect: warn\ncopy: { what: "at {{ anchor }}" }\n',
    ]);
    const [d] = run(es, [at({}, { detectorFacts: { anchor: 'model.output' } })]);
    expect(d?.decision).toBe('warn');
    expect(d?.copy).toEqual({ what: 'at tool.pre_invoke' });
  });

  // [OAR-SEL-4] clauses are a conjunction, and a selector is a JSON object, whose members have no
  // order ([OAR-DOC-1]). A clause that certainly does not match leaves the rule unselected
  // ([OAR-SEL-7]) whatever an unreadable clause would have said. The engine stopped at the first
  // clause it could not read, so the decision depended on the order the clauses were written in.
  it('selection does not depend on the order of selector clauses [OAR-SEL-4] [OAR-SEL-7]', () => {
    const a = engines(['id: R\nselector: { t.s: [x], tool: [read] }\neffect: block\n']);
    const b = engines(['id: R\nselector: { tool: [read], t.s: [x] }\neffect: block\n']);
    const occ = at({ 't.s': 5, tool: 'bash' });
    const [da] = run(a, [occ]);
    const [db] = run(b, [occ]);
    expect(da).toStrictEqual(db);
    expect(da?.decision).toBe('none');
    expect(da?.applied).toEqual([]);
  });

  // [OAR-PROF-9]: a step is the `tool` name *of the call*; [OAR-FACT-11]: what a detector reports
  // for one rule stays local to that rule. The engine recorded the step from the fact context of
  // the last rule it rendered copy for, which here was a detector reporting `tool: bash`.
  it('the activity step is the host tool name, not a detector report [OAR-PROF-9] [OAR-FACT-11]', () => {
    const es = engines([
      'id: D\nkind: detector\ndetector: { ref: "detector://fixture" }\neffect: warn\ncopy: { what: "{{ tool }}" }\n',
      'id: F\nflow: [read]\neffect: block\n',
    ]);
    const occ = at({}, { toolCall: { name: 'read' }, detectorFacts: { tool: 'bash' } });
    const [d1, d2] = run(es, [occ, occ]);
    expect(d1?.copy).toEqual({ what: 'bash' }); // the detector's own rule does see its report
    for (const e of es) expect(e.activity('s')).toEqual(['read']);
    expect(d2?.decision).toBe('block'); // F's flow [read] matched the host's step
  });

  // [OAR-FIRE-8] actions apply in the order listed; [OAR-FIRE-9] an engine must not report a
  // side-effect as applied when it was not. The engine once listed `increment_counter` in `onFire`
  // but never wrote it when the event after it was refused. Now a rule whose side-effect cannot be
  // applied applies none ([OAR-OPS-4]): the increment is taken back, and neither reported nor read.
  it('a counter action before a refused event is taken back, and reported as neither written nor applied [OAR-FIRE-9] [OAR-OPS-4]', () => {
    const es = engines(
      ['id: C\neffect: allow\non_error: fail_open\non_fire: [increment_counter, publish_event]\n', 'id: R\nkind: invariant\nwhen: fire_count_of("C") == 1\neffect: warn\n'],
      ['C'],
    );
    const [d1, d2] = run(es, [at(), at()]);
    expect(d1?.onFire).toEqual([]);
    expect(d1?.counters).toEqual({});
    expect(d1?.events).toEqual([]);
    expect(trace(d1 as Decision)).toEqual(['C:errored', 'R:passed']);
    expect(d2?.decision).toBe('none');
  });

  // 5.3: `fire_count` is the count "before the current occurrence"; [OAR-FIRE-6]. When a later
  // rule's side-effect failed, the engine resolved the decision again and rendered A's copy from
  // the counter A had just written.
  it('copy rendered after a side-effect failure still shows the counters from before the occurrence (5.3) [OAR-FIRE-6]', () => {
    const es = engines(
      [
        'id: A\neffect: warn\non_fire: [increment_counter]\ncopy: { what: "{{ fire_count }}" }\n',
        'id: B\nkind: invariant\neffect: nudge\non_error: fail_open\non_fire: [publish_event]\n',
      ],
      ['B'],
    );
    const [d1, d2] = run(es, [at(), at()]);
    expect(d1?.decision).toBe('warn');
    expect(d1?.copy).toEqual({ what: '0' });
    expect(d2?.copy).toEqual({ what: '1' });
  });

  // [OAR-OPS-4] evaluation continues past a fail_open rule that turned out not to fire, and
  // [OAR-FIRE-6] what it evaluates then still sees the counters from before the occurrence — even
  // though A's increment was written before B's refused event was found.
  it('evaluation resumed after a late failure reads the counters from before the occurrence [OAR-OPS-4] [OAR-FIRE-6]', () => {
    const es = engines(
      [
        'id: A\neffect: allow\non_fire: [increment_counter]\n',
        'id: B\neffect: block\non_error: fail_open\non_fire: [publish_event]\n',
        'id: C\nwhen: fire_count_of("A") == 0\neffect: warn\n',
      ],
      ['B'],
    );
    const [d] = run(es, [at()]);
    expect(trace(d as Decision)).toEqual(['A:fired', 'B:errored', 'C:fired']);
    expect(d?.decision).toBe('warn');
    expect(d?.code).toBe('C');
    expect(d?.counters).toEqual({ A: { fire_count: 1, breaker_count: 0 } });
  });
});
