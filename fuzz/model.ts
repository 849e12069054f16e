/**
 * What `oarc fuzz` knows about a pack before generating anything: its anchors, the facts an
 * occurrence may carry and their types, and the constants the rules compare against — mined from
 * conditions, selectors, flows, transforms and copy — so generated occurrences reach the rules'
 * interesting edges (a selector value, `c - 1`, `c`, `c + 1` around an int constant, a string that
 * starts with the literal a rule tests for) rather than falling through every condition.
 *
 * Built from the bundle (anchors, symbols, selectors: all a compiled bundle keeps) and, when the
 * pack was loaded from rule documents, from its checked conditions and copy programs as well.
 */
import type { LoadedPack } from '../compiler/load/pack.js';
import type { TExpr } from '../compiler/expr/typed.js';
import type { Bundle, BundleSymbol } from '../runtime/bundle.js';
import type { CopyProgram } from '../runtime/copy.js';
import type { FactType, ScalarType } from '../runtime/types.js';

/** A fact or observation function a host may supply in `facts`. */
export interface SuppliedSymbol {
  readonly name: string;
  readonly kind: 'fact' | 'function';
  /** The fact's type, or the function's result type. */
  readonly type: FactType;
  /** Derived by oarc from the tool call or the content when the host does not supply it. */
  readonly derived: boolean;
}

export interface AnchorModel {
  /** Host-local anchor identifier ([OAR-CONF-29]). */
  readonly local: string;
  /** The core anchor it implements, if any. */
  readonly core: string | undefined;
  /** Facts the anchor's rules read (selector, condition, copy, scope, transform target). */
  readonly reads: readonly string[];
  /** Does some rule at this anchor read the content (a `content` transform, `content_length`)? */
  readonly readsContent: boolean;
}

export interface FuzzModel {
  readonly host: string;
  /** Anchors with at least one rule, then the others the capability declares. */
  readonly ruled: readonly AnchorModel[];
  readonly others: readonly string[];
  readonly symbols: readonly SuppliedSymbol[];
  readonly byName: ReadonlyMap<string, SuppliedSymbol>;
  /** Every declared name (what an occurrence's `facts` may use at all, [OAR-FACT-1]). */
  readonly declared: readonly string[];
  /** The capability declares the `tool` profile: occurrences carry a `tool_call`. */
  readonly toolProfile: boolean;
  readonly preInvoke: string | undefined;
  readonly toolNames: readonly string[];
  /** Tool argument names the rules read, with the type they are read as. */
  readonly toolArgs: ReadonlyMap<string, ScalarType | 'any'>;
  /** Constants by type, mined from the whole pack. */
  readonly strings: readonly string[];
  readonly ints: readonly bigint[];
  readonly doubles: readonly number[];
  /** Values a rule compares one fact (or tool argument, `arg:<name>`) with. */
  readonly near: ReadonlyMap<string, readonly unknown[]>;
  /** `list<map>` facts some transform takes its spans from ([OAR-OPS-14]). */
  readonly spanTargets: ReadonlySet<string>;
  /** Facts `detector://fixture` may report (the detector-backed profiles' and host facts). */
  readonly detectorFixture: boolean;
}

/** Core facts the engine keeps itself: never supplied (a counter as a fact is refused, [OAR-CONF-32]). */
const ENGINE_OWNED = new Set(['anchor', 'fire_count', 'breaker_count', 'fire_count_of', 'breaker_count_of']);
/** Facts oarc derives from the tool call or content (DESIGN "Decisions the spec leaves open"). */
const DERIVED = new Set([
  'tool', 'tool_args', 'tool_args_fingerprint', 'tool_arg_string', 'tool_arg_int', 'tool_arg_bool',
  'content_length', 'content_contains_untrusted', 'content_segment_count',
]);

