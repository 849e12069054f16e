/**
 * A request body read as `oarc eval` reads the same JSON: integers beyond ±(2^53−1) exact (as
 * `bigint`, which the runtime's 64-bit `int` takes, [OAR-FACT-23]), a number beyond binary64
 * refused, a member name written twice in one object refused. `JSON.parse` alone would read
 * `9223372036854775807` as 9223372036854775808 — not an `int`, so `tool_arg_int("amount") > 1000`
 * would not fire on the largest amount there is — and keep the last of two `"amount"` members,
 * where another reader may keep the first.
 *
 * Nearly every body needs none of that, and `JSON.parse` is the fastest reader there is, so it
 * reads the body first; one pass over the text then finds what it could have read differently.
 * Only a body with a long integer, a huge exponent or a repeated name is read again by the exact
 * parser (compiler/load/json.ts), which reads it or says what is wrong.
 */
import { JsonError, parseJson } from '../compiler/load/json.js';

/** A body the exact reader refuses: what is wrong, and where in the text. */
export class BodyJsonError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** Deeper than this, a body that needs the exact reader is refused (it recurses). */
const MAX_DEPTH = 1000;
export function readJsonBody(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (needsExactReading(text, value)) {
    try {
      return parseJson(text, { maxDepth: MAX_DEPTH, bigInts: true }).value;
    } catch (e) {
      if (e instanceof JsonError) throw new BodyJsonError(e.message, e.offset);
      throw e;
    }
  }
  return value;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * One pass over text `JSON.parse` accepted: strings are stepped over whole (`indexOf` to each
 * quote, so nothing inside one is looked at), names counted (a string followed by a colon), and
 * number tokens checked — an integer of 16 digits or more that is not a safe integer, or an
 * exponent that takes the value beyond binary64, needs the exact reader; so does a name written
 * twice in one object, which leaves one member fewer in what `JSON.parse` built than in the text.
 */
function needsExactReading(text: string, value: unknown): boolean {
  const n = text.length;
  let names = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      // A quote preceded by an odd run of backslashes is escaped: look further.
      for (;;) {
        let b = end - 1;
        while (text.charCodeAt(b) === BACKSLASH) b--;
        if ((end - b) % 2 === 1) break;
        end = text.indexOf('"', end + 1);
      }
      i = end + 1;
      while (i < n && isWs(text.charCodeAt(i))) i++;
      if (text.charCodeAt(i) === 0x3a /* : */) names++;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      let exponent = false;
      let fraction = false;
      i++;
      for (; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d >= 0x30 && d <= 0x39) continue;
        if (d === 0x2e) fraction = true;
        else if (d === 0x65 || d === 0x45) exponent = true;
        else if (d !== 0x2b && d !== 0x2d) break;
      }
      if (exponent) {
        if (!Number.isFinite(Number(text.slice(start, i)))) return true;
      } else if (!fraction && i - start >= 16 && !Number.isSafeInteger(Number(text.slice(start, i)))) return true;
    } else i++;
  }
  return names !== memberCount(value);
}

const isWs = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The members of every object in a parsed JSON value (iterative: any depth `JSON.parse` took). */
function memberCount(root: unknown): number {
  if (typeof root !== 'object' || root === null) return 0;
  let n = 0;
  const stack: object[] = [root];
  while (stack.length > 0) {
    const v = stack.pop() as object;
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'object' && x !== null) stack.push(x);
      continue;
    }
    for (const k in v) {
      n++;
      const x = (v as Record<string, unknown>)[k];
      if (typeof x === 'object' && x !== null) stack.push(x);
    }
  }
  return n;
}
