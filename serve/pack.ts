/**
 * What `oarc serve` serves: a compiled bundle module, or rule documents compiled in process, with
 * the detectors module beside them. Loading never throws on bad input — a pack that does not load
 * is a `failed` result carrying its diagnostics, so a reload can report it and keep serving the
 * previous pack.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DetectorModuleError, importDetectors, missingDetector } from '../packtest/detectors.js';
import { DETECTOR_REF, corpusDetector, factNames } from '../injection/detector.js';
import { checkBundle, type Bundle, type Detector } from '../runtime/index.js';

export type PackSource =
  | { kind: 'bundle'; file: string; detectors?: string; injectionCorpus?: readonly string[] }
  | { kind: 'rules'; rules: readonly string[]; capability: string; configs: readonly string[]; detectors?: string; injectionCorpus?: readonly string[] };

export interface LoadedBundle {
  bundle: Bundle;
  detectors: Record<string, Detector>;
  /** A content hash: of the bundle module's bytes, or of the module the rule documents compile to. */
  revision: string;
}

/** A diagnostic as the service reports it in health and the log: one located line each. */
export interface LoadProblem {
  severity: 'error' | 'warning';
  message: string;
}

export type PackLoad = { ok: true; loaded: LoadedBundle; warnings: LoadProblem[] } | { ok: false; problems: LoadProblem[] };

const hash = (text: string | Buffer) => createHash('sha256').update(text).digest('hex').slice(0, 16);
const firstLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
const failed = (message: string): PackLoad => ({ ok: false, problems: [{ severity: 'error', message }] });

/** The files whose change means the pack must be loaded again (`--watch`). */
export function packInputs(source: PackSource): string[] {
  const own = source.kind === 'bundle' ? [source.file] : [source.capability, ...source.configs, ...source.rules];
  return [...own, ...(source.detectors === undefined ? [] : [source.detectors]), ...(source.injectionCorpus ?? [])];
}

export async function loadServedPack(source: PackSource): Promise<PackLoad> {
  const r = source.kind === 'bundle' ? await fromModule(source.file) : await fromRules(source);
  if (!r.ok) return r;
  let detectors: Record<string, Detector> = {};
  if (source.detectors !== undefined) {
    try {
      detectors = await importDetectors(source.detectors);
    } catch (e) {
      if (e instanceof DetectorModuleError) return failed(e.message);
      throw e;
    }
  }
  // detector://injection-corpus over the corpus files given, as `oarc eval --injection-corpus`; a
  // corpus that does not load fails each invoking rule to its on_error, and is read again on reload.
  const corpus = source.injectionCorpus ?? [];
  if (corpus.length > 0) {
    if (DETECTOR_REF in detectors) return failed(`${source.detectors} already implements ${DETECTOR_REF}; give --injection-corpus or that module's, not both`);
    detectors[DETECTOR_REF] = corpusDetector(corpus.map((path) => ({ path })), factNames(r.loaded.bundle.capability.host));
  }
  // Every detector a rule invokes is implemented before the pack serves, not found missing mid-request.
  const missing = missingDetector(r.loaded.bundle, detectors);
  if (missing !== undefined) {
    return failed(`rule ${missing.rule} invokes ${missing.ref}, ${source.detectors === undefined ? 'and no --detectors module is given' : `which ${source.detectors} does not implement`}`);
  }
  return { ok: true, loaded: { ...r.loaded, detectors }, warnings: r.warnings };
}

async function fromRules(source: Extract<PackSource, { kind: 'rules' }>): Promise<PackLoad> {
  const { compile, compileToBundle, formatDiagnostic, loadPackFiles } = await import('../compiler/index.js');
  const r = loadPackFiles({ capability: source.capability, rules: source.rules, configs: source.configs });
  const problems = (r.ok ? r.pack.diagnostics : r.diagnostics).map((d) => ({ severity: d.severity, message: formatDiagnostic(d) }));
  if (!r.ok) return { ok: false, problems };
  // The revision is the module `oarc compile` would write: the same pack gives the same revision.
  const revision = hash(compile(r.pack));
  return { ok: true, loaded: { bundle: compileToBundle(r.pack), detectors: {}, revision }, warnings: problems };
}

async function fromModule(file: string): Promise<PackLoad> {
  const abs = resolve(file);
  if (!existsSync(abs)) return failed(`cannot read bundle ${file}: no such file or directory`);
  const revision = hash(readFileSync(abs));
  let bundle: unknown;
  try {
    // The revision in the URL: an edited bundle is a new module, not the one cached by the last import.
    bundle = ((await import(`${pathToFileURL(abs).href}?revision=${revision}`)) as { default?: unknown }).default;
  } catch (e) {
    return failed(`cannot import bundle ${file}: ${e instanceof SyntaxError ? `not a valid JavaScript module: ${firstLine(e)}` : firstLine(e)}`);
  }
  try {
    checkBundle(bundle);
  } catch (e) {
    return failed(`${file}: ${firstLine(e).replace(/^oarc: /, '')}`);
  }
  return { ok: true, loaded: { bundle, detectors: {}, revision }, warnings: [] };
}
