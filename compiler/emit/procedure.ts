/**
 * Per-anchor decision procedures (DESIGN: "Compiling the decision"). For each anchor the compiler
 * knows every rule, its selector values, its static evaluation order, which rules can suppress
 * which, and which need a detector, a flow window, counters or a transform target — so it emits one
 * function per anchor that selects (a `switch`, or a `Map` for many values, on the anchor's index
 * fact), then, per distinct set of candidates (a *bucket*), evaluates them in their precomputed
 * [OAR-EVAL-1] / [OAR-EVAL-18] order, short-circuits at an enforced block ([OAR-EVAL-4]),
 * suppresses ([OAR-EVAL-14]), resolves precedence ([OAR-EVAL-6], [OAR-EVAL-19], [OAR-EVAL-20]) and
 * builds the trace and the decision directly. Shared pieces stay in the runtime
 * (runtime/procedure.ts): detectors, flows, spans, side-effects, transforms, changed counters.
 *
 * A bucket is specialised when its order is static: every candidate is selected whenever the index
 * value selects the bucket, or a candidate whose other clauses must be checked at run time takes
 * part in no `overrides` between candidates (then its presence cannot move any other rule, so the
 * static order restricted to the selection is the [OAR-EVAL-18] order of the selection). Any other
 * bucket returns undefined: the engine decides it generically.
 *
 * A bucket is a function of its *shape* and an array of its data: the function (`T<n>`, parameters
 * `(p, f, R)`) holds what the arrangement of its rules decides — which kind of rule stands where,
 * what it suppresses, where a block stops — and reads everything that belongs to a rule (its name,
 * index, condition and copy closures) from `R` (`B<n>`, whose first element is the function). Packs
 * repeat their rule kinds across tenants and tools, so 3,574 buckets of a 10,000-rule pack share 17
 * functions: each is hot and optimised after a few hundred decisions, where one function per tool
 * stayed in V8's baseline tier (at 1,000 rules the per-tool code decided slower than the generic
 * engine), and the module is half the size.
 *
 * The code is written as a skeleton in which every literal is a placeholder `$n` and every datum an
 * element `R[n]`; the skeleton is parsed (acorn) into ESTree, once per shape, and each placeholder
 * replaced by an ESTree Literal — rule text never reaches the code as text (DESIGN: code generation
 * rule 1); in the data it is a Literal too.
 */
import { parse } from 'acorn';
import type * as ES from 'estree';
import type { BundleRule, BundleSymbol } from '../../runtime/bundle.js';
import { AmendedOrder, indexSlot, type OrderNode } from '../../runtime/order.js';
import { array, constDecl, id, lit } from './estree.js';

/** A rule as the procedure emitter sees it: its bundle data, its index, and its closures' names. */
export interface ProcedureRule {
  readonly i: number;
  readonly b: Omit<BundleRule, 'when' | 'copy'>;
  readonly hasWhen: boolean;
  readonly when: string;
  readonly copy: string;
}

/** Up to this many index values select by `switch`; more by a `Map` lookup. */
const SWITCH_MAX = 8;

/** A bucket's data: a rule's text or number, or the name of one of its closures. */
type Datum = string | number | null | { readonly closure: string };

/**
 * Skeleton code with `$n` placeholders, and the literal of each; and the bucket's data, read by the
 * code as `R[n]`. What belongs to the bucket's shape (an outcome, a position, an effect) is a
 * literal of the code; what belongs to its rules (their names, indices, closures) is data, so
 * buckets of one shape — the same kinds of rules in the same arrangement, as a pack's tenants or
 * tools repeat them — share one function.
 */
class Skeleton {
  readonly lines: string[] = [];
  private readonly values: (string | number | null)[] = [];
  readonly data: Datum[] = [];
  private readonly slots = new Map<string, string>();
  private readonly locals = new Map<number, number>();

  /** A placeholder for a literal value. */
  L(v: string | number | null): string {
    this.values.push(v);
    return `$${this.values.length - 1}`;
  }

