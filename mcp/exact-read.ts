/**
 * A tools/call line read for the decision exactly as a server reads its numbers.
 *
 * `JSON.parse` reads every number as a binary64: `9223372036854775807` (a 64-bit int, which the
 * spec's `int` must hold exactly, [OAR-FACT-23]) becomes 9223372036854775808, which is no longer
 * an int64, so `tool_arg_int("amount") > 1000` read zero and did not fire while the server paid
 * the exact amount; `1e400` became Infinity. The project's exact parser (compiler/load/json.ts,
 * the one `oarc eval` reads occurrences with) keeps integers beyond ±(2^53−1) as `bigint` — the
 * runtime's int model takes them — and refuses a number beyond the binary64 range.
 *
 * One reading is left that the engine cannot share with the server: an integer beyond the int64
 * range. The server reads a number (Python an exact int, JavaScript a double); `tool_arg_int`
 * reads zero ("not an integer"), so a threshold rule would not fire. Such a call is refused too.
 */
import { JsonError, parseJson } from '../compiler/load/json.js';
import { INT64_MAX, INT64_MIN } from '../runtime/int64.js';
import { pathText } from './duplicate-keys.js';

/**
 * How deep a line may nest: the most the compiler's reader allows. The exact parser recurses, so
 * a bound keeps a hostile line from exhausting the stack; a call nested deeper is refused.
 */
export const MAX_DEPTH = 256;

export type ExactRead = { ok: true; value: unknown } | { ok: false; problem: string };

export function readExactly(line: string): ExactRead {
  try {
    return { ok: true, value: parseJson(line, { maxDepth: MAX_DEPTH, bigInts: true }).value };
  } catch (e) {
    if (!(e instanceof JsonError)) throw e;
    // A number past the binary64 range: a server reads infinity (or refuses), an OAR number is finite.
    return { ok: false, problem: /finite/.test(e.message) ? `${e.message}, which a server reads as infinity [OAR-FACT-23]` : e.message };
  }
}

const INT64_LIMIT = 2 ** 63;

interface Node {
  value: unknown;
  parent: Node | undefined;
  at: string | number;
}

/** Where `args` holds an integer an OAR int cannot (beyond int64), and how it reads; undefined when nowhere. */
export function integerBeyondInt64(args: unknown, base: readonly (string | number)[]): string | undefined {
  // Iterative, each node knowing its parent: the path is built only for the one reported.
  const todo: Node[] = [{ value: args, parent: undefined, at: '' }];
  for (let n = todo.pop(); n !== undefined; n = todo.pop()) {
    const v = n.value;
    if (typeof v === 'bigint' ? v > INT64_MAX || v < INT64_MIN : typeof v === 'number' && Number.isInteger(v) && Math.abs(v) >= INT64_LIMIT) {
      const path: (string | number)[] = [];
      for (let p: Node | undefined = n; p?.parent !== undefined; p = p.parent) path.unshift(p.at);
      return `${pathText([...base, ...path])} is ${String(v)}, an integer beyond the 64-bit range of an OAR int [OAR-FACT-23]: tool_arg_int would read it as zero while the server reads the number`;
    }
    if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) todo.push({ value: v[i], parent: n, at: i });
    else if (typeof v === 'object' && v !== null) for (const [k, m] of Object.entries(v).reverse()) todo.push({ value: m, parent: n, at: k });
  }
  return undefined;
}
