/**
 * The checks of one rule document against the one symbol environment ([OAR-FACT-27]): anchor
 * resolution, `requires`, selectors, `counter_scope`, transforms, detector references, `flow`, the
 * condition, copy templates, and reachability of every non-core reference ([OAR-FACT-20]).
 * References to other rules are returned unresolved: the rule set resolves them (ruleset.ts).
 *
 * The document has already passed schema validation, so shapes and enums are trusted here.
 */
import { error, warning, type Diagnostic, type SourceLocation } from '../diagnostics.js';
import { checkConditionSource, type CheckedCondition } from '../expr/index.js';
import { closest, meantHint } from '../../runtime/suggest.js';
import { MAX_MAX_NODES } from '../expr/parser.js';
import { checkCopy, compileCopyTemplate, parseCopy } from '../copy/template.js';
import { COPY_MEMBERS, type CopyMember, type CopyProgram } from '../../runtime/copy.js';
import type { FactSymbol, SymbolEntry, SymbolTable } from '../../runtime/types.js';
import { CORE_ANCHORS, RESERVED_DETECTORS } from './vocabulary.js';
import type { Capability, JsonPath } from './capability.js';
import type {
  CheckedTransform, Effect, Enforcement, Kind, SelectorClause, SideEffect, TransformAction,
} from './model.js';

/** A rule document after schema validation. */
export interface RuleDocument {
  oar: string;
  id: string;
  namespace?: string;
  kind: Kind;
  anchor: string;
  effect: Effect;
  selector?: Record<string, string[]>;
  when?: string;
  flow?: string[];
  enforcement?: Enforcement;
  mandatory?: boolean;
  on_error?: string;
  on_fire?: SideEffect[];
  overrides?: string[];
  requires?: { profiles?: string[]; facts?: string[] };
  transform?: { action: TransformAction; target: string; replacement?: string };
  detector?: { ref: string };
  copy?: Partial<Record<CopyMember, string>>;
  counter_scope?: string;
}

/** A rule checked on its own, with its references to other rules still as written. */
export interface RuleDraft {
  readonly qid: string;
  readonly doc: RuleDocument;
  readonly localAnchor: string;
  readonly coreAnchor: boolean;
  readonly selector: SelectorClause[];
  readonly when?: CheckedCondition;
  readonly transform?: CheckedTransform;
  readonly copy: Partial<Record<CopyMember, CopyProgram>>;
  readonly counterScope?: FactSymbol;
  /** `fire_count_of` / `breaker_count_of` reads: the function, its literal argument, where. */
  readonly counterReads: { fn: string; name: string; offset: number }[];
  readonly references: SymbolEntry[];
  readonly source: SourceLocation;
}

/**
 * Where a field of the rule document is; `text` places a span of code points inside a string field
 * (a condition, a copy template) exactly, when the document came from a file.
 */
export type Locator = ((path: readonly (string | number)[]) => SourceLocation) & {
  text?: (path: readonly (string | number)[], offset: number, length: number) => SourceLocation;
};

/** The exact span of `token` at `offset` inside the string at `path`, or the field's position. */
export function locateToken(locate: Locator, path: readonly (string | number)[], offset: number | undefined, token: string | undefined): SourceLocation {
  if (offset === undefined || locate.text === undefined) return locate(path);
  return locate.text(path, offset, token === undefined ? 1 : Array.from(token).length);
}

/** ` (did you mean \`x\`?)` and the suggestion itself, for a name close to one of `candidates`. */
function suggestion(name: string, candidates: Iterable<string>): { hint: string; suggestion?: string } {
  const c = closest(name, candidates);
  return c === undefined ? { hint: '' } : { hint: meantHint(c), suggestion: c };
}

const REDACTED = '[REDACTED]';

export function qualifiedId(id: string, namespace?: string): string {
  return namespace === undefined ? id : `${namespace}/${id}`;
}

/** A reference to another rule: qualified as written, or bare resolved in `namespace` ([OAR-EVAL-13]). */
export function resolveRuleRef(ref: string, namespace?: string): string {
  return ref.includes('/') ? ref : qualifiedId(ref, namespace);
}

