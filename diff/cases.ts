/**
 * The occurrences `oarc diff` generates: `oarc fuzz`'s type-directed generator (fuzz/generate.ts)
 * over one model of both packs (fuzz/model.ts `mergeModels`), so every rule of either is reached
 * with the constants it compares against and the values around them. Seeded and deterministic: the
 * same packs and seed give the same cases, in the same order. Every occurrence is one the host
 * could send (no deliberately invalid ones: a diff compares decisions, not the host-input checks).
 */
import type { LoadedPack } from '../compiler/index.js';
import type { Bundle } from '../runtime/index.js';
import { generateCase } from '../fuzz/generate.js';
import { buildModel, mergeModels } from '../fuzz/model.js';
import { Prng } from '../fuzz/prng.js';
import type { DiffCase } from './run.js';

export function* generatedCases(packs: readonly { bundle: Bundle; pack: LoadedPack }[], seed: number, runs: number): Generator<DiffCase> {
  const model = mergeModels(packs.map((p) => buildModel(p.bundle, p.pack)));
  const rng = new Prng(seed);
  for (let i = 0; i < runs; i++) yield { origin: 'generated', occurrences: generateCase(model, rng, { invalidShare: 0 }).occurrences };
}
