/**
 * Checks across the rule set: identity ([OAR-DOC-9]), `overrides` resolution, cycles and mandatory
 * targets ([OAR-EVAL-13], [OAR-EVAL-16], [OAR-EVAL-17]), `on_error` substitution targets
 * ([OAR-OPS-5]) and `fire_count_of` / `breaker_count_of` targets ([OAR-FIRE-11]).
 *
 * The result is ordered by kind, then by qualified identifier compared by code point
 * ([OAR-EVAL-1]) — never by file or position ([OAR-DOC-28], [OAR-DOC-31]).
 */
import { error, type Diagnostic, type SourceLocation } from '../diagnostics.js';
import { cpCompare } from '../../runtime/strings.js';
import { closest, meantHint } from '../../runtime/suggest.js';
import { KIND_RANK, type CheckedRule, type OnError } from './model.js';
import { locateToken, resolveRuleRef, type Locator, type RuleDraft } from './rule.js';
import type { TExpr } from '../expr/typed.js';
import { pushAll } from '../arrays.js';

export function byEvaluationOrder(a: { kind: CheckedRule['kind']; qid: string }, b: { kind: CheckedRule['kind']; qid: string }): number {
  return KIND_RANK[a.kind] - KIND_RANK[b.kind] || cpCompare(a.qid, b.qid);
}

