/**
 * The labeled injection corpus: JSONL sources, one record per line (`id`, `text`, `signal`,
 * optional `source`), `#` lines and blank lines skipped. The loader reads every source to the end
 * and reports every problem it finds — file, line, field, what was wrong — never the first only,
 * so a misconfigured deployment sees all of them in one run.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The nine signal buckets; `benign` is the negative class. */
export const SIGNALS = Object.freeze([
  'instruction-override',
  'network-egress',
  'data-access',
  'code-exec',
  'filesystem-read',
  'exfil-email',
  'secret-access',
  'cred-enum',
  'benign',
] as const);
export type Signal = (typeof SIGNALS)[number];

export interface CorpusRecord {
  id: string;
  text: string;
  signal: Signal;
  /** Provenance, kept for audit; never used to classify. */
  source?: string;
}

/** One corpus file with the metadata a deployment attaches to it. */
export interface CorpusSource {
  path: string;
  /** A free-form tag (e.g. `injection-seed`); metadata only. */
  domain?: string;
  /** The corpus revision (e.g. `v1`); metadata only. */
  version?: string;
  /** What the file is, in messages (default `the corpus file`; `oarc corpus eval`: `the labeled set`). */
  what?: string;
}

export interface CorpusDiagnostic {
  file: string;
  /** 1-based; 0 when the file as a whole could not be read. */
  line: number;
  /** The record field at fault, when one is. */
  field?: string;
  message: string;
}

export interface LoadedRecord extends CorpusRecord {
  /** Where the record came from, for diagnostics and audit. */
  file: string;
  line: number;
  domain: string;
  version: string;
}

export interface CorpusLoad {
  records: LoadedRecord[];
  diagnostics: CorpusDiagnostic[];
}

export interface LoadOptions {
  /** Require every `id` to be the hex sha256 of its `text`. */
  strict?: boolean;
}

const FIELDS = new Set(['id', 'text', 'signal', 'source']);

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function formatCorpusDiagnostic(d: CorpusDiagnostic): string {
  const where = d.line > 0 ? `${d.file}:${d.line}` : d.file;
  return `${where}: ${d.field !== undefined ? `field \`${d.field}\`: ` : ''}${d.message}`;
}

/** Read every source; records are kept only when their line has no problem. */
export function loadCorpus(sources: readonly CorpusSource[], options: LoadOptions = {}): CorpusLoad {
  const records: LoadedRecord[] = [];
  const diagnostics: CorpusDiagnostic[] = [];
  const seen = new Map<string, { file: string; line: number }>();
  for (const src of sources) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(src.path);
    } catch (e) {
      const code = (e as { code?: string }).code;
      diagnostics.push({ file: src.path, line: 0, message: `cannot read ${src.what ?? 'the corpus file'}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'it is a directory' : (e as Error).message}` });
      continue;
    }
    const lines = utf8Lines(bytes);
    lines.forEach((raw, i) => {
      const line = i + 1;
      if (raw === undefined) {
        diagnostics.push({ file: src.path, line, message: 'not valid UTF-8: a corpus is UTF-8 JSON Lines (re-encode the file, e.g. from Latin-1)' });
        return;
      }
      const trimmed = raw.trim();
      if (trimmed === '' || trimmed.startsWith('#')) return;
      const problems: CorpusDiagnostic[] = [];
      const at = (field: string | undefined, message: string) => problems.push({ file: src.path, line, ...(field !== undefined ? { field } : {}), message });
      const rec = parseRecord(trimmed, at, options);
      if (rec !== undefined) {
        const first = seen.get(rec.id);
        if (first !== undefined) at('id', `duplicate id ${JSON.stringify(rec.id)}: first at ${first.file}:${first.line}`);
        else seen.set(rec.id, { file: src.path, line });
      }
      diagnostics.push(...problems);
      if (rec !== undefined && problems.length === 0) {
        records.push({ ...rec, file: src.path, line, domain: src.domain ?? '', version: src.version ?? '' });
      }
    });
  }
  return { records, diagnostics };
}

/**
 * The file's lines, each decoded as UTF-8 on its own — `undefined` for a line that is not UTF-8 —
 * so a bad byte is reported at its line rather than replaced (U+FFFD) or blamed on JSON.
 */
function utf8Lines(bytes: Buffer): (string | undefined)[] {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const out: (string | undefined)[] = [];
  let start = 0;
  for (;;) {
    const end = bytes.indexOf(0x0a, start);
    const chunk = bytes.subarray(start, end < 0 ? bytes.length : end);
    try {
      // A BOM is an editor's artefact, not part of the first record.
      out.push(decoder.decode(chunk).replace(/\r$/, '').replace(start === 0 ? /^\uFEFF/ : /^$/, ''));
    } catch {
      out.push(undefined);
    }
    if (end < 0) return out;
    start = end + 1;
  }
}

/** Check one line; every problem with it goes to `at`, and a record comes back only if its id is usable. */
function parseRecord(line: string, at: (field: string | undefined, message: string) => void, options: LoadOptions): CorpusRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    at(undefined, `not valid JSON: ${(e as Error).message}`);
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    at(undefined, `a record must be a JSON object, not ${Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v}`);
    return undefined;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!FIELDS.has(k)) at(k, `unknown field; a record has id, text, signal and source`);
  const str = (field: string, required: boolean): string | undefined => {
    const x = o[field];
    if (x === undefined) {
      if (required) at(field, 'missing (required)');
      return undefined;
    }
    if (typeof x !== 'string') {
      at(field, `must be a string, not ${x === null ? 'null' : Array.isArray(x) ? 'an array' : typeof x}`);
      return undefined;
    }
    if (required && x.trim() === '') {
      at(field, 'must not be empty');
      return undefined;
    }
    return x;
  };
  const id = str('id', true);
  const text = str('text', true);
  const signal = str('signal', true);
  const source = str('source', false);
  if (signal !== undefined && !(SIGNALS as readonly string[]).includes(signal)) {
    at('signal', `${JSON.stringify(signal)} is not a signal bucket; the buckets are ${SIGNALS.join(', ')}`);
  }
  if (options.strict && id !== undefined && text !== undefined && id !== sha256Hex(text)) {
    at('id', `--strict: the id is not the sha256 of the text (${sha256Hex(text)})`);
  }
  if (id === undefined || text === undefined || signal === undefined) return undefined;
  return { id, text, signal: signal as Signal, ...(source !== undefined ? { source } : {}) };
}
