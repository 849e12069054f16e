/**
 * Tool results as the proxy reads and rewrites them. The *content buffer* of a result — what a
 * rule at the result anchors reads as `content` — is its textual segments in order: every `text`
 * item and the `text` of every embedded `resource` item, then its `structuredContent` as
 * canonical JSON when the text does not already carry it (structured.ts), joined by a newline.
 * Images, audio, blobs and resource links are not text and pass untouched.
 *
 * A result is rewritten only when a decision requires it; otherwise the server's own message goes
 * to the client as the SDK parsed it (written again as JSON, as every message but an allowed
 * tools/call is).
 */
import { canonicalJson, type Decision } from '../runtime/index.js';
import { rewriteStructured, textCarries } from './structured.js';

/** What the proxy reads of a decision; a `Decision` and its JSON form both have it. */
export type Decided = Pick<Decision, 'decision' | 'rule' | 'copy' | 'advisories'>;

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

/** The textual segments of a result's content, joined: its content buffer when it has no structuredContent. */
export function resultText(result: ToolResult): string {
  const items = Array.isArray(result.content) ? result.content : [];
  return items
    .filter(isTextual)
    .map((c) => (isText(c) ? (c.text as string) : (c.resource?.text as string)))
    .join(SEGMENT_SEPARATOR);
}

/** A result's content buffer, and what it was made of (for `withBuffer`). */
export interface ContentBuffer {
  /** What the rules read as `content` ([OAR-OPS-8]: the whole result, once, never piecemeal). */
  text: string;
  /** The textual segments of `content`, joined (`resultText`). */
  segments: string;
  /** Whether `content` has any textual segment. */
  hasText: boolean;
  /**
   * `structuredContent` as canonical JSON, the buffer's last segment, when the text does not carry
   * it: the client reads it (a model may too), so the rules read it — a secret only there, under
   * a text saying "done", would otherwise go out unredacted.
   */
  structured?: string;
}

/**
 * The content buffer of a result. Throws when `structuredContent` has no canonical JSON (a
 * number beyond binary64): the caller withholds the result, as for any result it cannot decide.
 */
export function contentBuffer(result: ToolResult): ContentBuffer {
  const segments = resultText(result);
  const hasText = (Array.isArray(result.content) ? result.content : []).some(isTextual);
  const base = { text: segments, segments, hasText };
  if (result.structuredContent === undefined || (hasText && textCarries(result.structuredContent, segments))) return base;
  const structured = canonicalJson(result.structuredContent);
  return { ...base, text: hasText ? `${segments}${SEGMENT_SEPARATOR}${structured}` : structured, structured };
}

/**
 * The result with its content buffer replaced by `text` (the transformed buffer, [OAR-OPS-16]),
 * or why it cannot be. Without a structuredContent segment, `withText`. With one, the transformed
 * buffer is split at its last newline (canonical JSON has none: it escapes control characters):
 * before it the text, delivered as `withText` does; after it the structured content, which must
 * still be canonical JSON — the transform having replaced text inside its strings — or the
 * result cannot be delivered faithfully and the caller withholds it ([OAR-PROF-10]).
 */
export function withBuffer(result: ToolResult, buffer: ContentBuffer, text: string): ToolResult | { unfaithful: string } {
  if (buffer.structured === undefined) return withText(result, buffer.segments, text);
  const at = buffer.hasText ? text.lastIndexOf(SEGMENT_SEPARATOR) : -1;
  if (buffer.hasText && at < 0) return { unfaithful: 'the transformed content no longer separates the text from the structuredContent' };
  const json = buffer.hasText ? text.slice(at + SEGMENT_SEPARATOR.length) : text;
  let structured: unknown;
  try {
    structured = JSON.parse(json);
    if (canonicalJson(structured) !== json) throw new Error('not canonical');
  } catch {
    return { unfaithful: 'the transformed structuredContent is no longer the canonical JSON of a value' };
  }
  return { ...withTextItems(result, buffer.hasText ? text.slice(0, at) : ''), structuredContent: structured };
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
  const out = withTextItems(result, text);
  if (result.structuredContent === undefined) return out;
  const structured = rewriteStructured(result.structuredContent, original, text);
  if (typeof structured === 'string') return { unfaithful: structured };
  out.structuredContent = structured.value;
  return out;
}

/** The result with its textual segments replaced by `text`, as `withText` says; structuredContent as it was. */
function withTextItems(result: ToolResult, text: string): ToolResult {
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
  return { ...result, content };
}
