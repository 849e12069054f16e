/**
 * Occurrence generation for `oarc fuzz`, type-directed from the capability and the pack
 * (model.ts): each case is a session — one to `maxLength` occurrences under one session id — so
 * counters, breakers and flow windows build up across it ([OAR-FIRE-5], [OAR-PROF-9]).
 *
 * Every value is one JSON can carry (strings, booleans, numbers, bigints for integers beyond
 * 2^53, arrays, objects): a case is written as a conformance fixture and sent to other engines as
 * JSON, and must mean the same thing there. Facts are present with a valid value, absent (the zero
 * of their type, [OAR-FACT-25]) or wrong-typed — an observation the consuming rule's `on_error`
 * handles ([OAR-FACT-26]); the host-input layer accepts those. A small share of occurrences is
 * one the host-input layer rejects (an undeclared fact name): every back end must refuse it alike.
 */
import { toolArgsFingerprint } from '../runtime/fingerprint.js';
import { isRaise } from '../runtime/raise.js';
import type { OccurrenceJson } from '../runtime/wire.js';
import type { FactType } from '../runtime/types.js';
import type { AnchorModel, FuzzModel, SuppliedSymbol } from './model.js';
import { CODE_UNIT_POOL, EDGE_INT_VALUES, I63, STRING_POOL } from './pools.js';
import type { Prng } from './prng.js';

/** One generated case: a session of occurrences, decided in order. */
export interface FuzzCase {
  occurrences: OccurrenceJson[];
}

export interface GenerateOptions {
  /** Longest session (default 6). */
  maxLength?: number;
  /** Share of occurrences the host-input layer must reject (default 0.02). */
  invalidShare?: number;
}

const EDGE_DOUBLES: readonly number[] = [0, 0.1, 0.5, -0.5, 1, -1, 1.5, 2 ** 53, 2 ** 53 + 2, 2 ** 63, -(2 ** 63), 1e308, -1e308, 5e-324, Number.MAX_VALUE];
const EXTRA_STRINGS: readonly string[] = ['e\u0301', '\u0301', '\u0000', '\uD83D', '\uDE00', '😀', '\u{10FFFF}', '\u200B'];

export function generateCase(model: FuzzModel, rng: Prng, opts: GenerateOptions = {}): FuzzCase {
  const length = rng.range(1, opts.maxLength ?? 6);
  const g = new Generator(model, rng, opts.invalidShare ?? 0.02);
  const occurrences: OccurrenceJson[] = [];
  for (let k = 0; k < length; k++) occurrences.push(g.occurrence(occurrences));
  return { occurrences };
}

class Generator {
  constructor(
    private readonly m: FuzzModel,
    private readonly rng: Prng,
    private readonly invalidShare: number,
  ) {}

