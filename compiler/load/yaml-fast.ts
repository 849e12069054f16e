/**
 * A fast reader for the plain subset of YAML that rule packs are written in: block mappings and
 * sequences indented with spaces, plain and quoted one-line scalars, one-line flow collections,
 * literal and folded block scalars without blank lines, comments, `---` between documents.
 *
 * It exists for speed alone: the `yaml` package reads about 2 MB/s of rule text (a 10,000-rule
 * pack spends over half its compile time there), and this subset, read line by line, goes at the
 * speed of string scanning. It is an optimisation with the full pipeline as its oracle, never a
 * second YAML dialect (the mapping of YAML to JSON must be lossless, [OAR-DOC-1]): any text it is
 * not sure of (a tab, a CR, an anchor, a tag, a multi-line plain or quoted scalar, a duplicate
 * key, `.inf`, anything a YAML error or warning could be raised for) makes it answer `undefined`,
 * and the caller reads the file with the `yaml` package as before (source.ts). For text it accepts, the
 * values, the documents and their positions must equal the full pipeline's exactly:
 * test/load/yaml-fast.test.ts compares the two on every YAML file in the repository, on generated
 * packs, and on random and mutated documents.
 *
 * Only a document's own position is computed here; every other position (a diagnostic inside a
 * rule, the span of a condition) comes from the full pipeline, run on demand by the caller.
 */

export interface FastDoc {
  value: unknown;
  /**
   * Where the document's root node starts (its first key, or its first `-`; `Node.range[0]` in the
   * full pipeline): 1-based line and column in UTF-16 units, as `LineCounter` gives them.
   */
  line: number;
  column: number;
  index: number;
  inCollection: boolean;
}

type Start = Pick<FastDoc, 'line' | 'column'>;

export interface FastOptions {
  maxDepth: number;
  bigInts: boolean;
  /** Expand a lone top-level sequence into one document per item ([OAR-DOC-31]). */
  expand: boolean;
}

/** Characters the subset leaves to the full reader: controls, CR and tab, C1, surrogates, BOM, non-characters. */
const UNSURE_CHAR = /[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\ufeff\ufffe\uffff]/;

// The YAML 1.2 core schema's plain-scalar tags, as the `yaml` package resolves them.
const NULL = /^(?:~|[Nn]ull|NULL)$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;
const NON_FINITE = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

const SPACE = 0x20;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;
const COMMA = 0x2c;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const BACKSLASH = 0x5c;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const PIPE = 0x7c;
const GT = 0x3e;

/** A character that cannot begin a plain scalar or key here: YAML's indicators. */
function isIndicator(c: number): boolean {
  // - ? : , [ ] { } # & * ! | > ' " % @ `
  return (
    c === DASH || c === 0x3f || c === COLON || c === COMMA || c === LBRACKET || c === RBRACKET || c === LBRACE || c === RBRACE ||
    c === HASH || c === 0x26 || c === 0x2a || c === 0x21 || c === PIPE || c === GT || c === SQUOTE || c === DQUOTE || c === 0x25 ||
    c === 0x40 || c === 0x60
  );
}

/** Nesting the reader recurses into at most (source.ts `HARD_MAX_DEPTH`). */
const MAX_NESTING = 256;

/** Keys longer than this are left to the full reader (YAML limits implicit keys to 1024 characters). */
const MAX_KEY = 1000;

const ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
};

// Offsets: `e` is a line's end, where the text holds `\n` or ends, so a character test at `e`
// fails without a bounds check.

/** Thrown to leave the subset; caught once, by `fastYaml`. */
class NotInSubset extends Error {}
const NOT_IN_SUBSET = new NotInSubset();

function unsure(): never {
  throw NOT_IN_SUBSET;
}

/** The documents of `text`, or undefined when the text is not in the subset. */
export function fastYaml(text: string, opts: FastOptions): FastDoc[] | undefined {
  if (UNSURE_CHAR.test(text)) return undefined;
  try {
    return new Reader(text, opts).read();
  } catch (e) {
    if (e === NOT_IN_SUBSET) return undefined;
    throw e;
  }
}

