/**
 * Text → documents with source positions, for rule, capability, configuration and fixture files.
 *
 * JSON and YAML go through one code path (the `yaml` package, YAML 1.2): JSON is YAML's flow
 * subset, so positions, duplicate-key detection and limits come from one place. A `.json` file is
 * additionally held to the JSON grammar, because interchange MUST use JSON and YAML is only an
 * authoring form whose mapping to JSON must be lossless ([OAR-DOC-1]). Everything YAML can express
 * beyond plain JSON data — custom tags, timestamps, binary, non-finite numbers, collection keys,
 * duplicate keys — is an error rather than a silent conversion.
 *
 * Hostile input is bounded before it can cost anything: size before parsing, nesting depth while
 * lexing (so a 10,000-deep document never reaches the recursive composer), alias expansion while
 * converting (so a billion-laughs document ends after a few hundred nodes). Nothing here throws;
 * every failure is a `Diagnostic`.
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import {
  Composer,
  CST,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  Parser,
  type Alias,
  type Document,
  type Node as YamlNode,
  type Pair,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { error, warning, type Diagnostic, type SourceLocation } from '../diagnostics.js';
import { alignScalar, codePointsToUnits, spanOf, type ScalarStyle } from './scalar-map.js';
import { JsonError, locateJson, parseJson, type JsonParsed, type JsonPos } from './json.js';
import { pushAll } from '../arrays.js';
import { fastYaml, type FastDoc } from './yaml-fast.js';

export type DocPath = (string | number)[];

export interface Position {
  file: string;
  line: number;
  column: number;
}

export interface SourceDoc {
  value: unknown;
  file: string;
  /** Position in the file's stream or array, for messages only — never identity [OAR-DOC-28]. */
  index: number;
  /**
   * True when the document is a member of a collection — an element of a top-level sequence or
   * one of several documents in a YAML stream — so a caller can report a member that is not a rule
   * document under [OAR-DOC-31] rather than [OAR-DOC-1].
   */
  inCollection: boolean;
  /**
   * The position of the deepest node on `path` that exists: the key of an existing member, the
   * item of an existing index, or — for a missing member — the key of its nearest existing parent.
   * 1-based line and column (UTF-16 code units, as editors count them).
   */
  locate(path: readonly (string | number)[]): Position;
  /**
   * The exact span of code points `[offset, offset + length)` of the string at `path` (a condition,
   * a copy template) in the file, through quoting, escapes and folding; the string's own position
   * when the span cannot be mapped, and `locate(path)` when there is no string there.
   */
  locateText(path: readonly (string | number)[], offset: number, length: number): SourceLocation;
}

export interface ParseOptions {
  /** Reject text larger than this many UTF-8 bytes before parsing. Default 16 MiB. */
  maxBytes?: number;
  /**
   * Reject a document with more nodes than this before parsing it. YAML counts line breaks and
   * commas (each node but the first is preceded by one, give or take a nesting-bounded few per
   * line), so the bound is met before the parser — about 20 µs a node — sees anything; JSON counts
   * values as it parses. Default 100,000 for YAML, 500,000 for JSON.
   */
  maxNodes?: number;
  /** Reject nesting deeper than this many collections (the outermost counts as 1). Default 64. */
  maxDepth?: number;
  /** Integers outside ±(2^53−1) come back as `bigint` instead of a rounded `number`. */
  bigInts?: boolean;
  /**
   * JSON only: a number beyond the binary64 range (`1e400`) reads as ±Infinity instead of being
   * refused — for conformance fixtures, where it is the only way JSON can carry a non-finite
   * double for an engine to refuse as a fact-provider failure ([OAR-FACT-23]).
   */
  nonFinite?: boolean;
  /** Alias resolutions allowed per YAML document, nested expansions included. Default 100. */
  maxAliasCount?: number;
  /** Override the format chosen from the file extension (`.json` → json, otherwise yaml). */
  format?: 'json' | 'yaml';
  /**
   * Expand a top-level sequence into one document per member (a rule set, [OAR-DOC-31]).
   * Default true; a caller reading a single document (a fixture) may turn it off.
   */
  expandSequences?: boolean;
  /**
   * Read YAML with the `yaml` package alone, never the fast reader for plain rule YAML
   * (yaml-fast.ts). The result is the same either way; this exists to compare the two.
   */
  fullYaml?: boolean;
}

export interface ParseResult {
  docs: SourceDoc[];
  diagnostics: Diagnostic[];
  /** `readSources`: every file it read or tried to, in that order (diagnostics sort by it). */
  files?: string[];
}

export const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_DEPTH = 64;
export const DEFAULT_MAX_YAML_NODES = 100_000;
export const DEFAULT_MAX_JSON_NODES = 500_000;
export const DEFAULT_MAX_ALIAS_COUNT = 100;
/**
 * The yaml composer recurses per nesting level and, for block sequences thousands deep, exhausts
 * memory fatally rather than throwing; no caller-chosen depth may exceed this.
 */
export const HARD_MAX_DEPTH = 256;
/** Nodes materialised through aliases per YAML document: the second half of the alias-bomb guard. */
const ALIAS_NODE_BUDGET = 100_000;

