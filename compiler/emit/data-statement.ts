/**
 * The self-check's fast path for statements that are data (DESIGN rule 5): a bucket's data array
 * (`const B7 = [T2, "acme/A", w0, 3];`) and the bundle itself (`export default {…};`, a script's
 * `return {…};`) — most of a large bundle's text.
 *
 * They are checked against a grammar far narrower than JavaScript's: JSON strings, numbers and
 * keywords, names, arrays and objects with string keys (and the computed `["__proto__"]` key
 * bundle.ts writes), spaces and line feeds. Every text in that grammar is, to a JavaScript parser,
 * exactly one statement ending with its own `;` whose value is that structure, and whose only
 * references are its names — so the checks acorn and the scope walk would make of it reduce to the
 * ones made here: which names it declares and references. Nothing in the grammar can call, read a
 * member, write, or be a pattern. A text outside it (a name that is a reserved word, a
 * non-computed `"__proto__"` key, a tab, a deep nesting) is not refused here: it is handed to
 * acorn, as every statement was before, so this path decides speed only.
 */

export interface DataStatement {
  /** The top-level name a `const` declares; undefined for `export default` and `return`. */
  declares?: string;
  exportsDefault: boolean;
  /** Each name the value references, with the offset of its first reference. */
  references: Map<string, number>;
}

const NAME_START = /[A-Za-z_$]/;
const NAME = /^[A-Za-z_$][\w$]*$/;
// Sticky: each matches at `lastIndex` exactly.
const NAME_AT = /[A-Za-z_$][\w$]*/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** JSON's string grammar: no raw control characters, only JSON's escapes (unrolled: linear, no deep backtracking). */
const STRING = /"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"/y;

/** Names that are not plain references: reserved words and the names strict code cannot bind. */
const RESERVED: ReadonlySet<string> = new Set(
  (
    'await break case catch class const continue debugger default delete do else enum export extends false finally for function if ' +
    'implements import in instanceof interface let new null package private protected public return static super switch this throw ' +
    'true try typeof var void while with yield arguments eval async of get set'
  ).split(' '),
);

/** Nesting past this is handed to acorn rather than recursed into here. */
const MAX_NESTING = 200;

class NotData extends Error {}
const NOT_DATA = new NotData();

function notData(): never {
  throw NOT_DATA;
}

/** The statement's declarations and references when `text` is a data statement; undefined otherwise. */
export function dataStatement(text: string): DataStatement | undefined {
  let start: number;
  let declares: string | undefined;
  let exportsDefault = false;
  if (text.startsWith('const ')) {
    const eq = text.indexOf(' = ', 6);
    if (eq === -1) return undefined;
    declares = text.slice(6, eq);
    if (!NAME.test(declares) || RESERVED.has(declares)) return undefined;
    start = eq + 3;
  } else if (text.startsWith('export default ')) {
    exportsDefault = true;
    start = 15;
  } else if (text.startsWith('return ')) {
    start = 7;
  } else {
    return undefined;
  }
  const c = text.charCodeAt(start);
  // Only a literal or a name may follow: `export default function` and the like are acorn's.
  if (c !== 0x5b && c !== 0x7b && c !== 0x22 && !NAME_START.test(text[start] ?? '')) return undefined;
  const reader = new DataReader(text);
  try {
    const end = reader.value(start, 0);
    if (end !== text.length - 1 || text.charCodeAt(end) !== 0x3b) return undefined;
  } catch (e) {
    if (e === NOT_DATA) return undefined;
    throw e;
  }
  return { ...(declares !== undefined ? { declares } : {}), exportsDefault, references: reader.references };
}

class DataReader {
  readonly references = new Map<string, number>();

  constructor(private readonly t: string) {}

  private space(p: number): number {
    const t = this.t;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c !== 0x20 && c !== 0x0a) return p;
      p++;
    }
  }

  /** One value from `p` (no space before it); the offset past it. */
  value(p: number, depth: number): number {
    if (depth > MAX_NESTING) notData();
    const t = this.t;
    const c = t.charCodeAt(p);
    if (c === 0x22) return this.string(p);
    if (c === 0x5b) return this.list(p, depth);
    if (c === 0x7b) return this.object(p, depth);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number(p);
    NAME_AT.lastIndex = p;
    if (!NAME_AT.test(t)) notData();
    const q = NAME_AT.lastIndex;
    const name = t.slice(p, q);
    if (name === 'true' || name === 'false' || name === 'null') return q;
    if (RESERVED.has(name)) notData();
    if (!this.references.has(name)) this.references.set(name, p);
    return q;
  }

  private list(p: number, depth: number): number {
    const t = this.t;
    p = this.space(p + 1);
    if (t.charCodeAt(p) === 0x5d) return p + 1;
    for (;;) {
      p = this.space(this.value(p, depth + 1));
      const c = t.charCodeAt(p);
      if (c === 0x5d) return p + 1;
      if (c !== 0x2c) notData();
      p = this.space(p + 1);
    }
  }

  private object(p: number, depth: number): number {
    const t = this.t;
    p = this.space(p + 1);
    if (t.charCodeAt(p) === 0x7d) return p + 1;
    for (;;) {
      let q: number;
      if (t.charCodeAt(p) === 0x5b) {
        // A computed key: a string literal only, so the member is an own property whatever it says.
        q = this.string(p + 1);
        if (t.charCodeAt(q) !== 0x5d) notData();
        q++;
      } else {
        q = this.string(p);
        // `"__proto__": v` sets the prototype instead of a member — however its name is spelled
        // (`"\u005f_proto__"` too): acorn's to judge.
        const key = t.slice(p, q);
        if (key === '"__proto__"' || (key.includes('\\') && JSON.parse(key) === '__proto__')) notData();
      }
      if (t.charCodeAt(q) !== 0x3a) notData();
      p = this.space(this.value(this.space(q + 1), depth + 1));
      const c = t.charCodeAt(p);
      if (c === 0x7d) return p + 1;
      if (c !== 0x2c) notData();
      p = this.space(p + 1);
    }
  }

  /** A JSON string (which is a JavaScript string literal of the same value); the offset past it. */
  private string(p: number): number {
    STRING.lastIndex = p;
    if (!STRING.test(this.t)) notData();
    return STRING.lastIndex;
  }

  /** A JSON number, sign included (unary minus on the literal, to JavaScript: the same value). */
  private number(p: number): number {
    NUMBER.lastIndex = p;
    if (!NUMBER.test(this.t)) notData();
    // What follows must be a delimiter, as after every value: `1in`, `1.`, `0x1` leave the grammar there.
    return NUMBER.lastIndex;
  }
}
