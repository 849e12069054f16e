/**
 * The engines a case is decided with, each answering in the wire form (runtime/wire.ts) so that
 * every back end — in process or not — is compared on the same JSON:
 *
 * - `specialised`: the bundle as `oarc compile` emits it, deciding through its per-anchor
 *   decision procedures;
 * - `generic`: the same compiled conditions with the procedures left out (the generic engine);
 * - `interpreter`: every condition through the tree-walking interpreter, on the generic engine;
 * - an external engine speaking the protocol of docs/engine-protocol.md (protocol.ts).
 *
 * Each in-process run of a case gets a fresh engine and counter store, so a case (and every
 * shrunk variant of it) is decided from a clean state, as a conformance fixture is ([OAR-CONF-31]).
 */
import { createEngine, type EngineOptions } from '../runtime/engine.js';
import { MemoryCounterStore } from '../runtime/counters.js';
import type { Bundle } from '../runtime/bundle.js';
import type { Detector } from '../runtime/detectors.js';
import { HostInputError } from '../runtime/host-input.js';
import { decisionToJson, occurrenceFromJson, occurrencePathToJson, type DecisionJson, type OccurrenceJson } from '../runtime/wire.js';
import { viaJson } from './json.js';

/** What one engine answered for one occurrence: a decision, or a refusal of the occurrence. */
export type Answer = { decision: DecisionJson } | { error: { kind: string; message: string; path?: (string | number)[] } };

export interface Backend {
  readonly name: string;
  /** Decide the occurrences in order, as one session from a clean state. */
  decide(occurrences: readonly OccurrenceJson[]): Promise<Answer[]>;
  close?(): Promise<void>;
}

/** An in-process back end over one bundle. */
export function inProcess(name: string, bundle: Bundle, detectors: Readonly<Record<string, Detector>>, procedures: boolean): Backend {
  return {
    name,
    decide: (occurrences) => Promise.resolve(decideInProcess(bundle, detectors, procedures, occurrences)),
  };
}

export function decideInProcess(bundle: Bundle, detectors: Readonly<Record<string, Detector>>, procedures: boolean, occurrences: readonly OccurrenceJson[]): Answer[] {
  const options: EngineOptions = { counters: new MemoryCounterStore(), detectors, procedures };
  const engine = createEngine(bundle, options);
  return occurrences.map((o): Answer => {
    try {
      // Decided from its JSON text, exactly as a fixture replay or another engine reads it.
      const decision = engine.decide(occurrenceFromJson(viaJson(o)));
      // The answer goes through JSON too: what is compared is what the wire carries.
      return { decision: viaJson(decisionToJson(decision)) };
    } catch (e) {
      if (e instanceof HostInputError) return { error: { kind: 'occurrence', message: e.message, path: occurrencePathToJson(e.path) } };
      // Anything else thrown out of decide() is a defect in oarc, and a finding in itself.
      return { error: { kind: 'internal', message: e instanceof Error ? e.message : String(e) } };
    }
  });
}