/**
 * The specification has no clause for text that cannot be read or parsed; the nearest is
 * [OAR-DOC-1] — a document MUST be representable as a JSON object, losslessly from YAML — and a
 * caller that knows better (a fixture loader) may re-map it.
 */
export const PARSE_CLAUSE = 'OAR-DOC-1';

const SOURCE_EXTENSIONS = /\.(json|ya?ml)$/i;

// ---------------------------------------------------------------------------------------------
// Public entry points

export function parseSource(text: string, file: string, opts: ParseOptions = {}): ParseResult {
  try {
    return parseUnguarded(text, file, opts);
  } catch (e) {
    // Unreachable by design; kept so a library defect is still a diagnostic, never a crash.
    return {
      docs: [],
      diagnostics: [
        error(PARSE_CLAUSE, `internal error while parsing ${file}: ${errorMessage(e)}`, {
          source: { file, line: 1, column: 1 },
        }),
      ],
    };
  }
}

/**
 * Reads files and directories (recursively: `.json`, `.yaml`, `.yml`, sorted by path so runs are
 * deterministic). Paths given explicitly are read whatever their extension, in the order given.
 */
export function readSources(paths: readonly string[], opts: ParseOptions = {}): ParseResult {
  const docs: SourceDoc[] = [];
  const diagnostics: Diagnostic[] = [];
  const files: string[] = [];
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  for (const p of paths) {
    files.push(p);
    for (const file of collectFiles(p, diagnostics)) {
      files.push(file);
      const text = readText(file, maxBytes, diagnostics);
      if (text === undefined) continue;
      const r = parseSource(text, file, opts);
      pushAll(docs, r.docs);
      pushAll(diagnostics, r.diagnostics);
    }
  }
  return { docs, diagnostics, files };
}

// ---------------------------------------------------------------------------------------------
// Files

function collectFiles(p: string, diagnostics: Diagnostic[]): string[] {
  let st;
  try {
    st = statSync(p);
  } catch (e) {
    diagnostics.push(ioError(p, `cannot read \`${p}\`: ${ioReason(e)}`, p));
    return [];
  }
  if (!st.isDirectory()) return [p];
  const out: string[] = [];
  walkDirectory(p, out, new Set(), diagnostics);
  // Plain code-unit order, not locale order: the same tree lists the same way everywhere.
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `oarc test` files (the same names as packtest/testfile.ts TEST_FILE): skipped when a directory of rules is expanded. */
const PACK_TEST_FILE = /\.test\.(ya?ml|json)$/i;

function walkDirectory(dir: string, out: string[], seen: Set<string>, diagnostics: Diagnostic[]): void {
  let real: string;
  let entries;
  try {
    real = realpathSync(dir);
    if (seen.has(real)) return; // a symlink cycle
    seen.add(real);
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    diagnostics.push(ioError(dir, `cannot read directory \`${dir}\`: ${ioReason(e)}`, dir));
    return;
  }
  for (const entry of entries) {
    const full = join(dir, entry.name);
    let isDir = entry.isDirectory();
    let isFile = entry.isFile();
    if (entry.isSymbolicLink()) {
      try {
        const st = statSync(full);
        isDir = st.isDirectory();
        isFile = st.isFile();
      } catch (e) {
        diagnostics.push(ioError(full, `cannot read \`${full}\`: ${ioReason(e)}`, full));
        continue;
      }
    }
    if (isDir) walkDirectory(full, out, seen, diagnostics);
    // A pack's tests (`oarc test` files) may sit beside its rules: they are not rule documents.
    else if (isFile && SOURCE_EXTENSIONS.test(entry.name) && !PACK_TEST_FILE.test(entry.name)) out.push(full);
  }
}

/** What a file that is not a regular file is, for the message refusing it. */
function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  if (st.isDirectory()) return 'a directory';
  return 'not a regular file';
}

/**
 * At most `maxBytes + 1` bytes of a regular file. A FIFO or device is refused before it is opened
 * (its size is 0, and reading it could block or never end), and the read itself stops at the limit,
 * so a file that grows, or reports a size of 0 (as /proc files do), is bounded too.
 */
function readBounded(file: string, maxBytes: number): Buffer | string {
  const st = statSync(file);
  if (!st.isFile()) return `\`${file}\` is ${kindOf(st)}, not a regular file; rule, capability and configuration documents are read from regular files`;
  if (st.size > maxBytes) return tooLargeMessage(file, st.size, maxBytes);
  const fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    if (!fstatSync(fd).isFile()) return `\`${file}\` is not a regular file; rule, capability and configuration documents are read from regular files`;
    const buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(st.size + 1, 64 * 1024)));
    let n = 0;
    let chunk = buf;
    for (;;) {
      if (n === chunk.length) {
        if (chunk.length > maxBytes) break;
        const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, chunk.length * 2));
        chunk.copy(bigger, 0, 0, n);
        chunk = bigger;
      }
      const got = readSync(fd, chunk, n, chunk.length - n, null);
      if (got === 0) break;
      n += got;
    }
    if (n > maxBytes) return `\`${file}\` is more than the ${maxBytes}-byte limit; it was not parsed`;
    return chunk.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/**
 * One file's text exactly as `readSources` reads it — a regular file, within the size limit,
 * valid UTF-8 — or the diagnostics refusing it. For tools that rewrite a file (`oarc fmt`): a
 * file the loader refuses must not be read with its bad bytes replaced and written back.
 */
