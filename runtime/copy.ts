/**
 * Rendering of `copy` members (Appendix C, [OAR-COPY-1]–[OAR-COPY-11]).
 *
 * The compiler parses and checks a copy template (compiler/copy/template.ts) and lowers it to a
 * `CopyProgram`: plain data, with facts referenced by slot. A compiled bundle turns each rule's
 * programs into one specialised renderer closure (compiler/emit/copy.ts) that calls the per-type
 * interpolations below; the interpreter back end renders the data with `renderCopyObject`. Nothing
 * here parses text, so rule prose can never become code, and the runtime never imports the compiler.
 *
 * Rendering happens after the decision is resolved and never feeds back into it ([OAR-COPY-6]).
 * A fact read that raises (provider failure, wrong type, [OAR-FACT-26]) propagates out of every
 * function here unchanged: whether that omits the copy object ([OAR-COPY-11]) is the caller's call,
 * and substituting a zero here would be exactly the coercion that clause forbids.
 */
import type { FactReader } from './facts.js';
import type { FactType } from './types.js';
import { formatDouble } from './format-double.js';
import { Raise } from './raise.js';
import { describe } from './values.js';

/** The fact types a binding may interpolate ([OAR-COPY-4]). */
export type CopyType = 'bool' | 'int' | 'double' | 'string' | 'list<string>';

export const COPY_TYPES: readonly CopyType[] = ['bool', 'int', 'double', 'string', 'list<string>'];

export function isCopyType(t: FactType): t is CopyType {
  return (COPY_TYPES as readonly string[]).includes(t);
}

/** `{{ fact }}`: interpolate the fact in `slot`, declared with `type`. */
export interface CopyBinding {
  readonly slot: number;
  readonly type: CopyType;
}

/**
 * `{% if fact %}…{% else %}…{% endif %}`. `not` is resolved at compile time by swapping the
 * branches, so the renderer only ever asks "is this fact non-zero?" ([OAR-COPY-3]).
 */
export interface CopyBranch {
  readonly test: number;
  readonly nonzero: CopyProgram;
  readonly zero: CopyProgram;
}

/** A literal string, a binding, or a conditional. */
export type CopyPart = string | CopyBinding | CopyBranch;

/** A compiled copy template: JSON-serialisable, embedded in bundles as a literal. */
export type CopyProgram = readonly CopyPart[];

/** The closed set of `copy` members, in the order they are rendered ([OAR-DOC-24]). */
export const COPY_MEMBERS = ['title', 'what', 'cause', 'why', 'fix', 'instead'] as const;
export type CopyMember = (typeof COPY_MEMBERS)[number];

function wrong(type: string, v: unknown): Raise {
  return new Raise('wrong_type', `copy: expected ${type}, got ${describe(v)}`);
}

/**
 * The text of a value under [OAR-COPY-4]. The value should already be checked by the fact reader
 * ([OAR-FACT-26]); the shape is checked again here because it costs one `typeof`, and a value of the
 * wrong shape raises rather than being stringified into something plausible.
 */
export function interpolate(type: CopyType, value: unknown): string {
  switch (type) {
    case 'string':
      if (typeof value === 'string') return value;
      throw wrong(type, value);
    case 'bool':
      if (typeof value === 'boolean') return value ? 'true' : 'false';
      throw wrong(type, value);
    case 'int':
      // Canonical ints are safe numbers or bigints (int64.ts); both print as plain base-10 digits.
      // A non-canonical integral number beyond 2^53 is still an exact integer: print its exact
      // value rather than JavaScript's exponent form.
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'number' && Number.isInteger(value)) {
        return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
      }
      throw wrong(type, value);
    case 'double':
      // A non-finite double never reaches here through a reader ([OAR-FACT-23]); refuse it anyway.
      if (typeof value === 'number' && Number.isFinite(value)) return formatDouble(value); // [OAR-COPY-10]
      throw wrong(type, value);
    case 'list<string>':
      return joinStrings(value);
  }
}

// One interpolation per type, for compiled copy renderers (compiler/emit/copy.ts): the type is
// known when the bundle is emitted, so the renderer calls the right one directly.
export const copyString = (v: unknown): string => interpolate('string', v);
export const copyBool = (v: unknown): string => interpolate('bool', v);
export const copyInt = (v: unknown): string => interpolate('int', v);
export const copyDouble = (v: unknown): string => interpolate('double', v);
export const copyList = (v: unknown): string => interpolate('list<string>', v);

/** Members joined by `", "`; the empty list is the empty string ([OAR-COPY-4]). */
function joinStrings(value: unknown): string {
  if (!Array.isArray(value)) throw wrong('list<string>', value);
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const s: unknown = value[i];
    if (typeof s !== 'string') throw wrong('list<string>', value);
    out = i === 0 ? s : out + ', ' + s;
  }
  return out;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Is `v` its type's zero value ([OAR-FACT-25])? `false`, both signed zeroes, `""`, the empty list,
 * and the empty map — a `Map` or a plain object, counting own enumerable keys only, as
 * values.ts#mapSize does. The type is not needed: each zero has a distinct run-time shape.
 */
export function isZero(v: unknown): boolean {
  switch (typeof v) {
    case 'boolean':
      return !v;
    case 'number':
      return v === 0; // true for -0 too
    case 'bigint':
      return v === 0n; // not canonical, but a zero all the same
    case 'string':
      return v.length === 0;
    case 'object':
      if (v === null) break;
      if (Array.isArray(v)) return v.length === 0;
      if (v instanceof Map) return v.size === 0;
      // Stop at the first own key: no key array is allocated on the decision path.
      for (const k in v) if (hasOwn.call(v, k)) return false;
      return true;
  }
  throw new Raise('wrong_type', `copy: a conditional cannot test ${describe(v)}`);
}

/**
 * Render one compiled copy member against the occurrence's facts ([OAR-COPY-1]). Facts are read
 * only where the rendering reaches them, so a fact named only in an untaken branch is never read.
 */
export function renderCopy(program: CopyProgram, reader: FactReader): string {
  // Most copy is plain prose: return the literal itself.
  if (program.length === 1 && typeof program[0] === 'string') return program[0];
  let out = '';
  for (let i = 0; i < program.length; i++) {
    const part = program[i]!;
    if (typeof part === 'string') out += part;
    else if ('test' in part) {
      out += renderCopy(isZero(reader.fact(part.test)) ? part.zero : part.nonzero, reader); // [OAR-COPY-3]
    } else out += interpolate(part.type, reader.fact(part.slot)); // [OAR-COPY-4]
  }
  return out;
}

/**
 * A rule's copy renderer, as a bundle holds it: the rendered `copy` object for the occurrence the
 * reader is on. A compiled bundle's are emitted code (compiler/emit/copy.ts); the interpreter back
 * end's call {@link renderCopyObject} on the template data.
 */
export type CopyRenderer = (reader: FactReader) => Record<string, string>;

/**
 * Render a rule's whole `copy` object. Members the rule omitted stay absent ([OAR-COPY-7]). A raise
 * from any member propagates, so the caller never sees a half-rendered object ([OAR-COPY-11]).
 */
export function renderCopyObject(
  members: Partial<Record<CopyMember, CopyProgram>>,
  reader: FactReader,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < COPY_MEMBERS.length; i++) {
    const m = COPY_MEMBERS[i]!;
    const program = members[m];
    if (program !== undefined) out[m] = renderCopy(program, reader);
  }
  return out;
}
