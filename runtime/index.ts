/**
 * oarc's runtime: everything a compiled bundle imports and everything a host needs to run one.
 * It imports nothing from the compiler, so a gateway that ships precompiled bundles loads only this.
 */
export { createEngine, flowMatches, type Engine, type EngineOptions, type EventSink } from './engine.js';
export { checkBundle, BUNDLE_FORMAT, type Bundle, type BundleRule, type BundleCapability, type BundleSymbol } from './bundle.js';
export type { Decision, DecisionEffect, TraceEntry, Outcome, Advisory, DecisionTransform, AppliedSideEffect, EventRecord } from './decision.js';
export type { Occurrence, ToolCall } from './occurrence.js';
export { HostInputError } from './host-input.js';
export { occurrenceFromJson, occurrenceToJson, decisionFromJson, decisionToJson, occurrencePathToJson, type OccurrenceJson, type DecisionJson } from './wire.js';
export { MemoryCounterStore, counterName, type CounterStore, type CounterKey, type CounterOp, type CounterValues } from './counters.js';
export { RESERVED_DETECTORS, type Detector, type DetectorInput } from './detectors.js';
export { Raise, type RaiseCode } from './raise.js';
export { toolArgsFingerprint, canonicalJson } from './fingerprint.js';
export { formatDouble } from './format-double.js';
export type { FactReader } from './facts.js';
// The helpers compiled conditions and copy renderers call, by the names the emitters use
// (runtime/helpers.ts).
export { iadd, isub, imul, idiv, imod, ineg, toDouble } from './int64.js';
export { dadd, dsub, dmul, ddiv } from './double.js';
export { cpCompare, cpContains, cpEndsWith, cpLength, cpStartsWith } from './strings.js';
export { mapSize } from './values.js';
export { copyBool, copyDouble, copyInt, copyList, copyString, isZero } from './copy.js';
export { idxList, idxMap, inList, inMap } from './ops.js';