export function checkRuleSet(
  drafts: readonly { draft: RuleDraft; locate: Locator }[],
  loadedQids: ReadonlySet<string>,
): { rules: CheckedRule[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const byQid = new Map(drafts.map((d) => [d.draft.qid, d.draft]));
  const rules: CheckedRule[] = [];
  /** The loaded rule a reference that resolves to nothing was probably meant to name, as written. */
  const meant = (ref: string, ns: string | undefined): string | undefined => {
    if (ref.includes('/')) return closest(ref, loadedQids);
    const local = [...loadedQids].filter((q) => resolveRuleRef(q.slice(q.lastIndexOf('/') + 1), ns) === q).map((q) => q.slice(q.lastIndexOf('/') + 1));
    return closest(ref, local) ?? closest(resolveRuleRef(ref, ns), loadedQids);
  };

  for (const { draft, locate } of drafts) {
    const doc = draft.doc;
    const ns = doc.namespace;
    const fail = (clause: string, message: string, path: (string | number)[], token: string, extra: { offset?: number; source?: SourceLocation } = {}) => {
      const s = meant(token, ns);
      diagnostics.push(error(clause, message + meantHint(s), { token, rule: draft.qid, path, source: locate(path), ...extra, ...(s === undefined ? {} : { suggestion: s }) }));
    };

    // [OAR-EVAL-13], [OAR-EVAL-17]
    const overrides: string[] = [];
    (doc.overrides ?? []).forEach((ref, i) => {
      const target = resolveRuleRef(ref, ns);
      const path = ['overrides', i];
      if (!loadedQids.has(target)) {
        fail('OAR-EVAL-13', `rule ${draft.qid} overrides ${ref}, which resolves to ${target}, a rule that is not loaded`, path, ref);
      } else if (byQid.get(target)?.doc.mandatory === true) {
        fail('OAR-EVAL-17', `rule ${draft.qid} overrides ${target}, which is mandatory and cannot be suppressed`, path, ref);
      } else if (!overrides.includes(target)) {
        overrides.push(target);
      }
    });

    // [OAR-OPS-5]
    let onError: OnError = { mode: 'fail_closed' };
    const oe = doc.on_error;
    if (oe === 'fail_open') onError = { mode: 'fail_open' };
    else if (oe !== undefined && oe !== 'fail_closed') {
      const target = resolveRuleRef(oe, ns);
      const sub = byQid.get(target);
      if (!loadedQids.has(target)) {
        fail('OAR-OPS-5', `rule ${draft.qid} names ${oe} in on_error, which resolves to ${target}, a rule that is not loaded`, ['on_error'], oe);
      } else if (sub) {
        onError = { mode: 'substitute', rule: target, id: sub.doc.id };
      }
    }

    // [OAR-FIRE-11]
    const counterReads: string[] = [];
    for (const read of draft.counterReads) {
      const target = resolveRuleRef(read.name, ns);
      if (!loadedQids.has(target)) {
        // The span is the string literal, quotes included.
        const source = locateToken(locate, ['when'], read.offset, JSON.stringify(read.name));
        fail('OAR-FIRE-11', `rule ${draft.qid}: when: ${read.fn}("${read.name}"): ${read.name} resolves to ${target}, a rule that is not loaded`, ['when'], read.name, { offset: read.offset, source });
      } else if (!counterReads.includes(target)) {
        counterReads.push(target);
      }
    }
    // The condition reads the counters of the qualified identifier, resolved now, not as written.
    const when = draft.when && draft.counterReads.length > 0
      ? { ...draft.when, typed: resolveCounterTargets(draft.when.typed, (name) => resolveRuleRef(name, ns)) }
      : draft.when;

    rules.push({
      qid: draft.qid,
      id: doc.id,
      ...(ns !== undefined ? { namespace: ns } : {}),
      kind: doc.kind,
      effect: doc.effect,
      enforcement: doc.enforcement ?? 'enforce',
      mandatory: doc.mandatory ?? false,
      anchor: doc.anchor,
      localAnchor: draft.localAnchor,
      coreAnchor: draft.coreAnchor,
      selector: draft.selector,
      ...(when ? { when } : {}),
      ...(doc.flow ? { flow: [...doc.flow] } : {}),
      onError,
      onFire: [...(doc.on_fire ?? [])],
      overrides,
      requires: { profiles: [...(doc.requires?.profiles ?? [])], facts: [...(doc.requires?.facts ?? [])] },
      ...(draft.transform ? { transform: draft.transform } : {}),
      ...(doc.detector ? { detector: doc.detector.ref } : {}),
      copy: draft.copy,
      ...(draft.counterScope ? { counterScope: draft.counterScope } : {}),
      counterReads,
      references: draft.references,
      source: draft.source,
    });
  }

  pushAll(diagnostics, overrideCycles(rules, drafts));
  rules.sort(byEvaluationOrder);
  return { rules, diagnostics };
}

/**
 * A copy of a typed condition in which every `fire_count_of` / `breaker_count_of` argument is the
 * qualified identifier it resolves to ([OAR-FIRE-11]), so the run time needs no name resolution.
 */
export function resolveCounterTargets(e: TExpr, resolve: (name: string) => string): TExpr {
  const go = (x: TExpr): TExpr => resolveCounterTargets(x, resolve);
  switch (e.k) {
    case 'lit':
    case 'fact':
      return e;
    case 'call':
      if (e.target !== undefined) {
        const qid = resolve(e.target);
        return { ...e, target: qid, arg: { k: 'lit', ty: 'string', offset: e.arg.offset, value: qid } };
      }
      return { ...e, arg: go(e.arg) };
    case 'list':
      return { ...e, items: e.items.map(go) };
    case 'size':
      return { ...e, arg: go(e.arg) };
    case 'strfn':
      return { ...e, s: go(e.s), t: go(e.t) };
    case 'not':
    case 'neg':
      return { ...e, operand: go(e.operand) };
    case 'and':
    case 'or':
    case 'arith':
    case 'cmp':
    case 'in':
      return { ...e, left: go(e.left), right: go(e.right) };
    case 'index':
      return { ...e, object: go(e.object), index: go(e.index) };
    case 'cond':
      return { ...e, test: go(e.test), then: go(e.then), else: go(e.else) };
  }
}

/**
 * [OAR-EVAL-16]: reject a suppression cycle, naming the rules in it. Each group of rules that
 * reach one another through `overrides` (a strongly connected component) is one diagnostic naming
 * every member — two cycles sharing rules (A→B→C→A and A→D→C→A) name B and D alike — and one
 * cycle through them as an example.
 */
function overrideCycles(rules: readonly CheckedRule[], drafts: readonly { draft: RuleDraft; locate: Locator }[]): Diagnostic[] {
  const edges = new Map(rules.map((r) => [r.qid, r.overrides]));
  const locateOf = new Map(drafts.map((d) => [d.draft.qid, d.locate]));
  const out: Diagnostic[] = [];
  for (const members of stronglyConnected(edges)) {
    const first = members[0] as string;
    if (members.length === 1 && !(edges.get(first) ?? []).includes(first)) continue;
    const example = cycleThrough(first, new Set(members), edges).join(' -> ');
    const locate = locateOf.get(first);
    out.push(
      error('OAR-EVAL-16', `overrides form a cycle among ${members.join(', ')}: ${example}`, {
        token: first,
        path: ['overrides'],
        ...(locate ? { source: locate(['overrides']) } : {}),
      }),
    );
  }
  return out;
}

/**
 * Tarjan's strongly connected components, each sorted by code point, in the order of their first
 * members. Iterative, with explicit frames: a chain of thousands of overrides is a legal rule set
 * and must not exhaust the call stack ([OAR-EVAL-16] is checked at any size).
 */
function stronglyConnected(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  const frames: { q: string; next: number }[] = [];
  const enter = (q: string): void => {
    index.set(q, index.size);
    low.set(q, index.get(q) as number);
    stack.push(q);
    onStack.add(q);
    frames.push({ q, next: 0 });
  };
  for (const root of [...edges.keys()].sort(cpCompare)) {
    if (index.has(root)) continue;
    enter(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { q: string; next: number };
      const targets = edges.get(frame.q) ?? [];
      if (frame.next < targets.length) {
        const t = targets[frame.next++] as string;
        if (!edges.has(t)) continue; // unresolved: reported by its own check
        if (!index.has(t)) enter(t);
        else if (onStack.has(t)) low.set(frame.q, Math.min(low.get(frame.q) as number, index.get(t) as number));
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent !== undefined) low.set(parent.q, Math.min(low.get(parent.q) as number, low.get(frame.q) as number));
      if (low.get(frame.q) !== index.get(frame.q)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.q);
      components.push(component.sort(cpCompare));
    }
  }
  return components.sort((a, b) => cpCompare(a[0] as string, b[0] as string));
}

/** A shortest cycle from `start` back to itself through `within` (breadth-first). */
function cycleThrough(start: string, within: ReadonlySet<string>, edges: ReadonlyMap<string, readonly string[]>): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const q = queue[i] as string;
    for (const t of edges.get(q) ?? []) {
      if (t === start) {
        const path = [start];
        for (let at = q; at !== start; at = from.get(at) as string) path.splice(1, 0, at);
        return [...path, start];
      }
      if (within.has(t) && !from.has(t)) {
        from.set(t, q);
        queue.push(t);
      }
    }
  }
  return [start, start];
}