  occurrence(before: readonly OccurrenceJson[]): OccurrenceJson {
    const { m, rng } = this;
    // Repeat an earlier occurrence of the session now and then: counters scoped by the call's
    // fingerprint only move when the same call comes again.
    if (before.length > 0 && rng.chance(0.25)) return structuredClone(rng.pick(before));
    const anchor = this.anchor();
    const occ: OccurrenceJson = { anchor: anchor.local };
    const toolish = anchor.core?.startsWith('tool.') === true || (m.toolProfile && anchor.reads.some((n) => n.startsWith('tool')));
    if (m.toolProfile && (toolish ? rng.chance(0.9) : rng.chance(0.1))) occ.tool_call = this.toolCall(before);
    if (anchor.readsContent ? rng.chance(0.85) : rng.chance(0.15)) occ.content = this.content();
    const facts: Record<string, unknown> = {};
    const wanted = new Set(anchor.reads);
    // Now and then a fact no rule at this anchor reads, so unused observations are seen to be inert.
    if (m.symbols.length > 0 && rng.chance(0.2)) wanted.add(rng.pick(m.symbols).name);
    for (const name of [...wanted].sort()) {
      const sym = m.byName.get(name);
      if (sym === undefined) continue;
      // What oarc derives from the tool call or content is mostly left to it; now and then it is
      // given explicitly, beside a tool_call too, and then wins under its own name ([OAR-CONF-40]).
      if (sym.derived && !rng.chance(0.1)) continue;
      if (!rng.chance(0.8)) continue; // absent: the zero of its type
      facts[name] = rng.chance(0.06) ? this.wrong(sym.type) : this.value(sym, occ);
    }
    if (rng.chance(this.invalidShare) && m.declared.length > 0) {
      // An undeclared name, one edit from a declared one: the host-input layer refuses it.
      const near = rng.pick(m.declared);
      facts[`${near}_x`] = 1;
    }
    if (Object.keys(facts).length > 0 || rng.chance(0.1)) occ.facts = facts;
    if (m.detectorFixture && rng.chance(0.7)) occ.detector_facts = this.detectorFacts(occ);
    if (m.toolProfile && rng.chance(0.08)) {
      const n = rng.int(4);
      occ.recent_activity = Array.from({ length: n }, () => this.toolName());
    }
    return occ;
  }

  private anchor(): AnchorModel {
    const { m, rng } = this;
    if (m.ruled.length > 0 && (m.others.length === 0 || rng.chance(0.95))) return rng.pick(m.ruled);
    const local = m.others.length > 0 ? rng.pick(m.others) : (m.preInvoke ?? 'tool.pre_invoke');
    return { local, core: undefined, reads: [], readsContent: false };
  }

  private toolName(): string {
    const { m, rng } = this;
    if (m.toolNames.length > 0 && rng.chance(0.85)) return rng.pick(m.toolNames);
    return rng.pick(['other', 'bash', 'read', 'a', '😀', 'x\u0301']);
  }

