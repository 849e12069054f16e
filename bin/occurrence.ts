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
import { formatDiagnostic, type Diagnostic, type SourceLocation } from '../compiler/diagnostics.js';
import { parseSource } from '../compiler/load/source.js';
import type { Occurrence } from '../runtime/index.js';
import { InputError, ioReason } from './errors.js';
import { toJson } from './output.js';

/** One occurrence as read: its value and where its parts came from. */
export interface RawOccurrence {
  value: unknown;
  /** Position of a member (path within the occurrence), for messages. */
  locate(path: readonly (string | number)[]): SourceLocation;
}

const PARSE = { bigInts: true, expandSequences: false } as const;

function parseFailure(diagnostics: readonly Diagnostic[], lineOffset = 0): InputError {
  const lines = diagnostics
    .filter((d) => d.severity === 'error')
    .map((d) => formatDiagnostic(lineOffset === 0 || !d.source ? d : { ...d, source: { ...d.source, line: (d.source.line ?? 1) + lineOffset } }));
  return new InputError(lines.length > 0 ? lines : ['no occurrence found']);
}

/** A whole text holding one occurrence or an array of them. */
function fromDocument(text: string, label: string, format?: 'json' | 'yaml'): RawOccurrence[] {
  const r = parseSource(text, label, format ? { ...PARSE, format } : PARSE);
  const doc = r.docs[0];
  if (r.diagnostics.some((d) => d.severity === 'error') || doc === undefined) throw parseFailure(r.diagnostics);
  if (r.docs.length > 1) throw new InputError(`${label}: several YAML documents; write a session as a JSON array or as JSON Lines`);
  if (Array.isArray(doc.value)) {
    if (doc.value.length === 0) throw new InputError(`${label}: the list of occurrences is empty`);
    return doc.value.map((value, i) => ({ value, locate: (path) => doc.locate([i, ...path]) }));
  }
  return [{ value: doc.value, locate: (path) => doc.locate(path) }];
}

/** One line of a JSON Lines input; positions are those of the line in the whole input. */
function fromLine(line: string, lineNo: number, label: string): RawOccurrence {
  const r = parseSource(line, label, { ...PARSE, format: 'json' });
  const doc = r.docs[0];
  if (r.diagnostics.some((d) => d.severity === 'error') || doc === undefined) throw parseFailure(r.diagnostics, lineNo - 1);
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
  else if (mode === 'unknown') throw new InputError(`${label}: no occurrence given`);
}

// ---------------------------------------------------------------------------------------------
// Conversion

const MEMBERS = new Set(['anchor', 'facts', 'detector_facts', 'content', 'tool_call', 'recent_activity', 'session_id', 'expected']);

/** The runtime's own spellings, which a fixture-spelled occurrence must not use. */
const RUNTIME_SPELLING: Record<string, string> = {
  toolCall: 'tool_call',
  detectorFacts: 'detector_facts',
  recentActivity: 'recent_activity',
  session: 'session_id',
  sessionId: 'session_id',
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function where(raw: RawOccurrence, path: readonly (string | number)[]): string {
  const s = raw.locate(path);
  return `${s.file ?? '<input>'}:${s.line ?? 1}:${s.column ?? 1}`;
}

/**
 * The runtime `Occurrence` of a fixture-spelled occurrence; `session` is the session of an
 * occurrence that names none. `expected` (a fixture's assertion) is accepted and ignored.
 */
export function toOccurrence(raw: RawOccurrence, session: string | undefined): Occurrence {
  const v = raw.value;
  const fail = (path: (string | number)[], message: string): never => {
    throw new InputError(`${where(raw, path)}: ${message}`);
  };
  if (!isObject(v)) return fail([], 'an occurrence must be a JSON object');
  for (const key of Object.keys(v)) {
    if (MEMBERS.has(key)) continue;
    const hint = RUNTIME_SPELLING[key];
    fail([key], `unknown occurrence member ${key}${hint ? ` (write ${hint})` : ''}`);
  }
  if (typeof v.anchor !== 'string' || v.anchor === '') return fail(v.anchor === undefined ? [] : ['anchor'], 'the occurrence needs an anchor: the host-local anchor identifier, a non-empty string');
  const occ: { -readonly [K in keyof Occurrence]: Occurrence[K] } = { anchor: v.anchor };

  if (v.facts !== undefined) {
    if (!isObject(v.facts)) fail(['facts'], 'facts must be an object mapping fact names to values');
    occ.facts = v.facts as Record<string, unknown>;
  }
  if (v.detector_facts !== undefined) {
    if (!isObject(v.detector_facts)) fail(['detector_facts'], 'detector_facts must be an object mapping fact names to values');
    occ.detectorFacts = v.detector_facts as Record<string, unknown>;
  }
  if (v.content !== undefined) {
    if (typeof v.content !== 'string') fail(['content'], 'content must be a string');
    occ.content = v.content as string;
  }
  if (v.tool_call !== undefined) {
    const t = v.tool_call;
    if (!isObject(t)) return fail(['tool_call'], 'tool_call must be an object { name, arguments }');
    for (const key of Object.keys(t)) if (key !== 'name' && key !== 'arguments') fail(['tool_call', key], `unknown tool_call member ${key}`);
    if (typeof t.name !== 'string' || t.name === '') fail(['tool_call', ...(t.name === undefined ? [] : ['name'])], 'tool_call.name must be a non-empty string');
    if (t.arguments !== undefined && !isObject(t.arguments)) fail(['tool_call', 'arguments'], 'tool_call.arguments must be a JSON object');
    occ.toolCall = t.arguments === undefined ? { name: t.name as string } : { name: t.name as string, arguments: t.arguments as Record<string, unknown> };
  }
  if (v.recent_activity !== undefined) {
    const a = v.recent_activity;
    if (!Array.isArray(a) || !a.every((s) => typeof s === 'string')) fail(['recent_activity'], 'recent_activity must be a list of tool names');
    occ.recentActivity = a as string[];
  }
  if (v.session_id !== undefined) {
    if (typeof v.session_id !== 'string') fail(['session_id'], 'session_id must be a string');
    occ.session = v.session_id as string;
  } else if (session !== undefined) {
    occ.session = session;
  }
  return occ;
}

/** A short description of an occurrence, for the human output: the tool call or the content. */
export function summarize(occ: Occurrence): string {
  if (occ.toolCall) return clip(`${occ.toolCall.name}${occ.toolCall.arguments ? ` ${toJson(occ.toolCall.arguments)}` : ''}`, 100);
  if (occ.content !== undefined) return JSON.stringify(clip(occ.content, 60));
  return '';
}

/** At most `n` code points, the last an ellipsis when anything was cut. */
function clip(text: string, n: number): string {
  const cps = Array.from(text);
  return cps.length > n ? `${cps.slice(0, n - 1).join('')}…` : text;
}