class Reader {
  /** Offset of each line's first character. */
  private readonly starts: number[] = [];
  /** Offset of each line's end (its `\n`, or the text's end). */
  private readonly ends: number[] = [];
  private line = 0;
  /** Last line (exclusive) of the document being read. */
  private stop = 0;
  /** Column where the current line's unread content starts: its indentation, or past a `- `. */
  private col = 0;

  constructor(
    private readonly t: string,
    private readonly opts: FastOptions,
  ) {
    let s = 0;
    for (let i = t.indexOf('\n'); i !== -1; i = t.indexOf('\n', i + 1)) {
      this.starts.push(s);
      this.ends.push(i);
      s = i + 1;
    }
    if (s < t.length) {
      this.starts.push(s);
      this.ends.push(t.length);
    }
  }

  read(): FastDoc[] {
    const t = this.t;
    // Documents: the lines between `---` markers. Anything else at column 0 that YAML treats as
    // stream syntax (`...`, `%` directives, `---` with more on its line) is left to the full reader.
    const bounds: [number, number][] = [];
    let from = 0;
    let marked = false;
    for (let i = 0; i < this.starts.length; i++) {
      const s = this.starts[i]!;
      const c = t.charCodeAt(s);
      if (c === 0x25) unsure();
      if ((c === DASH || c === 0x2e) && (t.startsWith('---', s) || t.startsWith('...', s))) {
        if (c === 0x2e || this.ends[i] !== s + 3) unsure();
        if (i > from || marked) bounds.push([from, i]);
        from = i + 1;
        marked = true;
      }
    }
    bounds.push([from, this.starts.length]);
    const roots: { value: unknown; at: Start; seq: boolean; items?: Start[] }[] = [];
    for (const [a, b] of bounds) {
      this.line = a;
      this.stop = b;
      this.skipBlank();
      if (this.line >= b) {
        // Only comments before the first `---` are no document; an empty one anywhere else is.
        if (a === 0 && marked && b !== this.starts.length) continue;
        unsure();
      }
      const at = this.start();
      let root;
      if (this.isSeqItem()) {
        const items: Start[] = [];
        root = { value: this.seq(this.col, 1, items), at, seq: true, items };
      } else {
        root = { value: this.map(this.col, 1), at, seq: false };
      }
      this.skipBlank();
      if (this.line < b) unsure();
      roots.push(root);
    }
    if (roots.length === 1) {
      const r = roots[0]!;
      if (this.opts.expand && r.seq) {
        return (r.value as unknown[]).map((value, i) => ({ value, ...r.items![i]!, index: i, inCollection: true }));
      }
      return [{ value: r.value, ...r.at, index: 0, inCollection: false }];
    }
    return roots.map((r, i) => ({ value: r.value, ...r.at, index: i, inCollection: true }));
  }

  /** Where the current line's unread content starts. */
  private start(): Start {
    return { line: this.line + 1, column: this.col + 1 };
  }

  // -------------------------------------------------------------------------------------------
  // Lines

  /** Moves past blank and comment-only lines; `col` becomes the new line's indentation. */
  private skipBlank(): void {
    const t = this.t;
    for (; this.line < this.stop; this.line++) {
      const s = this.starts[this.line]!;
      const e = this.ends[this.line]!;
      let p = s;
      while (p < e && t.charCodeAt(p) === SPACE) p++;
      if (p < e && t.charCodeAt(p) !== HASH) {
        this.col = p - s;
        return;
      }
    }
  }

  private indentOf(line: number): number {
    const s = this.starts[line]!;
    const e = this.ends[line]!;
    let p = s;
    while (p < e && this.t.charCodeAt(p) === SPACE) p++;
    return p - s;
  }

