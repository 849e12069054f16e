/**
 * The contract between a compiled (or interpreted) condition and whoever supplies facts.
 *
 * A condition reads a fact by its slot in the symbol table and calls an observation function by
 * its slot with its argument. The reader returns a value already checked against the declared type
 * ([OAR-FACT-26]) — the zero value when the host has nothing to report ([OAR-FACT-25]) — or throws
 * a `Raise` (provider failure, wrong type). Facts are read where the condition uses them, so a
 * guarded fact is never produced when the guard decides ([OAR-FACT-11]).
 */
import type { FactSymbol, FunctionSymbol, SymbolTable } from './types.js';
import { Raise } from './raise.js';
import { describeThrown } from './thrown.js';
import { checkValue, zeroValue, type Value } from './values.js';

export interface FactReader {
  fact(slot: number): unknown;
  call(slot: number, arg: unknown): unknown;
}

/** A host-supplied observation function implementation. */
export type ObservationFn = (arg: unknown) => unknown;

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * A fact reader over a plain object of host observations. A value under a function's name is either
 * a JS function (called with the argument) or a fixed result for every argument ([OAR-CONF-26]).
 * Checked values are cached, so a fact read twice is checked once.
 */
export class ObjectFactReader implements FactReader {
  /** Checked values by slot; a checked value is never `undefined`, so that marks "not read". */
  private readonly cache: unknown[];

  constructor(
    private readonly table: SymbolTable,
    private readonly values: Readonly<Record<string, unknown>>,
  ) {
    this.cache = [];
  }

  fact(slot: number): unknown {
    const cached = this.cache[slot];
    if (cached !== undefined) return cached;
    const sym = this.table.symbols[slot] as FactSymbol;
    const v = hasOwn.call(this.values, sym.name) ? this.values[sym.name] : undefined;
    const checked: Value = v === undefined ? zeroValue(sym.type) : checkValue(sym.type, v, `fact ${sym.name}`);
    this.cache[slot] = checked;
    return checked;
  }

  call(slot: number, arg: unknown): unknown {
    const sym = this.table.symbols[slot] as FunctionSymbol;
    const impl = hasOwn.call(this.values, sym.name) ? this.values[sym.name] : undefined;
    if (impl === undefined) return zeroValue(sym.result);
    let result: unknown;
    if (typeof impl === 'function') {
      try {
        result = (impl as ObservationFn)(arg);
      } catch (e) {
        throw new Raise('provider_failure', `function ${sym.name} failed: ${describeThrown(e)}`);
      }
    } else {
      result = impl;
    }
    return result === undefined ? zeroValue(sym.result) : checkValue(sym.result, result, `function ${sym.name}`);
  }
}
