/**
 * Which rules a pack change added, removed and changed, compared by qualified identifier
 * ([OAR-DOC-8]) on what the loader made of each rule — its checked form — not on its text. Layout,
 * quoting, comments, field order, flow or block style and the spelling of a condition's
 * whitespace all vanish in loading, so a reformatted pack (`oarc fmt`) compares equal; a changed
 * condition compares by its typed tree, so `a && b` against `(a) && b` is no change either.
 */
import type { LoadedPack } from '../compiler/index.js';
import type { SymbolEntry } from '../runtime/types.js';

type CheckedRule = LoadedPack['rules'][number];

export interface RuleChange {
  rule: string;
  /** The fields whose meaning differs, in the order the spec lists rule fields. */
  fields: string[];
}

export interface RuleDiff {
  added: string[];
  removed: string[];
  changed: RuleChange[];
  unchanged: number;
}

/** The fields compared, as the spec names them (`oarc fmt`'s order). */
const FIELDS: readonly [string, (r: CheckedRule, p: LoadedPack) => unknown][] = [
  ['kind', (r) => r.kind],
  ['anchor', (r) => r.localAnchor],
  ['selector', (r) => r.selector.map((c) => ({ fact: c.fact.name, values: [...c.values] }))],
  ['requires', (r) => ({ profiles: [...r.requires.profiles].sort(), facts: [...r.requires.facts].sort() })],
  ['detector', (r) => r.detector ?? null],
  ['counter_scope', (r) => r.counterScope?.name ?? null],
  ['flow', (r) => (r.flow === undefined ? null : [...r.flow])],
  ['when', (r, p) => (r.when === undefined ? null : canonical(r.when.typed, p.symbols))],
  ['effect', (r) => r.effect],
  ['transform', (r) => (r.transform === undefined ? null : { action: r.transform.action, replacement: r.transform.replacement, target: r.transform.target === 'content' ? 'content' : r.transform.target.name })],
  // The effective enforcement: a configuration document that switches a rule to monitor changes it too ([OAR-CFG-3]).
  ['enforcement', (r, p) => p.enforcement.get(r.qid) ?? r.enforcement],
  ['mandatory', (r) => r.mandatory],
  ['on_error', (r) => r.onError],
  ['on_fire', (r) => [...r.onFire]],
  ['overrides', (r) => [...r.overrides].sort()],
  ['copy', (r, p) => canonicalCopy(r.copy, p.symbols)],
];

/**
 * A value with everything that depends on the text rather than the meaning left out: source
 * offsets, and symbols (which carry slots) by name.
 */
function canonical(v: unknown, symbols: readonly SymbolEntry[]): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'number' && Object.is(v, -0)) return '-0';
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map((x) => canonical(x, symbols));
  const o = v as Record<string, unknown>;
  if ((o.kind === 'fact' || o.kind === 'function') && typeof o.slot === 'number' && typeof o.name === 'string') return `${o.kind}:${o.name}`;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) {
    if (k === 'offset') continue;
    out[k] = canonical(o[k], symbols);
  }
  return out;
}

/** Copy programs name facts by slot: by name here, so the comparison does not rest on slot order. */
function canonicalCopy(copy: CheckedRule['copy'], symbols: readonly SymbolEntry[]): unknown {
  const name = (slot: unknown) => (typeof slot === 'number' ? (symbols[slot]?.name ?? `#${slot}`) : slot);
  const part = (p: unknown): unknown => {
    if (typeof p === 'string') return p;
    const o = p as Record<string, unknown>;
    if ('test' in o) return { test: name(o.test), nonzero: (o.nonzero as unknown[]).map(part), zero: (o.zero as unknown[]).map(part) };
    return { slot: name(o.slot), type: o.type };
  };
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(copy).sort()) {
    // Adjacent literal parts are one literal: how the text was split is layout.
    const parts: unknown[] = [];
    for (const p of (copy as Record<string, unknown[]>)[k] ?? []) {
      const c = part(p);
      if (typeof c === 'string' && typeof parts[parts.length - 1] === 'string') parts[parts.length - 1] += c;
      else parts.push(c);
    }
    out[k] = parts;
  }
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function diffRules(old: LoadedPack, now: LoadedPack): RuleDiff {
  const before = new Map(old.rules.map((r) => [r.qid, r]));
  const after = new Map(now.rules.map((r) => [r.qid, r]));
  const added = [...after.keys()].filter((q) => !before.has(q)).sort();
  const removed = [...before.keys()].filter((q) => !after.has(q)).sort();
  const changed: RuleChange[] = [];
  let unchanged = 0;
  for (const [qid, a] of [...before].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    const b = after.get(qid);
    if (b === undefined) continue;
    const fields = FIELDS.filter(([, get]) => !same(get(a, old), get(b, now))).map(([name]) => name);
    if (fields.length > 0) changed.push({ rule: qid, fields });
    else unchanged++;
  }
  return { added, removed, changed, unchanged };
}
