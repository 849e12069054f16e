/**
 * `@marcbachmann/cel-js` set up to evaluate the benchmark's conditions, two ways:
 *
 * - **reader** (the compared variant): the CEL context is a thin object whose properties are
 *   getters over the same `FactReader` the other variants use, and the observation functions are
 *   registered CEL functions that call the same reader. Ints cross as BigInt, CEL's int
 *   representation. Facts and observations therefore cost the same as for oarc; what differs is
 *   the evaluator.
 * - **plain** (for reference, cel-js's best case): the context is a prebuilt plain object of CEL
 *   values, and the functions read the host values directly; no reader is involved at all.
 *
 * Both use cel-js's fastest prepared path: `env.parse(src)` once, `.check()` once (which stores the
 * checked type on the AST, so evaluation skips the per-call type check), then only `compiled(ctx)`
 * is timed. Every variable and function is declared with its OAR type mapped to CEL's.
 */
import { Environment } from '@marcbachmann/cel-js';
import type { FactReader } from '../runtime/facts.js';
import type { FactSymbol, FunctionSymbol, SymbolTable } from '../runtime/types.js';
import { zeroValue } from '../runtime/values.js';

const CEL_TYPE: Readonly<Record<string, string>> = {
  bool: 'bool',
  int: 'int',
  double: 'double',
  string: 'string',
  'list<string>': 'list<string>',
  'list<map>': 'list<map>',
  map: 'map',
  'map<string,string>': 'map<string, string>',
};

function celType(t: string): string {
  const c = CEL_TYPE[t];
  if (c === undefined) throw new Error(`bench: no CEL type for ${t}`);
  return c;
}

/** An OAR value (ints as number | bigint) as a CEL value (ints as bigint). */
function toCel(type: string, v: unknown): unknown {
  return type === 'int' ? BigInt(v as number | bigint) : v;
}

export type CelProgram = (ctx: object) => unknown;

export interface CelSetup {
  /** Parse and check once; throws with cel-js's message if the source does not type-check. */
  prepare(source: string): CelProgram;
}

/** The reader the registered CEL functions consult; set before each evaluation. */
let currentReader: FactReader | undefined;

/** A CEL context backed by a FactReader: one object per reader, getters on the prototype. */
interface ReaderContext {
  readonly r: FactReader;
}

export interface ReaderCel extends CelSetup {
  /** Evaluate a prepared program against a reader (binds the functions to it). */
  run(program: CelProgram, reader: FactReader): unknown;
}

export function readerCel(table: SymbolTable): ReaderCel {
  const env = new Environment();
  class Ctx implements ReaderContext {
    constructor(readonly r: FactReader) {}
  }
  for (const sym of table.symbols) {
    if (sym.kind === 'fact') {
      const slot = sym.slot;
      env.registerVariable(sym.name, celType(sym.type));
      const get =
        sym.type === 'int'
          ? function (this: ReaderContext) {
              return BigInt(this.r.fact(slot) as number | bigint);
            }
          : function (this: ReaderContext) {
              return this.r.fact(slot);
            };
      Object.defineProperty(Ctx.prototype, sym.name, { get, enumerable: true });
    } else {
      const slot = sym.slot;
      const handler =
        sym.result === 'int'
          ? (arg: unknown) => BigInt((currentReader as FactReader).call(slot, celArg(sym, arg)) as number | bigint)
          : (arg: unknown) => (currentReader as FactReader).call(slot, celArg(sym, arg));
      env.registerFunction(`${sym.name}(${celType(sym.param)}): ${celType(sym.result)}`, handler);
    }
  }
  let lastReader: FactReader | undefined;
  let lastCtx: Ctx | undefined;
  return {
    prepare: (source) => prepare(env, source),
    run(program, reader) {
      currentReader = reader;
      // One context per reader, as oarc has one reader per occurrence.
      if (reader !== lastReader) {
        lastReader = reader;
        lastCtx = new Ctx(reader);
      }
      return program(lastCtx as Ctx);
    },
  };
}

/** A CEL function argument as the OAR function expects it (ints as number when safe). */
function celArg(sym: FunctionSymbol, arg: unknown): unknown {
  if (sym.param !== 'int') return arg;
  const b = arg as bigint;
  return b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b;
}

/** The host values the plain setup's functions read; set before each evaluation. */
let currentHost: Readonly<Record<string, unknown>> = {};

export interface PlainCel extends CelSetup {
  /** The CEL context for one occurrence: every declared fact, absent ones as their zero value. */
  context(values: Readonly<Record<string, unknown>>): object;
  run(program: CelProgram, ctx: object, values: Readonly<Record<string, unknown>>): unknown;
}

export function plainCel(table: SymbolTable): PlainCel {
  const env = new Environment();
  const facts: FactSymbol[] = [];
  for (const sym of table.symbols) {
    if (sym.kind === 'fact') {
      facts.push(sym);
      env.registerVariable(sym.name, celType(sym.type));
    } else {
      const { name, result } = sym;
      env.registerFunction(`${name}(${celType(sym.param)}): ${celType(result)}`, (arg: unknown) => {
        const impl = currentHost[name];
        const v = typeof impl === 'function' ? (impl as (a: unknown) => unknown)(celArg(sym, arg)) : impl;
        return toCel(result, v === undefined ? zeroValue(result) : v);
      });
    }
  }
  return {
    prepare: (source) => prepare(env, source),
    context(values) {
      const ctx: Record<string, unknown> = {};
      for (const sym of facts) {
        const v = values[sym.name];
        ctx[sym.name] = toCel(sym.type, v === undefined ? zeroValue(sym.type) : v);
      }
      return ctx;
    },
    run(program, ctx, values) {
      currentHost = values;
      return program(ctx);
    },
  };
}

function prepare(env: Environment, source: string): CelProgram {
  const program = env.parse(source);
  const checked = program.check();
  if (!checked.valid) throw new Error(`bench: CEL does not accept ${JSON.stringify(source)}: ${checked.error?.message}`);
  if (checked.type !== 'bool') throw new Error(`bench: CEL types ${JSON.stringify(source)} as ${checked.type}, not bool`);
  return program as unknown as CelProgram;
}
