/**
 * `detector://injection-corpus`: scores the text of an occurrence against a labeled corpus and
 * reports observations, never a verdict ([OAR-OPS-11], [OAR-FACT-5]) — the rule decides.
 *
 * The text it scores, each piece on its own: the occurrence's `content` (at tool.post_invoke a
 * host passes the tool's result there; at the content anchors, the content), and every string
 * value inside the tool call's `arguments`, at any depth of objects and arrays. Keys, numbers and
 * the tool's name are not scored. The piece with the highest score is the one reported.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Detector, Occurrence } from '../runtime/index.js';
import { InjectionClassifier, type Classification } from './classifier.js';
import { formatCorpusDiagnostic, loadCorpus, type CorpusSource, type LoadOptions } from './corpus.js';

export const DETECTOR_REF = 'detector://injection-corpus';

/**
 * The shipped seed corpus, `injection/corpus/seed-v1.jsonl` at the package root: one directory up
 * from the sources, two from dist/. Not found, it names where it should be, and loading it says so.
 */
export const SEED_CORPUS: string = seedPath();

function seedPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 3; up++, dir = dirname(dir)) {
    const p = join(dir, 'injection', 'corpus', 'seed-v1.jsonl');
    if (existsSync(p)) return p;
  }
  return join(dirname(fileURLToPath(import.meta.url)), 'corpus', 'seed-v1.jsonl');
}

/** A corpus that did not load; the message lists every diagnostic. */
export class CorpusError extends Error {
  override readonly name = 'CorpusError';
}

export function loadClassifier(sources: readonly CorpusSource[], options: LoadOptions = {}): InjectionClassifier {
  const { records, diagnostics } = loadCorpus(sources, options);
  if (diagnostics.length > 0) throw new CorpusError(`the injection corpus did not load:\n${diagnostics.map(formatCorpusDiagnostic).join('\n')}`);
  try {
    return new InjectionClassifier(records);
  } catch (e) {
    throw new CorpusError(`${sources.map((s) => s.path).join(', ')}: ${(e as Error).message}`);
  }
}

/** The pieces of text the detector scores (see the module comment). */
export function scoredTexts(occurrence: Occurrence): string[] {
  const out: string[] = [];
  if (typeof occurrence.content === 'string' && occurrence.content !== '') out.push(occurrence.content);
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      if (v !== '') out.push(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk);
  };
  walk(occurrence.toolCall?.arguments);
  return out;
}

/** The host-tier names of the nearest record's signal and id. */
export interface FactNames {
  signal: string;
  topMatchId: string;
}

/**
 * A host publishes host-tier facts under its own namespace ([OAR-FACT-18]), so the names follow
 * the host: `<host>.injection.signal` and `<host>.injection.top_match_id`.
 */
export function factNames(host: string): FactNames {
  return { signal: `${host}.injection.signal`, topMatchId: `${host}.injection.top_match_id` };
}

/** The highest-scoring piece; nothing to score is a score of 0 with no neighbour. */
export function classifyOccurrence(classifier: InjectionClassifier, occurrence: Occurrence): Classification {
  let best: Classification = { score: 0, similarity: 0 };
  for (const text of scoredTexts(occurrence)) {
    const c = classifier.classify(text);
    if (c.score > best.score) best = c;
  }
  return best;
}

/**
 * A detector over a classifier. It produces `prompt_injection_score` and two host facts, the
 * nearest record's signal and id ("" when no record shares a gram with the text), under the names
 * given; a capability document lists them under `host_facts` (`factNames(host)` for the usual ones).
 */
export function injectionDetector(classifier: () => InjectionClassifier, names: FactNames): Detector {
  const { signal, topMatchId: id } = names;
  const detect = ({ occurrence }: { occurrence: Occurrence }) => {
    const c = classifyOccurrence(classifier(), occurrence);
    return { prompt_injection_score: c.score, [signal]: c.signal ?? '', [id]: c.id ?? '' };
  };
  return Object.assign(detect, { produces: [signal, id] });
}

/**
 * A detector that loads its corpus on first use. A corpus that cannot be read or does not load
 * makes every invocation fail — the rule's `on_error` decides ([OAR-OPS-3]) — and is read again at
 * the next invocation, so a volume that comes back is picked up without a restart.
 */
export function corpusDetector(sources: readonly CorpusSource[], names: FactNames, options: LoadOptions = {}): Detector {
  let loaded: InjectionClassifier | undefined;
  return injectionDetector(() => (loaded ??= loadClassifier(sources, options)), names);
}
