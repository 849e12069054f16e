/**
 * Comparing what the back ends answered for one case, occurrence by occurrence, on the wire form:
 * the decision, its identifiers and copy, advisories, transforms and content, skipped spans, the
 * applied-rules trace, side-effects, events and counters — every member `decisionToJson` writes.
 *
 * In-process back ends must agree exactly, error messages in the trace included (they run the
 * same runtime). Against an external engine two things are an implementation's own words and are
 * not compared: the `message` (and `clause`) of a trace entry's `error` — only its `code` is — and
 * the message of a refused occurrence: it is enough that both refused it.
 */
import type { Answer } from './backends.js';
import { toJsonText } from './json.js';

export interface Difference {
  /** Index of the first occurrence answered differently. */
  index: number;
  /** The decision members that differ (`decision`, `applied`, …), or `refusal`. */
  members: string[];
  left: { backend: string; answer: Answer };
  right: { backend: string; answer: Answer };
}

/** Reduce an answer to what is compared; `loose` for an external engine. */
export function comparable(a: Answer, loose: boolean): unknown {
  if ('error' in a) return loose ? { error: true } : { error: { kind: a.error.kind, message: a.error.message, path: a.error.path ?? [] } };
  if (!loose) return a.decision;
  const d = a.decision as unknown as Record<string, unknown>;
  const applied = Array.isArray(d.applied)
    ? d.applied.map((e: Record<string, unknown>) => (e !== null && typeof e === 'object' && e.error !== undefined ? { ...e, error: { code: (e.error as Record<string, unknown>)?.code } } : e))
    : d.applied;
  return { ...d, applied };
}

/** The first difference between two back ends' answers to one case, or undefined. */
export function firstDifference(leftName: string, left: readonly Answer[], rightName: string, right: readonly Answer[], loose: boolean): Difference | undefined {
  const n = Math.max(left.length, right.length);
  for (let i = 0; i < n; i++) {
    const a = left[i];
    const b = right[i];
    if (a === undefined || b === undefined) return { index: i, members: ['answer'], left: { backend: leftName, answer: a ?? missing() }, right: { backend: rightName, answer: b ?? missing() } };
    const ca = comparable(a, loose);
    const cb = comparable(b, loose);
    if (toJsonText(ca, true) === toJsonText(cb, true)) continue;
    return { index: i, members: differingMembers(ca, cb), left: { backend: leftName, answer: a }, right: { backend: rightName, answer: b } };
  }
  return undefined;
}

function missing(): Answer {
  return { error: { kind: 'protocol', message: 'no answer' } };
}

function differingMembers(a: unknown, b: unknown): string[] {
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  if ('error' in ao || 'error' in bo) return ['refusal'];
  const keys = [...new Set([...Object.keys(ao), ...Object.keys(bo)])].sort();
  return keys.filter((k) => toJsonText(ao[k], true) !== toJsonText(bo[k], true));
}
