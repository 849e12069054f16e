/**
 * What `oarc bench` and `oarc diff` read, loaded the way `oarc eval` loads it — rule documents
 * (checked, with diagnostics), a compiled bundle, a detectors module, an occurrence file — with
 * every message naming the command that read it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LoadedPack } from '../compiler/index.js';
import { DetectorModuleError, importDetectors, missingDetector } from '../packtest/detectors.js';
import { HostInputError, checkBundle, type Bundle, type Detector, type Occurrence } from '../runtime/index.js';
import { EXIT_INPUT, ExitError, InputError, UsageError, errorCode, oneLine } from './errors.js';
import { readOccurrenceFile, summarize, toOccurrence } from './occurrence.js';
import { printDiagnostics, tally, type Io } from './output.js';
import { loadRequestedPack } from './pack.js';

export const BUNDLE_FILE = /\.(mjs|js)$/i;

/** Rule documents, loaded and checked; diagnostics printed; a pack that does not load exits 1. */
export async function loadRules(who: string, rules: string[], capability: string, configs: string[], io: Io, allowEmpty = false): Promise<{ pack: LoadedPack; ms: number }> {
  const t0 = performance.now();
  const r = await loadRequestedPack({ rules, capability, configs, allowEmpty });
  const ms = performance.now() - t0;
  printDiagnostics(io, r.diagnostics);
  if (!r.ok) {
    io.err(`oarc ${who}: ${tally(r.diagnostics)}\n`);
    throw new ExitError(EXIT_INPUT);
  }
  return { pack: r.pack, ms };
}

/** A compiled bundle module, imported and checked; every failure is the user's. */
export async function importBundleFile(who: string, file: string): Promise<Bundle> {
  const abs = resolve(file);
  if (!existsSync(abs)) throw new InputError(`oarc ${who}: cannot read bundle ${file}: no such file or directory`);
  let m: { default?: unknown };
  try {
    m = (await import(pathToFileURL(abs).href)) as { default?: unknown };
  } catch (e) {
    const hint = errorCode(e) === 'ERR_MODULE_NOT_FOUND' ? ' (a bundle imports oarc/runtime/internal: install oarc beside it, or recompile it with --runtime <specifier>)' : '';
    throw new InputError(`oarc ${who}: cannot import bundle ${file}: ${oneLine(e)}${hint}`);
  }
  try {
    checkBundle(m.default);
  } catch (e) {
    throw new InputError(`oarc ${who}: ${file}: ${oneLine(e).replace(/^oarc: /, '')}`);
  }
  return m.default;
}

export function bundleBytes(file: string): number {
  return readFileSync(file).byteLength;
}

export async function loadDetectorModule(who: string, file: string | undefined): Promise<Record<string, Detector>> {
  if (file === undefined) return {};
  try {
    return await importDetectors(file);
  } catch (e) {
    if (e instanceof DetectorModuleError) throw new InputError(`oarc ${who}: ${e.message}`);
    throw e;
  }
}

/** Every detector a rule invokes must be implemented before the first occurrence. */
export function requireDetectors(who: string, bundle: Bundle, detectors: Readonly<Record<string, Detector>>, module: string | undefined): void {
  const missing = missingDetector(bundle, detectors);
  if (missing === undefined) return;
  if (module === undefined) throw new UsageError(`rule ${missing.rule} invokes ${missing.ref}: give --detectors <module> with an implementation of it`);
  throw new InputError(`oarc ${who}: rule ${missing.rule} invokes ${missing.ref}, which ${module} does not implement`);
}

export interface ReadOccurrence {
  occurrence: Occurrence;
  summary: string;
  /** Where it is in the file, `file:line:col`, for messages. */
  at: string;
}

/** The occurrences of a file (one, an array, or JSON Lines), in order, checked as `oarc eval` checks them. */
export function readOccurrences(who: string, file: string): ReadOccurrence[] {
  const out: ReadOccurrence[] = [];
  try {
    for (const raw of readOccurrenceFile(file)) {
      const occurrence = toOccurrence(raw, undefined);
      const s = raw.locate([]);
      out.push({ occurrence, summary: summarize(occurrence), at: `${s.file ?? file}:${s.line ?? 1}:${s.column ?? 1}` });
    }
  } catch (e) {
    if (e instanceof InputError) throw new InputError(e.lines.map((l) => l.replace(/^oarc eval: /, `oarc ${who}: `)));
    throw e;
  }
  return out;
}

/** Decide once, turning the engine's refusal of an occurrence (unknown anchor or fact) into a located input error. */
export function hostInputProblem(who: string, at: string, e: unknown): InputError | undefined {
  if (e instanceof HostInputError) return new InputError(`${at}: oarc ${who}: ${e.message.replace(/^decide: /, '')}`);
  return undefined;
}
