/**
 * The canonical layout of YAML rule documents, on the `yaml` package's document API so that
 * comments and blank lines travel with the fields they sit beside:
 *
 * - every rule's fields in the canonical order (order.ts), its `requires`, `transform`,
 *   `detector`, `copy` and `related` members too;
 * - `when` and every `copy` member single-quoted — conditions quote their string literals with
 *   `"`, so `'…'` needs no escaping in them — a value spanning lines as a literal block (`|`), and
 *   one holding a character a single-quoted scalar cannot carry double-quoted;
 * - two-space indentation, no line folding, flow collections left flow and block ones block;
 * - a multi-document stream stays one, a top-level sequence of rules stays one, and a document
 *   that is not a rule document is left exactly as written.
 */
import { isMap, isScalar, isSeq, parseAllDocuments, Scalar, type Document, type Pair, type YAMLMap } from 'yaml';
import { NESTED_FIELDS, RELATED_FIELDS, RULE_FIELDS, RULE_MARKER, canonicalOrder } from './order.js';

/** A text that cannot be formatted: it does not parse. `line` is 1-based. */
export interface FormatProblem {
  line: number;
  column: number;
  message: string;
}

export type FormatOutcome = { ok: true; text: string; rules: number } | { ok: false; problems: FormatProblem[] };

const TO_STRING = { indent: 2, lineWidth: 0, minContentWidth: 0 } as const;

/** Characters a single-quoted scalar cannot hold as themselves (YAML 1.2 §5.1, c-printable). */
const NOT_PRINTABLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u2028\u2029\uFEFF\uFFFE\uFFFF\r]/;

function keyOf(p: Pair): string | undefined {
  return isScalar(p.key) && typeof p.key.value === 'string' ? p.key.value : undefined;
}

/**
 * Reorder a mapping's pairs. A comment above the first pair is usually about the whole mapping
 * (the file's header above `oar:`), so it stays at the top when that pair moves down.
 */
function reorder(map: YAMLMap, order: readonly string[]): void {
  const keys = map.items.map((p) => keyOf(p as Pair) ?? '');
  const perm = canonicalOrder(keys, order);
  if (perm.every((p, i) => p === i)) return;
  const items = perm.map((i) => map.items[i] as Pair);
  const oldFirst = map.items[0] as Pair;
  const newFirst = items[0] as Pair;
  if (oldFirst !== newFirst && isScalar(oldFirst.key) && oldFirst.key.commentBefore && isScalar(newFirst.key)) {
    newFirst.key.commentBefore = [oldFirst.key.commentBefore, newFirst.key.commentBefore].filter(Boolean).join('\n');
    oldFirst.key.commentBefore = undefined;
    // The blank line that separated the header from the first field stays with the header.
    newFirst.key.spaceBefore = oldFirst.key.spaceBefore;
    oldFirst.key.spaceBefore = undefined;
  }
  map.items = items;
}

function quote(node: unknown): void {
  if (!isScalar(node) || typeof node.value !== 'string') return;
  const v = node.value;
  if (NOT_PRINTABLE.test(v)) node.type = Scalar.QUOTE_DOUBLE;
  else if (v.includes('\n')) node.type = Scalar.BLOCK_LITERAL;
  else node.type = Scalar.QUOTE_SINGLE;
}

function formatRule(rule: YAMLMap): void {
  reorder(rule, RULE_FIELDS);
  for (const pair of rule.items as Pair[]) {
    const key = keyOf(pair);
    if (key === undefined) continue;
    const nested = NESTED_FIELDS[key];
    if (nested && isMap(pair.value)) reorder(pair.value, nested);
    if (key === 'when') quote(pair.value);
    if (key === 'copy' && isMap(pair.value)) for (const m of pair.value.items as Pair[]) quote(m.value);
    if (key === 'related' && isSeq(pair.value)) for (const item of pair.value.items) if (isMap(item)) reorder(item, RELATED_FIELDS);
  }
}

const isRule = (node: unknown): node is YAMLMap => isMap(node) && node.items.some((p) => keyOf(p as Pair) === RULE_MARKER);

/** The rules of one parsed document: the document itself, or the rules of a top-level sequence. */
function rulesOf(doc: Document): YAMLMap[] {
  if (isRule(doc.contents)) return [doc.contents];
  if (isSeq(doc.contents)) return doc.contents.items.filter(isRule);
  return [];
}

/**
 * The yaml package's message as the loader words it (`YAML syntax error (CODE): …`), without the
 * ` at line 2, column 1:` and source excerpt it appends: the caller prints the position itself.
 */
function syntaxMessage(code: string, message: string): string {
  const first = (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?\s*$/, '').trim();
  return `YAML syntax error (${code}): ${first}`;
}

/** Format a YAML text holding rule documents. */
export function formatYaml(text: string): FormatOutcome {
  const docs = parseAllDocuments(text, { keepSourceTokens: false });
  // A stream parses to an empty list for an empty text, to an EmptyStream object otherwise.
  const list = Array.isArray(docs) ? docs : [];
  const problems: FormatProblem[] = [];
  for (const d of list) {
    for (const e of d.errors) problems.push({ line: e.linePos?.[0].line ?? 1, column: e.linePos?.[0].col ?? 1, message: syntaxMessage(e.code, e.message) });
  }
  if (problems.length > 0) return { ok: false, problems };
  const found = list.map(rulesOf);
  const rules = found.reduce((n, r) => n + r.length, 0);
  if (rules === 0) return { ok: true, text, rules: 0 }; // no rule document: left as written
  for (const r of found.flat()) formatRule(r);
  // Each document after the first keeps its `---`: `toString` writes it for them.
  return { ok: true, text: list.map((d) => d.toString(TO_STRING)).join(''), rules };
}
