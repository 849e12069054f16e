/**
 * Golden files for `oarc check` on packs of ordinary mistakes (test/golden/<case>/): the text
 * (diagnostics with code frames, the tally, the exit status), the JSON and the SARIF output are
 * pinned byte for byte, so positions, rule ids, suggestions and order cannot drift unnoticed.
 * `OARC_UPDATE_GOLDEN=1 npx vitest run test/golden.test.ts` rewrites them; review the diff.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { run } from '../bin/cli.js';
import type { Io } from '../bin/output.js';
import { validateSarif } from './support/sarif.js';

const DIR = 'test/golden';
const CAP = `${DIR}/capability.yaml`;
const UPDATE = (process.env.OARC_UPDATE_GOLDEN ?? '') !== '';

/** Each case: the rule paths and any extra flags, as a user would type them. */
const CASES: Record<string, string[]> = {
  misspellings: [`${DIR}/misspellings/rules.yaml`],
  schema: [`${DIR}/schema/rules.yaml`],
  positions: [`${DIR}/positions/rules.yaml`, `${DIR}/positions/rules.json`],
  order: [`${DIR}/order/b.yaml`, `${DIR}/order/a.yaml`, '--config', `${DIR}/order/config.yaml`],
  hostile: [`${DIR}/hostile/rules.yaml`],
  warnings: [`${DIR}/warnings/rules.yaml`, '--max-warnings', '4'],
  empty: [`${DIR}/empty/rules`],
};

async function check(args: readonly string[], format: string): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = { out: (t) => void (out += t), err: (t) => void (err += t), stdin: new PassThrough(), env: {}, colour: { out: false, err: false } };
  const status = await run(['check', ...args, '--capability', CAP, '--format', format], io);
  return { status, out, err };
}

function golden(file: string, actual: string): void {
  if (UPDATE || !existsSync(file)) {
    if (!UPDATE) throw new Error(`${file} is missing: run with OARC_UPDATE_GOLDEN=1 to write it`);
    writeFileSync(file, actual);
    return;
  }
  expect(actual).toBe(readFileSync(file, 'utf8'));
}

describe('golden files: oarc check on packs of mistakes', () => {
  for (const [name, args] of Object.entries(CASES)) {
    it(`${name}: text, JSON and SARIF`, async () => {
      const text = await check(args, 'text');
      golden(`${DIR}/${name}/expected.txt`, `$ oarc check ${args.join(' ')} --capability ${CAP}\n${text.err}${text.out}exit ${text.status}\n`);
      const json = await check(args, 'json');
      expect(json.status).toBe(text.status);
      golden(`${DIR}/${name}/expected.json`, json.out);
      const sarif = await check(args, 'sarif');
      expect(sarif.status).toBe(text.status);
      expect(validateSarif(JSON.parse(sarif.out))).toEqual([]);
      golden(`${DIR}/${name}/expected.sarif`, sarif.out);
      // The four formats report the same diagnostics, in the same order.
      const diagnostics = (JSON.parse(json.out) as { diagnostics: { clause: string }[] }).diagnostics;
      const results = (JSON.parse(sarif.out) as { runs: { results: { ruleId: string }[] }[] }).runs[0]!.results;
      expect(results.map((r) => r.ruleId)).toEqual(diagnostics.map((d) => d.clause));
      const github = await check(args, 'github');
      expect(github.out.split('\n').filter((l) => l.startsWith('::')).length).toBe(diagnostics.length);
    });
  }
});

describe('the README shows what the CLI prints', () => {
  it('every line of the error sample in README.md is a line of the golden output, in order', () => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('### Errors'));
    const sample = /```text\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const lines = sample.trimEnd().split('\n').map((l) => l.replace(/^\$ npx oarc/, '$ oarc'));
    expect(lines.length).toBeGreaterThan(3);
    const golden = readFileSync(`${DIR}/misspellings/expected.txt`, 'utf8').split('\n');
    let at = 0;
    for (const line of lines) {
      const found = golden.indexOf(line, at);
      expect(found, `README line not in the golden output after line ${at}: ${line}`).toBeGreaterThanOrEqual(0);
      at = found + 1;
    }
  });
});
