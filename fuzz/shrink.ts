/**
 * Shrinking a case that shows a difference: greedy, deterministic, and bounded. Each step tries,
 * in order, to drop an occurrence; to drop a member of an occurrence, a fact, a tool argument, a
 * list item or a map entry; and to simplify a value (a string to '' or half of it or one code
 * point shorter, an int towards 0, `true` to `false`). The first variant that still shows a
 * difference is kept and the search starts over; it ends when no variant does, or when the budget
 * of runs is spent (the case is then as small as it got).
 */
import type { OccurrenceJson } from '../runtime/wire.js';
import type { FuzzCase } from './generate.js';

type Path = (string | number)[];

/** Members an occurrence needs as they are: its anchor, its session, the tool call's name. */
function frozen(path: Path): boolean {
  const last = path[path.length - 1];
  if (path.length === 2 && (last === 'anchor' || last === 'session_id')) return true;
  return path.length === 3 && path[1] === 'tool_call' && last === 'name';
}

export interface ShrinkResult {
  case: FuzzCase;
  runs: number;
  steps: number;
}

export async function shrinkCase(start: FuzzCase, fails: (c: FuzzCase) => Promise<boolean>, budget: number): Promise<ShrinkResult> {
  let current = start;
  let runs = 0;
  let steps = 0;
  for (;;) {
    let improved = false;
    for (const candidate of variants(current)) {
      if (runs >= budget) return { case: current, runs, steps };
      runs++;
      if (await fails(candidate)) {
        current = candidate;
        steps++;
        improved = true;
        break;
      }
    }
    if (!improved) return { case: current, runs, steps };
  }
}

function* variants(c: FuzzCase): Generator<FuzzCase> {
  const occs = c.occurrences;
  // Fewer occurrences first: the last ones are the likeliest to be irrelevant to an earlier difference.
  if (occs.length > 1) for (let i = occs.length - 1; i >= 0; i--) yield { occurrences: occs.filter((_, k) => k !== i) };
  const paths: Path[] = [];
  occs.forEach((o, i) => collect(o, [i], paths));
  // Deletions before simplifications, shallow paths before deep ones.
  for (const p of paths) {
    if (frozen(p)) continue;
    const d = withDeleted(occs, p);
    if (d !== undefined) yield { occurrences: d };
  }
  for (const p of paths) {
    if (frozen(p)) continue;
    for (const v of simpler(valueAt(occs, p))) yield { occurrences: withValue(occs, p, v) };
  }
}

function collect(v: unknown, path: Path, out: Path[]): void {
  if (path.length > 1) out.push(path);
  if (Array.isArray(v)) v.forEach((x, i) => collect(x, [...path, i], out));
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) collect((v as Record<string, unknown>)[k], [...path, k], out);
}

function valueAt(root: unknown, path: Path): unknown {
  let v = root;
  for (const k of path) v = (v as Record<string | number, unknown>)[k];
  return v;
}

function withDeleted(occs: readonly OccurrenceJson[], path: Path): OccurrenceJson[] | undefined {
  const copy = structuredClone(occs) as OccurrenceJson[];
  const parent = valueAt(copy, path.slice(0, -1));
  const key = path[path.length - 1] as string | number;
  if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete (parent as Record<string, unknown>)[key];
  return copy;
}

function withValue(occs: readonly OccurrenceJson[], path: Path, value: unknown): OccurrenceJson[] {
  const copy = structuredClone(occs) as OccurrenceJson[];
  const parent = valueAt(copy, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1] as string | number] = value;
  return copy;
}

function simpler(v: unknown): unknown[] {
  if (typeof v === 'string') {
    const cps = [...v];
    if (cps.length === 0) return [];
    const out: string[] = [''];
    if (cps.length > 2) out.push(cps.slice(0, Math.ceil(cps.length / 2)).join(''), cps.slice(Math.floor(cps.length / 2)).join(''));
    if (cps.length > 1) out.push(cps.slice(0, -1).join(''), cps.slice(1).join(''));
    return [...new Set(out)].filter((s) => s !== v);
  }
  if (typeof v === 'bigint') {
    if (v === 0n) return [];
    const half = v / 2n;
    const safe = (x: bigint) => (x <= BigInt(Number.MAX_SAFE_INTEGER) && x >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(x) : x);
    return [0, safe(half), safe(v > 0n ? v - 1n : v + 1n)];
  }
  if (typeof v === 'number') {
    if (v === 0) return [];
    const out = [0, Number.isInteger(v) ? Math.trunc(v / 2) : Math.trunc(v), Number.isInteger(v) ? v - Math.sign(v) : Math.round(v)];
    return [...new Set(out)].filter((x) => x !== v && Number.isFinite(x));
  }
  if (v === true) return [false];
  return [];
}