export function buildModel(bundle: Bundle, pack?: LoadedPack): FuzzModel {
  const cap = bundle.capability;
  const symbols: SuppliedSymbol[] = [];
  for (const s of bundle.symbols) {
    if (ENGINE_OWNED.has(s.name)) continue;
    symbols.push({ name: s.name, kind: s.kind, type: s.kind === 'fact' ? s.type : s.result, derived: DERIVED.has(s.name) });
  }
  const byName = new Map(symbols.map((s) => [s.name, s]));
  const slotName = (slot: number): string => (bundle.symbols[slot] as BundleSymbol).name;
  const coreOf = new Map<string, string>();
  for (const [core, local] of Object.entries(cap.coreAnchors)) coreOf.set(local, core);

  const mined = new Miner();
  const reads = new Map<string, Set<string>>();
  const content = new Set<string>();
  const spanTargets = new Set<string>();
  const toolNames = new Set<string>();
  for (const r of bundle.rules) {
    const at = reads.get(r.anchor) ?? new Set<string>();
    reads.set(r.anchor, at);
    for (const c of r.selector) {
      const name = slotName(c.slot);
      at.add(name);
      for (const v of c.values) {
        mined.near(name, v);
        mined.string(v);
        if (name === 'tool') toolNames.add(v);
      }
    }
    for (const step of r.flow ?? []) {
      toolNames.add(step);
      mined.string(step);
    }
    if (r.counterScope !== undefined) at.add(slotName(r.counterScope));
    if (r.transform !== undefined) {
      if (r.transform.target === 'content') content.add(r.anchor);
      else {
        at.add(r.transform.targetName);
        spanTargets.add(r.transform.targetName);
      }
      mined.string(r.transform.replacement);
    }
  }
  if (pack !== undefined) {
    for (const rule of pack.rules) {
      const at = reads.get(rule.localAnchor) ?? new Set<string>();
      reads.set(rule.localAnchor, at);
      for (const ref of rule.references) {
        at.add(ref.name);
        if (ref.name === 'content_length') content.add(rule.localAnchor);
      }
      if (rule.when !== undefined) mined.expr(rule.when.typed);
      for (const program of Object.values(rule.copy)) if (program !== undefined) mined.copy(program);
    }
  }
  for (const name of mined.toolNames) toolNames.add(name);

  const anchorsWithRules = [...reads.keys()].sort();
  const all = [...new Set([...Object.values(cap.coreAnchors), ...cap.hostAnchors])].sort();
  return {
    host: cap.host,
    ruled: anchorsWithRules.map((local) => ({
      local,
      core: coreOf.get(local),
      reads: [...(reads.get(local) ?? [])].filter((n) => byName.has(n)).sort(),
      readsContent: content.has(local) || coreOf.get(local)?.startsWith('model.') === true,
    })),
    others: all.filter((a) => !reads.has(a)),
    symbols,
    byName,
    declared: bundle.symbols.map((s) => s.name),
    toolProfile: cap.profiles.includes('tool'),
    preInvoke: cap.coreAnchors['tool.pre_invoke'],
    toolNames: [...toolNames].sort(),
    toolArgs: mined.toolArgs,
    strings: [...mined.strings].sort(),
    ints: [...mined.ints].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    doubles: [...mined.doubles].sort((a, b) => a - b),
    near: mined.nearValues,
    spanTargets,
    detectorFixture: bundle.rules.some((r) => r.detector === 'detector://fixture'),
  };
}

/**
 * One model of several packs over one capability (`oarc diff`: the old and the new), so generated
 * occurrences reach every rule of either: anchors, reads, tools, arguments and constants unioned.
 */
export function mergeModels(models: readonly FuzzModel[]): FuzzModel {
  const first = models[0];
  if (first === undefined) throw new Error('mergeModels: no model');
  if (models.length === 1) return first;
  const ruled = new Map<string, { core: string | undefined; reads: Set<string>; readsContent: boolean }>();
  const toolArgs = new Map<string, ScalarType | 'any'>();
  const near = new Map<string, unknown[]>();
  for (const m of models) {
    for (const a of m.ruled) {
      const at = ruled.get(a.local) ?? { core: a.core, reads: new Set<string>(), readsContent: false };
      for (const r of a.reads) at.reads.add(r);
      at.readsContent ||= a.readsContent;
      ruled.set(a.local, at);
    }
    // An argument read as two types by the two packs is generated as any type.
    for (const [k, t] of m.toolArgs) toolArgs.set(k, toolArgs.has(k) && toolArgs.get(k) !== t ? 'any' : t);
    for (const [k, vs] of m.near) {
      const list = near.get(k) ?? [];
      for (const v of vs) if (!list.some((x) => x === v)) list.push(v);
      near.set(k, list);
    }
  }
  const union = <T>(pick: (m: FuzzModel) => readonly T[]) => [...new Set(models.flatMap((m) => [...pick(m)]))];
  return {
    ...first,
    ruled: [...ruled.keys()].sort().map((local) => {
      const a = ruled.get(local) as { core: string | undefined; reads: Set<string>; readsContent: boolean };
      return { local, core: a.core, reads: [...a.reads].sort(), readsContent: a.readsContent };
    }),
    others: union((m) => m.others).filter((a) => !ruled.has(a)).sort(),
    toolNames: union((m) => m.toolNames).sort(),
    toolArgs,
    strings: union((m) => m.strings).sort(),
    ints: union((m) => m.ints).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    doubles: union((m) => m.doubles).sort((a, b) => a - b),
    near,
    spanTargets: new Set(union((m) => [...m.spanTargets])),
    detectorFixture: models.some((m) => m.detectorFixture),
  };
}

const TOOL_ARG_FUNCTIONS: Readonly<Record<string, ScalarType>> = { tool_arg_string: 'string', tool_arg_int: 'int', tool_arg_bool: 'bool' };

