/**
 * The OAR type vocabulary and the shared symbol environment ([OAR-FACT-1], [OAR-FACT-22],
 * [OAR-FACT-27]). These types are shared by the compiler (which checks against them) and the
 * runtime (which validates every produced value against them, [OAR-FACT-26]).
 */

/** The scalar types: the only legal parameter and result types of an observation function. */
export type ScalarType = 'bool' | 'int' | 'double' | 'string';

/** Every legal fact type ([OAR-FACT-22]). */
export type FactType = ScalarType | 'list<string>' | 'map<string,string>' | 'list<map>' | 'map';

export const FACT_TYPES: readonly FactType[] = [
  'bool', 'int', 'double', 'string', 'list<string>', 'map<string,string>', 'list<map>', 'map',
];
export const SCALAR_TYPES: readonly ScalarType[] = ['bool', 'int', 'double', 'string'];

export function isFactType(s: string): s is FactType {
  return (FACT_TYPES as readonly string[]).includes(s);
}
export function isScalarType(s: string): s is ScalarType {
  return (SCALAR_TYPES as readonly string[]).includes(s);
}

/**
 * Where a symbol comes from ([OAR-FACT-14]): the `core` tier, a named capability profile, or the
 * engine's own `host` tier.
 */
export type Tier = { kind: 'core' } | { kind: 'profile'; profile: string } | { kind: 'host' };

/** A declared fact: a name with a type. `slot` is its index in the environment. */
export interface FactSymbol {
  readonly kind: 'fact';
  readonly name: string;
  readonly type: FactType;
  readonly tier: Tier;
  readonly slot: number;
}

/** A declared observation function `(param) -> result` ([OAR-FACT-9], [OAR-FACT-27]). */
export interface FunctionSymbol {
  readonly kind: 'function';
  readonly name: string;
  readonly param: ScalarType;
  readonly result: ScalarType;
  readonly tier: Tier;
  readonly slot: number;
}

export type SymbolEntry = FactSymbol | FunctionSymbol;

/**
 * The one closed, typed symbol environment that governs every rule-field check ([OAR-FACT-1],
 * [OAR-FACT-2]: facts and functions share one namespace). Slots are dense indices in declaration
 * order, so a compiled condition reads a fact by number rather than by name.
 */
export interface SymbolTable {
  readonly symbols: readonly SymbolEntry[];
  lookup(name: string): SymbolEntry | undefined;
}

/** A symbol as declared, before it is given a slot (a distributive Omit keeps the union intact). */
export type SymbolDecl = SymbolEntry extends infer T ? (T extends SymbolEntry ? Omit<T, 'slot'> : never) : never;

export function symbolTable(entries: readonly SymbolDecl[]): SymbolTable {
  const symbols: SymbolEntry[] = [];
  const byName = new Map<string, SymbolEntry>();
  for (const e of entries) {
    if (byName.has(e.name)) throw new Error(`symbol declared twice: ${e.name} [OAR-FACT-2]`);
    const sym = { ...e, slot: symbols.length } as SymbolEntry;
    symbols.push(sym);
    byName.set(e.name, sym);
  }
  return { symbols, lookup: (name) => byName.get(name) };
}