export function checkRule(
  doc: RuleDocument,
  capability: Capability,
  symbols: SymbolTable,
  locate: Locator,
): { draft?: RuleDraft; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const qid = qualifiedId(doc.id, doc.namespace);
  const at = (path: JsonPath, extra: { token?: string; offset?: number } = {}) => ({ ...extra, path, source: locateToken(locate, path, extra.offset, extra.token) });
  const fail = (clause: string, message: string, path: JsonPath, token?: string, offset?: number, suggested?: string) => {
    const extra = token === undefined ? {} : offset === undefined ? { token } : { token, offset };
    diagnostics.push(error(clause, message, { ...at(path, extra), ...(suggested === undefined ? {} : { suggestion: suggested }) }));
  };
  /** A name that is not one of `candidates`: the message says which one was probably meant. */
  const unknownName = (clause: string, message: (hint: string) => string, path: JsonPath, token: string, candidates: Iterable<string>) => {
    const s = suggestion(token, candidates);
    fail(clause, message(s.hint), path, token, undefined, s.suggestion);
  };
  const facts = (ok: (sym: FactSymbol) => boolean) => symbols.symbols.filter((x): x is FactSymbol => x.kind === 'fact' && ok(x)).map((x) => x.name);
  const references = new Map<string, SymbolEntry>();
  const reference = (sym: SymbolEntry) => references.set(sym.name, sym);

  // --- anchor ([OAR-CONF-3], [OAR-PROF-4], [OAR-PROF-5], [OAR-DOC-12]) ---
  let localAnchor = doc.anchor;
  const coreAnchor = CORE_ANCHORS.includes(doc.anchor);
  if (coreAnchor) {
    const local = capability.coreAnchors.get(doc.anchor);
    if (local === undefined) {
      fail('OAR-PROF-4', `rule ${qid} targets core anchor ${doc.anchor}, which this host declares unsupported`, ['anchor'], doc.anchor);
    } else {
      localAnchor = local;
    }
  } else if (!capability.hostAnchors.has(doc.anchor)) {
    unknownName('OAR-DOC-12', (hint) => `rule ${qid} names anchor ${doc.anchor}, which is neither a core anchor nor in the host anchor catalogue${hint}`, ['anchor'], doc.anchor, [...CORE_ANCHORS, ...capability.hostAnchors]);
  }

  // --- requires ([OAR-FACT-19]) ---
  const requiredProfiles = new Set(doc.requires?.profiles ?? []);
  const requiredFacts = new Set(doc.requires?.facts ?? []);
  (doc.requires?.profiles ?? []).forEach((p, i) => {
    if (!capability.profiles.has(p)) unknownName('OAR-FACT-19', (hint) => `rule ${qid} requires profile ${p} (requires.profiles), which this host does not provide${hint}`, ['requires', 'profiles', i], p, capability.profiles);
  });
  (doc.requires?.facts ?? []).forEach((f, i) => {
    if (!symbols.lookup(f)) unknownName('OAR-FACT-19', (hint) => `rule ${qid} requires fact ${f} (requires.facts), which this host does not provide${hint}`, ['requires', 'facts', i], f, symbols.symbols.map((x) => x.name));
  });

  /** [OAR-FACT-20]: a non-core reference must be reached through `requires`. */
  const reachable = (sym: SymbolEntry): boolean =>
    sym.tier.kind === 'core' ||
    requiredFacts.has(sym.name) ||
    (sym.tier.kind === 'profile' && requiredProfiles.has(sym.tier.profile));
  const requireReach = (sym: SymbolEntry, clause: string, path: JsonPath, offset?: number) => {
    reference(sym);
    if (!reachable(sym)) {
      const tier = sym.tier.kind === 'profile' ? `profile ${sym.tier.profile}` : 'the host tier';
      fail(clause, `rule ${qid} references ${sym.name} (from ${tier}) without declaring it in requires`, path, sym.name, offset);
    }
  };

  // --- selector ([OAR-SEL-1] to [OAR-SEL-6]) ---
  const selector: SelectorClause[] = [];
  for (const [name, values] of Object.entries(doc.selector ?? {})) {
    const path = ['selector', name];
    const sym = symbols.lookup(name);
    if (!sym || sym.kind !== 'fact' || (sym.type !== 'string' && sym.type !== 'list<string>')) {
      const why = !sym ? 'is not a declared fact' : sym.kind === 'function' ? 'is an observation function' : `has type ${sym.type}, not string or list<string>`;
      unknownName('OAR-SEL-3', (hint) => `selector clause ${name} of rule ${qid} ${why}${hint}`, path, name, facts((f) => f.type === 'string' || f.type === 'list<string>'));
      continue;
    }
    requireReach(sym, 'OAR-FACT-20', path);
    if (values.length === 0) {
      diagnostics.push(warning('OAR-SEL-6', `selector clause ${name} of rule ${qid} is an empty list: the rule is never selected`, at(path, { token: name })));
    }
    selector.push({ fact: sym, values: [...values] });
  }

  // --- counter_scope ([OAR-FIRE-10]) ---
  let counterScope: FactSymbol | undefined;
  if (doc.counter_scope !== undefined) {
    const sym = symbols.lookup(doc.counter_scope);
    if (!sym || sym.kind !== 'fact' || sym.type !== 'string') {
      const why = !sym ? 'is not a declared fact' : sym.kind === 'function' ? 'is an observation function' : `has type ${sym.type}, not string`;
      unknownName('OAR-FIRE-10', (hint) => `counter_scope ${doc.counter_scope} of rule ${qid} ${why}${hint}`, ['counter_scope'], doc.counter_scope, facts((f) => f.type === 'string'));
    } else {
      requireReach(sym, 'OAR-FIRE-10', ['counter_scope']);
      counterScope = sym;
    }
  }

  // --- transform ([OAR-OPS-13], [OAR-OPS-14], [OAR-OPS-18]) ---
  let transform: CheckedTransform | undefined;
  if (doc.effect === 'transform' && !capability.supportsTransform) {
    fail('OAR-OPS-18', `rule ${qid} has effect transform, but this host does not implement content mutation (supports_transform is false)`, ['effect'], 'transform');
  }
  if (doc.transform) {
    const t = doc.transform;
    let target: CheckedTransform['target'] | undefined;
    if (t.target === 'content') {
      target = 'content';
    } else {
      const sym = symbols.lookup(t.target);
      if (!sym || sym.kind !== 'fact' || sym.type !== 'list<map>') {
        const why = !sym ? 'is not a declared fact' : sym.kind === 'function' ? 'is an observation function' : `has type ${sym.type}, not list<map>`;
        unknownName('OAR-OPS-14', (hint) => `transform target ${t.target} of rule ${qid} ${why}; it must be content or a list<map> fact${hint}`, ['transform', 'target'], t.target, ['content', ...facts((f) => f.type === 'list<map>')]);
      } else {
        requireReach(sym, 'OAR-FACT-20', ['transform', 'target']);
        target = sym;
      }
    }
    if (target !== undefined) transform = { action: t.action, replacement: t.replacement ?? REDACTED, target };
  }

  // --- detector ([OAR-OPS-12]) ---
  // The three corpus detectors are always provided ([OAR-CONF-25]), listed or not.
  const ref = doc.detector?.ref;
  if (ref !== undefined && !capability.detectors.has(ref) && !RESERVED_DETECTORS.includes(ref)) {
    unknownName('OAR-OPS-12', (hint) => `rule ${qid} references detector ${ref}, which this host does not register (not in its detectors)${hint}`, ['detector', 'ref'], ref, [...capability.detectors, ...RESERVED_DETECTORS]);
  }

  // --- flow ([OAR-PROF-3], [OAR-FACT-13]) ---
  if (doc.flow) {
    if (capability.activityWindow === 0) {
      fail('OAR-PROF-3', `rule ${qid} carries flow, but this host tracks no activity (activity_window 0)`, ['flow'], 'flow');
    } else if (doc.flow.length > capability.activityWindow) {
      fail('OAR-FACT-13', `rule ${qid} has a flow of ${doc.flow.length} steps, longer than the activity window (activity_window ${capability.activityWindow})`, ['flow'], 'flow');
    }
  }

  // --- when ([OAR-CONF-5], [OAR-FACT-3], [OAR-FACT-4], Appendix A) ---
  let when: CheckedCondition | undefined;
  const counterReads: { fn: string; name: string; offset: number }[] = [];
  if (doc.when !== undefined) {
    const r = checkConditionSource(doc.when, symbols, { maxNodes: Math.min(capability.expressionNodesMax, MAX_MAX_NODES) });
    if (!r.ok) {
      for (const e of r.errors) fail(e.clause, `rule ${qid}: when: ${e.message}`, ['when'], e.token, e.offset, e.suggestion);
    } else {
      when = r.condition;
    }
    // What the condition names is checked even when it has errors, so that independent errors of
    // one condition are reported together.
    for (const ref of r.refs) requireReach(ref.sym, 'OAR-FACT-20', ['when'], ref.offset);
    counterReads.push(...r.counterReads);
  }

  // --- copy (Appendix C) ---
  const copy: Partial<Record<CopyMember, CopyProgram>> = {};
  for (const member of COPY_MEMBERS) {
    const text = doc.copy?.[member];
    if (text === undefined) continue;
    const path = ['copy', member];
    const parsed = parseCopy(text);
    if (!parsed.ok) {
      fail('OAR-COPY-3', `rule ${qid}: copy.${member}: ${parsed.message}`, path, parsed.construct, parsed.offset);
      continue;
    }
    const checked = checkCopy(parsed.nodes, symbols);
    for (const e of checked.errors) fail(e.clause, `rule ${qid}: copy.${member}: ${e.message}`, path, e.token, e.offset, e.suggestion);
    // [OAR-COPY-5] a fact named only in copy must still be reached through requires.
    for (const sym of checked.facts) requireReach(sym, 'OAR-COPY-5', path);
    if (checked.errors.length === 0) copy[member] = compileCopyTemplate(parsed.nodes, symbols);
  }

  // The draft is returned even when a field failed, so the rule-set checks (overrides, on_error,
  // cycles) still run on this rule and every error is reported in one pass (DESIGN "Errors");
  // an error here already keeps the pack from loading ([OAR-CONF-1] to [OAR-CONF-6]).
  const draft: RuleDraft = {
    qid,
    doc,
    localAnchor,
    coreAnchor,
    selector,
    copy,
    counterReads,
    references: [...references.values()].sort((a, b) => a.slot - b.slot),
    source: locate([]),
    ...(when ? { when } : {}),
    ...(transform ? { transform } : {}),
    ...(counterScope ? { counterScope } : {}),
  };
  return { draft, diagnostics };
}
