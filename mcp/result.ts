/**
 * Tool results as the proxy reads and rewrites them. The *content buffer* of a result — what a
 * rule at the result anchors reads as `content` — is its textual segments in order: every `text`
 * item and the `text` of every embedded `resource` item, joined by a newline. Images, audio,
 * blobs and resource links are not text and pass untouched.
 *
 * A result is rewritten only when a decision requires it; otherwise the server's own message goes
 * to the client as the SDK parsed it (written again as JSON, as every message but an allowed
 * tools/call is).
 */
import type { Decision } from '../runtime/index.js';

/** What the proxy reads of a decision; a `Decision` and its JSON form both have it. */
export type Decided = Pick<Decision, 'decision' | 'rule' | 'copy' | 'advisories'>;
import { canonicalJson } from '../runtime/index.js';

/** A `tools/call` result, loosely: only the members the proxy reads or writes are typed. */
export interface ToolResult {
  content?: ContentItem[];
  structuredContent?: unknown;
  isError?: boolean;
  [member: string]: unknown;
}

export type ContentItem = { type: string; text?: unknown; resource?: { text?: unknown; [m: string]: unknown }; [m: string]: unknown };

const isText = (c: ContentItem): boolean => c.type === 'text' && typeof c.text === 'string';
const isResourceText = (c: ContentItem): boolean => c.type === 'resource' && typeof c.resource === 'object' && c.resource !== null && typeof c.resource.text === 'string';
const isTextual = (c: ContentItem): boolean => isText(c) || isResourceText(c);

export const SEGMENT_SEPARATOR = '\n';

/** The content buffer of a result ([OAR-OPS-8]: the whole result, once, never piecemeal). */
export function resultText(result: ToolResult): string {
  const items = Array.isArray(result.content) ? result.content : [];
  return items
    .filter(isTextual)
    .map((c) => (isText(c) ? (c.text as string) : (c.resource?.text as string)))
    .join(SEGMENT_SEPARATOR);
}

/** The text a client's model reads for a rendered copy: one line per member, in the spec's order. */
export function copyText(heading: string, copy: Readonly<Record<string, string>> | null): string {
  const lines = [heading];
  const c = copy ?? {};
  if (c.title) lines.push(c.title);
  if (c.what) lines.push(c.what);
  for (const [member, label] of [['cause', 'Cause'], ['why', 'Why'], ['fix', 'Fix'], ['instead', 'Instead']] as const) {
    const v = c[member];
    if (v) lines.push(`${label}: ${v}`);
  }
  return lines.join('\n');
}

/**
 * What a block sends back in place of the call or the result: a tool error result ([MCP: tool
 * errors are results with `isError`, so the model sees them]) carrying the rule's rendered copy
 * ([OAR-COPY-1]). Nothing of the server's result survives it ([OAR-PROF-10]: withheld).
 */
export function blockedResult(d: Decided, where: 'call' | 'result'): ToolResult {
  const heading = `[oarc] ${where === 'call' ? 'Tool call blocked' : 'Tool result withheld'} by rule ${d.rule ?? '(unnamed)'}.`;
  return { content: [{ type: 'text', text: copyText(heading, d.copy) }], isError: true };
}

/** A failure to deliver a transform faithfully: the proxy withholds rather than leak ([OAR-PROF-10]). */
export function withheldResult(reason: string, what: 'call' | 'result' = 'result'): ToolResult {
  return { content: [{ type: 'text', text: `[oarc] ${what === 'call' ? 'Tool call refused' : 'Tool result withheld'}: ${reason}` }], isError: true };
}

/**
 * The advisories of a nudge or warn decision ([OAR-EVAL-20]), as extra text items appended to the
 * result's content: the model reads the tool result, so it reads these with it, each after the
 * server's own items, prefixed so it cannot be mistaken for the tool's output.
 */
export function advisoryItems(d: Decided): ContentItem[] {
  return d.advisories.map((a) => ({ type: 'text', text: copyText(`[oarc] ${d.decision === 'warn' ? 'Warning' : 'Nudge'} from rule ${a.rule}:`, a.copy) }));
}

export function withAdvisories(result: ToolResult, items: readonly ContentItem[]): ToolResult {
  if (items.length === 0) return result;
  return { ...result, content: [...(Array.isArray(result.content) ? result.content : []), ...items] };
}

/**
 * The result with its content buffer replaced by `text` (the transformed buffer, [OAR-OPS-16]), or
 * a reason it cannot be. One textual segment is rewritten in place; several become one text item
 * at the first one's position (the proxy cannot say which part of the transformed buffer came
 * from which segment). `structuredContent` carries the same text in the two shapes servers use —
 * the text is its JSON serialisation, or a string member equals the text — and is rewritten to
 * match; a `structuredContent` holding strings the buffer does not account for cannot be
 * transformed faithfully, and the caller withholds the result instead.
 */
export function withText(result: ToolResult, original: string, text: string): ToolResult | { unfaithful: string } {
  const items = Array.isArray(result.content) ? result.content : [];
  const textual = items.filter(isTextual);
  let content: ContentItem[];
  if (textual.length === 1) {
    content = items.map((c) => (c !== textual[0] ? c : isText(c) ? { ...c, text } : { ...c, resource: { ...c.resource, text } }));
  } else if (textual.length === 0) {
    content = text === '' ? items : [...items, { type: 'text', text }];
  } else {
    const first = textual[0];
    content = items.flatMap((c) => (c === first ? [{ type: 'text', text }] : isTextual(c) ? [] : [c]));
  }
  const out: ToolResult = { ...result, content };
  if (result.structuredContent === undefined) return out;
  const structured = rewriteStructured(result.structuredContent, original, text);
  if (typeof structured === 'string') return { unfaithful: structured };
  out.structuredContent = structured.value;
  return out;
}

function rewriteStructured(value: unknown, original: string, text: string): { value: unknown } | string {
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