export function readSourceText(file: string, maxBytes = DEFAULT_MAX_BYTES): { text: string; diagnostics: [] } | { text: undefined; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const text = readText(file, maxBytes, diagnostics);
  return text === undefined ? { text, diagnostics } : { text, diagnostics: [] };
}

function readText(file: string, maxBytes: number, diagnostics: Diagnostic[]): string | undefined {
  try {
    const bytes = readBounded(file, maxBytes);
    if (typeof bytes === 'string') {
      diagnostics.push(ioError(file, bytes, file));
      return undefined;
    }
    try {
      // JSON text is UTF-8; a replacement character substituted for a bad byte is not lossless.
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      diagnostics.push(ioError(file, `\`${file}\` is not valid UTF-8`));
      return undefined;
    }
  } catch (e) {
    diagnostics.push(ioError(file, `cannot read \`${file}\`: ${ioReason(e)}`, file));
    return undefined;
  }
}

function ioError(file: string, message: string, token?: string): Diagnostic {
  return error(PARSE_CLAUSE, message, { source: { file, line: 1, column: 1 }, ...(token ? { token } : {}) });
}

/** Why a file could not be read, in words rather than Node's `ENOENT: …, stat 'x'`. */
export function ioReason(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  return errorMessage(e);
}

function tooLargeMessage(file: string, size: number, maxBytes: number): string {
  return `\`${file}\` is ${size} bytes, more than the ${maxBytes}-byte limit; it was not parsed`;
}

// ---------------------------------------------------------------------------------------------
// Parsing

interface Limits {
  maxDepth: number;
  maxAliasCount: number;
  bigInts: boolean;
  nonFinite: boolean;
}

function parseUnguarded(text: string, file: string, opts: ParseOptions): ParseResult {
  const limits: Limits = {
    maxDepth: Math.max(1, Math.min(opts.maxDepth ?? DEFAULT_MAX_DEPTH, HARD_MAX_DEPTH)),
    maxAliasCount: Math.max(0, opts.maxAliasCount ?? DEFAULT_MAX_ALIAS_COUNT),
    bigInts: opts.bigInts === true,
    nonFinite: opts.nonFinite === true,
  };
  const tooLarge = sizeProblem(text, file, opts.maxBytes ?? DEFAULT_MAX_BYTES);
  if (tooLarge) return { docs: [], diagnostics: [tooLarge] };
  const format = opts.format ?? (/\.json$/i.test(file) ? 'json' : 'yaml');
  const tooMany = format === 'yaml' ? yamlNodeProblem(text, file, opts.maxNodes ?? DEFAULT_MAX_YAML_NODES) : undefined;
  if (tooMany) return { docs: [], diagnostics: [tooMany] };
  // The byte-order mark is an encoding detail, not content; dropping it keeps line-1 columns
  // as an editor shows them.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (format === 'yaml' && text.includes('\ufeff')) text = dropDocumentBoms(text);
  if (format === 'json') return parseJsonSource(text, file, limits, opts.expandSequences !== false, opts.maxNodes ?? DEFAULT_MAX_JSON_NODES);
  const fast = opts.fullYaml === true ? undefined : fastYaml(text, { maxDepth: limits.maxDepth, bigInts: limits.bigInts, expand: opts.expandSequences !== false });
  return fast ? fastSource(fast, file, () => parseYaml(text, file, opts, limits)) : parseYaml(text, file, opts, limits);
}

/**
 * Documents read by the fast reader (yaml-fast.ts). Their own positions are known; any other
 * position is asked of the full pipeline, run once, the first time one is needed — for a pack
 * that loads without a diagnostic, never.
 */
function fastSource(fast: readonly FastDoc[], file: string, full: () => ParseResult): ParseResult {
  let docs: SourceDoc[] | undefined;
  const fullDoc = (k: number): SourceDoc | undefined => (docs ??= full().docs)[k];
  return {
    docs: fast.map((d, k) => {
      const own = (): Position => ({ file, line: d.line, column: d.column });
      return {
        value: d.value,
        file,
        index: d.index,
        inCollection: d.inCollection,
        locate: (path) => (path.length === 0 ? own() : (fullDoc(k)?.locate(path) ?? own())),
        locateText: (path, offset, length) => fullDoc(k)?.locateText(path, offset, length) ?? own(),
      };
    }),
    diagnostics: [],
  };
}

