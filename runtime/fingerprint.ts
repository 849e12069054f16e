/**
 * `tool_args_fingerprint` ([OAR-FACT-28]): a digest that identifies a tool call by its tool and
 * arguments, so two engines (in any language) fingerprint the same call identically. Everything
 * that could vary between JSON serialisers is fixed: whitespace, key order, string escapes, and
 * number spelling.
 */
import { formatDouble } from './format-double.js';
import { Raise } from './raise.js';
import { sha256HexOfString } from './sha256.js';
import { cpCompare } from './strings.js';
import { describe } from './values.js';

/** The domain-separation prefix hashed before the canonical JSON ([OAR-FACT-28]). */
export const FINGERPRINT_DOMAIN = 'oar-tool-1.0';

/**
 * The lowercase hex SHA-256 of `oar-tool-1.0` + U+0000 + canonicalJson([tool, args]) in UTF-8
 * ([OAR-FACT-28]). The tool name is inside the digest, so identical arguments to different tools
 * differ. An absent tool call has the empty fingerprint; that is the caller's case, not this one's.
 * A value that has no canonical form throws a `provider_failure` raise ([OAR-OPS-3]).
 */
export function toolArgsFingerprint(tool: string, args: unknown): string {
  return sha256HexOfString(FINGERPRINT_DOMAIN + '\u0000' + canonicalJson([tool, args]));
}

/**
 * Canonical JSON ([OAR-FACT-28]): no insignificant whitespace; object keys sorted by Unicode code
 * point (not by UTF-16 unit, which is what `Array.prototype.sort` does: U+FF5E sorts before U+1F600
 * by code point and after it by unit); strings emitted directly except `"`, `\` and U+0000–U+001F,
 * the last as lowercase `\u00xx` — so a newline is `\u000a`, never `\n`; every number in the
 * [OAR-COPY-10] decimal form, so the integer 5 is `5.0` and int and double spellings agree; arrays
 * in order. Maps may be plain objects (own enumerable string keys) or `Map`s with string keys.
 */
export function canonicalJson(value: unknown): string {
  try {
    return write(value);
  } finally {
    active.clear();
    path.length = 0;
  }
}

/**
 * The containers on the current path (a cycle fails instead of overflowing) and the path itself,
 * for messages. Module-level and reused: writing is synchronous, and the fingerprint of a tool call
 * is produced at every occurrence that reads it, so it should allocate little beyond its text.
 */
const active = new Set<object>();
const path: (string | number)[] = [];

function fail(why: string): Raise {
  const at = '$' + path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
  return new Raise('provider_failure', `tool_args_fingerprint: ${at}: ${why}`);
}

function write(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return quote(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      // Numbers are finite binary64 ([OAR-FACT-28], [OAR-FACT-23]).
      if (!Number.isFinite(v)) throw fail(`a number must be finite, got ${describe(v)}`);
      return formatDouble(v);
    case 'bigint': {
      // An int beyond ±(2^53−1) must convert to binary64 without losing its integer value
      // ([OAR-FACT-28]); 2^53 + 1 does not, 2^60 does.
      const d = Number(v);
      if (!Number.isFinite(d) || BigInt(d) !== v) {
        throw fail(`the integer ${v} has no exact binary64 value`);
      }
      return formatDouble(d);
    }
    case 'object': {
      if (v === null) return 'null';
      if (active.has(v)) throw fail('the value is cyclic');
      active.add(v);
      const out = Array.isArray(v) ? writeArray(v) : writeMap(v);
      active.delete(v);
      return out;
    }
    default:
      // undefined, functions and symbols have no JSON form; dropping them silently (as
      // JSON.stringify does) would let different arguments share a fingerprint.
      throw fail(`${typeof v} has no canonical JSON form`);
  }
}

function writeArray(a: readonly unknown[]): string {
  let out = '[';
  for (let i = 0; i < a.length; i++) {
    path.push(i);
    out += (i === 0 ? '' : ',') + write(a[i]);
    path.pop();
  }
  return out + ']';
}

function writeMap(m: object): string {
  let keys: string[];
  let get: (k: string) => unknown;
  if (m instanceof Map) {
    keys = [];
    for (const k of (m as Map<unknown, unknown>).keys()) {
      if (typeof k !== 'string') throw fail(`a map key must be a string, got ${describe(k)}`);
      keys.push(k);
    }
    get = (k) => (m as Map<string, unknown>).get(k);
  } else {
    // Own enumerable string keys only: maps are read by own property (values.ts), so inherited
    // members are not part of the value.
    keys = Object.keys(m);
    get = (k) => (m as Record<string, unknown>)[k];
  }
  if (keys.length > 1) keys.sort(cpCompare);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    path.push(k);
    out += (i === 0 ? '' : ',') + quote(k) + ':' + write(get(k));
    path.pop();
  }
  return out + '}';
}

const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

function quote(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  let out = '"';
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c < 0x20) {
      out += s.slice(from, i);
      // Only these three are escaped, and control characters always in the \u form — no \n, \t.
      out += c === 0x22 ? '\\"' : c === 0x5c ? '\\\\' : '\\u00' + (c < 0x10 ? '0' : '') + c.toString(16);
      from = i + 1;
    }
  }
  return out + s.slice(from) + '"';
}
