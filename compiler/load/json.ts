/**
 * A JSON parser that keeps source positions, for rule packs written as JSON.
 *
 * JSON files used to go through the YAML library like YAML files, which parses about 1 MB/s and
 * grows worse than linearly on large flow collections: a 10,000-rule pack took many seconds. This
 * single pass over the text runs at native-parser speed and gives everything the loader needs:
 * exact values (integers outside ±(2^53−1) as `bigint` on request), duplicate keys named
 * ([OAR-DOC-1]: the mapping to JSON must be lossless), a depth limit that ends in an error rather
 * than a stack overflow, non-finite numbers refused, and a position for every key and element so a
 * diagnostic can name `file:line:col`.
 */
import { didYouMean } from '../../runtime/suggest.js';

/** Where a value starts, and the positions of its members. */
export interface JsonPos {
  readonly at: number;
  readonly keys?: Map<string, { readonly keyAt: number; readonly value: JsonPos }>;
  readonly items?: JsonPos[];
}

export interface JsonParsed {
  value: unknown;
  pos: JsonPos;
}

export class JsonError {
  constructor(
    readonly message: string,
    readonly offset: number,
    readonly token?: string,
  ) {}
}

export interface JsonOptions {
  maxDepth: number;
  /** Values (every scalar, array and object) beyond which the document is refused. */
  maxNodes?: number;
  bigInts: boolean;
  /** A number beyond the binary64 range reads as ±Infinity instead of being refused. */
  nonFinite?: boolean;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
/** A bare word where a value should be: `not`, `yes`, `nul`, `True`. */
const WORD = /[A-Za-z_$][\w$.-]*/y;
const LITERALS = ['true', 'false', 'null'];
const A_VALUE = 'a JSON value is an object, an array, a string in double quotes, a number, true, false or null';
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const SAFE = Number.MAX_SAFE_INTEGER;

export function parseJson(text: string, opts: JsonOptions): JsonParsed {
  const p = new Parser(text, opts);
  p.ws();
  const out = p.value(1);
  p.ws();
  if (p.i < text.length) throw new JsonError('unexpected text after the JSON value', p.i);
  return out;
}

class Parser {
  i = 0;
  private nodes = 0;
  constructor(
    private readonly s: string,
    private readonly opts: JsonOptions,
  ) {}

  ws(): void {
    const s = this.s;
    while (this.i < s.length && WS.has(s.charCodeAt(this.i))) this.i++;
  }

  value(depth: number): JsonParsed {
    const s = this.s;
    const at = this.i;
    if (++this.nodes > (this.opts.maxNodes ?? Infinity)) throw new JsonError(`document has more than ${this.opts.maxNodes} values; it was not parsed`, at);
    const c = s[at];
    switch (c) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
        return { value: this.string(), pos: { at } };
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        if (c !== undefined && /[A-Za-z_$]/.test(c)) this.unexpectedWord(at);
        throw new JsonError(c === undefined ? 'unexpected end of JSON text' : `unexpected character ${JSON.stringify(c)}`, at);
    }
  }

  private enter(depth: number): void {
    if (depth > this.opts.maxDepth) throw new JsonError(`document nests deeper than ${this.opts.maxDepth} levels; it was not parsed`, this.i);
  }

  private object(depth: number): JsonParsed {
    this.enter(depth);
    const s = this.s;
    const at = this.i++;
    const value: Record<string, unknown> = {};
    const keys = new Map<string, { keyAt: number; value: JsonPos }>();
    this.ws();
    if (s[this.i] === '}') {
      this.i++;
      return { value, pos: { at, keys } };
    }
    for (;;) {
      this.ws();
      const keyAt = this.i;
      if (s[keyAt] !== '"') throw new JsonError('expected a string key', keyAt);
      const key = this.string();
      if (keys.has(key)) throw new JsonError(`duplicate key ${JSON.stringify(key)}`, keyAt, key);
      this.ws();
      if (s[this.i] !== ':') throw new JsonError("expected ':' after a key", this.i);
      this.i++;
      this.ws();
      const member = this.value(depth + 1);
      // An own data property even for "__proto__": the value is data, never a prototype.
      Object.defineProperty(value, key, { value: member.value, enumerable: true, writable: true, configurable: true });
      keys.set(key, { keyAt, value: member.pos });
      this.ws();
      const d = s[this.i++];
      if (d === '}') return { value, pos: { at, keys } };
      if (d !== ',') throw new JsonError("expected ',' or '}'", this.i - 1);
    }
  }

  private array(depth: number): JsonParsed {
    this.enter(depth);
    const s = this.s;
    const at = this.i++;
    const value: unknown[] = [];
    const items: JsonPos[] = [];
    this.ws();
    if (s[this.i] === ']') {
      this.i++;
      return { value, pos: { at, items } };
    }
    for (;;) {
      this.ws();
      const item = this.value(depth + 1);
      value.push(item.value);
      items.push(item.pos);
      this.ws();
      const d = s[this.i++];
      if (d === ']') return { value, pos: { at, items } };
      if (d !== ',') throw new JsonError("expected ',' or ']'", this.i - 1);
    }
  }