/** Walks conditions and copy, collecting the constants they use. */
class Miner {
  readonly strings = new Set<string>();
  readonly ints = new Set<bigint>();
  readonly doubles = new Set<number>();
  readonly toolArgs = new Map<string, ScalarType | 'any'>();
  readonly toolNames = new Set<string>();
  readonly nearValues = new Map<string, unknown[]>();

  string(s: string): void {
    this.strings.add(s);
  }

  near(key: string, v: unknown): void {
    const list = this.nearValues.get(key) ?? [];
    if (!list.some((x) => x === v)) list.push(v);
    this.nearValues.set(key, list);
  }

  copy(program: CopyProgram): void {
    for (const part of program) {
      if (typeof part === 'string') {
        if (part.trim() !== '' && part.length <= 40) this.string(part.trim());
      } else if ('nonzero' in part) {
        this.copy(part.nonzero);
        this.copy(part.zero);
      }
    }
  }

  /** The key a value compared with `e` is filed under: a fact's name, or `arg:<name>`. */
  private subject(e: TExpr): string | undefined {
    if (e.k === 'fact') return e.sym.name;
    if (e.k === 'call' && e.sym.name in TOOL_ARG_FUNCTIONS && e.arg.k === 'lit' && typeof e.arg.value === 'string') return `arg:${e.arg.value}`;
    if (e.k === 'call' && e.arg.k === 'lit') return undefined;
    if (e.k === 'index' && e.object.k === 'fact' && e.object.sym.name === 'tool_args' && e.index.k === 'lit' && typeof e.index.value === 'string') return `arg:${e.index.value}`;
    return undefined;
  }

  expr(e: TExpr): void {
    switch (e.k) {
      case 'lit':
        if (typeof e.value === 'string') this.string(e.value);
        else if (typeof e.value === 'bigint') this.ints.add(e.value);
        else if (typeof e.value === 'number') {
          if (e.ty === 'int') this.ints.add(BigInt(e.value));
          else this.doubles.add(e.value);
        }
        return;
      case 'list':
        e.items.forEach((x) => this.expr(x));
        return;
      case 'fact':
        return;
      case 'call': {
        const argType = TOOL_ARG_FUNCTIONS[e.sym.name];
        if (argType !== undefined && e.arg.k === 'lit' && typeof e.arg.value === 'string') this.toolArgs.set(e.arg.value, argType);
        this.expr(e.arg);
        return;
      }
      case 'size':
      case 'not':
      case 'neg':
        this.expr('arg' in e ? e.arg : e.operand);
        return;
      case 'strfn': {
        this.expr(e.s);
        this.expr(e.t);
        const key = this.subject(e.s);
        if (key !== undefined && e.t.k === 'lit' && typeof e.t.value === 'string') this.near(key, e.t.value);
        return;
      }
      case 'and':
      case 'or':
      case 'arith':
        this.expr(e.left);
        this.expr(e.right);
        return;
      case 'cmp': {
        this.expr(e.left);
        this.expr(e.right);
        for (const [a, b] of [[e.left, e.right], [e.right, e.left]] as const) {
          const key = this.subject(a);
          if (key !== undefined && b.k === 'lit') this.near(key, b.value);
          if (a.k === 'fact' && a.sym.name === 'tool' && b.k === 'lit' && typeof b.value === 'string') this.toolNames.add(b.value);
        }
        return;
      }
      case 'in': {
        this.expr(e.left);
        this.expr(e.right);
        if (e.left.k === 'lit' && typeof e.left.value === 'string') {
          if (e.right.k === 'fact' && e.right.sym.name === 'tool_args') {
            if (!this.toolArgs.has(e.left.value)) this.toolArgs.set(e.left.value, 'any');
          } else if (e.right.k === 'fact') this.near(e.right.sym.name, e.left.value);
        }
        const key = this.subject(e.left);
        if (key !== undefined && e.right.k === 'list') for (const item of e.right.items) if (item.k === 'lit') this.near(key, item.value);
        if (e.left.k === 'fact' && e.left.sym.name === 'tool' && e.right.k === 'list') {
          for (const item of e.right.items) if (item.k === 'lit' && typeof item.value === 'string') this.toolNames.add(item.value);
        }
        return;
      }
      case 'index':
        this.expr(e.object);
        this.expr(e.index);
        if (e.object.k === 'fact' && e.object.sym.name === 'tool_args' && e.index.k === 'lit' && typeof e.index.value === 'string' && !this.toolArgs.has(e.index.value)) {
          this.toolArgs.set(e.index.value, 'any');
        }
        return;
      case 'cond':
        this.expr(e.test);
        this.expr(e.then);
        this.expr(e.else);
        return;
    }
  }
}
