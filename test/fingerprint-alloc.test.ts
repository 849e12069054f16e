/**
 * The tool-call fingerprint is computed on the hot path of every decision that reads it, so in
 * steady state it allocates nothing but the 64-character string it returns ([OAR-FACT-28]).
 * Measured as bench/alloc.ts measures a decision: heap growth plus whatever the collections that
 * ran in between freed, over many calls of warmed-up (optimised) code.
 */
import { describe, expect, it } from 'vitest';
import { allocated, ensureGc } from '../bench/alloc.js';
import { toolArgsFingerprint } from '../runtime/fingerprint.js';

function bytesPerCall(f: () => string, calls: number): number {
  let sink = 0;
  for (let i = 0; i < 50_000; i++) sink += f().length; // warm up: optimised code allocates differently
  const { bytes } = allocated(ensureGc().gc, () => {
    for (let i = 0; i < calls; i++) sink += f().length;
  });
  expect(sink).toBe(64 * (50_000 + calls));
  return bytes / calls;
}

// The returned string is a 16-byte header and 64 one-byte characters: 80 bytes. Before streaming,
// a call allocated about 4.3 KB.
const LIMIT = 120;

describe('toolArgsFingerprint allocation', () => {
  it('[OAR-FACT-28] allocates only its result for typical arguments', () => {
    const args = { command: 'npm test', cwd: '/srv/app', env: { CI: 'true' }, timeout: 30, flags: ['-v', '--x'] };
    expect(bytesPerCall(() => toolArgsFingerprint('shell.exec', args), 100_000)).toBeLessThan(LIMIT);
  });

  it('[OAR-FACT-28] allocates only its result with escapes, non-ASCII, negative integers and nesting', () => {
    const args = { path: '/tmp/é/日本.txt', content: 'line 1\nline "2"\t\\ 😀 \uD800', mode: -420, ok: true, none: null, nested: [[{ b: 1, a: [] }]] };
    expect(bytesPerCall(() => toolArgsFingerprint('fs.write', args), 100_000)).toBeLessThan(LIMIT);
  });
});
