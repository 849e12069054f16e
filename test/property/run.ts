/**
 * Seeded, replayable property runs, shared by the property tests: the seed comes from
 * OARC_PROPERTY_SEED, the run count from OARC_PROPERTY_RUNS, a failing path from
 * OARC_PROPERTY_PATH; a failure names all three and the command that replays it.
 */
import fc from 'fast-check';
import { describeThrown } from '../../runtime/thrown.js';

export interface PropertyConfig {
  readonly seed: number;
  readonly runs: number;
  readonly path: string | undefined;
}

export function propertyConfig(defaultSeed: number, defaultRuns: number): PropertyConfig {
  return {
    seed: Number(process.env.OARC_PROPERTY_SEED ?? defaultSeed),
    runs: Number(process.env.OARC_PROPERTY_RUNS ?? defaultRuns),
    path: process.env.OARC_PROPERTY_PATH || undefined,
  };
}

/**
 * Check `predicate` over `arb`; on failure throw a message with the seed, the path, the replay
 * command (`replay` is the vitest invocation selecting the test) and, when `report` is set,
 * fast-check's own report of the counterexample.
 */
export function runProperty<T>(
  config: PropertyConfig,
  name: string,
  arb: fc.Arbitrary<T>,
  predicate: (x: T) => void,
  runs: number,
  replay: string,
  report = false,
): void {
  const details = fc.check(fc.property(arb, predicate), { seed: config.seed, numRuns: runs, path: config.path, endOnFailure: false });
  if (!details.failed) return;
  const cause = describeThrown(details.errorInstance); // the property may have thrown a hostile value
  throw new Error(
    `property "${name}" failed (seed ${details.seed}, path "${details.counterexamplePath}"):\n${cause}\n\n` +
      `Replay: OARC_PROPERTY_SEED=${details.seed} OARC_PROPERTY_PATH="${details.counterexamplePath}" ${replay}\n` +
      (report ? `\n${fc.defaultReportMessage(details)}` : ''),
  );
}
