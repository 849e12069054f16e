/**
 * Occurrences for `oarc diff`, generated from the packs and the capability: seeded and
 * deterministic (the same packs and seed give the same cases, in the same order), and
 * type-directed — every value has the type its fact or tool argument is read as, with the
 * constants the packs' conditions and selectors compare against, the values around them, and facts
 * present or absent.
 *
 * This generator is deliberately self-contained (it needs only the loaded packs): `oarc fuzz` has
 * its own, and the two are meant to be unified later.
 */
import type { LoadedPack } from '../compiler/index.js';
import type { OccurrenceJson } from '../runtime/index.js';
import type { TExpr } from '../compiler/expr/index.js';
import type { FactType } from '../runtime/types.js';

type CheckedRule = LoadedPack['rules'][number];

/** One generated case: a session of occurrences, decided in order. */
export type Case = OccurrenceJson[];

/** Facts the engine derives from the tool call, the content or its own state: not written in `facts`. */
const DERIVED = new Set([
  'anchor', 'fire_count', 'breaker_count', 'fire_count_of', 'breaker_count_of',
  'tool', 'tool_args', 'tool_args_fingerprint', 'tool_arg_string', 'tool_arg_int', 'tool_arg_bool',
  'content_length', 'content_contains_untrusted', 'content_segment_count',
]);

const INT_EDGES = [0n, 1n, -1n, 2n ** 31n - 1n, -(2n ** 31n), 2n ** 53n - 1n, -(2n ** 53n - 1n), 2n ** 63n - 1n, -(2n ** 63n)];

/** What the packs read and compare against. */
export interface Mined {
  anchors: string[];
  /** Anchors whose occurrences carry a tool call / content. */
  toolAnchors: Set<string>;
  contentAnchors: Set<string>;
  strings: string[];
  ints: bigint[];
  doubles: number[];
  tools: string[];
  /** Tool arguments the conditions read, with the type they are read as. */
  args: Map<string, 'string' | 'int' | 'bool' | 'any'>;
  /** Facts (and observation functions, by result type) a condition, selector or copy reads. */
  facts: Map<string, FactType>;
  detectorFacts: Map<string, FactType>;
}

function walk(e: TExpr, m: Mined): void {
  switch (e.k) {
    case 'lit':
      if (typeof e.value === 'string') m.strings.push(e.value);
      else if (typeof e.value === 'bigint') m.ints.push(e.value);
      else if (typeof e.value === 'number') m.doubles.push(e.value);
      return;
    case 'list':
      for (const x of e.items) walk(x, m);
      return;
    case 'fact':
      if (!DERIVED.has(e.sym.name)) m.facts.set(e.sym.name, e.sym.type);
      return;
    case 'call': {
      const name = e.sym.name;
      if (name.startsWith('tool_arg_') && e.arg.k === 'lit' && typeof e.arg.value === 'string') {
        const t = name === 'tool_arg_int' ? 'int' : name === 'tool_arg_bool' ? 'bool' : 'string';
        const prev = m.args.get(e.arg.value);
        m.args.set(e.arg.value, prev === undefined || prev === t ? t : 'any');
      } else if (!DERIVED.has(name)) m.facts.set(name, e.sym.result);
      walk(e.arg, m);
      return;
    }
    case 'size':
      walk(e.arg, m);
      return;
    case 'strfn':
      walk(e.s, m);
      walk(e.t, m);
      return;
    case 'not':
    case 'neg':
      walk(e.operand, m);
      return;
    case 'and':
    case 'or':
    case 'arith':
    case 'cmp':
      walk(e.left, m);
      walk(e.right, m);
      return;
    case 'in':
      // `"path" in tool_args`: the name of an argument.
      if (e.right.k === 'fact' && e.right.sym.name === 'tool_args' && e.left.k === 'lit' && typeof e.left.value === 'string' && !m.args.has(e.left.value)) m.args.set(e.left.value, 'any');
      walk(e.left, m);
      walk(e.right, m);
      return;
    case 'index':
      if (e.object.k === 'fact' && e.object.sym.name === 'tool_args' && e.index.k === 'lit' && typeof e.index.value === 'string' && !m.args.has(e.index.value)) m.args.set(e.index.value, 'any');
      walk(e.object, m);
      walk(e.index, m);
      return;
    case 'cond':
      walk(e.test, m);
      walk(e.then, m);
      walk(e.else, m);
      return;
  }
}

