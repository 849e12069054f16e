/**
 * Bundles are reproducible builds (DESIGN: code generation rule 3): the same pack compiles to the
 * same bytes however its paths are spelled and wherever it is checked out, because a bundle
 * records each rule's source relative to a root (`loadPackFiles({ root })`, default the working
 * directory) — never a build machine's absolute path. Diagnostics keep the paths as given.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compile, loadPackFiles, loadPackTexts, type PackFiles } from '../compiler/index.js';
import { ROOT } from './support/build.js';

const GW = join(ROOT, 'examples', 'gateway');
// A second checkout: the same layout under another directory.
const copy = mkdtempSync(join(tmpdir(), 'oarc-repro-'));
cpSync(GW, join(copy, 'examples', 'gateway'), { recursive: true });
afterAll(() => rmSync(copy, { recursive: true, force: true }));

function bundleText(files: PackFiles): string {
  const r = loadPackFiles(files);
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return compile(r.pack);
}

describe('rule sources are recorded relative to the root', () => {
  const here = bundleText({ capability: join(GW, 'capability.yaml'), rules: [join(GW, 'rules.yaml')], root: ROOT });

  it('records the root-relative path, not the absolute one', () => {
    expect(here).toContain('"source": "examples/gateway/rules.yaml:3:1"');
    expect(here).not.toContain(ROOT);
  });

  it('gives byte-identical output for a checkout in another directory', () => {
    const elsewhere = join(copy, 'examples', 'gateway');
    expect(bundleText({ capability: join(elsewhere, 'capability.yaml'), rules: [join(elsewhere, 'rules.yaml')], root: copy })).toBe(here);
  });

  it('gives byte-identical output for relative and absolute paths, a rule file or its directory', () => {
    const cwd = process.cwd();
    try {
      process.chdir(ROOT);
      expect(bundleText({ capability: 'examples/gateway/capability.yaml', rules: ['examples/gateway/rules.yaml'] })).toBe(here);
      process.chdir(GW);
      expect(bundleText({ capability: 'capability.yaml', rules: ['./rules.yaml'], root: '../..' })).toBe(here);
      // The default root is the working directory.
      expect(bundleText({ capability: 'capability.yaml', rules: ['rules.yaml'] })).toBe(here.replaceAll('"source": "examples/gateway/', '"source": "'));
    } finally {
      process.chdir(cwd);
    }
  });

  it('keeps the given path in diagnostics', () => {
    const r = loadPackFiles({ capability: join(GW, 'capability.yaml'), rules: [join(GW, 'missing.yaml')], root: ROOT });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.diagnostics[0]?.source?.file).toBe(join(GW, 'missing.yaml'));
  });

  it('leaves in-memory texts named as they were given', () => {
    const r = loadPackTexts({ capability: readFileSync(join(GW, 'capability.yaml'), 'utf8'), rules: [readFileSync(join(GW, 'rules.yaml'), 'utf8')] });
    if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
    expect(compile(r.pack)).toContain('"source": "<rules 0>:3:1"');
  });
});