  /** A reference to rule `r`'s datum `what` (one slot per rule and datum). */
  D(r: ProcedureRule, what: 'i' | 'qid' | 'id' | 'when' | 'copy'): string {
    const key = `${r.i}:${what}`;
    let ref = this.slots.get(key);
    if (ref === undefined) {
      const v: Datum = what === 'i' ? r.i : what === 'qid' ? r.b.qid : what === 'id' ? r.b.id : { closure: what === 'when' ? r.when : r.copy };
      this.data.push(v);
      // R[0] is the bucket's function itself (a table entry is the one array), its data from R[1].
      ref = `R[${this.data.length}]`;
      this.slots.set(key, ref);
    }
    return ref;
  }

  /** Rule `r`'s local number: by first mention, so buckets of one shape number them alike. */
  N(r: ProcedureRule): number {
    let n = this.locals.get(r.i);
    if (n === undefined) {
      n = this.locals.size;
      this.locals.set(r.i, n);
    }
    return n;
  }

  /** What identifies the shape: the code with its literals. */
  shape(): string {
    return `${this.lines.join('\n')}\u0000${JSON.stringify(this.values)}`;
  }

  line(s: string): void {
    this.lines.push(s);
  }

  /** The skeleton as ESTree statements, every placeholder a Literal. */
  statements(): ES.Statement[] {
    const program = parse(this.lines.join('\n'), { ecmaVersion: 2022, sourceType: 'script', allowReturnOutsideFunction: true }) as unknown as ES.Program;
    const values = this.values;
    // The tree is acorn's own, fresh from this parse: placeholders are replaced where they stand
    // (copying every node of every procedure was a third of a large pack's compile time).
    const fill = (node: unknown): unknown => {
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) node[i] = fill(node[i]);
        return node;
      }
      if (node === null || typeof node !== 'object') return node;
      const n = node as Record<string, unknown>;
      if (n.type === 'Identifier' && typeof n.name === 'string' && n.name.startsWith('$')) {
        const k = Number(n.name.slice(1));
        if (!Number.isInteger(k) || k >= values.length) throw new Error(`procedure skeleton: bad placeholder ${n.name}`);
        return lit(values[k] as string | number | null);
      }
      for (const key in n) {
        const v = n[key];
        if (v !== null && typeof v === 'object') n[key] = fill(v);
      }
      return n;
    };
    return fill(program.body) as ES.Statement[];
  }
}

/** A candidate of a bucket: the rule and whether its selection is checked at run time. */
interface Candidate {
  readonly r: ProcedureRule;
  readonly dynamic: boolean;
}

interface Node extends OrderNode {
  readonly c: Candidate;
  readonly targets: Node[];
}

/** The bucket's [OAR-EVAL-18] order, or undefined when it depends on the selection. */
function staticOrder(candidates: readonly Candidate[]): Candidate[] | undefined {
  const nodes: Node[] = candidates.map((c) => ({ c, targets: [], pending: false, pos: 0, indeg: 0 }));
  const byQid = new Map(nodes.map((n) => [n.c.r.b.qid, n]));
  for (const n of nodes) {
    for (const t of new Set(n.c.r.b.overrides)) {
      const target = byQid.get(t);
      if (target === undefined || target === n) continue;
      if (n.c.dynamic || target.c.dynamic) return undefined;
      n.targets.push(target);
    }
  }
  const out: Node[] = [];
  new AmendedOrder<Node>().order(nodes, nodes.length, out);
  return out.map((n) => n.c);
}

const enforced = (r: ProcedureRule) => r.b.enforcement === 'enforce';

/**
 * One bucket's function `(p, f, R)` as a skeleton: its candidates in static order, every datum of
 * a rule read from the bucket's data `R`.
 */
