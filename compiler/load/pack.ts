/**
 * Loading a rule pack: the capability document first ([OAR-FACT-24]), then every rule document
 * on its own terms ([OAR-CONF-1] to [OAR-CONF-5], [OAR-DOC-31]), then the checks across the set
 * ([OAR-DOC-9], [OAR-CONF-6]), then configuration documents ([OAR-CONF-7]). Every error found is
 * reported in one pass; nothing here throws on bad input.
 */
import { error, hasErrors, type Diagnostic } from '../diagnostics.js';
import type { SymbolEntry } from '../../runtime/types.js';
import { loadCapability, type Capability, type CapabilityOptions } from './capability.js';
import { applyConfigs, type ConfigDocument } from './config.js';
import type { CheckedRule, Enforcement } from './model.js';
import { checkRule, qualifiedId, type RuleDocument, type RuleDraft, type Locator } from './rule.js';
import { checkRuleSet } from './ruleset.js';
import { lintRules } from './lint.js';
import { validateConfigDocument, validateRuleDocument } from './schema.js';
import type { SourceDoc } from './source.js';
import { pushAll } from '../arrays.js';

export interface PackInput {
  capability: SourceDoc;
  rules: readonly SourceDoc[];
  /** Applied in the order given; the last statement about a rule wins ([OAR-CFG-7]). */
  configs?: readonly SourceDoc[];
  capabilityOptions?: CapabilityOptions;
}

export interface LoadedPack {
  capability: Capability;
  symbols: readonly SymbolEntry[];
  /** In evaluation order ([OAR-EVAL-1]). */
  rules: readonly CheckedRule[];
  /** Effective enforcement changed by configuration ([OAR-CFG-2], [OAR-CFG-3]). */
  enforcement: ReadonlyMap<string, Enforcement>;
  /** Warnings (errors prevent a pack from loading). */
  diagnostics: readonly Diagnostic[];
  /**
   * For a pack read from files: each rule file as a bundle records it, relative to the root
   * (`loadPackFiles`), so bundles do not depend on where they were built. Absent, a source is
   * recorded as its diagnostics name it.
   */
  sourceNames?: ReadonlyMap<string, string>;
}

export type PackResult = { ok: true; pack: LoadedPack } | { ok: false; diagnostics: Diagnostic[] };

function locator(doc: SourceDoc): Locator {
  return Object.assign((path: readonly (string | number)[]) => doc.locate(path), {
    text: (path: readonly (string | number)[], offset: number, length: number) => doc.locateText(path, offset, length),
  });
}

