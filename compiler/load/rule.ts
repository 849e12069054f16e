/**
 * The checks of one rule document against the one symbol environment ([OAR-FACT-27]): anchor
 * resolution, `requires`, selectors, `counter_scope`, transforms, detector references, `flow`, the
 * condition, copy templates, and reachability of every non-core reference ([OAR-FACT-20]).
 * References to other rules are returned unresolved: the rule set resolves them (ruleset.ts).
 *
 * The document has already passed schema validation, so shapes and enums are trusted here.
 */
import { error, warning, type Diagnostic, type SourceLocation } from '../diagnostics.js';
import { checkConditionSource, type CheckedCondition, type TExpr } from '../expr/index.js';
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
  /** `fire_count_of` / `breaker_count_of` arguments as written, with their offsets. */
  /** `fire_count_of` / `breaker_count_of` reads: the function, its literal argument, where. */
  readonly counterReads: { fn: string; name: string; offset: number }[];
  readonly references: SymbolEntry[];
  readonly source: SourceLocation;
}

export type Locator = (path: readonly (string | number)[]) => SourceLocation;

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
  const at = (path: JsonPath, extra: { token?: string; offset?: number } = {}) => ({ ...extra, path, source: locate(path) });
  const fail = (clause: string, message: string, path: JsonPath, token?: string, offset?: number) => {
    diagnostics.push(error(clause, message, at(path, token === undefined ? {} : offset === undefined ? { token } : { token, offset })));
  };
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
    fail('OAR-DOC-12', `rule ${qid} names anchor ${doc.anchor}, which is neither a core anchor nor in the host anchor catalogue`, ['anchor'], doc.anchor);
  }

  // --- requires ([OAR-FACT-19]) ---
  const requiredProfiles = new Set(doc.requires?.profiles ?? []);
  const requiredFacts = new Set(doc.requires?.facts ?? []);
  (doc.requires?.profiles ?? []).forEach((p, i) => {
    if (!capability.profiles.has(p)) fail('OAR-FACT-19', `rule ${qid} requires profile ${p} (requires.profiles), which this host does not provide`, ['requires', 'profiles', i], p);
  });
  (doc.requires?.facts ?? []).forEach((f, i) => {
    if (!symbols.lookup(f)) fail('OAR-FACT-19', `rule ${qid} requires fact ${f} (requires.facts), which this host does not provide`, ['requires', 'facts', i], f);
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
      fail('OAR-SEL-3', `selector clause ${name} of rule ${qid} ${why}`, path, name);
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
      fail('OAR-FIRE-10', `counter_scope ${doc.counter_scope} of rule ${qid} ${why}`, ['counter_scope'], doc.counter_scope);
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
        fail('OAR-OPS-14', `transform target ${t.target} of rule ${qid} ${why}; it must be content or a list<map> fact`, ['transform', 'target'], t.target);
      } else {
        requireReach(sym, 'OAR-FACT-20', ['transform', 'target']);
        target = sym;
      }
    }
    if (target !== undefined) transform = { action: t.action, replacement: t.replacement ?? REDACTED, target };
  }

  // --- detector ([OAR-OPS-12]) ---
  // The three corpus detectors are always provided ([OAR-CONF-25]), listed or not.
  if (doc.detector && !capability.detectors.has(doc.detector.ref) && !RESERVED_DETECTORS.includes(doc.detector.ref)) {
    fail('OAR-OPS-12', `rule ${qid} references detector ${doc.detector.ref}, which this host does not register (not in its detectors)`, ['detector', 'ref'], doc.detector.ref);
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
      for (const e of r.errors) fail(e.clause, `rule ${qid}: when: ${e.message} (at offset ${e.offset})`, ['when'], e.token, e.offset);
    } else {
      when = r.condition;
      walk(when.typed, (e) => {
        if (e.k === 'fact' || e.k === 'call') requireReach(e.sym, 'OAR-FACT-20', ['when'], e.offset);
        if (e.k === 'call' && e.target !== undefined) counterReads.push({ fn: e.sym.name, name: e.target, offset: e.offset });
      });
    }
  }

  // --- copy (Appendix C) ---
  const copy: Partial<Record<CopyMember, CopyProgram>> = {};
  for (const member of COPY_MEMBERS) {
    const text = doc.copy?.[member];
    if (text === undefined) continue;
    const path = ['copy', member];
    const parsed = parseCopy(text);
    if (!parsed.ok) {
      fail('OAR-COPY-3', `rule ${qid}: copy.${member}: ${parsed.message} (at offset ${parsed.offset})`, path, parsed.construct, parsed.offset);
      continue;
    }
    const checked = checkCopy(parsed.nodes, symbols);
    for (const e of checked.errors) fail(e.clause, `rule ${qid}: copy.${member}: ${e.message}`, path, e.token, e.offset);
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

/** Visit every node of a typed condition. */
export function walk(e: TExpr, visit: (e: TExpr) => void): void {
  visit(e);
  switch (e.k) {
    case 'lit':
    case 'fact':
      return;
    case 'list':
      e.items.forEach((x) => walk(x, visit));
      return;
    case 'call':
      walk(e.arg, visit);
      return;
    case 'size':
      walk(e.arg, visit);
      return;
    case 'strfn':
      walk(e.s, visit);
      walk(e.t, visit);
      return;
    case 'not':
    case 'neg':
      walk(e.operand, visit);
      return;
    case 'and':
    case 'or':
    case 'arith':
    case 'cmp':
    case 'in':
      walk(e.left, visit);
      walk(e.right, visit);
      return;
    case 'index':
      walk(e.object, visit);
      walk(e.index, visit);
      return;
    case 'cond':
      walk(e.test, visit);
      walk(e.then, visit);
      walk(e.else, visit);
      return;
  }
}