  private isSeqItem(): boolean {
    const p = this.starts[this.line]! + this.col;
    if (this.t.charCodeAt(p) !== DASH) return false;
    return p + 1 === this.ends[this.line] || this.t.charCodeAt(p + 1) === SPACE;
  }

  /** Next line: its content is read from its indentation. */
  private nextLine(): void {
    this.line++;
    this.skipBlank();
  }

  /** After a value that ended at `p`: only spaces, then a comment or the line's end. */
  private endOfLine(p: number): void {
    const t = this.t;
    const e = this.ends[this.line]!;
    if (p === e) return;
    if (t.charCodeAt(p) !== SPACE) unsure();
    while (p < e && t.charCodeAt(p) === SPACE) p++;
    if (p < e && t.charCodeAt(p) !== HASH) unsure();
  }

  // -------------------------------------------------------------------------------------------
  // Block collections

  private depth(d: number): void {
    // Capped as source.ts caps every caller's depth, so the recursion stays shallow whatever is asked.
    if (d >= Math.min(this.opts.maxDepth, MAX_NESTING)) unsure();
  }

  /** A block mapping whose keys sit at column `ind`; the current line holds its first key. */
  private map(ind: number, depth: number): Record<string, unknown> {
    this.depth(depth);
    const t = this.t;
    const out: Record<string, unknown> = {};
    for (;;) {
      const e = this.ends[this.line]!;
      const [key, afterColon] = this.blockKey(this.starts[this.line]! + this.col, e);
      const p = skipSpaces(t, afterColon, e);
      let value: unknown;
      const c = t.charCodeAt(p);
      if (p === e || c === HASH) value = this.nested(ind, depth);
      else if (c === PIPE || c === GT) value = this.blockScalar(p, ind);
      else {
        value = this.inline(p, depth);
        this.nextLine();
      }
      setMember(out, key, value);
      if (this.line >= this.stop || this.col < ind) return out;
      if (this.col > ind || this.isSeqItem()) unsure();
    }
  }

  /** A block sequence whose `-` sit at column `ind`; the current line holds its first item. */
  private seq(ind: number, depth: number, at?: Start[]): unknown[] {
    this.depth(depth);
    const t = this.t;
    const out: unknown[] = [];
    for (;;) {
      const s = this.starts[this.line]!;
      const e = this.ends[this.line]!;
      const p = skipSpaces(t, s + ind + 1, e);
      const c = t.charCodeAt(p);
      // An item on the lines after its `-`: its position is the full reader's to give.
      if (p === e || c === HASH) unsure();
      this.col = p - s;
      at?.push(this.start());
      if (c === PIPE || c === GT) out.push(this.blockScalar(p, ind));
      else if (this.isSeqItem()) out.push(this.seq(this.col, depth + 1));
      else if (this.startsKey(p, e)) out.push(this.map(this.col, depth + 1));
      else {
        out.push(this.inline(p, depth));
        this.nextLine();
      }
      if (this.line >= this.stop || this.col < ind) return out;
      if (this.col > ind) unsure();
      if (!this.isSeqItem()) return out; // `key:` at the column of a sequence that is its value
    }
  }

  /** The value of `key:` with nothing after it on its line: a nested collection, or null. */
  private nested(ind: number, depth: number): unknown {
    this.nextLine();
    if (this.line >= this.stop || this.col < ind) return null;
    if (this.col === ind) {
      // A sequence may sit at its key's column; anything else there is the next key.
      return this.isSeqItem() ? this.seq(ind, depth + 1) : null;
    }
    if (this.isSeqItem()) return this.seq(this.col, depth + 1);
    const p = this.starts[this.line]! + this.col;
    if (!this.startsKey(p, this.ends[this.line]!)) unsure(); // a scalar on the next line
    return this.map(this.col, depth + 1);
  }