function parseYaml(text: string, file: string, opts: ParseOptions, limits: Limits): ParseResult {
  const diagnostics: Diagnostic[] = [];
  const lines = new LineCounter();
  const pos = (offset: number) => toPosition(file, lines, offset);
  const tokens = lexAndParse(text, lines, limits.maxDepth);
  const tooDeep = typeof tokens === 'number' ? tokens : cstDepthExceeded(tokens, limits.maxDepth);
  if (typeof tokens === 'number' || tooDeep >= 0) {
    return { docs: [], diagnostics: [depthError(limits.maxDepth, pos(tooDeep))] };
  }

  const yamlDocs = compose(tokens);
  const unusable = new Set(yamlDocs.filter((d) => reportComposeProblems(d, pos, diagnostics)));

  const members = yamlDocs.filter((d) => {
    if (!isEmptyDocument(d)) return true;
    if (yamlDocs.length > 1 && !unusable.has(d)) {
      diagnostics.push(warning('OAR-DOC-31', 'empty YAML document ignored: it is not a member of the stream', { source: pos(d.range[0]) }));
    }
    return false;
  });
  const docs: SourceDoc[] = [];
  const stream = members.length > 1;
  let index = 0; // a member's position in the file, dropped members included
  for (const d of members) {
    if (unusable.has(d)) index++;
    // [OAR-DOC-31] only a single top-level sequence is a rule set; in a multi-document stream each
    // document is one member, and a member that is a list is a member that is not a rule document.
    else index = convertDocument(d, text, file, lines, limits, opts.expandSequences !== false && !stream, stream, index, docs, diagnostics);
  }
  if (docs.length === 0 && diagnostics.length === 0) {
    // An empty file, a comment-only file, an empty array: nothing to load, and worth saying so.
    diagnostics.push(warning(PARSE_CLAUSE, `\`${file}\` contains no document`, { source: { file, line: 1, column: 1 }, token: file }));
  }
  return { docs, diagnostics };
}

function sizeProblem(text: string, file: string, maxBytes: number): Diagnostic | undefined {
  const source = { file, line: 1, column: 1 };
  // A UTF-16 length is a lower bound on the UTF-8 length, so most oversized text is refused
  // without measuring it (measuring 50 MB would itself take a noticeable fraction of a second).
  if (text.length > maxBytes) return error(PARSE_CLAUSE, `\`${file}\` is more than the ${maxBytes}-byte limit; it was not parsed`, { source });
  if (text.length * 3 <= maxBytes) return undefined;
  const size = Buffer.byteLength(text, 'utf8');
  return size > maxBytes ? error(PARSE_CLAUSE, tooLargeMessage(file, size, maxBytes), { source }) : undefined;
}

/**
 * A byte-order mark at the start of a later document of a YAML stream — files joined with `---`,
 * each saved with a BOM — is the same encoding detail as the first one (YAML 1.2 allows one at the
 * start of every document), not a character of the first key: dropped, as the first one is.
 */
function dropDocumentBoms(text: string): string {
  return text
    .replace(/((?:^|\n)(?:---|\.\.\.)(?:[ \t][^\n]*)?\r?\n)\ufeff/g, '$1')
    .replace(/(\n)\ufeff(?=(?:---|\.\.\.|%))/g, '$1');
}

/** An upper estimate of a YAML text's node count, made in one pass before any parsing: see maxNodes. */
function yamlNodeProblem(text: string, file: string, maxNodes: number): Diagnostic | undefined {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c === 0x0a || c === 0x2c) && ++n > maxNodes) {
      const message = `\`${file}\` has more than ${maxNodes} lines and commas (a bound on its YAML nodes); it was not parsed: split it, or write it as JSON`;
      return error(PARSE_CLAUSE, message, { source: { file, line: 1, column: 1 }, token: file });
    }
  }
  return undefined;
}

function compose(tokens: readonly CST.Token[]): Document.Parsed[] {
  const composer = new Composer({
    // The YAML 1.2 core schema (JSON text has its own reader, json.ts): it produces nothing but
    // JSON data once known tags are off. yaml-fast.ts resolves plain scalars by the same schema.
    schema: 'core',
    version: '1.2',
    resolveKnownTags: false, // no !!timestamp → Date, !!binary → Uint8Array, !!set, !!omap
    merge: false,
    intAsBigInt: true, // every integer exact; converted to number below unless it must stay big
    uniqueKeys: false, // checked on the JSON key instead, naming it, in linear time
  });
  return Array.from(composer.compose(tokens));
}

/**
 * Feeds lexemes to the parser one at a time, so a document whose estimated depth passes twice
 * `maxDepth` is refused at that lexeme, before the rest of it is parsed. Returns the offset to
 * report when refused.
 */
function lexAndParse(text: string, lines: LineCounter, maxDepth: number): CST.Token[] | number {
  lines.addNewLine(0);
  const parser = new Parser(lines.addNewLine);
  const depth = new DepthEstimate(maxDepth, 2 * maxDepth + 8);
  const tokens: CST.Token[] = [];
  for (const lexeme of new Lexer().lex(text)) {
    if (depth.step(lexeme)) {
      // Report where the estimate first passed maxDepth; finish counting lines up to there.
      countLines(text, lines, depth.firstOver);
      return depth.firstOver;
    }
    for (const t of parser.next(lexeme)) tokens.push(t);
  }
  for (const t of parser.end()) tokens.push(t);
  return tokens;
}

function countLines(text: string, lines: LineCounter, upTo: number): void {
  const known = lines.lineStarts[lines.lineStarts.length - 1] ?? 0;
  for (let i = text.indexOf('\n', known); i >= 0 && i < upTo; i = text.indexOf('\n', i + 1)) {
    if (i + 1 > known) lines.addNewLine(i + 1);
  }
}

