/**
 * The command line's side of issue 15, in process: suggestions for commands, options and formats;
 * `--allow-empty`; `--max-warnings` at its boundary; GitHub annotation escaping; inert text; the
 * eval host-mismatch message; and what a malformed JSON Lines line does to a session (it ends it,
 * reported at its line — the documented choice).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../bin/cli.js';
import type { Io } from '../bin/output.js';
import { githubReport } from '../bin/report.js';
import { formatDiagnostic, inert, loadPackTexts } from '../compiler/index.js';
import { capability, rule } from './load/fixtures.js';
import { ensureBuilt } from './support/build.js';

const dir = mkdtempSync(join(tmpdir(), 'oarc-diag-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const CAP = 'test/golden/capability.yaml';

async function oarc(args: readonly string[], stdin = ''): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const input = new PassThrough();
  input.end(stdin);
  const io: Io = { out: (t) => void (out += t), err: (t) => void (err += t), stdin: input, env: {}, colour: { out: false, err: false } };
  const status = await run(args, io);
  return { status, out, err };
}

describe('did you mean, on the command line', () => {
  it('a misspelled command, option or format names the one meant', async () => {
    expect((await oarc(['chek'])).err).toContain('unknown command chek (did you mean `check`?)');
    expect((await oarc(['check', 'x.yaml', '--capabilty', CAP])).err).toContain('unknown option --capabilty (did you mean `--capability`?)');
    const f = await oarc(['check', 'x.yaml', '--capability', CAP, '--format', 'sarfi']);
    expect(f.status).toBe(2);
    expect(f.err).toContain('unknown --format sarfi; the formats are text, json, sarif, github (did you mean `sarif`?)');
  });
});

describe('an empty pack', () => {
  it('is an error naming --allow-empty, and loads with it', async () => {
    const empty = mkdtempSync(join(dir, 'empty-'));
    const r = await oarc(['check', empty, '--capability', CAP]);
    expect(r.status).toBe(1);
    expect(r.err).toContain('[oarc/empty-pack]');
    const ok = await oarc(['check', empty, '--capability', CAP, '--allow-empty']);
    expect([ok.status, ok.out]).toEqual([0, 'ok: 0 rules\n']);
    const compiled = await oarc(['compile', empty, '--capability', CAP, '-o', join(dir, 'empty.mjs')]);
    expect(compiled.status).toBe(1);
    expect(compiled.err).toContain('no bundle written');
  });
});

describe('--max-warnings', () => {
  const warned = file('warned.yaml', 'oar: "1.0"\nid: A\nkind: policy\nanchor: tool.pre_invoke\neffect: block\nwhen: "false"\n');
  it('passes at the limit and fails one past it', async () => {
    expect((await oarc(['check', warned, '--capability', CAP, '--max-warnings', '1'])).status).toBe(0);
    const over = await oarc(['check', warned, '--capability', CAP, '--max-warnings', '0']);
    expect(over.status).toBe(1);
    expect(over.err).toContain('oarc check: 1 warning, more than --max-warnings 0');
    expect((await oarc(['check', warned, '--capability', CAP, '--max-warnings', '-1'])).status).toBe(2);
  });
});

describe('hostile text stays inert', () => {
  it('control characters, bidi overrides and zero-width characters are escaped in printed diagnostics', () => {
    expect(inert('a\u001b[2Jb\nok: 1 rule\r\t\u202e\u200b\ufeff')).toBe('a\\x1b[2Jb\\nok: 1 rule\\r\\t\\u202e\\u200b\\ufeff');
    const line = formatDiagnostic({ severity: 'error', clause: 'OAR-DOC-6', message: 'id `\u001b[31mX\nok: 1 rule`', source: { file: 'r\u0007.yaml', line: 1, column: 1 } });
    expect(line).toBe('r\\x07.yaml:1:1: id `\\x1b[31mX\\nok: 1 rule` [OAR-DOC-6]');
    expect(line).not.toMatch(/[\u0000-\u001f]/);
  });

  it('oarc eval prints copy inert: a tool name with ESC and a newline cannot clear the screen or add a line', async () => {
    const rules = file('echo.yaml', 'oar: "1.0"\nid: ECHO\nkind: policy\nanchor: tool.pre_invoke\neffect: warn\nrequires: { profiles: [tool] }\ncopy:\n  what: "{{ tool }}"\n');
    const occ = file('esc.json', JSON.stringify({ anchor: 'tool.pre_invoke', tool_call: { name: 'x\u001b[2J\nok: 1 rule', arguments: {} } }));
    const r = await oarc(['eval', rules, '--capability', 'examples/gateway/capability.yaml', '--occurrence', occ]);
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain('what: x\\x1b[2J\\nok: 1 rule');
    expect(r.out).not.toMatch(/\u001b/);
    expect(r.out).not.toMatch(/^ok: 1 rule/m);
  });

  it('a GitHub annotation escapes its properties and message as workflow commands require', () => {
    const out = githubReport([{ severity: 'warning', clause: 'oarc/never-fires', rule: 'a/B', message: '100% sure, line\nbreak', source: { file: 'a,b:c.yaml', line: 2, column: 3 } }]);
    expect(out).toBe('::warning file=a%2Cb%3Ac.yaml,line=2,col=3,title=oarc/never-fires a/B::rule a/B: 100%25 sure, line\\nbreak [oarc/never-fires]\n');
  });
});

describe('the library API', () => {
  it('[OAR-CONF-5] independent errors of one condition are reported together, with every rule named', () => {
    const r = loadPackTexts({
      capability: JSON.stringify(capability()),
      rules: [JSON.stringify(rule({ requires: { profiles: ['tool'] }, when: 'fire_count_of("NOPE") > 1 && tool_arg_int("n") + 1.5 > 2' }))],
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.diagnostics.map((d) => [d.clause, d.token, d.rule, d.offset])).toEqual([['OAR-FIRE-11', 'NOPE', 'A', 14], ['OAR-EXPR-9', '+', 'A', 47]]);
  });

  it('diagnostics come in reading order: file as given, then line and column', () => {
    const bad = (id: string, anchor: string) => `oar: "1.0"\nid: ${id}\nkind: policy\nanchor: ${anchor}\neffect: block\nwhen: "nosuch"\n`;
    const r = loadPackTexts({ capability: JSON.stringify(capability()), rules: [bad('B', 'nowhere'), bad('A', 'elsewhere')] });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.diagnostics.map((d) => `${d.source?.file}:${d.source?.line}:${d.source?.column} ${d.clause}`)).toEqual(['<rules 0>:4:1 OAR-DOC-12', '<rules 0>:6:8 OAR-FACT-3', '<rules 1>:4:1 OAR-DOC-12', '<rules 1>:6:8 OAR-FACT-3']);
  });

  it('[OAR-CFG-4] a configuration naming no loaded rule names the one probably meant; [OAR-CFG-5] names the mandatory rule', () => {
    const r = loadPackTexts({
      capability: JSON.stringify(capability()),
      rules: [JSON.stringify(rule({ id: 'SHELL_GUARD', mandatory: true }))],
      configs: ['oar_config: "1.0"\ndisable: [SHELL_GAURD, SHELL_GUARD]\n'],
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.diagnostics.map((d) => [d.clause, d.suggestion, d.rule])).toEqual([['OAR-CFG-4', 'SHELL_GUARD', undefined], ['OAR-CFG-5', undefined, 'SHELL_GUARD']]);
      expect(r.diagnostics[0]?.message).toContain('(did you mean `SHELL_GUARD`?)');
    }
  });

  it('a BOM opening a later document of a YAML stream is dropped, as the first is', () => {
    const doc = (id: string) => `oar: "1.0"\nid: ${id}\nkind: policy\nanchor: tool.pre_invoke\neffect: block\n`;
    const r = loadPackTexts({ capability: JSON.stringify(capability()), rules: [`\ufeff${doc('A')}---\n\ufeff${doc('B')}`] });
    expect(r.ok && r.pack.rules.map((x) => x.qid)).toEqual(['A', 'B']);
  });
});

describe('oarc eval', () => {
  // The bundle imports the built runtime; the example detectors import the built scanner.
  beforeAll(() => ensureBuilt(['runtime', 'examples']));

  it('a bundle compiled for another host says so in words', async () => {
    const bundle = join(dir, 'gw.mjs');
    expect((await oarc(['compile', 'examples/gateway/rules.yaml', '--capability', 'examples/gateway/capability.yaml', '-o', bundle, '--runtime', new URL('../dist/runtime/internal.js', import.meta.url).href])).status).toBe(0);
    const other = file('other.yaml', readFileSync('examples/gateway/capability.yaml', 'utf8').replaceAll('acme.gateway', 'acme.other'));
    const r = await oarc(['eval', bundle, '--capability', other, '--occurrence', 'examples/gateway/occurrence.json', '--detectors', 'examples/gateway/detectors.mjs']);
    expect(r.status).toBe(1);
    expect(r.err).toContain(`oarc eval: ${bundle} was compiled for host acme.gateway, and ${other} declares host acme.other; recompile it, or leave out --capability`);
  });

  it('a malformed JSON Lines line ends the session there, reported at its line; the lines before it were decided', async () => {
    const lines = ['{"anchor": "tool.pre_invoke", "tool_call": {"name": "bash", "arguments": {"command": "ls"}}}', '{"anchor": ', '{"anchor": "tool.pre_invoke"}'].join('\n');
    const r = await oarc(['eval', 'examples/gateway/rules.yaml', '--capability', 'examples/gateway/capability.yaml', '--detectors', 'examples/gateway/detectors.mjs', '--occurrence', '-', '--json'], `${lines}\n`);
    expect(r.status).toBe(1);
    expect(r.out.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^<stdin>:2:\d+: /m);
  });

  it('an occurrence member __proto__ is named as written, never as an object', async () => {
    const occ = file('proto.json', '{"anchor": "tool.pre_invoke", "__proto__": {"x": 1}}');
    const r = await oarc(['eval', 'examples/gateway/rules.yaml', '--capability', 'examples/gateway/capability.yaml', '--detectors', 'examples/gateway/detectors.mjs', '--occurrence', occ]);
    expect(r.status).toBe(1);
    expect(r.err).toContain('unknown occurrence member `__proto__`');
    expect(r.err).not.toContain('[object Object]');
  });
});