function bucketBody(order: readonly Candidate[] | undefined, baseOrder: readonly Candidate[]): Skeleton {
  const s = new Skeleton();
  if (order === undefined) {
    s.line('return undefined;');
    return s;
  }
  const anyDetector = order.some((c) => c.r.b.detector !== undefined);
  const pos = new Map(order.map((c, k) => [c.r.b.qid, k]));
  // Static suppression: an enforced rule's targets in this bucket, all after it ([OAR-EVAL-18]).
  const suppressible = new Set<number>();
  order.forEach((c) => {
    if (!enforced(c.r)) return;
    for (const t of c.r.b.overrides) {
      const k = pos.get(t);
      if (k !== undefined && t !== c.r.b.qid) suppressible.add(k);
    }
  });
  const hasBlock = order.some((c) => enforced(c.r) && c.r.b.effect === 'block');
  const fires = (c: Candidate) => enforced(c.r) && (c.r.b.effect !== 'block' || c.r.b.onFire.length > 0 || c.r.b.transform !== undefined);
  const ctx = (r: ProcedureRule) => (r.b.readsCounters || anyDetector ? `p.at(${s.D(r, 'i')});` : '');
  const copyCtx = (r: ProcedureRule) => (r.b.detector !== undefined ? `p.cx(${s.D(r, 'i')});` : ctx(r));
  const entry = (q: string, outcome: string) => `a.push({ rule: ${q}, outcome: ${outcome} });`;
  // A rule's locals (`q` selected, `x` fired, `s` suppressed) are numbered by the bucket, not the pack.
  const q = (r: ProcedureRule) => `q${s.N(r)}`;
  const x = (r: ProcedureRule) => `x${s.N(r)}`;
  const sup = (r: ProcedureRule) => `s${s.N(r)}`;

  s.line('var a = [], v;');
  for (const c of baseOrder) if (c.dynamic) s.line(`var ${q(c.r)} = p.sel(${s.D(c.r, 'i')});`);
  if (hasBlock) s.line('var stop = -1;');
  for (const c of order) if (fires(c)) s.line(`var ${x(c.r)} = false;`);
  for (const k of suppressible) s.line(`var ${sup((order[k] as Candidate).r)} = false;`);
  s.line('r: {');
  order.forEach((c, k) => {
    const r = c.r;
    const Q = s.D(r, 'qid');
    const I = () => s.D(r, 'i');
    const tests: string[] = [];
    if (r.b.flow !== undefined) tests.push(`p.flow(${I()})`);
    if (r.b.detector !== undefined) tests.push(`p.det(${I()})`);
    if (r.hasWhen) tests.push(`${s.D(r, 'when')}(f) === true`);
    const test = tests.length === 0 ? 'true' : tests.join(' && ');
    const pre = r.b.detector === undefined ? ctx(r) : '';
    let body: string;
    if (!enforced(r)) {
      body = `${pre} ${entry(Q, `${test} ? ${s.L('monitored_fired')} : ${s.L('monitored_passed')}`)}`;
    } else {
      const fire: string[] = [];
      if (r.b.transform !== undefined && r.b.transform.target !== 'content') fire.push(`p.sp(${I()});`);
      fire.push(entry(Q, s.L('fired')));
      for (const t of r.b.overrides) {
        const j = pos.get(t);
        if (j !== undefined && t !== r.b.qid) fire.push(`${sup((order[j] as Candidate).r)} = true;`);
      }
      if (fires(c)) fire.push(`${x(r)} = true;`);
      if (r.b.effect === 'block') fire.push(`stop = ${s.L(k)};`, 'break r;');
      body = test === 'true' ? `${pre} ${fire.join(' ')}` : `${pre} if (${test}) { ${fire.join(' ')} } else ${entry(Q, s.L('passed'))}`;
    }
    if (suppressible.has(k)) body = `if (${sup(r)}) ${entry(Q, s.L('suppressed'))} else { ${body} }`;
    if (c.dynamic) body = `if (${q(r)}) { ${body} }`;
    s.line(body);
  });
  s.line('}');
  // [OAR-OPS-10] a rule suppressed by a rule before the short-circuit is recorded even so.
  if (hasBlock) {
    for (const k of [...suppressible].sort((m, n) => m - n)) {
      const r = (order[k] as Candidate).r;
      s.line(`if (stop >= 0 && stop < ${s.L(k)} && ${sup(r)}) ${entry(s.D(r, 'qid'), s.L('suppressed'))}`);
    }
  }

  // Resolution by precedence ([OAR-EVAL-6]); copy only for the rules presented ([OAR-COPY-1]).
  s.line('var e = "none", cd = null, rl = null, cp = null, adv = [];');
  const of = (effect: string) => order.map((c, k) => ({ c, k })).filter(({ c }) => enforced(c.r) && c.r.b.effect === effect);
  const present = (r: ProcedureRule) => `${copyCtx(r)} cd = ${s.D(r, 'id')}; rl = ${s.D(r, 'qid')}; cp = ${s.D(r, 'copy')}(f);`;
  const branches: string[] = [];
  if (hasBlock) {
    const cases = of('block').map(({ c, k }) => `case ${s.L(k)}: ${present(c.r)} break;`);
    branches.push(`if (stop >= 0) { e = ${s.L('block')}; switch (stop) { ${cases.join(' ')} } }`);
  }
  const transforms = of('transform');
  if (transforms.length > 0) {
    // [OAR-EVAL-19] the first that fired, in evaluation order.
    const first = transforms.map(({ c }) => `if (${x(c.r)}) { ${present(c.r)} }`).join(' else ');
    branches.push(`if (${transforms.map(({ c }) => x(c.r)).join(' || ')}) { e = ${s.L('transform')}; ${first} }`);
  }
  for (const effect of ['nudge', 'warn']) {
    const rs = of(effect);
    if (rs.length === 0) continue;
    // [OAR-EVAL-20] every one that fired, in evaluation order; the first is the decision's.
    const each = rs.map(({ c }) => {
      const ID = s.D(c.r, 'id');
      const Q = s.D(c.r, 'qid');
      return `if (${x(c.r)}) { ${copyCtx(c.r)} v = ${s.D(c.r, 'copy')}(f); if (cd === null) { cd = ${ID}; rl = ${Q}; cp = v; } adv.push({ code: ${ID}, rule: ${Q}, copy: v }); }`;
    });
    branches.push(`if (${rs.map(({ c }) => x(c.r)).join(' || ')}) { e = ${s.L(effect)}; ${each.join(' ')} }`);
  }
  if (branches.length > 0) s.line(branches.join(' else '));

  // Side-effects of the enforced rules that fired, in evaluation order ([OAR-EVAL-12],
  // [OAR-FIRE-8]), after every condition ([OAR-FIRE-6]): first every counter key and the check
  // that nothing can fail (`pre`), then the writes.
  s.line('var of = [], ev = [];');
  const effects = order.filter((c) => enforced(c.r) && c.r.b.onFire.length > 0);
  for (const c of effects) s.line(`if (${x(c.r)}) p.pre(${s.D(c.r, 'i')});`);
  for (const c of effects) s.line(`if (${x(c.r)}) p.fire(${s.D(c.r, 'i')}, of, ev);`);
  s.line('var d = { decision: e, code: cd, rule: rl, copy: cp, advisories: adv, transforms: [], skippedTransforms: [], applied: a, onFire: of, events: ev, counters: p.changed() };');
  const accumulated = order.filter((c) => enforced(c.r) && c.r.b.transform !== undefined);
  if (accumulated.length > 0) s.line(`if (e === ${s.L('transform')}) { ${accumulated.map((c) => `if (${x(c.r)}) p.tf(${s.D(c.r, 'i')}, d);`).join(' ')} }`);
  s.line('return p.end(d);');
  return s;
}

