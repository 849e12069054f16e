/**
 * oarc's compiler API.
 *
 *   const r = loadPackFiles({ capability: 'cap.yaml', rules: ['rules/'] });
 *   if (!r.ok) for (const d of r.diagnostics) console.error(formatDiagnostic(d));
 *   const moduleText = compile(r.pack);          // write it to bundle.mjs, import it later
 *   const engine = createEngine(compileToBundle(r.pack));   // or load in process
 */
import { relative, resolve, sep } from 'node:path';
import { LoadError, sortDiagnostics, type Diagnostic } from './diagnostics.js';
import { loadPack, type LoadedPack, type PackInput, type PackResult } from './load/pack.js';
import { parseSource, readSources, type SourceDoc } from './load/source.js';
import { bundleData, emitBundleModule, emitBundleScript } from './emit/bundle.js';
import { emitBundleDeclarations } from './emit/declarations.js';
import { interpret } from './expr/interpreter.js';
import { BUNDLE_HELPERS, type BundleHelper } from '../runtime/helpers.js';
import { checkBundle, type Bundle } from '../runtime/bundle.js';
import type { FactReader } from '../runtime/facts.js';
import { renderCopyObject } from '../runtime/copy.js';
import { didYouMean } from '../runtime/suggest.js';

export { formatDiagnostic, inert, LoadError, sortDiagnostics, type Diagnostic, type SourceLocation } from './diagnostics.js';
export { loadPack, type LoadedPack, type PackInput, type PackResult } from './load/pack.js';
export { parseSource, readSources, type SourceDoc } from './load/source.js';
export { portabilityReport, type PortabilityEntry } from './load/portability.js';
export { COMPILER_ID, COMPILER_VERSION } from './version.js';
export * from '../runtime/index.js';

export interface PackFiles {
  capability: string;
  /** Rule files or directories (JSON, YAML, multi-document YAML, JSON arrays). */
  rules: readonly string[];
  configs?: readonly string[];
  /**
   * The directory rule sources are recorded relative to in a bundle (default: the working
   * directory), so the same pack compiles to the same bytes wherever it is checked out and however
   * its paths are spelled. Diagnostics keep the paths as given.
   */
  root?: string;
}

/** Each rule file's path relative to `root`, `/`-separated: what a bundle records as its source. */
function recordedNames(docs: readonly SourceDoc[], root: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const d of docs) if (!names.has(d.file)) names.set(d.file, relative(root, resolve(d.file)).split(sep).join('/'));
  return names;
}

function single(paths: readonly string[], what: string): { doc?: SourceDoc; diagnostics: Diagnostic[] } {
  const r = readSources(paths, { expandSequences: false });
  if (r.docs.length === 0 && !r.diagnostics.some((d) => d.severity === 'error')) {
    // An empty file is no document at all; a rejection must still carry an error ([OAR-FACT-24]).
    return { diagnostics: [...r.diagnostics, { severity: 'error', clause: 'OAR-FACT-21', message: `${what} is required, and ${paths.join(', ')} contains none`, source: { file: paths[0] ?? '<input>', line: 1, column: 1 } }] };
  }
  if (r.docs.length > 1) {
    return { diagnostics: [...r.diagnostics, { severity: 'error', clause: 'OAR-FACT-21', message: `${what} must be a single document`, source: r.docs[1]!.locate([]) }] };
  }
  return r.docs[0] ? { doc: r.docs[0], diagnostics: r.diagnostics } : { diagnostics: r.diagnostics };
}

/** A result whose diagnostics are in reading order: by file in `files` order, then by position. */
function sorted(r: PackResult, files: readonly string[]): PackResult {
  return r.ok ? { ok: true, pack: { ...r.pack, diagnostics: sortDiagnostics(r.pack.diagnostics, files) } } : { ok: false, diagnostics: sortDiagnostics(r.diagnostics, files) };
}

/**
 * Read and load a pack from files. Never throws on bad input: errors come back as diagnostics, in
 * reading order (file, line, column).
 */
export function loadPackFiles(files: PackFiles): PackResult {
  const rules = readSources(files.rules);
  return sorted(loadReadFiles(files, rules), [files.capability, ...(rules.files ?? []), ...(files.configs ?? [])]);
}

function loadReadFiles(files: PackFiles, rules: ReturnType<typeof readSources>): PackResult {
  const cap = single([files.capability], 'a capability document');
  const configs = (files.configs ?? []).map((p) => single([p], 'a configuration document'));
  const diagnostics = [...cap.diagnostics, ...rules.diagnostics, ...configs.flatMap((c) => c.diagnostics)];
  if (!cap.doc || diagnostics.some((d) => d.severity === 'error')) return { ok: false, diagnostics };
  const input: PackInput = { capability: cap.doc, rules: rules.docs, configs: configs.map((c) => c.doc as SourceDoc) };
  const r = loadPack(input);
  if (!r.ok) return { ok: false, diagnostics: [...diagnostics, ...r.diagnostics] };
  const sourceNames = recordedNames(rules.docs, resolve(files.root ?? '.'));
  return { ok: true, pack: { ...r.pack, sourceNames, diagnostics: [...diagnostics, ...r.pack.diagnostics] } };
}

/**
 * In-memory texts to load, with optional names for messages: a diagnostic names the text it is in
 * (`mycap.yaml:1:5`) instead of a placeholder (`<capability>:1:5`). A name is only a label: every
 * text is read as YAML (which JSON is), whatever its name ends with.
 */