/**
 * A running upper estimate of nesting depth over the lexer's output: flow brackets, plus block
 * collections opened by `-`, `?` and `key:` at increasing columns. It only has to stop
 * pathological input before the (recursive, superlinear) parser and composer see it, so its
 * limit carries a 2× margin; the exact check is `cstDepthExceeded`.
 */
class DepthEstimate {
  private offset = 0;
  private lineStart = 0;
  private flow = 0;
  private nodeColumn = -1; // column where the current line's latest node began (a key candidate)
  private scalarNext = false;
  private readonly block: number[] = []; // column * 2 + (1 for a sequence, 0 for a mapping)
  /** Offset at which the estimate first exceeded `reportAt`, or -1. */
  firstOver = -1;

  constructor(
    private readonly reportAt: number,
    private readonly limit: number,
  ) {}

  /** True once the estimate exceeds the limit. */
  step(lexeme: string): boolean {
    if (this.scalarNext) {
      // The lexer announces a scalar with a control character, then sends its raw text.
      this.scalarNext = false;
      this.noteNode();
      this.advance(lexeme);
      return false;
    }
    if (lexeme === CST.SCALAR) {
      this.scalarNext = true;
      return false;
    }
    if (lexeme === CST.DOCUMENT || lexeme === CST.FLOW_END) return false; // not source text
    const at = this.offset;
    switch (CST.tokenType(lexeme)) {
      case 'newline':
        this.nodeColumn = -1;
        break;
      case 'doc-start':
      case 'doc-end':
        this.block.length = 0;
        this.flow = 0;
        this.nodeColumn = -1;
        this.firstOver = -1; // each document is measured on its own
        break;
      case 'flow-map-start':
      case 'flow-seq-start':
        this.noteNode();
        this.flow++;
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        if (this.flow > 0) this.flow--;
        break;
      case 'seq-item-ind':
        if (this.flow === 0) this.open(this.column(), 1);
        break;
      case 'explicit-key-ind':
        if (this.flow === 0) this.open(this.column(), 0);
        break;
      case 'map-value-ind':
        if (this.flow === 0) this.open(this.nodeColumn >= 0 ? this.nodeColumn : this.column(), 0);
        break;
      case 'anchor':
      case 'tag':
      case 'alias':
      case 'single-quoted-scalar':
      case 'double-quoted-scalar':
      case 'block-scalar-header':
        this.noteNode();
        break;
      default:
        break;
    }
    this.advance(lexeme);
    const depth = this.block.length + this.flow;
    if (depth > this.reportAt && this.firstOver < 0) this.firstOver = at;
    return depth > this.limit;
  }

  private column(): number {
    return this.offset - this.lineStart;
  }

  private noteNode(): void {
    if (this.flow === 0 && this.nodeColumn < 0) this.nodeColumn = this.column();
  }

  private open(column: number, seq: 0 | 1): void {
    this.nodeColumn = -1;
    const b = this.block;
    while (b.length > 0 && b[b.length - 1]! >> 1 > column) b.pop();
    // `key:` at the column of a sequence that sits at its parent mapping's column ends that sequence.
    if (seq === 0 && b.length >= 2 && b[b.length - 1] === column * 2 + 1 && b[b.length - 2] === column * 2) b.pop();
    if (b.length === 0 || b[b.length - 1] !== column * 2 + seq) b.push(column * 2 + seq);
  }

  private advance(lexeme: string): void {
    const nl = lexeme.lastIndexOf('\n');
    if (nl >= 0) this.lineStart = this.offset + nl + 1;
    this.offset += lexeme.length;
  }
}

/** Exact collection depth of the concrete syntax tree, walked without recursion; -1 when within. */
function cstDepthExceeded(tokens: readonly CST.Token[], maxDepth: number): number {
  const stack: [CST.Token, number][] = tokens.map((t) => [t, 0]);
  while (stack.length > 0) {
    const [t, depth] = stack.pop()!;
    if (t.type === 'document') {
      if (t.value) stack.push([t.value, depth]);
    } else if (t.type === 'block-map' || t.type === 'block-seq' || t.type === 'flow-collection') {
      const d = depth + 1;
      if (d > maxDepth) return t.offset;
      for (const item of t.items) {
        if (item.key) stack.push([item.key, d]);
        if (item.value) stack.push([item.value, d]);
      }
    }
  }
  return -1;
}

function depthError(maxDepth: number, source: Position): Diagnostic {
  return error(PARSE_CLAUSE, `document nests deeper than ${maxDepth} levels; it was not parsed`, { source });
}

