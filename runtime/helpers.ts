/**
 * Everything compiled code in a bundle — conditions and copy renderers — may reference, by name.
 * The emitters may only emit references to these names (plus their own locals), and the output
 * verifier enforces it — this object is the one list both consult, so they cannot drift apart.
 */
import { iadd, isub, imul, idiv, imod, ineg, toDouble } from './int64.js';
import { dadd, dsub, dmul, ddiv } from './double.js';
import { cpCompare, cpContains, cpEndsWith, cpLength, cpStartsWith } from './strings.js';
import { mapSize } from './values.js';
import { idxList, idxMap, inList, inMap } from './ops.js';
import { copyBool, copyDouble, copyInt, copyList, copyString, isZero } from './copy.js';

export const BUNDLE_HELPERS = {
  iadd, isub, imul, idiv, imod, ineg, toDouble,
  dadd, dsub, dmul, ddiv,
  cpCompare, cpContains, cpEndsWith, cpLength, cpStartsWith,
  mapSize, idxList, idxMap, inList, inMap,
  copyBool, copyDouble, copyInt, copyList, copyString, isZero,
} as const;

export type BundleHelper = keyof typeof BUNDLE_HELPERS;