const fnOf = (body: ES.Statement[], params = ['p', 'f']): ES.FunctionExpression => ({
  type: 'FunctionExpression', id: null, params: params.map(id), body: { type: 'BlockStatement', body }, generator: false, async: false,
});

/** A bucket: the function of its shape (`T<n>`) and its data (`B<n>`, whose first element is that function). */
interface Bucket {
  readonly fn: string;
  readonly data: string;
}

const datum = (v: Datum): ES.Expression => (v !== null && typeof v === 'object' ? id(v.closure) : lit(v));

/**
 * The procedures of every anchor: module constants (bucket functions `T<n>` and bucket data
 * `B<n>`, lookup tables `t<n>` from an index value to its bucket's data, procedures `p<n>`), and
 * for each host-local anchor the name of its procedure.
 */
export function emitProcedures(rules: readonly ProcedureRule[], symbols: readonly BundleSymbol[], out: (constant: ES.VariableDeclaration) => void): Map<string, string> {
  const byAnchor = new Map<string, string>();
  const grouped = new Map<string, ProcedureRule[]>();
  for (const r of rules) {
    // [OAR-EVAL-11] a rule switched off, and [OAR-SEL-6] an empty clause, are never selected.
    if (r.b.enforcement === 'off' || r.b.selector.some((c) => c.values.length === 0)) continue;
    const list = grouped.get(r.b.anchor) ?? [];
    list.push(r);
    grouped.set(r.b.anchor, list);
  }
  const buckets = new Map<string, Bucket>();
  const shapes = new Map<string, string>();
  const bucket = (candidates: readonly Candidate[]): Bucket => {
    const key = candidates.map((c) => c.r.i).join(',');
    let b = buckets.get(key);
    if (b === undefined) {
      const s = bucketBody(staticOrder(candidates), candidates);
      const shape = s.shape();
      let fn = shapes.get(shape);
      if (fn === undefined) {
        fn = `T${shapes.size}`;
        shapes.set(shape, fn);
        out(constDecl(fn, fnOf(s.statements(), ['p', 'f', 'R'])));
      }
      b = { fn, data: `B${buckets.size}` };
      buckets.set(key, b);
      out(constDecl(b.data, array([id(fn), ...s.data.map(datum)])));
    }
    return b;
  };
  const run = (b: Bucket) => `${b.fn}(p, f, ${b.data})`;
  for (const [anchor, list] of grouped) {
    const slot = indexSlot(list.map((r) => r.b), symbols);
    const dynamic = (r: ProcedureRule) => r.b.selector.some((c) => c.slot !== slot);
    const name = `p${byAnchor.size}`;
    byAnchor.set(anchor, name);
    if (slot < 0) {
      const s = new Skeleton();
      s.line(`return ${run(bucket(list.map((r) => ({ r, dynamic: dynamic(r) }))))};`);
      out(constDecl(name, fnOf(s.statements())));
      continue;
    }
    // Each index value's candidates, in the list's order: the rules without a clause on the index
    // slot (every value's) merged with the rules whose clause names the value — built in one pass
    // over the clauses, not by filtering the whole list once per value (quadratic at 10,000 rules).
    const always: number[] = [];
    const byValue = new Map<string, number[]>();
    list.forEach((r, k) => {
      const c = r.b.selector.find((x) => x.slot === slot);
      if (c === undefined) always.push(k);
      else for (const v of new Set(c.values)) {
        const at = byValue.get(v);
        if (at === undefined) byValue.set(v, [k]);
        else at.push(k);
      }
    });
    const candidate = list.map((r) => ({ r, dynamic: dynamic(r) }));
    const merged = (own: readonly number[]): Candidate[] => {
      const out: Candidate[] = [];
      let a = 0;
      let b = 0;
      while (a < always.length || b < own.length) {
        const next = b >= own.length || (a < always.length && (always[a] as number) < (own[b] as number)) ? always[a++] : own[b++];
        out.push(candidate[next as number] as Candidate);
      }
      return out;
    };
    const fallback = bucket(merged([]));
    const cases = [...byValue].map(([v, own]) => [v, bucket(merged(own))] as const);
    const s = new Skeleton();
    if (cases.length <= SWITCH_MAX) {
      s.line(`switch (f.fact(${s.L(slot)})) {`);
      for (const [v, b] of cases) s.line(`case ${s.L(v)}: return ${run(b)};`);
      s.line(`default: return ${run(fallback)}; }`);
      out(constDecl(name, fnOf(s.statements())));
    } else {
      const table = `t${byAnchor.size - 1}`;
      const t = new Skeleton();
      t.line(`new Map([${cases.map(([v, b]) => `[${t.L(v)}, ${b.data}]`).join(', ')}]);`);
      out(constDecl(table, (t.statements()[0] as ES.ExpressionStatement).expression));
      s.line(`var h = ${table}.get(f.fact(${s.L(slot)}));`);
      s.line(`return h === undefined ? ${run(fallback)} : h[0](p, f, h);`);
      out(constDecl(name, fnOf(s.statements())));
    }
  }
  return byAnchor;
}
