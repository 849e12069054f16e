/**
 * A shrunk case as a conformance fixture (section 10.2, conformance/README.md) that `oarc
 * conformance <dir>` replays: the pack's rule documents, its capability document and
 * configuration, the occurrences as one session ([OAR-CONF-31]), and per occurrence what the
 * reference back end decided, as the fixture's `expected`.
 *
 * The expectation is the reference's answer — so a fixture from `--against` passes on oarc and
 * fails on the engine that answered otherwise; one from a disagreement between oarc's own back
 * ends records the interpreter's answer (the plainest back end, the one the compiled paths are
 * checked against), so it fails on the back end that disagreed. An occurrence the reference
 * refused (a host-input error) has no place in a fixture, which asserts decisions only: it is left
 * out (it changed no state) and the case is kept beside the fixture as JSON Lines.
 */
import type { Answer } from './backends.js';
import type { FuzzCase } from './generate.js';
import type { DecisionJson, OccurrenceJson } from '../runtime/wire.js';

/** The pack as documents (parsed rule, capability and configuration documents). */
export interface PackDocs {
  capability: unknown;
  rules: unknown[];
  configs: unknown[];
}

type Obj = Record<string, unknown>;

/** What a fixture asserts about one decision: every member the runner compares ([OAR-CONF-21]). */
export function expectationOf(d: DecisionJson, occ: OccurrenceJson): Obj {
  const out: Obj = {
    decision: d.decision,
    code: d.code,
    rule: d.rule,
    copy: d.copy,
    advisories: d.advisories,
    transforms: d.transforms,
    skipped_transforms: d.skipped_transforms,
    applied: d.applied.map((t) => `${t.rule}:${t.outcome}`),
    on_fire: d.on_fire,
    events: d.events,
    counters: d.counters,
  };
  // [OAR-CONF-34] content is asserted only where the occurrence carried some; a block carries none.
  if (occ.content !== undefined) out.content = d.content ?? null;
  return out;
}

export function buildFixture(id: string, title: string, docs: PackDocs, c: FuzzCase, reference: readonly Answer[]): Obj | undefined {
  const occurrences: Obj[] = [];
  const run: Record<string, unknown> = {};
  let last: Obj | undefined;
  c.occurrences.forEach((o, i) => {
    const a = reference[i];
    if (a === undefined || 'error' in a) return;
    const { session_id: _session, ...members } = o;
    const expected = expectationOf(a.decision, o);
    for (const [k, v] of Object.entries(a.decision.counters)) run[k] = v;
    occurrences.push({ ...members, expected });
    last = expected;
  });
  if (last === undefined) return undefined;
  const { counters: _last, ...final } = last;
  const session = c.occurrences[0]?.session_id;
  return {
    id,
    title,
    // A session of occurrences through the real loader and engine ([OAR-CONF-31], [OAR-CONF-38]).
    covers: ['OAR-CONF-31'],
    rules: docs.rules,
    input: {
      capability: docs.capability,
      ...(session !== undefined ? { session_id: session } : {}),
      ...(docs.configs.length === 0 ? {} : { config: docs.configs.length === 1 ? docs.configs[0] : docs.configs }),
      occurrences,
    },
    expected: { ...final, counters: run },
  };
}
