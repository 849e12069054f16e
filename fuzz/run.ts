/**
 * The fuzzing loop behind `oarc fuzz`: generate a case (generate.ts) from the seed, decide it with
 * every back end (backends.ts, protocol.ts), compare their answers (compare.ts); on the first
 * difference, shrink the case (shrink.ts) and hand it back with every back end's answers.
 *
 * Deterministic for a seed: case k is generated from the k-th draw of the seed's generator, and
 * each run of a case — the shrinking runs included — takes the next session id
 * `fuzz-<seed>-<n>`, so an external engine that keeps sessions starts each run from a clean
 * session; oarc's own back ends start each run with a fresh engine. Only timings vary.
 */
import type { Answer, Backend } from './backends.js';
import { firstDifference, type Difference } from './compare.js';
import { generateCase, type FuzzCase, type GenerateOptions } from './generate.js';
import type { FuzzModel } from './model.js';
import { Prng } from './prng.js';
import { shrinkCase } from './shrink.js';

export interface FuzzOptions {
  model: FuzzModel;
  /** oarc's own back ends, compared exactly; the first is what an external engine is compared with. */
  backends: readonly Backend[];
  /** External engines, compared loosely (compare.ts). */
  external?: readonly Backend[];
  seed: number;
  /** Stop after this many cases … */
  runs?: number;
  /** … or after this many milliseconds (whichever is given). */
  timeMs?: number;
  /** Most runs spent shrinking (default 2000). */
  shrinkBudget?: number;
  generate?: GenerateOptions;
  /** Called at most about once a second, and once at the end. */
  progress?: (p: Progress) => void;
  now?: () => number;
}

export interface Progress {
  cases: number;
  occurrences: number;
  elapsedMs: number;
  found: number;
  done: boolean;
}

export interface Finding {
  /** Index of the case (0-based) in the seed's sequence. */
  caseIndex: number;
  original: FuzzCase;
  shrunk: FuzzCase;
  shrinkRuns: number;
  difference: Difference;
  /** Every back end's answers to the shrunk case, by back-end name. */
  answers: { backend: string; answers: Answer[] }[];
}

export interface FuzzResult {
  seed: number;
  cases: number;
  occurrences: number;
  elapsedMs: number;
  /** Tally of decisions the first back end made, by effect (and `refused`). */
  decisions: Record<string, number>;
  finding?: Finding;
}

export async function fuzz(o: FuzzOptions): Promise<FuzzResult> {
  const now = o.now ?? (() => performance.now());
  const started = now();
  const rng = new Prng(o.seed);
  let sessionRuns = 0;
  const decisions: Record<string, number> = {};
  let cases = 0;
  let occurrences = 0;
  let lastReport = started;
  const all = [...o.backends, ...(o.external ?? [])];

  const decideAll = async (c: FuzzCase): Promise<{ backend: string; answers: Answer[] }[]> => {
    const session = `fuzz-${o.seed}-${sessionRuns++}`;
    const occs = c.occurrences.map((x) => ({ ...x, session_id: session }));
    const out: { backend: string; answers: Answer[] }[] = [];
    for (const b of all) out.push({ backend: b.name, answers: await b.decide(occs) });
    return out;
  };
  const differenceOf = (results: { backend: string; answers: Answer[] }[]): Difference | undefined => {
    const [ref, ...rest] = results;
    if (ref === undefined) return undefined;
    for (const r of results) {
      const i = r.answers.findIndex((a) => 'error' in a && a.error.kind === 'internal');
      if (i >= 0) return { index: i, members: ['internal error'], left: { backend: r.backend, answer: r.answers[i] as Answer }, right: { backend: r.backend, answer: r.answers[i] as Answer } };
    }
    const internal = new Set(o.backends.map((b) => b.name));
    for (const r of rest) {
      const d = firstDifference(ref.backend, ref.answers, r.backend, r.answers, !internal.has(r.backend));
      if (d !== undefined) return d;
    }
    return undefined;
  };

  const more = () => (o.timeMs !== undefined ? now() - started < o.timeMs : cases < (o.runs ?? 1000));
  let finding: Finding | undefined;
  while (more()) {
    const caseIndex = cases;
    const c = generateCase(o.model, rng.fork(), o.generate);
    const results = await decideAll(c);
    cases++;
    occurrences += c.occurrences.length;
    for (const a of results[0]?.answers ?? []) {
      const k = 'error' in a ? 'refused' : a.decision.decision;
      decisions[k] = (decisions[k] ?? 0) + 1;
    }
    const d = differenceOf(results);
    if (d !== undefined) {
      const shrunk = await shrinkCase(c, async (x) => differenceOf(await decideAll(x)) !== undefined, o.shrinkBudget ?? 2000);
      // The shrunk case once more, with the session id the fixture will carry.
      const session = `fuzz-${o.seed}-${sessionRuns}`;
      const final: FuzzCase = { occurrences: shrunk.case.occurrences.map((x) => ({ ...x, session_id: session })) };
      const answers = await decideAll(final);
      const difference = differenceOf(answers) ?? d;
      finding = { caseIndex, original: c, shrunk: final, shrinkRuns: shrunk.runs, difference, answers };
      break;
    }
    const t = now();
    if (o.progress && t - lastReport >= 1000) {
      lastReport = t;
      o.progress({ cases, occurrences, elapsedMs: t - started, found: 0, done: false });
    }
  }
  const elapsedMs = now() - started;
  o.progress?.({ cases, occurrences, elapsedMs, found: finding ? 1 : 0, done: true });
  return { seed: o.seed, cases, occurrences, elapsedMs, decisions, ...(finding ? { finding } : {}) };
}