/** Every diagnostic about a rule names it, in the `rule` member. */
function about(qid: string | undefined, ds: readonly Diagnostic[]): Diagnostic[] {
  return qid === undefined ? [...ds] : ds.map((d) => (d.rule === undefined ? { ...d, rule: qid } : d));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The members of a rule document `checkRule` reads: an error in any of them keeps it unchecked. */
const CHECKED_MEMBERS: ReadonlySet<string> = new Set(['id', 'namespace', 'anchor', 'selector', 'requires', 'counter_scope', 'effect', 'transform', 'detector', 'flow', 'when', 'copy']);

/**
 * Can a rule with these shape errors still go through `checkRule`? Only when every error is in a
 * member it does not read (`kind`, `mandatory`, `on_error`, an extension key, …): then its
 * condition, selector and copy are checked in the same pass ("every problem in every document
 * is reported in one pass") instead of after the first error is fixed.
 */
function checkableDespite(found: readonly Diagnostic[]): boolean {
  return found.every((d) => {
    if (d.severity !== 'error') return true;
    const head = d.path?.[0];
    return typeof head === 'string' && !CHECKED_MEMBERS.has(head);
  });
}

export function loadPack(input: PackInput): PackResult {
  const diagnostics: Diagnostic[] = [];
  const cap = loadCapability(input.capability.value, locator(input.capability), input.capabilityOptions);
  pushAll(diagnostics, cap.diagnostics);
  if (!cap.capability || !cap.symbols) return { ok: false, diagnostics };
  const capability = cap.capability;
  const symbols = cap.symbols;

  // Each document on its own terms ([OAR-DOC-31]); identity never depends on the file ([OAR-DOC-28]).
  /**
   * The rules `checkRule` looks at: those without shape errors, which load if they pass, and
   * those whose shape errors lie only in members it does not read, checked so one pass reports
   * their anchor, selector, condition and copy too — they never load.
   */
  const checked: { doc: RuleDocument; source: SourceDoc; loads: boolean }[] = [];
  const seen = new Map<string, SourceDoc>();
  for (const source of input.rules) {
    if (!isObject(source.value)) {
      const clause = source.inCollection ? 'OAR-DOC-31' : 'OAR-DOC-1';
      // The diagnostic names what was found instead ([OAR-CONF-30]): `null`, `array`, `string`, ….
      const found = source.value === null ? 'null' : Array.isArray(source.value) ? 'array' : typeof source.value;
      diagnostics.push(error(clause, `${source.inCollection ? `member ${source.index} of the rule set` : 'the document'} is not a rule document: a JSON ${found}, not a JSON object`, { source: source.locate([]), path: [], token: found }));
      continue;
    }
    const doc = source.value as unknown as RuleDocument;
    const named = typeof doc.id === 'string' && (doc.namespace === undefined || typeof doc.namespace === 'string');
    const found = about(named ? qualifiedId(doc.id, doc.namespace) : undefined, validateRuleDocument(source));
    pushAll(diagnostics, found);
    // [OAR-CONF-2] `oar` is checked before any other processing: a document whose version is
    // rejected is not read further, so its `id` takes no part in identity ([OAR-DOC-9]).
    const versionRejected = found.some((d) => d.severity === 'error' && d.token === 'oar' && (d.path?.length ?? 0) <= 1);
    if (versionRejected) continue;
    if (typeof doc.id === 'string' && (doc.namespace === undefined || typeof doc.namespace === 'string')) {
      // [OAR-DOC-9] two rules with one qualified identifier.
      const qid = qualifiedId(doc.id, doc.namespace);
      const first = seen.get(qid);
      if (first !== undefined) {
        const at = first.locate(['id']);
        diagnostics.push(error('OAR-DOC-9', `rule ${qid} is defined twice (first at ${at.file}:${at.line}:${at.column})`, { token: qid, rule: qid, path: ['id'], source: source.locate(['id']) }));
        continue;
      }
      seen.set(qid, source);
    }
    if (!hasErrors(found)) checked.push({ doc, source, loads: true });
    else if (checkableDespite(found)) checked.push({ doc, source, loads: false });
  }

  const drafts: { draft: RuleDraft; locate: Locator }[] = [];
  for (const { doc, source, loads } of checked) {
    const locate = locator(source);
    const r = checkRule(doc, capability, symbols, locate);
    pushAll(diagnostics, about(qualifiedId(doc.id, doc.namespace), r.diagnostics));
    if (loads && r.draft) drafts.push({ draft: r.draft, locate });
  }
  const set = checkRuleSet(drafts, new Set(seen.keys()));
  pushAll(diagnostics, set.diagnostics);

  const configs: { doc: ConfigDocument; locate: Locator }[] = [];
  for (const source of input.configs ?? []) {
    const found = validateConfigDocument(source.value, locator(source));
    pushAll(diagnostics, found);
    if (!hasErrors(found)) configs.push({ doc: source.value as ConfigDocument, locate: locator(source) });
  }
  // Configurations are checked even when a rule failed, so their errors are reported in the same
  // pass (DESIGN "Errors"); `seen` keeps a rule that failed its own checks from also being
  // reported as not loaded ([OAR-CFG-4]).
  const applied = applyConfigs(configs, set.rules, new Set(seen.keys()));
  pushAll(diagnostics, applied.diagnostics);
  if (hasErrors(diagnostics)) return { ok: false, diagnostics };
  // Likely mistakes that are valid OAR, only for a pack that loads: warnings never hide an error.
  pushAll(diagnostics, lintRules(set.rules, new Map(drafts.map((d) => [d.draft.qid, d.locate])), applied.enforcement));
  return {
    ok: true,
    pack: { capability, symbols: symbols.symbols, rules: set.rules, enforcement: applied.enforcement, diagnostics },
  };
}
