/**
 * The canonical layout of JSON rule files: the canonical field order (order.ts) and two-space
 * indentation, one rule or a JSON array of rules ([OAR-DOC-31]). Integers beyond 2^53 are written
 * back exactly as read.
 */
import { parseSource } from '../compiler/load/source.js';
import { NESTED_FIELDS, RELATED_FIELDS, RULE_FIELDS, RULE_MARKER, canonicalOrder } from './order.js';
import type { FormatOutcome } from './yaml.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function reordered(o: Obj, order: readonly string[]): Obj {
  const keys = Object.keys(o);
  const out: Obj = {};
  for (const i of canonicalOrder(keys, order)) out[keys[i] as string] = o[keys[i] as string];
  return out;
}

function formatRule(rule: Obj): Obj {
  const out = reordered(rule, RULE_FIELDS);
  for (const [key, order] of Object.entries(NESTED_FIELDS)) if (isObject(out[key])) out[key] = reordered(out[key], order);
  if (Array.isArray(out.related)) out.related = out.related.map((r) => (isObject(r) ? reordered(r, RELATED_FIELDS) : r));
  return out;
}

const isRule = (v: unknown): v is Obj => isObject(v) && Object.hasOwn(v, RULE_MARKER);

/**
 * JSON text with two-space indentation, as `JSON.stringify(v, null, 2)` writes it, except that a
 * `bigint` (an integer the reader kept exact) is written as that integer.
 */
function stringify(v: unknown, at = ''): string {
  if (typeof v === 'bigint') return v.toString();
  const inner = `${at}  `;
  if (Array.isArray(v)) return v.length === 0 ? '[]' : `[\n${v.map((x) => inner + stringify(x, inner)).join(',\n')}\n${at}]`;
  if (isObject(v)) {
    const members = Object.entries(v).map(([k, x]) => `${inner}${JSON.stringify(k)}: ${stringify(x, inner)}`);
    return members.length === 0 ? '{}' : `{\n${members.join(',\n')}\n${at}}`;
  }
  return JSON.stringify(v);
}

export function formatJson(text: string, file: string): FormatOutcome {
  const r = parseSource(text, file, { bigInts: true, expandSequences: false, format: 'json' });
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) return { ok: false, problems: errors.map((d) => ({ line: d.source?.line ?? 1, column: d.source?.column ?? 1, message: d.message })) };
  const v = r.docs[0]?.value;
  if (isRule(v)) return { ok: true, text: `${stringify(formatRule(v))}\n`, rules: 1 };
  if (Array.isArray(v) && v.some(isRule)) return { ok: true, text: `${stringify(v.map((x) => (isRule(x) ? formatRule(x) : x)))}\n`, rules: v.filter(isRule).length };
  return { ok: true, text, rules: 0 };
}
