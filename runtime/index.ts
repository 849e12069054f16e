/**
 * `oarc/runtime`, the public runtime API: what a host calls to run a compiled bundle — the engine,
 * the bundle check, counter stores, detectors, the errors a provider may raise, and the canonical
 * forms (tool-call fingerprint, double rendering) a host may need to agree with the engine on.
 * The helpers generated code calls are a separate, internal entry point (`oarc/runtime/internal`).
 * It imports nothing from the compiler, so a gateway that ships precompiled bundles loads only this.
 */
export { createEngine, type Engine, type EngineOptions, type EventSink } from './engine.js';
export { checkBundle, BUNDLE_FORMAT, type Bundle, type BundleRule, type BundleCapability, type BundleSymbol } from './bundle.js';
export type { Decision, DecisionEffect, TraceEntry, Outcome, Advisory, DecisionTransform, AppliedSideEffect, EventRecord } from './decision.js';
export type { Occurrence, ToolCall } from './occurrence.js';
export { HostInputError } from './host-input.js';
export { decisionJsonText } from './decision-text.js';
export { occurrenceFromJson, occurrenceToJson, decisionFromJson, decisionToJson, occurrencePathToJson, type OccurrenceJson, type DecisionJson } from './wire.js';
export { MemoryCounterStore, counterName, type CounterStore, type CounterKey, type CounterOp, type CounterValues } from './counters.js';
export { RESERVED_DETECTORS, type Detector, type DetectorInput } from './detectors.js';
export { Raise, type RaiseCode } from './raise.js';
export { toolArgsFingerprint, canonicalJson } from './fingerprint.js';
export { formatDouble } from './format-double.js';
export type { FactReader } from './facts.js';
export type { AsyncCounterStore } from './async-counters.js';
