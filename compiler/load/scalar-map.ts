/**
 * Where each character of a string value sits in the file it was read from, so an error inside a
 * condition or copy template can be reported at the exact line and column of the offending token —
 * through YAML's plain, single- and double-quoted, literal and folded scalars, and JSON strings.
 *
 * Every style makes its value from the source the same few ways: a character copied as it is, a
 * line break folded to a space or kept as a newline, an escape decoded (double-quoted YAML, JSON),
 * and text dropped (indentation, trailing blanks, the opening quote, the block header, one quote of
 * `''`, an escaped line break). So one alignment serves them all: walk the value and the source
 * together, map each value character to the next source text that produces it, and skip what does
 * not. Anything dropped that is not blank is skipped explicitly, so a token's characters can only
 * align with themselves. When the value does not align to the end, `undefined` says so and the
 * caller falls back to the position of the scalar itself.
 */

export type ScalarStyle = 'plain' | 'single' | 'double' | 'block' | 'json';

/** For each UTF-16 unit of the value, the source offsets where it starts and ends. */
export interface ScalarMap {
  readonly start: readonly number[];
  readonly end: readonly number[];
}

const YAML_ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0', a: '\x07', b: '\b', e: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v',
  N: '\u0085', _: '\u00a0', L: '\u2028', P: '\u2029', ' ': ' ', '"': '"', '/': '/', '\\': '\\', '\t': '\t',
};
const JSON_ESCAPES: Readonly<Record<string, string>> = {
  b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '"': '"', '/': '/', '\\': '\\',
};
const HEX_DIGITS: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/** The escape at `text[i] === '\\'`: what it decodes to and where it ends; undefined when invalid. */
function escapeAt(text: string, i: number, json: boolean): { value: string; end: number } | undefined {
  const c = text[i + 1];
  if (c === undefined) return undefined;
  const simple = (json ? JSON_ESCAPES : YAML_ESCAPES)[c];
  if (simple !== undefined && Object.hasOwn(json ? JSON_ESCAPES : YAML_ESCAPES, c)) return { value: simple, end: i + 2 };
  const digits = json ? (c === 'u' ? 4 : undefined) : HEX_DIGITS[c];
  if (digits === undefined) return undefined;
  const hex = text.slice(i + 2, i + 2 + digits);
  if (hex.length !== digits || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
  const code = parseInt(hex, 16);
  // A JSON `\uXXXX` is one UTF-16 unit, a lone surrogate included; YAML's escapes are code points.
  if (json) return { value: String.fromCharCode(code), end: i + 2 + digits };
  if (code > 0x10ffff) return undefined;
  return { value: String.fromCodePoint(code), end: i + 2 + digits };
}

/**
 * Align `value` with the source text beginning at `from` (the scalar's first character: its quote,
 * its block header, or its first plain character), up to its UTF-16 unit `upTo` (default: all of
 * it) — a prefix aligns on its own, so an error early in a long template costs only its prefix.
 */
export function alignScalar(text: string, from: number, style: ScalarStyle, value: string, upTo = value.length): ScalarMap | undefined {
  let j = from;
  if (style === 'single' || style === 'double' || style === 'json') j++; // the opening quote
  if (style === 'block') {
    // The header line (`|`, `>-`, `|2 # comment`) produces nothing.
    const nl = text.indexOf('\n', j);
    if (nl < 0) return value === '' ? { start: [], end: [] } : undefined;
    j = nl + 1;
  }
  const escapes = style === 'double' || style === 'json';
  const start: number[] = [];
  const end: number[] = [];
  let i = 0;
  const stop = Math.min(upTo, value.length);
  while (i < stop) {
    if (j >= text.length) return undefined;
    const v = value[i] as string;
    const s = text[j] as string;
    if (escapes && s === '\\') {
      if (style === 'double' && (text[j + 1] === '\n' || text[j + 1] === '\r')) {
        j += 2; // an escaped line break produces nothing
        continue;
      }
      const e = escapeAt(text, j, style === 'json');
      if (e === undefined) return undefined;
      if (!value.startsWith(e.value, i)) return undefined;
      for (let k = 0; k < e.value.length; k++) {
        start.push(j);
        end.push(e.end);
      }
      i += e.value.length;
      j = e.end;
      continue;
    }
    if (style === 'single' && s === "'") {
      // `''` is one quote; a lone quote closes the scalar, before the value is done.
      if (v !== "'" || text[j + 1] !== "'") return undefined;
      start.push(j);
      end.push(j + 2);
      i++;
      j += 2;
      continue;
    }
    if (s === v || ((v === ' ' || v === '\n') && s === '\n')) {
      start.push(j);
      end.push(j + 1);
      i++;
      j++;
      continue;
    }
    // Dropped text is blank: indentation, trailing blanks, a CR, a folded line break.
    if (s === ' ' || s === '\t' || s === '\r' || s === '\n') {
      j++;
      continue;
    }
    return undefined;
  }
  return { start, end };
}

/**
 * The source span of the code points `[offset, offset + length)` of `value`, clamped to the value:
 * an offset at the end (an error at "end of condition") is the position just after the last
 * character.
 */
export function spanOf(map: ScalarMap, units: readonly [number, number], fallback: number): [number, number] {
  const [a, b] = units;
  if (map.start.length === 0) return [fallback, fallback];
  if (a >= map.start.length) {
    const last = map.end[map.end.length - 1] as number;
    return [last, last];
  }
  const s = map.start[a] as number;
  const e = map.end[Math.min(b, map.end.length) - 1] as number;
  return [s, Math.max(e, s + 1)];
}

/** UTF-16 indices of the code points `[offset, offset + length)` of `value`. */
export function codePointsToUnits(value: string, offset: number, length: number): [number, number] {
  let cp = 0;
  let u = 0;
  let startUnit = -1;
  while (u < value.length) {
    if (cp === offset) startUnit = u;
    if (cp === offset + length) return [startUnit, u];
    const c = value.codePointAt(u) as number;
    u += c > 0xffff ? 2 : 1;
    cp++;
  }
  if (startUnit < 0) startUnit = value.length;
  return [startUnit, value.length];
}
