/**
 * Everything compiled code in a bundle — conditions and copy renderers — may reference, by name:
 * the exports of `oarc/runtime/internal` (runtime/internal.ts), as one object. The emitters may only
 * emit references to these names (plus their own locals), the output verifier enforces it, and the
 * in-process path passes them in by name.
 */
import * as internal from './internal.js';

export const BUNDLE_HELPERS = internal;

export type BundleHelper = keyof typeof BUNDLE_HELPERS;
