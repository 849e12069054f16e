/**
 * `oarc/injection`: the labeled prompt-injection corpus loader and detector://injection-corpus,
 * for a host that registers the detector itself.
 */
export { SIGNALS, formatCorpusDiagnostic, loadCorpus, sha256Hex, type CorpusDiagnostic, type CorpusLoad, type CorpusRecord, type CorpusSource, type LoadOptions, type LoadedRecord, type Signal } from './corpus.js';
export { DEFAULT_THRESHOLD, InjectionClassifier, type Classification } from './classifier.js';
export { CorpusError, DETECTOR_REF, SEED_CORPUS, classifyOccurrence, corpusDetector, factNames, injectionDetector, loadClassifier, scoredTexts, type FactNames } from './detector.js';
export { evaluate, type EvalReport } from './evaluate.js';
