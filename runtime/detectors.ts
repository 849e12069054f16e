/**
 * Detectors: registered by `detector://` reference ([OAR-OPS-12]). A detector returns observations
 * — facts by name — and never a verdict ([OAR-OPS-11]); what it returns is visible only to the rule
 * that invoked it ([OAR-FACT-11]).
 */
import type { FactReader } from './facts.js';
import type { Occurrence } from './occurrence.js';
import { Raise } from './raise.js';
import { describeThrown, markHandled } from './thrown.js';

export interface DetectorInput {
  /** The reference the rule named. */
  ref: string;
  /** Qualified identifier of the rule that invoked the detector. */
  rule: string;
  /** The `anchor` fact of the occurrence (core identifier, or host-native). */
  anchor: string;
  occurrence: Occurrence;
  /** The occurrence's host facts, for detectors that need an observation to work on. */
  facts: FactReader;
}

/**
 * Returns facts by name; throwing means the detector failed ([OAR-OPS-3]). A detector may list, as
 * `produces`, the facts it reports beyond those of the detector-backed profiles: when it fails,
 * those are what it did not observe ([OAR-COPY-11]).
 */
export type Detector = ((input: DetectorInput) => Readonly<Record<string, unknown>>) & { readonly produces?: readonly string[] };

/**
 * Ask a detector: what it produced, or the provider failure it is ([OAR-OPS-3]) — whatever it
 * throws (any value, described without throwing again), and anything it returns that is not a
 * plain object of facts (`detectorResult`). Used by the generic engine and by the decision
 * procedures alike, through `askDetector`, so both see the same result for the same detector.
 */
export function runDetector(detector: Detector, input: DetectorInput): Readonly<Record<string, unknown>> | Raise {
  let produced: unknown;
  try {
    produced = detector(input);
  } catch (e) {
    return new Raise('provider_failure', `detector ${input.ref} failed: ${describeThrown(e)}`);
  }
  return detectorResult(produced, input.ref);
}

const OBJECT_PROTOTYPE = Object.prototype;

/**
 * The one check of what a detector reported, on every path (`runDetector`, and `askDetector`'s
 * shortcut for `detector://fixture`): a synchronous plain object — prototype `Object.prototype` or
 * `null` — whose own properties are the facts by name ([OAR-OPS-11]: observations, read by name).
 * Anything else is the detector failing to answer, a provider failure the rule handles by its
 * `on_error` ([OAR-OPS-3], [OAR-CONF-9]), never a result:
 *
 * - a Promise or any thenable: detectors are synchronous, and the facts of a pending answer would
 *   read as zeros ([OAR-FACT-25]) — a `fail_closed` rule would silently allow;
 * - an array, a `Map`, a class instance: their entries are not own properties by fact name, so
 *   every fact would again read as its zero;
 * - `null` or a primitive.
 *
 * `then` is no declared fact name (host facts are dotted, [OAR-FACT-18]; no profile declares it),
 * so a plain object carrying a callable `then` is a thenable and never a result. A value whose
 * inspection throws (a Proxy trap, a `then` getter) is a provider failure too.
 */
export function detectorResult(produced: unknown, ref: string): Readonly<Record<string, unknown>> | Raise {
  let what: string;
  try {
    if (typeof produced === 'object' && produced !== null && !Array.isArray(produced)) {
      const proto: unknown = Object.getPrototypeOf(produced);
      const thenable = typeof (produced as { then?: unknown }).then === 'function';
      if ((proto === OBJECT_PROTOTYPE || proto === null) && !thenable) return produced as Readonly<Record<string, unknown>>;
      what = thenable ? 'a Promise (or thenable): a detector answers synchronously' : produced instanceof Map ? 'a Map' : `an instance of ${className(proto)}`;
    } else what = produced === null ? 'null' : Array.isArray(produced) ? 'an array' : `a ${typeof produced}`;
  } catch (e) {
    return new Raise('provider_failure', `detector ${ref} returned a value that cannot be inspected: ${describeThrown(e)}`);
  }
  markHandled(produced);
  return new Raise('provider_failure', `detector ${ref} returned ${what}, not a plain object of facts by name`);
}

function className(proto: unknown): string {
  const c: unknown = typeof proto === 'object' && proto !== null ? (proto as { constructor?: unknown }).constructor : undefined;
  const name: unknown = typeof c === 'function' ? c.name : undefined;
  return typeof name === 'string' && name !== '' ? name : 'a class';
}

/**
 * Profiles whose facts only registered detectors or classifiers can produce: a capability claiming
 * one with an empty `detectors` list is invalid ([OAR-OPS-22]), and when a rule's detector fails
 * these facts are unavailable to its `on_error` copy rather than zero ([OAR-COPY-11]).
 */
export const DETECTOR_BACKED_PROFILES: readonly string[] = Object.freeze([
  'secrets',
  'pii',
  'prompt-injection',
  'jailbreak',
  'moderation',
]);

const NONE: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * The three references reserved for the conformance corpus ([OAR-CONF-25]): `noop` reports
 * nothing, `error` always fails, `fixture` reports the occurrence's `detectorFacts`.
 */
export const RESERVED_DETECTORS: Readonly<Record<string, Detector>> = Object.freeze({
  'detector://noop': () => NONE,
  'detector://error': () => {
    throw new Error('detector://error always fails');
  },
  'detector://fixture': (input: DetectorInput) => input.occurrence.detectorFacts ?? NONE,
});

const FIXTURE = RESERVED_DETECTORS['detector://fixture'] as Detector;

/**
 * `runDetector(detector, { ref, rule, anchor, occurrence, facts })`, without building the input
 * when the detector is the reserved `detector://fixture` itself: what it reports is the
 * occurrence's own `detectorFacts`, the same for every rule ([OAR-CONF-25]), so asking it per
 * rule was an allocation and two calls each time. A detector registered by the host under any
 * reference is called as always.
 */
export function askDetector(detector: Detector, ref: string, rule: string, anchor: string, occurrence: Occurrence, facts: FactReader): Readonly<Record<string, unknown>> | Raise {
  if (detector === FIXTURE) {
    // A host's occurrence may carry a getter that throws on a second read: that takes the general
    // path, which turns it into a provider failure; what it reports is checked as any result is.
    let reported: unknown;
    try {
      reported = occurrence.detectorFacts;
    } catch {
      return runDetector(detector, { ref, rule, anchor, occurrence, facts });
    }
    return reported === undefined ? NONE : detectorResult(reported, ref);
  }
  return runDetector(detector, { ref, rule, anchor, occurrence, facts });
}