  /** Whether a mapping key followed by `: ` (or `:` and the line's end) starts at `p`. */
  private startsKey(p: number, e: number): boolean {
    const t = this.t;
    const c = t.charCodeAt(p);
    let q: number;
    if (c === DQUOTE || c === SQUOTE) {
      q = quotedEnd(t, p, e);
      if (q < 0) return false;
    } else {
      if (isIndicator(c)) return false;
      q = plainKeyEnd(t, p, e);
    }
    return t.charCodeAt(q) === COLON && (q + 1 === e || t.charCodeAt(q + 1) === SPACE);
  }

  /** A block mapping key at `p`: its text and the offset past its `:`. */
  private blockKey(p: number, e: number): [string, number] {
    const t = this.t;
    const c = t.charCodeAt(p);
    let key: string;
    let q: number;
    if (c === DQUOTE || c === SQUOTE) {
      [key, q] = this.quoted(p, e);
    } else {
      if (isIndicator(c)) unsure();
      q = plainKeyEnd(t, p, e);
      if (q === p) unsure();
      // A plain key is read as the author wrote it, whatever its type (source.ts `scalarKey`).
      key = t.slice(p, q);
    }
    if (q - p > MAX_KEY || t.charCodeAt(q) !== COLON) unsure();
    if (q + 1 < e && t.charCodeAt(q + 1) !== SPACE) unsure();
    return [key, q + 1];
  }

  // -------------------------------------------------------------------------------------------
  // Scalars and flow collections on one line

  /** The value starting at `p` and ending its line (block context). */
  private inline(p: number, depth: number): unknown {
    const t = this.t;
    const e = this.ends[this.line]!;
    const c = t.charCodeAt(p);
    if (c === DQUOTE || c === SQUOTE) {
      const [value, q] = this.quoted(p, e);
      this.endOfLine(q);
      return value;
    }
    if (c === LBRACKET || c === LBRACE) {
      const [value, q] = this.flow(p, e, depth + 1);
      this.endOfLine(q);
      return value;
    }
    if (!plainStart(t, p, e)) unsure();
    let end = p;
    while (end < e && !(t.charCodeAt(end) === HASH && t.charCodeAt(end - 1) === SPACE)) end++;
    const s = t.slice(p, trimSpaces(t, p, end));
    // `a: b: c` and `a: b:` are errors for YAML; left to it to say so.
    if (s.includes(': ') || s.charCodeAt(s.length - 1) === COLON) unsure();
    return this.plain(s);
  }

  /** A flow collection from `p` to its bracket on the same line: its value and the offset past it. */
  private flow(p: number, e: number, depth: number): [unknown, number] {
    this.depth(depth);
    const t = this.t;
    const isMap = t.charCodeAt(p) === LBRACE;
    const close = isMap ? RBRACE : RBRACKET;
    const out: Record<string, unknown> | unknown[] = isMap ? {} : [];
    p = skipSpaces(t, p + 1, e);
    if (t.charCodeAt(p) === close) return [out, p + 1];
    for (;;) {
      if (isMap) {
        const [key, q] = this.flowKey(p, e);
        const [value, r] = this.flowValue(skipSpaces(t, q, e), e, depth);
        setMember(out as Record<string, unknown>, key, value);
        p = r;
      } else {
        const [value, r] = this.flowValue(p, e, depth);
        (out as unknown[]).push(value);
        p = r;
      }
      p = skipSpaces(t, p, e);
      const c = t.charCodeAt(p);
      if (c === close) return [out, p + 1];
      if (c !== COMMA) unsure();
      p = skipSpaces(t, p + 1, e);
      if (t.charCodeAt(p) === close) unsure(); // a trailing comma
    }
  }

  /** A flow mapping key at `p` and its `:`: the key and the offset past the `:`. */
  private flowKey(p: number, e: number): [string, number] {
    const t = this.t;
    const c = t.charCodeAt(p);
    if (c === DQUOTE || c === SQUOTE) {
      const [key, q] = this.quoted(p, e);
      if (t.charCodeAt(q) !== COLON) unsure();
      return [key, q + 1];
    }
    if (isIndicator(c)) unsure();
    const q = plainKeyEnd(t, p, e);
    if (q === p || q - p > MAX_KEY || t.charCodeAt(q) !== COLON || t.charCodeAt(q + 1) !== SPACE) unsure();
    return [t.slice(p, q), q + 1];
  }

