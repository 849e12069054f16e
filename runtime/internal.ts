/**
 * `oarc/runtime/internal`: the helpers that compiled conditions and copy renderers call, by the
 * names the emitters use. Generated bundles import them from here; hosts never should. This is not
 * a public API: the set and the signatures change whenever code generation does, and a bundle
 * records the format it was generated for (runtime/bundle.ts `BUNDLE_FORMAT`), so a bundle and the
 * runtime it imports must come from the same oarc release.
 *
 * This module exports the helpers and nothing else: its export list is the one list the emitters
 * and the output verifier consult (runtime/helpers.ts), so they cannot drift apart.
 */
export { iadd, isub, imul, idiv, imod, ineg, toDouble } from './int64.js';
export { dadd, dsub, dmul, ddiv } from './double.js';
export { cpCompare, cpContains, cpEndsWith, cpLength, cpStartsWith } from './strings.js';
export { mapSize } from './values.js';
export { copyBool, copyDouble, copyInt, copyList, copyString, isZero } from './copy.js';
export { idxList, idxMap, inList, inMap } from './ops.js';
