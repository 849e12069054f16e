/**
 * JSON text for cases, decisions and the engine protocol. Integers beyond ±(2^53 − 1) are written
 * and read exactly (as `bigint` in memory), the int model of [OAR-FACT-23]; everything else is
 * plain JSON. `canonical` sorts object keys, so two decisions compare as text whatever order their
 * members were built in.
 */
import { JsonError, parseJson, writeJson } from '../compiler/load/json.js';

export function toJsonText(v: unknown, canonical = false): string {
  return writeJson(v, { sortKeys: canonical });
}

/** Parse one JSON text, integers beyond 2^53 kept exact; throws an Error naming the offset. */
export function parseJsonText(text: string): unknown {
  try {
    return parseJson(text, { maxDepth: 256, bigInts: true, nonFinite: true }).value;
  } catch (e) {
    if (e instanceof JsonError) throw new Error(`not valid JSON at offset ${e.offset}: ${e.message}`);
    throw e;
  }
}

/** A value as it reads back from its JSON text: what every engine given the text sees. */
export function viaJson<T>(v: T): T {
  return parseJsonText(toJsonText(v)) as T;
}