  /** A value inside a flow collection: its value and the offset past it. */
  private flowValue(p: number, e: number, depth: number): [unknown, number] {
    const t = this.t;
    const c = t.charCodeAt(p);
    if (p >= e) unsure();
    if (c === DQUOTE || c === SQUOTE) return this.quoted(p, e);
    if (c === LBRACKET || c === LBRACE) return this.flow(p, e, depth + 1);
    if (!plainStart(t, p, e)) unsure();
    let q = p;
    for (; q < e; q++) {
      const d = t.charCodeAt(q);
      if (d === COMMA || d === RBRACKET || d === RBRACE) break;
      // `[a: b]` is a one-pair mapping, `[a #b]` a comment, `[a[b]` an error: all the full reader's.
      if (d === LBRACKET || d === LBRACE || d === COLON || (d === HASH && t.charCodeAt(q - 1) === SPACE)) unsure();
    }
    return [this.plain(t.slice(p, trimSpaces(t, p, q))), q];
  }

  /** A one-line quoted scalar at `p`: its value and the offset past its closing quote. */
  private quoted(p: number, e: number): [string, number] {
    const t = this.t;
    const q = t.charCodeAt(p);
    if (q === SQUOTE) {
      let out = '';
      let from = p + 1;
      for (;;) {
        const i = t.indexOf("'", from);
        if (i === -1 || i >= e) unsure();
        out += t.slice(from, i);
        if (t.charCodeAt(i + 1) === SQUOTE) {
          out += "'";
          from = i + 2;
        } else {
          return [out, i + 1];
        }
      }
    }
    let out = '';
    let i = p + 1;
    let from = i;
    for (; i < e; i++) {
      const c = t.charCodeAt(i);
      if (c === DQUOTE) return [out + t.slice(from, i), i + 1];
      if (c !== BACKSLASH) continue;
      out += t.slice(from, i);
      const n = t[i + 1];
      if (n === undefined || i + 1 >= e) unsure();
      const simple = ESCAPES[n];
      if (simple !== undefined) {
        out += simple;
        i++;
      } else if (n === 'x' || n === 'u' || n === 'U') {
        const len = n === 'x' ? 2 : n === 'u' ? 4 : 8;
        const hex = t.slice(i + 2, i + 2 + len);
        if (hex.length !== len || i + 2 + len > e || !/^[0-9a-fA-F]+$/.test(hex)) unsure();
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) unsure();
        out += String.fromCodePoint(code);
        i += 1 + len;
      } else {
        unsure();
      }
      from = i + 1;
    }
    return unsure();
  }

  /** A block scalar whose header (`|`, `|-`, `>`, `>-`) is at `p`, under a node at column `parent`. */
  private blockScalar(p: number, parent: number): string {
    const t = this.t;
    const e = this.ends[this.line]!;
    const folded = t.charCodeAt(p) === GT;
    const strip = t.charCodeAt(p + 1) === DASH;
    // Indentation indicators, keep chomping and comments after the header are the full reader's.
    if (skipSpaces(t, p + (strip ? 2 : 1), e) !== e) unsure();
    const first = this.line + 1;
    if (first >= this.stop) unsure();
    const n = this.indentOf(first);
    if (n <= parent || this.starts[first]! + n === this.ends[first]) unsure();
    const parts: string[] = [];
    let i = first;
    for (; i < this.stop; i++) {
      const ind = this.indentOf(i);
      const blank = this.starts[i]! + ind === this.ends[i];
      if (blank || ind < n) break;
      if (folded && (ind > n || t.charCodeAt(this.ends[i]! - 1) === SPACE)) unsure();
      parts.push(t.slice(this.starts[i]! + n, this.ends[i]));
    }
    // Blank lines inside the scalar (a blank line, then more of it) are the full reader's.
    // A line of spaces as deep as the content is content (spaces) to YAML: also the full reader's.
    let j = i;
    for (; j < this.stop && this.starts[j]! + this.indentOf(j) === this.ends[j]; j++) {
      if (this.ends[j]! - this.starts[j]! >= n) unsure();
    }
    if (j < this.stop && j > i && this.indentOf(j) >= n) unsure();
    // Clip keeps the final line break, which the last line lacks at the end of the text.
    if (!strip && this.ends[i - 1] === t.length) unsure();
    this.line = i - 1;
    this.nextLine();
    return parts.join(folded ? ' ' : '\n') + (strip ? '' : '\n');
  }

  /** A plain scalar's value under the YAML 1.2 core schema. */
  private plain(s: string): unknown {
    const c = s.charCodeAt(0);
    if (c === 0x7e || c === 0x6e || c === 0x4e) if (NULL.test(s)) return null;
    if (BOOL.test(s)) return s.charCodeAt(0) === 0x74 || s.charCodeAt(0) === 0x54;
    if ((c >= 0x30 && c <= 0x39) || c === DASH || c === 0x2b || c === 0x2e) {
      if (INT.test(s)) {
        const neg = c === DASH;
        const big = BigInt(neg || c === 0x2b ? s.slice(1) : s);
        const v = neg ? -big : big;
        const n = Number(v);
        if (Number.isSafeInteger(n)) return n; // a bigint has no -0
        return this.opts.bigInts ? v : n;
      }
      if (NON_FINITE.test(s)) unsure();
      if (FLOAT.test(s)) {
        const v = parseFloat(s);
        if (!Number.isFinite(v)) unsure();
        return v;
      }
    }
    return s;
  }
}