  private toolCall(before: readonly OccurrenceJson[]): { name: string; arguments?: Record<string, unknown> } {
    const { m, rng } = this;
    const earlier = before.filter((o) => o.tool_call !== undefined);
    if (earlier.length > 0 && rng.chance(0.3)) return structuredClone(rng.pick(earlier).tool_call as { name: string; arguments?: Record<string, unknown> });
    const name = this.toolName();
    if (rng.chance(0.1)) return { name };
    const args: Record<string, unknown> = {};
    for (const [arg, type] of [...m.toolArgs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (!rng.chance(0.75)) continue;
      const near = m.near.get(`arg:${arg}`) ?? [];
      if (rng.chance(0.05)) args[arg] = this.wrong(type === 'any' ? 'string' : type);
      else if (type === 'any') args[arg] = rng.chance(0.7) ? this.string(near) : this.jsonAny(2);
      else args[arg] = this.scalar(type, near);
    }
    if (rng.chance(0.15)) args[this.string([])] = this.jsonAny(2);
    return { name, arguments: args };
  }

  private content(): string {
    const { rng } = this;
    const parts: string[] = [];
    const n = rng.range(0, 4);
    for (let k = 0; k < n; k++) parts.push(rng.chance(0.6) ? this.string([]) : rng.pick([' ', '. ', '\n', '']));
    return parts.join('');
  }

  /** A valid value of the symbol's type, biased towards what the rules compare it with. */
  value(sym: SuppliedSymbol, occ: OccurrenceJson): unknown {
    const near = this.m.near.get(sym.name) ?? [];
    if (sym.type === 'list<map>' && this.m.spanTargets.has(sym.name)) return this.spans(occ.content);
    if (sym.name === 'tool_args_fingerprint' && occ.tool_call !== undefined && this.rng.chance(0.8)) {
      // Arguments with no canonical form (an integer beyond binary64's exact range, which this
      // generator writes on purpose) have no fingerprint to supply: the fact gets a typed value.
      try {
        return toolArgsFingerprint(occ.tool_call.name, occ.tool_call.arguments ?? {});
      } catch (e) {
        if (!isRaise(e)) throw e;
      }
    }
    return this.typed(sym.type, near, 2);
  }

  private typed(type: FactType, near: readonly unknown[], depth: number): unknown {
    const { rng } = this;
    switch (type) {
      case 'bool':
      case 'int':
      case 'double':
      case 'string':
        return this.scalar(type, near);
      case 'list<string>': {
        const n = rng.int(4);
        return Array.from({ length: n }, () => this.string(near));
      }
      case 'map<string,string>':
        return this.object(() => this.string(near));
      case 'map':
        return this.object(() => this.jsonAny(depth - 1));
      case 'list<map>': {
        const n = rng.int(3);
        return Array.from({ length: n }, () => this.object(() => this.jsonAny(depth - 1)));
      }
    }
  }

  private scalar(type: 'bool' | 'int' | 'double' | 'string', near: readonly unknown[]): unknown {
    const { rng } = this;
    switch (type) {
      case 'bool':
        return near.length > 0 && rng.chance(0.3) ? !(near.find((v) => typeof v === 'boolean') ?? false) : rng.chance(0.5);
      case 'int':
        return this.int(near);
      case 'double':
        return this.double(near);
      case 'string':
        return this.string(near);
    }
  }

  /** Boundary ints: around every mined constant (c − 1, c, c + 1), ±2^53, the int64 range. */
  private int(near: readonly unknown[]): bigint | number {
    const { m, rng } = this;
    const local = near.filter((v): v is bigint => typeof v === 'bigint');
    const base = rng.weighted<() => bigint>([
      [4, () => (local.length > 0 ? rng.pick(local) : rng.pick(EDGE_INT_VALUES))],
      [3, () => (m.ints.length > 0 ? rng.pick(m.ints) : BigInt(rng.range(-3, 20)))],
      [2, () => rng.pick(EDGE_INT_VALUES)],
      [2, () => BigInt(rng.range(-3, 20))],
    ])();
    let v = base + BigInt(rng.pick([-1, 0, 0, 1]));
    // Keep mostly within int64: just beyond it is tried through EDGE_INT_VALUES.
    if (v >= I63 + 1n || v < -I63 - 1n) v = base;
    return toJsonInt(v);
  }

  private double(near: readonly unknown[]): number {
    const { m, rng } = this;
    const local = near.filter((v): v is number => typeof v === 'number');
    const base = rng.weighted<() => number>([
      [3, () => (local.length > 0 ? rng.pick(local) : rng.pick(EDGE_DOUBLES))],
      [3, () => (m.doubles.length > 0 ? rng.pick(m.doubles) : rng.pick(EDGE_DOUBLES))],
      [2, () => rng.pick(EDGE_DOUBLES)],
      [1, () => rng.range(-20, 20) / 4],
    ])();
    const v = rng.weighted<number>([
      [4, base],
      [1, base + 0.5],
      [1, base - 0.5],
      [1, base * 2],
    ]);
    // -0 has no JSON spelling of its own; a case must mean what its JSON says.
    return Number.isFinite(v) ? (Object.is(v, -0) ? 0 : v) : base;
  }

  /** Mined strings and variations of them, code-point edge strings, short random strings. */
  string(near: readonly unknown[]): string {
    const { m, rng } = this;
    const local = near.filter((v): v is string => typeof v === 'string');
    const base = rng.weighted<() => string>([
      [4, () => (local.length > 0 ? rng.pick(local) : m.strings.length > 0 ? rng.pick(m.strings) : rng.pick(STRING_POOL))],
      [3, () => (m.strings.length > 0 ? rng.pick(m.strings) : rng.pick(STRING_POOL))],
      [2, () => rng.pick(STRING_POOL)],
      [1, () => rng.pick(EXTRA_STRINGS)],
      [1, () => Array.from({ length: rng.int(4) }, () => rng.pick(CODE_UNIT_POOL)).join('')],
    ])();
    return rng.weighted<() => string>([
      [6, () => base],
      [1, () => base + rng.pick(['x', ' ', '/', '\u0301', '\u0000', '😀'])],
      [1, () => rng.pick(['x', ' ', '/', '\uD83D', '../']) + base],
      [1, () => [...base].slice(0, -1).join('')],
      [1, () => base.toUpperCase()],
      [1, () => `${base} ${rng.pick(m.strings.length > 0 ? m.strings : STRING_POOL)}`],
    ])();
  }

  private object(member: () => unknown): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const n = this.rng.int(4);
    for (let k = 0; k < n; k++) out[this.string([])] = member();
    return out;
  }