/** Reports a composed document's errors and warnings; true when the document is unusable. */
function reportComposeProblems(d: Document.Parsed, pos: (offset: number) => Position, out: Diagnostic[]): boolean {
  let failed = false;
  for (const e of d.errors) {
    failed = true;
    out.push(error(PARSE_CLAUSE, `YAML syntax error (${e.code}): ${firstLine(e.message)}`, { source: pos(e.pos[0]) }));
  }
  for (const w of d.warnings) {
    if (w.code === 'TAG_RESOLVE_FAILED') {
      // An unknown tag (`!!js/function`, `!custom`) has no JSON meaning; reading it as a string
      // would be a silent, lossy conversion.
      failed = true;
      out.push(error(PARSE_CLAUSE, `unsupported YAML tag: ${firstLine(w.message)}`, { source: pos(w.pos[0]) }));
    } else {
      out.push(warning(PARSE_CLAUSE, `YAML warning (${w.code}): ${firstLine(w.message)}`, { source: pos(w.pos[0]) }));
    }
  }
  const version = d.directives?.yaml;
  if (version?.explicit && version.version !== '1.2') {
    // Documents are always read with the YAML 1.2 core schema; honouring a 1.1 directive halfway
    // (`yes` stays a string) would be a mapping the author did not write.
    failed = true;
    out.push(error(PARSE_CLAUSE, `%YAML ${version.version} is not supported; documents are read as YAML 1.2`, { source: pos(0) }));
  }
  return failed;
}


function isEmptyDocument(d: Document.Parsed): boolean {
  const c = d.contents;
  return c === null || (isScalar(c) && c.value === null && c.source === '' && !c.tag && !c.anchor);
}

// ---------------------------------------------------------------------------------------------
// Conversion to plain JSON data

class AliasBomb extends Error {}

/**
 * Converts one composed YAML document into plain JSON values, one `SourceDoc` per member when the
 * top level is a sequence. Anchors are resolved in document order, as YAML defines them. Returns
 * the index the file's next member takes.
 */
function convertDocument(
  d: Document.Parsed,
  text: string,
  file: string,
  lines: LineCounter,
  limits: Limits,
  expand: boolean,
  stream: boolean,
  index: number,
  docs: SourceDoc[],
  diagnostics: Diagnostic[],
): number {
  const conv = new Converter(text, file, lines, limits);
  const root = d.contents as YamlNode | null;
  const top = root && isAlias(root) ? undefined : root;
  const items = expand && top && isSeq(top) ? (top.items as (YamlNode | null)[]) : undefined;
  try {
    if (items && top) {
      conv.registerAnchor(top);
      items.forEach((item, i) => {
        const member = conv.convertMember(item, 1, [i]);
        diagnostics.push(...member.diagnostics);
        if (member.ok) docs.push(conv.sourceDoc(member.value, item, index + i, true));
      });
    } else {
      const member = conv.convertMember(root, 0, []);
      diagnostics.push(...member.diagnostics);
      if (member.ok) docs.push(conv.sourceDoc(member.value, root, index, stream));
    }
  } catch (e) {
    if (!(e instanceof AliasBomb)) throw e;
    diagnostics.push(error(PARSE_CLAUSE, e.message, { source: conv.lastPosition }));
  }
  return index + (items ? items.length : 1);
}

class Converter {
  private readonly anchors = new Map<string, YamlNode>();
  /** Every alias met during conversion and the node it names, so `locate` can follow it. */
  readonly aliasTargets = new Map<YamlNode, YamlNode>();
  private readonly active = new Set<YamlNode>();
  private aliasCount = 0;
  private aliasNodes = 0;
  private inAlias = 0;
  private diagnostics: Diagnostic[] = [];
  private readonly path: DocPath = [];
  private relativeTo = 0;
  lastPosition: Position;

  constructor(
    private readonly text: string,
    private readonly file: string,
    private readonly lines: LineCounter,
    private readonly limits: Limits,
  ) {
    this.lastPosition = { file, line: 1, column: 1 };
  }

  convertMember(node: YamlNode | null, depth: number, prefix: DocPath): { ok: boolean; value: unknown; diagnostics: Diagnostic[] } {
    this.diagnostics = [];
    this.path.length = 0;
    this.path.push(...prefix);
    // Diagnostic paths are relative to the member document, which is what callers locate against.
    this.relativeTo = prefix.length;
    const value = this.convert(node, depth);
    const diagnostics = this.diagnostics;
    return { ok: !diagnostics.some((x) => x.severity === 'error'), value, diagnostics };
  }

  registerAnchor(node: YamlNode): void {
    if (node.anchor && this.inAlias === 0) this.anchors.set(node.anchor, node);
  }

  private convert(node: YamlNode | null | undefined, depth: number): unknown {
    if (node == null) return null; // `key:` with nothing after it
    this.lastPosition = this.position(node);
    if (isAlias(node)) return this.expandAlias(node, depth);
    this.registerAnchor(node);
    if (this.inAlias > 0 && ++this.aliasNodes > ALIAS_NODE_BUDGET) {
      throw new AliasBomb(`aliases expand to more than ${ALIAS_NODE_BUDGET} nodes; refusing a possible alias bomb`);
    }
    if (isScalar(node)) return this.scalar(node);
    if (isMap(node) || isSeq(node)) {
      if (depth + 1 > this.limits.maxDepth) {
        this.fail(node, `document nests deeper than ${this.limits.maxDepth} levels`);
        return null;
      }
      this.active.add(node);
      const value = isMap(node) ? this.mapping(node, depth + 1) : this.sequence(node, depth + 1);
      this.active.delete(node);
      return value;
    }
    this.fail(node, 'unsupported YAML node');
    return null;
  }