/** Sets a member of a mapping being read: a duplicate is the full reader's to name; `__proto__` is data, an own member. */
function setMember(out: Record<string, unknown>, key: string, value: unknown): void {
  if (Object.hasOwn(out, key)) unsure();
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** The end of a plain key from `p`: the first `:`, space, comment or flow indicator. */
function plainKeyEnd(t: string, p: number, e: number): number {
  let q = p;
  while (q < e && !isKeyStop(t.charCodeAt(q))) q++;
  return q;
}

/** `end`, moved back over the spaces before it (not past `p`). */
function trimSpaces(t: string, p: number, end: number): number {
  while (end > p && t.charCodeAt(end - 1) === SPACE) end--;
  return end;
}

/** Characters that end a plain key: `:`, a space, a comment, a flow indicator. */
function isKeyStop(c: number): boolean {
  return c === COLON || c === SPACE || c === HASH || c === COMMA || c === LBRACKET || c === RBRACKET || c === LBRACE || c === RBRACE;
}

/** Whether a plain scalar may begin at `p`: not an indicator, except `-` or `.` before a digit (`-1`, `.5`). */
function plainStart(t: string, p: number, e: number): boolean {
  if (p >= e) return false;
  const c = t.charCodeAt(p);
  if (!isIndicator(c)) return true;
  const d = t.charCodeAt(p + 1);
  return c === DASH && p + 1 < e && ((d >= 0x30 && d <= 0x39) || d === 0x2e);
}

/** The offset past the closing quote of the one-line quoted scalar at `p`, or -1. */
function quotedEnd(t: string, p: number, e: number): number {
  const quote = t.charCodeAt(p);
  for (let i = p + 1; i < e; i++) {
    const c = t.charCodeAt(i);
    if (quote === DQUOTE && c === BACKSLASH) i++;
    else if (c === quote) {
      if (quote === SQUOTE && t.charCodeAt(i + 1) === SQUOTE) i++;
      else return i + 1;
    }
  }
  return -1;
}

function skipSpaces(t: string, p: number, e: number): number {
  while (p < e && t.charCodeAt(p) === SPACE) p++;
  return p;
}
