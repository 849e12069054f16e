/**
 * Everything a compiled condition may reference, by name. The emitter may only emit references
 * to these names (plus its own locals), and the output verifier enforces it — this object is the
 * one list both consult, so they cannot drift apart.
 */
import { iadd, isub, imul, idiv, imod, ineg, toDouble } from './int64.js';
import { dadd, dsub, dmul, ddiv } from './double.js';
import { cpCompare, cpContains, cpEndsWith, cpLength, cpStartsWith } from './strings.js';
import { mapSize } from './values.js';
import { idxList, idxMap, inList, inMap } from './ops.js';

export const CONDITION_HELPERS = {
  iadd, isub, imul, idiv, imod, ineg, toDouble,
  dadd, dsub, dmul, ddiv,
  cpCompare, cpContains, cpEndsWith, cpLength, cpStartsWith,
  mapSize, idxList, idxMap, inList, inMap,
} as const;

export type ConditionHelper = keyof typeof CONDITION_HELPERS;