  private expandAlias(node: Alias, depth: number): unknown {
    const target = this.anchors.get(node.source);
    if (!target) {
      this.fail(node, `unresolved alias \`*${node.source}\`: the anchor must be defined before it`, node.source);
      return null;
    }
    this.aliasTargets.set(node, target);
    if (this.active.has(target)) {
      this.fail(node, `alias \`*${node.source}\` refers to a node that contains it`, node.source);
      return null;
    }
    if (++this.aliasCount > this.limits.maxAliasCount) {
      throw new AliasBomb(`more than ${this.limits.maxAliasCount} alias expansions; refusing a possible alias bomb`);
    }
    this.inAlias++;
    try {
      return this.convert(target, depth);
    } finally {
      this.inAlias--;
    }
  }

  private scalar(node: Scalar): unknown {
    const v = node.value;
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v;
      case 'bigint':
        return this.integer(v);
      case 'number':
        if (!Number.isFinite(v)) {
          // JSON has no infinity or NaN ([OAR-FACT-23] excludes them from `double` too).
          this.fail(node, `number \`${node.source ?? String(v)}\` is not finite and has no JSON form`, node.source);
          return null;
        }
        return v;
      case 'object':
        if (v === null) return null;
        break;
      default:
        break;
    }
    this.fail(node, `YAML value of type ${typeof v} has no JSON form`);
    return null;
  }

  private integer(v: bigint): number | bigint {
    const n = Number(v);
    if (Number.isSafeInteger(n)) return n === 0 ? 0 : n; // never -0 for an integer
    return this.limits.bigInts ? v : n;
  }

  private mapping(node: YAMLMap, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    for (const pair of node.items as Pair<YamlNode | null, YamlNode | null>[]) {
      const key = this.key(pair.key);
      if (key === undefined) continue;
      if (seen.has(key)) {
        this.path.push(key);
        this.fail(pair.key ?? node, `duplicate key \`${key}\``, key);
        this.path.pop();
        continue;
      }
      seen.add(key);
      this.path.push(key);
      const value = this.convert(pair.value, depth);
      this.path.pop();
      // defineProperty, not assignment: a `__proto__` key is data, never the object's prototype.
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  private sequence(node: YAMLSeq, depth: number): unknown[] {
    const out: unknown[] = [];
    node.items.forEach((item, i) => {
      this.path.push(i);
      out.push(this.convert(item as YamlNode | null, depth));
      this.path.pop();
    });
    return out;
  }

  /** JSON keys are strings: a scalar key becomes its text, anything else is an error. */
  private key(node: YamlNode | null): string | undefined {
    let k: YamlNode | null | undefined = node;
    if (k && isAlias(k)) {
      const target = this.anchors.get(k.source);
      if (target) this.aliasTargets.set(k, target);
      k = target;
    }
    if (k == null) return '';
    if (isScalar(k)) return scalarKey(k);
    this.fail(node ?? k, 'a mapping key must be a string, not a collection');
    return undefined;
  }

  private fail(node: YamlNode, message: string, token?: string): void {
    this.diagnostics.push(
      error(PARSE_CLAUSE, message, {
        source: this.position(node),
        path: this.path.slice(this.relativeTo),
        ...(token !== undefined ? { token } : {}),
      }),
    );
  }

  private position(node: YamlNode): Position {
    return toPosition(this.file, this.lines, node.range?.[0] ?? 0);
  }

  sourceDoc(value: unknown, root: YamlNode | null, index: number, inCollection: boolean): SourceDoc {
    const { text, file, lines, aliasTargets } = this;
    const locate = (path: readonly (string | number)[]) => locateIn(root, path, file, lines, aliasTargets);
    return {
      value,
      file,
      index,
      inCollection,
      locate,
      locateText: (path, offset, length) => {
        const node = valueNodeIn(root, path, aliasTargets);
        if (!node || !isScalar(node) || typeof node.value !== 'string' || !node.range) return locate(path);
        const from = node.range[0];
        const style = YAML_STYLES[node.type ?? ''] ?? 'plain';
        return span(text, from, style, node.value, offset, length, (o) => toPosition(file, lines, o));
      },
    };
  }
}

function scalarKey(k: Scalar): string {
  if (typeof k.value === 'string') return k.value;
  // A plain non-string key reads as the author wrote it: `1.0:` is the key "1.0", not "1".
  if (typeof k.source === 'string') return k.source;
  return String(k.value);
}

const YAML_STYLES: Readonly<Record<string, ScalarStyle>> = {
  PLAIN: 'plain',
  QUOTE_SINGLE: 'single',
  QUOTE_DOUBLE: 'double',
  BLOCK_LITERAL: 'block',
  BLOCK_FOLDED: 'block',
};

/** The span of code points `[offset, offset + length)` of a string value that starts at `from`. */
function span(text: string, from: number, style: ScalarStyle, value: string, offset: number, length: number, pos: (offset: number) => Position): SourceLocation {
  const units = codePointsToUnits(value, offset, Math.max(1, length));
  const map = alignScalar(text, from, style, value, units[1]);
  if (map === undefined) return pos(from);
  const [s, e] = spanOf(map, units, from);
  const a = pos(s);
  const b = pos(e);
  return { ...a, endLine: b.line, endColumn: b.column };
}

/** The node at `path` itself (not its key), following aliases; undefined when there is none. */
function valueNodeIn(root: YamlNode | null, path: readonly (string | number)[], aliases: ReadonlyMap<YamlNode, YamlNode>): YamlNode | undefined {
  let node: YamlNode | null | undefined = root;
  for (const seg of path) {
    while (node && isAlias(node)) node = aliases.get(node);
    if (!node) return undefined;
    if (isMap(node) && typeof seg === 'string') {
      const pair: Pair<YamlNode | null, YamlNode | null> | undefined = (node.items as Pair<YamlNode | null, YamlNode | null>[]).find((p) => {
        const k = p.key && isAlias(p.key) ? aliases.get(p.key) : p.key;
        return k != null && isScalar(k) && scalarKey(k) === seg;
      });
      node = pair?.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg] as YamlNode | null | undefined;
    } else {
      return undefined;
    }
  }
  while (node && isAlias(node)) node = aliases.get(node);
  return node ?? undefined;
}