export function mine(packs: readonly LoadedPack[]): Mined {
  const m: Mined = { anchors: [], toolAnchors: new Set(), contentAnchors: new Set(), strings: [], ints: [], doubles: [], tools: [], args: new Map(), facts: new Map(), detectorFacts: new Map() };
  const anchors = new Set<string>();
  for (const p of packs) {
    const core = new Map([...p.capability.coreAnchors].map(([c, l]) => [l, c]));
    for (const r of p.rules) {
      anchors.add(r.localAnchor);
      const c = core.get(r.localAnchor);
      if (c === undefined || c.startsWith('tool.')) m.toolAnchors.add(r.localAnchor);
      if (c === undefined || c.startsWith('model.') || r.transform?.target === 'content') m.contentAnchors.add(r.localAnchor);
      mineRule(r, p, m);
    }
  }
  m.anchors = [...anchors].sort();
  m.strings = [...new Set(m.strings)].sort();
  m.ints = [...new Set(m.ints)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  m.doubles = [...new Set(m.doubles)].sort((a, b) => a - b);
  m.tools = [...new Set(m.tools)].sort();
  return m;
}

function mineRule(r: CheckedRule, p: LoadedPack, m: Mined): void {
  for (const c of r.selector) {
    if (c.fact.name === 'tool') m.tools.push(...c.values);
    else if (!DERIVED.has(c.fact.name)) m.facts.set(c.fact.name, c.fact.type);
    m.strings.push(...c.values);
  }
  if (r.when !== undefined) {
    const before = new Set(m.facts.keys());
    walk(r.when.typed, m);
    // What a detector rule reads beyond the host's facts is what its detector reports.
    if (r.detector === 'detector://fixture') for (const k of m.facts.keys()) if (!before.has(k)) m.detectorFacts.set(k, m.facts.get(k) as FactType);
  }
  if (r.counterScope !== undefined && !DERIVED.has(r.counterScope.name)) m.facts.set(r.counterScope.name, r.counterScope.type);
  if (r.transform !== undefined && r.transform.target !== 'content') m.facts.set(r.transform.target.name, r.transform.target.type);
  for (const member of Object.values(r.copy)) {
    for (const part of member ?? []) {
      if (typeof part !== 'string' && 'slot' in part) {
        const s = p.symbols[part.slot];
        if (s !== undefined && s.kind === 'fact' && !DERIVED.has(s.name)) m.facts.set(s.name, s.type);
      }
    }
  }
}

/** mulberry32: small, fast and the same on every platform. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Generator {
  private readonly rand: () => number;
  private readonly stringPool: string[];
  private readonly intPool: bigint[];
  private readonly doublePool: number[];

  constructor(private readonly m: Mined, seed: number) {
    this.rand = prng(seed);
    // Each constant, and the strings around it: a prefix, a suffix, inside other text, one short.
    const s = new Set<string>(['', 'x', 'é', '\u{1F600}']);
    for (const c of m.strings) {
      s.add(c);
      s.add(`${c}/x`);
      s.add(`x ${c} y`);
      if (c.length > 1) s.add(c.slice(0, -1));
      s.add(c.toUpperCase());
    }
    this.stringPool = [...s];
    const ints = new Set<bigint>(INT_EDGES);
    for (const i of m.ints) for (const d of [-1n, 0n, 1n]) ints.add(i + d);
    this.intPool = [...ints];
    const doubles = new Set<number>([0, 0.5, 1, -1, 1e308]);
    for (const d of m.doubles) for (const x of [d, d - 0.01, d + 0.01, Math.round(d)]) doubles.add(x);
    for (const i of m.ints) if (i >= -(2n ** 53n) && i <= 2n ** 53n) doubles.add(Number(i));
    this.doublePool = [...doubles];
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand() * xs.length)] as T;
  }

  private chance(p: number): boolean {
    return this.rand() < p;
  }

  private string(): string {
    // Mostly one pooled value, sometimes two joined: "rm -rf" inside a longer command.
    return this.chance(0.25) ? `${this.pick(this.stringPool)} ${this.pick(this.stringPool)}` : this.pick(this.stringPool);
  }

  private int(): bigint {
    return this.pick(this.intPool);
  }

  private value(type: FactType): unknown {
    switch (type) {
      case 'bool':
        return this.chance(0.5);
      case 'int':
        return this.int();
      case 'double':
        return this.pick(this.doublePool);
      case 'string':
        return this.string();
      case 'list<string>':
        return Array.from({ length: Math.floor(this.rand() * 3) }, () => this.string());
      case 'map<string,string>':
      case 'map': {
        const o: Record<string, unknown> = {};
        for (let i = Math.floor(this.rand() * 3); i > 0; i--) o[this.string()] = this.string();
        return o;
      }
      case 'list<map>':
        // Spans for a transform target: start/end inside a short content ([OAR-OPS-14]).
        return this.chance(0.5) ? [] : [{ start: 0n, end: BigInt(1 + Math.floor(this.rand() * 4)) }];
    }
  }

  private argument(t: 'string' | 'int' | 'bool' | 'any'): unknown {
    if (t === 'any' || this.chance(0.05)) return this.pick([() => this.string(), () => this.int(), () => this.chance(0.5)])();
    return t === 'int' ? this.int() : t === 'bool' ? this.chance(0.5) : this.string();
  }

  occurrence(): OccurrenceJson {
    const m = this.m;
    const anchor = this.pick(m.anchors);
    const occ: OccurrenceJson = { anchor };
    if (m.toolAnchors.has(anchor) && this.chance(0.95)) {
      const name = m.tools.length > 0 && this.chance(0.8) ? this.pick(m.tools) : this.pick(['other', ...m.strings.filter((s) => s !== '')]);
      const args: Record<string, unknown> = {};
      for (const [k, t] of m.args) if (this.chance(0.7)) args[k] = this.argument(t);
      occ.tool_call = Object.keys(args).length === 0 && this.chance(0.3) ? { name } : { name, arguments: args };
    }
    if (m.contentAnchors.has(anchor) && this.chance(0.9)) occ.content = this.string();
    const facts: Record<string, unknown> = {};
    for (const [k, t] of m.facts) if (this.chance(0.6)) facts[k] = this.value(t);
    if (Object.keys(facts).length > 0) occ.facts = facts;
    const detectorFacts: Record<string, unknown> = {};
    for (const [k, t] of m.detectorFacts) if (this.chance(0.5)) detectorFacts[k] = this.value(t);
    if (Object.keys(detectorFacts).length > 0) occ.detector_facts = detectorFacts;
    if (m.tools.length > 0 && this.chance(0.2)) occ.recent_activity = Array.from({ length: 1 + Math.floor(this.rand() * 3) }, () => this.pick(m.tools));
    return occ;
  }

  /**
   * A case: mostly one occurrence; a third of the time a short session, often the same occurrence
   * again (what counters and repeat rules react to).
   */
  next(): Case {
    const first = this.occurrence();
    if (!this.chance(0.33)) return [first];
    const out = [first];
    for (let i = 1 + Math.floor(this.rand() * 3); i > 0; i--) out.push(this.chance(0.6) ? structuredClone(first) : this.occurrence());
    return out;
  }
}
