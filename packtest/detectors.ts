/**
 * Detector implementations from a module (`oarc eval --detectors`, a test file's `detectors`):
 * its default export maps `detector://` references to functions. Shared by both, so a module that
 * works for one works for the other, with the same messages.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RESERVED_DETECTORS, type Bundle, type Detector } from '../runtime/index.js';

/** A detectors module that cannot be used; the message names the file and what is wrong. */
export class DetectorModuleError extends Error {
  override readonly name = 'DetectorModuleError';
}

function oneLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return (text.split('\n').find((l) => l.trim() !== '') ?? text).trim();
}

/**
 * Import `file` and check its default export. The module's modification time is part of the URL,
 * so a watcher re-running after an edit imports the edited module, not the cached one.
 */
export async function importDetectors(file: string): Promise<Record<string, Detector>> {
  const abs = resolve(file);
  if (!existsSync(abs)) throw new DetectorModuleError(`cannot read detectors module ${file}: no such file or directory`);
  let m: unknown;
  try {
    m = ((await import(`${pathToFileURL(abs).href}?mtime=${statSync(abs).mtimeMs}`)) as { default?: unknown }).default;
  } catch (e) {
    throw new DetectorModuleError(`cannot import detectors module ${file}: ${e instanceof SyntaxError ? `not a valid JavaScript module: ${oneLine(e)}` : oneLine(e)}`);
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) {
    throw new DetectorModuleError(`${file}: the default export must be an object mapping detector:// references to functions`);
  }
  let entries: [string, unknown][];
  try {
    entries = Object.entries(m);
  } catch (e) {
    throw new DetectorModuleError(`${file}: cannot read the default export: ${oneLine(e)}`);
  }
  const out: Record<string, Detector> = {};
  for (const [ref, impl] of entries) {
    if (!ref.startsWith('detector://')) throw new DetectorModuleError(`${file}: ${ref} is not a detector:// reference`);
    if (typeof impl !== 'function') throw new DetectorModuleError(`${file}: ${ref} is not a function`);
    out[ref] = impl as Detector;
  }
  return out;
}

/** The first rule invoking a detector that is neither reserved nor in `detectors`. */
export function missingDetector(bundle: Bundle, detectors: Readonly<Record<string, Detector>>): { rule: string; ref: string } | undefined {
  for (const rule of bundle.rules) {
    const ref = rule.detector;
    if (ref !== undefined && !(ref in RESERVED_DETECTORS) && !(ref in detectors)) return { rule: rule.qid, ref };
  }
  return undefined;
}