function locateIn(
  root: YamlNode | null,
  path: readonly (string | number)[],
  file: string,
  lines: LineCounter,
  aliases: ReadonlyMap<YamlNode, YamlNode>,
): Position {
  try {
    let node: YamlNode | null | undefined = root;
    let offset = root?.range?.[0] ?? 0;
    for (const seg of path) {
      while (node && isAlias(node)) node = aliases.get(node);
      if (!node) break;
      if (isMap(node) && typeof seg === 'string') {
        const pair: Pair<YamlNode | null, YamlNode | null> | undefined = (
          node.items as Pair<YamlNode | null, YamlNode | null>[]
        ).find((p) => {
          const k = p.key && isAlias(p.key) ? aliases.get(p.key) : p.key;
          return k != null && isScalar(k) && scalarKey(k) === seg;
        });
        if (!pair) break;
        offset = pair.key?.range?.[0] ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number' && Number.isInteger(seg) && seg >= 0 && seg < node.items.length) {
        node = node.items[seg] as YamlNode | null;
        offset = node?.range?.[0] ?? offset;
      } else {
        break;
      }
    }
    return toPosition(file, lines, offset);
  } catch {
    return { file, line: 1, column: 1 };
  }
}

// ---------------------------------------------------------------------------------------------
// JSON: one pass with positions (json.ts), at native-parser speed

/** Offset → 1-based line and column (UTF-16 units), as `LineCounter` gives them. */
function positionsIn(text: string, file: string): (offset: number) => Position {
  const starts = lineStarts(text);
  return (offset: number): Position => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { file, line: lo + 1, column: offset - (starts[lo] as number) + 1 };
  };
}

function parseJsonSource(text: string, file: string, limits: Limits, expand: boolean, maxNodes: number): ParseResult {
  const pos = positionsIn(text, file);
  let parsed: JsonParsed;
  try {
    parsed = parseJson(text, { maxDepth: limits.maxDepth, maxNodes, bigInts: limits.bigInts, nonFinite: limits.nonFinite });
  } catch (e) {
    if (!(e instanceof JsonError)) throw e;
    const extra = e.token === undefined ? {} : { token: e.token };
    const message = e.message.startsWith('document nests') || e.message.startsWith('document has more') ? e.message : `JSON syntax error: ${e.message}`;
    return { docs: [], diagnostics: [error(PARSE_CLAUSE, message, { source: pos(e.offset), ...extra })] };
  }
  const doc = (value: unknown, at: JsonPos, index: number, inCollection: boolean): SourceDoc => ({
    value,
    file,
    index,
    inCollection,
    locate: (path) => pos(locateJson(at, path)),
    locateText: (path, offset, length) => {
      const node = jsonNodeAt(at, path);
      const v = valueAt(value, path);
      if (node === undefined || typeof v !== 'string') return pos(locateJson(at, path));
      return span(text, node.at, 'json', v, offset, length, pos);
    },
  });
  if (expand && Array.isArray(parsed.value)) {
    const items = parsed.pos.items ?? [];
    const docs = parsed.value.map((v, i) => doc(v, items[i] as JsonPos, i, true));
    const diagnostics = docs.length === 0 ? [warning(PARSE_CLAUSE, `\`${file}\` contains no document`, { source: { file, line: 1, column: 1 }, token: file })] : [];
    return { docs, diagnostics };
  }
  return { docs: [doc(parsed.value, parsed.pos, 0, false)], diagnostics: [] };
}

function jsonNodeAt(root: JsonPos, path: readonly (string | number)[]): JsonPos | undefined {
  let node: JsonPos | undefined = root;
  for (const seg of path) {
    if (node === undefined) return undefined;
    node = typeof seg === 'string' ? node.keys?.get(seg)?.value : node.items?.[seg];
  }
  return node;
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let v = root;
  for (const seg of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, seg)) return undefined;
    v = (v as Record<string | number, unknown>)[seg];
  }
  return v;
}

function lineStarts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function toPosition(file: string, lines: LineCounter, offset: number): Position {
  const { line, col } = lines.linePos(offset);
  return { file, line, column: col };
}

function firstLine(s: string): string {
  const i = s.indexOf('\n');
  return (i < 0 ? s : s.slice(0, i)).trim();
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