  private jsonAny(depth: number): unknown {
    const { rng } = this;
    return rng.weighted<() => unknown>([
      [4, () => this.string([])],
      [2, () => this.int([])],
      [1, () => rng.chance(0.5)],
      [1, () => this.double([])],
      [1, () => null],
      [depth > 0 ? 1 : 0, () => [this.string([])]],
      [depth > 0 ? 1 : 0, () => this.object(() => this.jsonAny(depth - 1))],
    ])();
  }

  /** Spans over the content (code-point offsets), overlapping, empty, out of range, reversed. */
  private spans(content: string | undefined): Record<string, unknown>[] {
    const { rng } = this;
    const len = content === undefined ? 0 : [...content].length;
    const n = rng.int(4);
    const out: Record<string, unknown>[] = [];
    for (let k = 0; k < n; k++) {
      const start = rng.range(0, len + 1);
      const end = rng.weighted<number>([
        [6, rng.range(start, len + 1)],
        [1, start],
        [1, Math.max(0, start - 1)],
        [1, len + 3],
      ]);
      const span: Record<string, unknown> = { start, end };
      if (rng.chance(0.05)) delete span.end;
      if (rng.chance(0.05)) span.start = rng.pick<unknown>([-1, '1', 1.5]);
      if (rng.chance(0.3)) span.kind = rng.pick(['api_key', 'email', '']);
      out.push(span);
    }
    return out;
  }

  private detectorFacts(occ: OccurrenceJson): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const sym of this.m.symbols) {
      if (sym.kind !== 'fact' || sym.derived || !this.rng.chance(0.3)) continue;
      out[sym.name] = this.rng.chance(0.06) ? this.wrong(sym.type) : this.value(sym, occ);
    }
    return out;
  }

  /** A value of another type than `type` ([OAR-FACT-23], [OAR-FACT-26]). */
  wrong(type: FactType): unknown {
    const { rng } = this;
    switch (type) {
      case 'bool':
        return rng.pick<unknown>([0, 1, 'true', '', null, []]);
      case 'int':
        return rng.pick<unknown>(['5', '', 1.5, -0.5, 2n ** 64n, -(2n ** 64n), I63, -I63 - 1n, true, null, [1]]);
      case 'double':
        return rng.pick<unknown>(['1.5', '', true, null, 2n ** 1024n, [1.5]]);
      case 'string':
        return rng.pick<unknown>([5, 0, true, null, ['a'], {}]);
      case 'list<string>':
        return rng.pick<unknown>(['abc', '', 5, null, {}, [1], ['a', 2], [null], [['a']]]);
      case 'list<map>':
        return rng.pick<unknown>(['abc', 5, null, {}, [null], [[]], ['a'], [{}, 1]]);
      case 'map':
        return rng.pick<unknown>(['abc', 5, null, [], ['a'], true]);
      case 'map<string,string>':
        return rng.pick<unknown>(['abc', 5, null, [], { a: 1 }, { a: 'x', b: null }, { k: ['x'] }]);
    }
  }
}

/** An int as the JSON reader gives it back: a number within ±(2^53 − 1), a bigint beyond. */
export function toJsonInt(v: bigint): bigint | number {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}
