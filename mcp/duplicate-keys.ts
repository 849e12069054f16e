/**
 * Duplicate member names in one JSON text, found in a single pass over the text itself.
 *
 * `JSON.parse` keeps the last of two members with the same name and says nothing; another parser
 * may keep the first, or refuse. A `tools/call` whose `name` or `arguments` is written twice can
 * so be decided on one reading and executed on another, and the proxy refuses such a message
 * instead. The names compared are the decoded ones: `"n\u0061me"` and `"name"` are one name, as
 * every parser reads them.
 *
 * Names that differ only in case count as the same name too. Go's encoding/json (mcp-go, any
 * typed Go handler) matches a member to a field case-insensitively, by Unicode simple folding
 * (`bytes.EqualFold`: `K` U+212A is `k`, `ſ` U+017F is `s`), the last match winning; so
 * `{"path":"/ok","PATH":"/evil"}` is decided on `path` and run on `PATH`. Two names are one when
 * their `toLowerCase()`, their `toUpperCase()` or their upper-cased lower-case forms are equal
 * (Go's own folding, `unicode.ToUpper(unicode.ToLower(r))`): that catches every pair simple
 * folding joins, and some it does not (`ß`/`ss`, through the full upper-casing `SS`) — refused
 * too, since a guardrail errs on the closed side.
 *
 * The scanner is iterative (no recursion, whatever the nesting) and decodes only member names;
 * string values are stepped over. It expects text `JSON.parse` accepted, and says `malformed`
 * rather than guessing when it is not.
 */

/** Where a member name occurs twice: the name, and the path of the object holding both. */
export interface DuplicateKey {
  /** The second of the two names, decoded. */
  key: string;
  /** The first, when it is spelled otherwise (the two differ only in case). */
  earlier?: string;
  /** Member names and array indices from the top; `[]` for the top-level object. */
  path: (string | number)[];
}

export type KeyScan = { ok: true } | { ok: false; duplicate: DuplicateKey } | { ok: false; malformed: string };

interface Frame {
  /** The names seen so far in an object; undefined for an array. */
  keys: Names | undefined;
  /** Where this container sits in its parent. */
  at: string | number;
  /** The index of the current element, in an array. */
  index: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

const isWs = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
/** The characters a number or a literal (`true`, `false`, `null`) is written with. */
const isScalar = (c: number): boolean => (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || (c >= 0x61 && c <= 0x7a) || c === 0x45;

export function scanDuplicateKeys(text: string): KeyScan {
  const n = text.length;
  let i = 0;
  const stack: Frame[] = [];
  const malformed = (what: string): KeyScan => ({ ok: false, malformed: `${what} at offset ${i}` });
  const skipWs = () => {
    while (i < n && isWs(text.charCodeAt(i))) i++;
  };

  /**
   * Steps over the string starting at `i` (its opening quote); returns its decoded text when
   * `decode`, '' otherwise, or undefined when it is not a well-formed JSON string.
   */
  const readString = (decode: boolean): string | undefined => {
    i++;
    let out = '';
    let from = i;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        if (decode) out += text.slice(from, i);
        i++;
        return out;
      }
      if (c < 0x20) return undefined;
      if (c !== BACKSLASH) {
        i++;
        continue;
      }
      if (decode) out += text.slice(from, i);
      const e = text[i + 1];
      if (e === 'u') {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return undefined;
        if (decode) out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else {
        const decoded = e === undefined ? undefined : ESCAPES[e];
        if (decoded === undefined) return undefined;
        if (decode) out += decoded;
        i += 2;
      }
      from = i;
    }
    return undefined;
  };

  /** Where the next value goes in its parent. */
  let at: string | number = '';
  for (;;) {
    // A value.
    skipWs();
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      i++;
      skipWs();
      const empty = text.charCodeAt(i) === (c === 0x7b ? 0x7d : 0x5d);
      if (empty) i++;
      else {
        stack.push({ keys: c === 0x7b ? new Names() : undefined, at, index: 0 });
        if (c === 0x5b) {
          at = 0;
          continue;
        }
        const key = readKey();
        if (typeof key !== 'string') return key;
        at = key;
        continue;
      }
    } else if (c === QUOTE) {
      if (readString(false) === undefined) return malformed('a malformed string');
    } else {
      const start = i;
      while (i < n && isScalar(text.charCodeAt(i))) i++;
      if (i === start) return malformed(i >= n ? 'the end of the text where a value belongs' : 'an unexpected character');
    }

    // After a value: the next member or element, or the end of one or more containers.
    for (;;) {
      skipWs();
      const top = stack[stack.length - 1];
      if (top === undefined) return i === n ? { ok: true } : malformed('text after the value');
      const d = text.charCodeAt(i);
      if (d === 0x2c /* , */) {
        i++;
        if (top.keys === undefined) {
          at = ++top.index;
        } else {
          const key = readKey();
          if (typeof key !== 'string') return key;
          at = key;
        }
        break;
      }
      if (d === (top.keys === undefined ? 0x5d : 0x7d)) {
        i++;
        stack.pop();
        continue;
      }
      return malformed(i >= n ? 'the end of the text inside an object or array' : 'an unexpected character');
    }
  }

  /** A member name of the object on top of the stack and its colon; the name, or why the scan stops. */
  function readKey(): string | KeyScan {
    skipWs();
    if (text.charCodeAt(i) !== QUOTE) return malformed('a member name expected');
    const key = readString(true);
    if (key === undefined) return malformed('a malformed member name');
    const top = stack[stack.length - 1] as Frame;
    const earlier = (top.keys as Names).add(key);
    if (earlier !== undefined) return { ok: false, duplicate: { key, ...(earlier === key ? {} : { earlier }), path: stack.slice(1).map((f) => f.at) } };
    skipWs();
    if (text.charCodeAt(i) !== 0x3a /* : */) return malformed('a colon expected after a member name');
    i++;
    return key;
  }
}

/** The forms two names are compared in; equal in any one, they are one name. */
const folds = (name: string): [string, string, string] => {
  const lower = name.toLowerCase();
  return [lower, name.toUpperCase(), lower.toUpperCase()];
};

/** Whether two member names are one to some JSON reader (exactly, or differing only in case). */
export function sameName(a: string, b: string): boolean {
  const fa = folds(a);
  const fb = folds(b);
  return fa[0] === fb[0] || fa[1] === fb[1] || fa[2] === fb[2];
}

/** The member names of one object, by each folded form. */
class Names {
  private readonly byForm: [Map<string, string>, Map<string, string>, Map<string, string>] = [new Map(), new Map(), new Map()];

  /** Adds `name`; returns the name already there that it is one with, if any. */
  add(name: string): string | undefined {
    const forms = folds(name);
    for (let f = 0; f < 3; f++) {
      const earlier = this.byForm[f]?.get(forms[f]);
      if (earlier !== undefined) return earlier;
    }
    for (let f = 0; f < 3; f++) this.byForm[f]?.set(forms[f], name);
    return undefined;
  }
}

/** A path as a reader writes it: `params.arguments.opts`, `params.arguments.list[2]`; the top level is ''. */
export function pathText(path: readonly (string | number)[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += /^[A-Za-z_$][\w$]*$/.test(p) ? `${out === '' ? '' : '.'}${p}` : `[${JSON.stringify(p)}]`;
  }
  return out;
}