export interface PackTexts {
  capability: string;
  rules: readonly string[];
  configs?: readonly string[];
  names?: { capability?: string; rules?: readonly string[]; configs?: readonly string[] };
}

/** Load a pack from in-memory texts (YAML or JSON); diagnostics in reading order, as from files. */
export function loadPackTexts(texts: PackTexts): PackResult {
  const name = (given: string | undefined, placeholder: string) => (given !== undefined && given !== '' ? given : placeholder);
  const names = {
    capability: name(texts.names?.capability, '<capability>'),
    rules: texts.rules.map((_, i) => name(texts.names?.rules?.[i], `<rules ${i}>`)),
    configs: (texts.configs ?? []).map((_, i) => name(texts.names?.configs?.[i], `<config ${i}>`)),
  };
  return sorted(loadTexts(texts, names), [names.capability, ...names.rules, ...names.configs]);
}

function loadTexts(texts: PackTexts, names: { capability: string; rules: string[]; configs: string[] }): PackResult {
  const cap = parseSource(texts.capability, names.capability, { expandSequences: false, format: 'yaml' });
  const rules = texts.rules.map((t, i) => parseSource(t, names.rules[i] as string, { format: 'yaml' }));
  const configs = (texts.configs ?? []).map((t, i) => parseSource(t, names.configs[i] as string, { expandSequences: false, format: 'yaml' }));
  const diagnostics = [...cap.diagnostics, ...rules.flatMap((r) => r.diagnostics), ...configs.flatMap((c) => c.diagnostics)];
  const capDoc = cap.docs[0];
  if (!capDoc && !cap.diagnostics.some((d) => d.severity === 'error')) {
    // An empty capability text declares nothing; the engine must refuse to start, with an error
    // saying why ([OAR-FACT-21], [OAR-FACT-24]), not a warning alone.
    diagnostics.push({ severity: 'error', clause: 'OAR-FACT-21', message: `a capability document is required, and \`${names.capability}\` contains none`, source: { file: names.capability, line: 1, column: 1 } });
  }
  if (!capDoc || diagnostics.some((d) => d.severity === 'error')) return { ok: false, diagnostics };
  const r = loadPack({ capability: capDoc, rules: rules.flatMap((r) => r.docs), configs: configs.flatMap((c) => c.docs) });
  // The parser's warnings belong to the result too, as they do in loadPackFiles.
  return r.ok ? { ok: true, pack: { ...r.pack, diagnostics: [...diagnostics, ...r.pack.diagnostics] } } : { ok: false, diagnostics: [...diagnostics, ...r.diagnostics] };
}

/**
 * Compile a loaded pack to a bundle module: ES module text importing only the runtime helpers,
 * from `runtimeModule` (default `oarc/runtime/internal`).
 */
export function compile(pack: LoadedPack, runtimeModule?: string): string {
  return emitBundleModule(pack, runtimeModule);
}

/**
 * The TypeScript declarations of `compile(pack)`'s module, for a `.d.mts` beside it: the default
 * export is a `Bundle`, and `HostAnchor` / `HostOccurrence` name the anchors the bundle knows.
 */
export function compileDeclarations(pack: LoadedPack): string {
  return emitBundleDeclarations(pack);
}

export type Backend = 'specialised' | 'compiled' | 'interpreter';
const BACKENDS: readonly Backend[] = ['specialised', 'compiled', 'interpreter'];

/**
 * A caller in JavaScript gets no type check on `backend`; a misspelt one must not silently fall
 * through to the specialised bundle, where a cross-check would compare a back end with itself.
 */
function checkBackend(backend: unknown): asserts backend is Backend {
  if (BACKENDS.includes(backend as Backend)) return;
  const near = typeof backend === 'string' ? didYouMean(backend, BACKENDS) : '';
  throw new Error(`compileToBundle: unknown backend ${JSON.stringify(backend) ?? String(backend)}${near}; pass one of ${BACKENDS.join(', ')}, or leave it out for specialised`);
}

/**
 * The in-process path: compile and load a pack in one call, for tests and for hosts that load
 * packs at run time. Precompiled bundles never need this (they are modules, with no `eval`).
 *
 * Three back ends, so whole decisions can be cross-checked: `specialised` (the module `compile`
 * emits: compiled conditions and per-anchor decision procedures), `compiled` (the same conditions
 * with the procedures left out: every decision on the generic engine), and `interpreter` (every
 * condition through the tree-walking interpreter, on the generic engine).
 */
export function compileToBundle(pack: LoadedPack, backend: Backend = 'specialised'): Bundle {
  checkBackend(backend);
  if (backend === 'interpreter') {
    const bundle = bundleData(pack, {
      when: (c) => (f: FactReader) => {
        const r = interpret(c.typed, f);
        if (!r.ok) throw r.raise;
        return r.value;
      },
      copy: (c) => (f: FactReader) => renderCopyObject(c, f),
    });
    checkBundle(bundle);
    return bundle;
  }
  const { code, helpers } = emitBundleScript(pack);
  const factory = new Function(...helpers, code) as (...h: unknown[]) => unknown;
  const bundle = factory(...helpers.map((h) => BUNDLE_HELPERS[h as BundleHelper]));
  checkBundle(bundle);
  if (backend === 'compiled') delete bundle.procedures;
  return bundle;
}

/** Load from files and compile in process; throws `LoadError` carrying every diagnostic. */
export function compilePackFiles(files: PackFiles): Bundle {
  const r = loadPackFiles(files);
  if (!r.ok) throw new LoadError(r.diagnostics);
  return compileToBundle(r.pack);
}