  private literal(word: string, v: boolean | null): JsonParsed {
    const at = this.i;
    if (!this.s.startsWith(word, at)) this.unexpectedWord(at);
    this.i += word.length;
    return { value: v, pos: { at } };
  }

  /**
   * A word that is no JSON literal, quoted whole: "expected null" for `not json` named what the
   * parser was hoping for from the first letter, not what the text holds.
   */
  private unexpectedWord(at: number): never {
    WORD.lastIndex = at;
    const word = (WORD.exec(this.s)?.[0] ?? this.s.slice(at, at + 1)).slice(0, 40);
    throw new JsonError(`unexpected \`${word}\` where a value should be${didYouMean(word, LITERALS)}; ${A_VALUE}`, at);
  }

  private number(): JsonParsed {
    const at = this.i;
    NUMBER.lastIndex = at;
    const m = NUMBER.exec(this.s);
    if (m === null) throw new JsonError('malformed number', at);
    this.i = NUMBER.lastIndex;
    const text = m[0];
    const integer = m[1] === undefined && m[2] === undefined;
    const n = Number(text);
    if (integer && this.opts.bigInts && (n > SAFE || n < -SAFE)) return { value: BigInt(text), pos: { at } };
    if (integer && n === 0) return { value: 0, pos: { at } }; // `-0` is the integer zero
    if (!Number.isFinite(n) && this.opts.nonFinite !== true) throw new JsonError(`number ${text} is not a finite binary64 value`, at);
    return { value: n, pos: { at } };
  }

  /** A JSON string literal at `i`, decoded; the surrounding positions are the caller's. */
  private string(): string {
    const s = this.s;
    let i = this.i + 1;
    let out = '';
    let run = i;
    for (;;) {
      if (i >= s.length) throw new JsonError('unterminated string', this.i);
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        out += s.slice(run, i);
        this.i = i + 1;
        return out;
      }
      if (c < 0x20) throw new JsonError('control character in a string (escape it)', i);
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += s.slice(run, i);
      const e = s[i + 1];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          const hex = s.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonError('invalid \\u escape', i);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          throw new JsonError('invalid escape', i);
      }
      i += 2;
      run = i;
    }
  }
}

/** The offset of the deepest existing node on `path`: a key's own position, or an element's. */
export function locateJson(root: JsonPos, path: readonly (string | number)[]): number {
  let node: JsonPos | undefined = root;
  let offset = root.at;
  for (const seg of path) {
    if (node === undefined) break;
    if (typeof seg === 'string' && node.keys) {
      const m = node.keys.get(seg);
      if (!m) break;
      offset = m.keyAt;
      node = m.value;
    } else if (typeof seg === 'number' && node.items && node.items[seg] !== undefined) {
      node = node.items[seg];
      offset = node!.at;
    } else {
      break;
    }
  }
  return offset;
}

export interface WriteJsonOptions {
  /** Spaces per level (0: one line). */
  indent?: number;
  /** Object keys in sorted order (by UTF-16 unit), so two values compare as text. */
  sortKeys?: boolean;
}

/**
 * JSON text that reads back exactly as `parseJson` with `bigInts` reads it: a `bigint` (an int
 * beyond ±(2^53−1), [OAR-FACT-23]) is written as the exact JSON integer, which `JSON.stringify`
 * refuses to write at all. Otherwise as `JSON.stringify`: `undefined` members are left out,
 * `undefined` items are `null`, a non-finite number is `null`, `toJSON` is honoured.
 */
export function writeJson(value: unknown, opts: WriteJsonOptions = {}): string {
  const step = opts.indent !== undefined && opts.indent > 0 ? ' '.repeat(opts.indent) : '';
  return writeValue(value, step, '', opts.sortKeys === true) ?? 'null';
}

function writeValue(v: unknown, step: string, at: string, sortKeys: boolean): string | undefined {
  if (typeof v === 'bigint') return v.toString();
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(v);
  const inner = at + step;
  const open = step === '' ? '' : `\n${inner}`;
  const close = step === '' ? '' : `\n${at}`;
  const sep = step === '' ? ',' : `,\n${inner}`;
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return `[${open}${v.map((x) => writeValue(x, step, inner, sortKeys) ?? 'null').join(sep)}${close}]`;
  }
  const keys = Object.keys(v);
  if (sortKeys) keys.sort();
  const members: string[] = [];
  for (const k of keys) {
    const text = writeValue((v as Record<string, unknown>)[k], step, inner, sortKeys);
    if (text !== undefined) members.push(`${JSON.stringify(k)}:${step === '' ? '' : ' '}${text}`);
  }
  return members.length === 0 ? '{}' : `{${open}${members.join(sep)}${close}}`;
}
