/**
 * Occurrences as a conformance fixture writes them ([OAR-CONF-18], [OAR-CONF-31], [OAR-CONF-40]) —
 * `anchor`, `facts`, `detector_facts`, `content`, `tool_call`, `recent_activity`, `session_id` —
 * read from a file or stdin and converted to the runtime's `Occurrence`.
 *
 * An input is one occurrence (a JSON or YAML document), a JSON array of them, or JSON Lines. JSON
 * Lines is recognised by its first non-blank line being a complete JSON value with more lines
 * after it (a `.jsonl` / `.ndjson` file always is); from stdin, each line is decided as it
 * arrives. Integers beyond ±(2^53−1) stay exact (`bigInts`), as the runtime's int model requires.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { formatDiagnostic, inert, type Diagnostic, type SourceLocation } from '../compiler/diagnostics.js';
import { parseSource } from '../compiler/load/source.js';
import { HostInputError, occurrenceFromJson, type Occurrence } from '../runtime/index.js';
import { InputError, ioReason } from './errors.js';
import { toJson } from './output.js';

/** One occurrence as read: its value and where its parts came from. */
export interface RawOccurrence {
  value: unknown;
  /** Position of a member (path within the occurrence), for messages. */
  locate(path: readonly (string | number)[]): SourceLocation;
}

const PARSE = { bigInts: true, expandSequences: false } as const;

/** What an occurrence input holds, for the message about one that holds none. */
export const OCCURRENCE_SHAPE =
  'an occurrence file holds one occurrence (a JSON or YAML object such as {"anchor": "tool.pre_invoke", "tool_call": {"name": "bash", "arguments": {}}}), a JSON array of them, or JSON Lines (one a line)';

/**
 * Messages are prefixed `oarc eval: `, the command that reads occurrences most; `oarc bench` and
 * `oarc diff` put their own name there (pack-input.ts `readOccurrences`).
 */
function parseFailure(diagnostics: readonly Diagnostic[], label: string, lineOffset = 0): InputError {
  const lines = diagnostics
    .filter((d) => d.severity === 'error')
    .map((d) => formatDiagnostic(lineOffset === 0 || !d.source ? d : { ...d, source: { ...d.source, line: (d.source.line ?? 1) + lineOffset } }));
  if (lines.length === 0) return new InputError(`oarc eval: ${label}: no occurrence found (the file is empty or holds only comments); ${OCCURRENCE_SHAPE}`);
  // A syntax error says what the parser found; what the file should have held is said once after.
  return new InputError([...lines, `oarc eval: ${label} could not be read as occurrences: ${OCCURRENCE_SHAPE}`]);
}

/** A whole text holding one occurrence or an array of them. */
function fromDocument(text: string, label: string, format?: 'json' | 'yaml'): RawOccurrence[] {
  const r = parseSource(text, label, format ? { ...PARSE, format } : PARSE);
  const doc = r.docs[0];
  if (r.diagnostics.some((d) => d.severity === 'error') || doc === undefined) throw parseFailure(r.diagnostics, label);
  if (r.docs.length > 1) throw new InputError(`${label}: several YAML documents; write a session as a JSON array or as JSON Lines`);
  if (Array.isArray(doc.value)) {
    if (doc.value.length === 0) throw new InputError(`oarc eval: ${label}: the list of occurrences is empty; ${OCCURRENCE_SHAPE}`);
    return doc.value.map((value, i) => ({ value, locate: (path) => doc.locate([i, ...path]) }));
  }
  return [{ value: doc.value, locate: (path) => doc.locate(path) }];
}

/** One line of a JSON Lines input; positions are those of the line in the whole input. */
function fromLine(line: string, lineNo: number, label: string): RawOccurrence {
  const r = parseSource(line, label, { ...PARSE, format: 'json' });
  const doc = r.docs[0];
  if (r.diagnostics.some((d) => d.severity === 'error') || doc === undefined) throw parseFailure(r.diagnostics, label, lineNo - 1);
  return { value: doc.value, locate: (path) => ({ ...doc.locate(path), line: lineNo }) };
}

function isCompleteJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

/** Occurrences from a file, in order. */
export function* readOccurrenceFile(file: string): Generator<RawOccurrence> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`oarc eval: cannot read occurrence file ${file}: ${ioReason(e)}`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = text.split(/\r?\n/);
  const nonBlank = lines.filter((l) => l.trim() !== '');
  const jsonLines = /\.(jsonl|ndjson)$/i.test(file) || (nonBlank.length > 1 && isCompleteJson(nonBlank[0] as string));
  if (!jsonLines) {
    yield* fromDocument(text, file);
    return;
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() !== '') yield fromLine(line, i + 1, file);
  }
}

/** Occurrences from stdin: JSON Lines decided as each line arrives, or one document at the end. */
export async function* readOccurrenceStream(input: NodeJS.ReadableStream, label = '<stdin>'): AsyncGenerator<RawOccurrence> {
  const rl = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  let mode: 'unknown' | 'lines' | 'document' = 'unknown';
  const held: string[] = [];
  for await (const line of rl) {
    lineNo++;
    if (mode === 'document') {
      held.push(line);
      continue;
    }
    if (line.trim() === '') {
      if (mode === 'unknown') held.push(line);
      continue;
    }
    if (mode === 'unknown') {
      if (isCompleteJson(line)) mode = 'lines';
      else {
        mode = 'document';
        held.push(line);
        continue;
      }
    }
    yield fromLine(line, lineNo, label);
  }
  if (mode === 'document') yield* fromDocument(held.join('\n'), label, 'json');
  else if (mode === 'unknown') throw new InputError(`oarc eval: ${label}: no occurrence given; ${OCCURRENCE_SHAPE}`);
}

// ---------------------------------------------------------------------------------------------
// Conversion

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function where(raw: RawOccurrence, path: readonly (string | number)[]): string {
  const s = raw.locate(path);
  return `${s.file ?? '<input>'}:${s.line ?? 1}:${s.column ?? 1}`;
}

/** A host-input mistake (`HostInputError`, its path in the JSON spelling) as a located input error. */
export function locatedError(raw: RawOccurrence, e: HostInputError, jsonPath: readonly (string | number)[] = e.path): InputError {
  return new InputError(`${where(raw, jsonPath)}: ${e.message.replace(/^decide: /, '')}`);
}

/**
 * The runtime `Occurrence` of a JSON occurrence (`occurrenceFromJson`, the one JSON form);
 * `session` is the session of an occurrence that names none. `expected` (a fixture's assertion
 * beside an occurrence) is accepted and ignored.
 */
export function toOccurrence(raw: RawOccurrence, session: string | undefined): Occurrence {
  let value = raw.value;
  if (isObject(value) && Object.hasOwn(value, 'expected')) {
    const { expected: _ignored, ...rest } = value;
    value = rest;
  }
  let occ: Occurrence;
  try {
    occ = occurrenceFromJson(value);
  } catch (e) {
    if (e instanceof HostInputError) throw locatedError(raw, e);
    throw e;
  }
  if (occ.session === undefined && session !== undefined) occ.session = session;
  return occ;
}

/** A short description of an occurrence, for the human output: the tool call or the content. */
export function summarize(occ: Occurrence): string {
  // A tool name is the host's observation, printed inert like copy (describe.ts).
  if (occ.toolCall) return clip(`${inert(occ.toolCall.name)}${occ.toolCall.arguments ? ` ${toJson(occ.toolCall.arguments)}` : ''}`, 100);
  if (occ.content !== undefined) return JSON.stringify(clip(occ.content, 60));
  return '';
}

/** At most `n` code points, the last an ellipsis when anything was cut. */
function clip(text: string, n: number): string {
  const cps = Array.from(text);
  return cps.length > n ? `${cps.slice(0, n - 1).join('')}…` : text;
}
