/**
 * A tool result's `structuredContent` against its text: whether the text already carries it —
 * then the content buffer is the text alone, and a transform of the text is carried over to it —
 * or not, and it is a segment of the buffer of its own (result.ts).
 *
 * Servers give it in two shapes that repeat the text: the text is its JSON serialisation (the
 * MCP specification's advice), or its members are the text itself (the filesystem server's
 * `{content: text}`). Anything else in it — another string, a number, a boolean — is something
 * the client reads that the text did not show the rules.
 */
import { canonicalJson } from '../runtime/index.js';

/** Whether `text` carries all of `value`: its JSON, or every leaf of it is the text itself. */
export function textCarries(value: unknown, text: string): boolean {
  if (isJsonOf(text, value)) return true;
  // Iterative: a result nested deeper than the stack allows is read, not thrown on.
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v === 'object' && v !== null) {
      for (const m of Array.isArray(v) ? v : Object.values(v)) todo.push(m);
    } else if (v !== text) return false;
  }
  return true;
}

function isJsonOf(text: string, value: unknown): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  return sameJson(parsed, value);
}

/** `value` with the text it carries (`original`) replaced by `text`, or why it cannot be. */
export function rewriteStructured(value: unknown, original: string, text: string): { value: unknown } | string {
  // The text is the structured content serialised (the MCP specification's advice to servers).
  let parsed: unknown;
  try {
    parsed = JSON.parse(original);
  } catch {
    parsed = undefined;
  }
  if (parsed !== undefined && sameJson(parsed, value)) {
    try {
      return { value: JSON.parse(text) };
    } catch {
      return 'the transformed text is no longer the JSON of the result\'s structuredContent';
    }
  }
  // Or its string members carry the text itself; any other string was not in the buffer.
  let stray: string | undefined;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (v === original) return text;
      stray ??= v;
      return v;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, m]) => [k, walk(m)]));
    return v;
  };
  const rewritten = walk(value);
  if (stray !== undefined) return 'its structuredContent holds text outside the content the transform was decided on, which cannot be transformed faithfully [OAR-PROF-10]';
  return { value: rewritten };
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}
