/**
 * Detectors: registered by `detector://` reference ([OAR-OPS-12]). A detector returns observations
 * — facts by name — and never a verdict ([OAR-OPS-11]); what it returns is visible only to the rule
 * that invoked it ([OAR-FACT-11]).
 */
import type { FactReader } from './facts.js';
import type { Occurrence } from './occurrence.js';
import { Raise } from './raise.js';
import { describeThrown } from './thrown.js';
import { describe } from './values.js';

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
 * throws (any value, described without throwing again), and anything it returns that is not an
 * object, since what a detector returns is read as facts by name. Used by the generic engine and
 * by the decision procedures alike, so both see the same result for the same detector.
 */
export function runDetector(detector: Detector, input: DetectorInput): Readonly<Record<string, unknown>> | Raise {
  let produced: unknown;
  try {
    produced = detector(input);
  } catch (e) {
    return new Raise('provider_failure', `detector ${input.ref} failed: ${describeThrown(e)}`);
  }
  if (typeof produced !== 'object' || produced === null) return new Raise('provider_failure', `detector ${input.ref} returned ${describe(produced)}, not an object of facts`);
  return produced as Readonly<Record<string, unknown>>;
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
    // A host's occurrence may carry a getter that throws on a second read: that, and anything but
    // an object or nothing, takes the general path, which turns it into a provider failure.
    let reported: unknown;
    try {
      reported = occurrence.detectorFacts;
    } catch {
      return runDetector(detector, { ref, rule, anchor, occurrence, facts });
    }
    if (reported === undefined) return NONE;
    if (typeof reported === 'object' && reported !== null) return reported as Readonly<Record<string, unknown>>;
  }
  return runDetector(detector, { ref, rule, anchor, occurrence, facts });
}
