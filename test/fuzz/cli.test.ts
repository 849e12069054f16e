/**
 * `oarc fuzz` and `oarc adapter` end to end, through the BUILT CLI as a user runs them:
 * - oarc's three back ends and oarc through the engine protocol agree (exit 0), the same seed
 *   giving the same output;
 * - a planted divergence (flip-adapter.mjs answers `none` where oarc blocks a bash call) is found,
 *   shrunk to one occurrence, written as a fixture that `oarc conformance` replays — passing on
 *   oarc, whose answer it records, while the flipping engine still answers otherwise;
 * - usage errors exit 2, a broken engine exits 1 naming it, the adapter answers bad requests
 *   with error lines.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../support/build.js';

const CLI = join(ROOT, 'dist', 'bin', 'oarc.js');
const PACK = ['test/fuzz/fixtures/pack/rules.yaml', '--capability', 'test/fuzz/fixtures/pack/capability.yaml'];
const ADAPTER = `"${process.execPath}" "${CLI}" adapter`;
const FLIP = `"${process.execPath}" test/fuzz/fixtures/flip-adapter.mjs "${CLI}"`;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function oarc(args: readonly string[], input = '', env: Record<string, string> = {}, timeout = 60_000): Run {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, input, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', OARC_DEBUG: '', ...env }, timeout });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let tmp = '';
beforeAll(() => {
  ensureBuilt(['bin', 'compiler', 'runtime', 'fuzz', 'conformance', 'packtest']);
  tmp = mkdtempSync(join(tmpdir(), 'oarc-fuzz-'));
}, 300_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Progress lines carry timings; everything else must be the same for a seed. */
const withoutTimings = (s: string) => s.split('\n').filter((l) => !/cases\/s|cases in/.test(l)).join('\n');

describe('oarc fuzz: no difference', () => {
  it('oarc agrees with itself on every back end and through the protocol, deterministically for a seed', () => {
    const args = ['fuzz', ...PACK, '--seed', '42', '--runs', '60', '--out', join(tmp, 'none'), '--against', ADAPTER];
    const a = oarc(args);
    expect(a.status, a.stderr).toBe(0);
    expect(a.stdout).toContain('no difference in 60 cases');
    expect(a.stdout).toContain('specialised, generic, interpreter, external');
    expect(a.stderr).toContain('seed 42');
    const b = oarc(args);
    expect(b.status).toBe(0);
    expect(b.stdout).toBe(a.stdout);
    expect(withoutTimings(b.stderr)).toBe(withoutTimings(a.stderr));
    // Nothing is written without a finding.
    expect(() => readdirSync(join(tmp, 'none'))).toThrow();
  }, 60_000);

  it('--json prints a summary whose tally covers every case, and runs on a compiled bundle', () => {
    const r = oarc(['fuzz', ...PACK, '--seed', '9', '--runs', '40', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as { seed: number; cases: number; occurrences: number; differences: number; decisions: Record<string, number> };
    expect(s).toMatchObject({ seed: 9, cases: 40, differences: 0 });
    expect(Object.values(s.decisions).reduce((n, x) => n + x, 0)).toBe(s.occurrences);
    const bundle = join(tmp, 'pack.mjs');
    expect(oarc(['compile', ...PACK, '-o', bundle, '--runtime', join(ROOT, 'dist/runtime/internal.js')]).status).toBe(0);
    const b = oarc(['fuzz', bundle, '--seed', '9', '--runs', '40']);
    expect(b.status, b.stderr).toBe(0);
    expect(b.stdout).toContain('between specialised, generic (seed 9)');
  }, 60_000);
});

describe('oarc fuzz: a planted divergence', () => {
  const out = () => join(tmp, 'found');
  let run: Run;
  beforeAll(() => {
    run = oarc(['fuzz', ...PACK, '--seed', '3', '--runs', '300', '--out', out(), '--against', FLIP]);
  }, 60_000);

  it('is found, shrunk to one occurrence, and reported with the seed and the fixture path (exit 1)', () => {
    expect(run.status, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/difference at case \d+ \(seed 3\), occurrence 1 of 1 after shrinking/);
    expect(run.stdout).toContain('specialised: block by t/BLOCK_RM_RF');
    expect(run.stdout).toMatch(/external \(.*\): none/);
    expect(run.stdout).toContain('differs in: code, copy, decision, rule');
    const files = readdirSync(out()).sort();
    expect(files).toHaveLength(2);
    expect(run.stdout).toContain(`fixture: ${join(out(), files[0] as string)}`);
    const occs = readFileSync(join(out(), files[1] as string), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { tool_call?: { name: string } });
    expect(occs).toHaveLength(1);
    expect(occs[0]?.tool_call?.name).toBe('bash');
  });

  it('writes a fixture oarc conformance replays: it records oarc\'s block, so oarc passes it', () => {
    const r = oarc(['conformance', out(), '--json']);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { counts: Record<string, number> };
    expect(report.counts).toMatchObject({ passed: 1, failed: 0, skipped: 0 });
    const fixture = JSON.parse(readFileSync(join(out(), readdirSync(out()).find((f) => f.endsWith('.json')) as string), 'utf8')) as {
      input: { occurrences: { expected: { decision: string; rule: string } }[] };
    };
    expect(fixture.input.occurrences[0]?.expected).toMatchObject({ decision: 'block', rule: 't/BLOCK_RM_RF' });
  });

  it('and the flipping engine, given the fixture\'s occurrence over the protocol, still answers otherwise', () => {
    const file = readdirSync(out()).find((f) => f.endsWith('.json')) as string;
    const fx = JSON.parse(readFileSync(join(out(), file), 'utf8')) as { input: { occurrences: ({ expected: unknown } & Record<string, unknown>)[] } };
    const { expected: _e, ...occurrence } = fx.input.occurrences[0] as { expected: unknown } & Record<string, unknown>;
    const text = (f: string) => ({ name: f, text: readFileSync(join(ROOT, f), 'utf8') });
    const input = [
      JSON.stringify({ type: 'pack', capability: text('test/fuzz/fixtures/pack/capability.yaml'), rules: [text('test/fuzz/fixtures/pack/rules.yaml')], configs: [] }),
      JSON.stringify({ type: 'decide', occurrence }),
    ].join('\n');
    const flipped = spawnSync(process.execPath, ['test/fuzz/fixtures/flip-adapter.mjs', CLI], { cwd: ROOT, input: `${input}\n`, encoding: 'utf8', timeout: 30_000 });
    const direct = oarc(['adapter'], `${input}\n`);
    const last = (s: string) => JSON.parse(s.trim().split('\n').pop() as string) as { decision: string };
    expect(last(direct.stdout).decision).toBe('block');
    expect(last(flipped.stdout).decision).toBe('none');
  }, 30_000);
});

describe('oarc fuzz: errors', () => {
  it.each([
    [['--runs', '5', '--time', '1s'], 'give --runs or --time, not both'],
    [['--seed', 'abc'], '--seed takes an integer from 0 to 4294967295'],
    [['--runs', '0'], '--runs takes a positive number'],
    [['--time', 'soon'], '--time takes a duration'],
    [['--bogus'], 'unknown option --bogus'],
  ])('%j is a usage error (exit 2)', (extra, message) => {
    const r = oarc(['fuzz', ...PACK, ...extra]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain("Run 'oarc fuzz --help'");
  });

  it('needs rule files or a bundle, and --against needs rule documents', () => {
    expect(oarc(['fuzz', '--capability', 'x.yaml']).stderr).toContain('no bundle or rule files given');
    const r = oarc(['fuzz', 'pack.mjs', '--against', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--against sends the engine the rule documents');
  });

  it('an engine that does not speak the protocol is an input error naming it (exit 1), not a difference', () => {
    const r = oarc(['fuzz', ...PACK, '--seed', '1', '--runs', '5', '--against', `"${process.execPath}" -e "process.stdin.resume(); console.log('hello')"`]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/oarc fuzz: the engine .* answered a line that is not valid JSON/);
    expect(r.stdout).toBe('');
    const gone = oarc(['fuzz', ...PACK, '--seed', '1', '--runs', '5', '--against', `"${process.execPath}" -e "process.exit(3)"`]);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(/exited \(status 3\) before answering/);
  });

  /** Alive and not a zombie (an orphan's zombie may wait for a reaper that never comes). */
  const alive = (pid: number): boolean => {
    const stat = `/proc/${pid}/stat`;
    if (existsSync('/proc/self/stat')) return existsSync(stat) && !/^\d+ \(.*\) Z/.test(readFileSync(stat, 'utf8'));
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  // Each engine is a shell that starts a `sleep` of its own, as a wrapper script would: the
  // shell and the sleep write their pids, and neither may outlive oarc.
  it.each([
    ['never answers', (pids: string) => `echo $$ >> ${pids}; sleep 1234 & echo $! >> ${pids}; wait`, /did not answer within 0\.3 s/],
    ['answers garbage and ignores the end of its input', (pids: string) => `echo $$ >> ${pids}; sleep 1234 & echo $! >> ${pids}; while :; do echo garbage; sleep 0.05; done`, /answered a line that is not valid JSON/],
  ])('an engine that %s: oarc exits 1 within seconds and kills it and what it started', (_what, engine, message) => {
    const pids = join(tmp, `pids-${Math.random().toString(36).slice(2)}`);
    const started = Date.now();
    const r = oarc(['fuzz', ...PACK, '--seed', '1', '--runs', '5', '--against', engine(pids)], '', { OARC_TEST_ENGINE_TIMEOUT_MS: '300' }, 20_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(message);
    const started_ = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(started_).toHaveLength(2);
    expect(started_.filter(alive)).toEqual([]);
  }, 30_000);

  it('--help documents the command and the adapter', () => {
    const r = oarc(['fuzz', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: oarc fuzz');
    expect(r.stdout).toContain('--against <command>');
    expect(oarc(['adapter', '--help']).stdout).toContain('docs/engine-protocol.md');
  });
});

describe('oarc adapter', () => {
  it('answers each request with one line: errors for bad requests, ready for a pack, a decision per occurrence', () => {
    const text = (f: string) => ({ name: f, text: readFileSync(join(ROOT, f), 'utf8') });
    const lines = [
      'not json',
      JSON.stringify({ type: 'decide', occurrence: { anchor: 'tool.pre_invoke' } }),
      JSON.stringify({ type: 'pack', capability: text('test/fuzz/fixtures/pack/capability.yaml'), rules: [{ name: 'bad.yaml', text: 'oar: "1.0"\nid: X\n' }] }),
      JSON.stringify({ type: 'pack', capability: text('test/fuzz/fixtures/pack/capability.yaml'), rules: [text('test/fuzz/fixtures/pack/rules.yaml')] }),
      JSON.stringify({ type: 'decide', occurrence: { anchor: 'tool.pre_invoke', session_id: 's', tool_call: { name: 'bash', arguments: { command: 'rm -rf /' } } } }),
      JSON.stringify({ type: 'decide', occurrence: { anchor: 'tool.pre_invok' } }),
      JSON.stringify({ type: 'decide', occurrence: { anchor: 'content.output', content: 'x', facts: { big: 9007199254740993 } } }),
      JSON.stringify({ type: 'nope' }),
    ];
    const r = oarc(['adapter'], `${lines.join('\n')}\n`);
    expect(r.status, r.stderr).toBe(0);
    const answers = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, { kind?: string; message?: string } | string | boolean>);
    expect(answers).toHaveLength(lines.length);
    expect(answers.map((a) => (typeof a.error === 'object' ? a.error.kind : a.ready === true ? 'ready' : a.decision))).toEqual([
      'protocol', 'protocol', 'pack', 'ready', 'block', 'occurrence', 'occurrence', 'protocol',
    ]);
    expect((answers[5]?.error as { message: string }).message).toContain('did you mean `tool.pre_invoke`');
  });

  it('names the files of a pack it refuses by the names the request gives, not placeholders', () => {
    const text = (f: string) => readFileSync(join(ROOT, f), 'utf8');
    const lines = [
      JSON.stringify({ type: 'pack', capability: { name: 'mycap.yaml', text: 'a: [\n' }, rules: [{ name: 'r.yaml', text: text('test/fuzz/fixtures/pack/rules.yaml') }] }),
      JSON.stringify({ type: 'pack', capability: { name: 'cap.yaml', text: text('test/fuzz/fixtures/pack/capability.yaml') }, rules: [{ name: 'ok.yaml', text: 'oar: "1.0"\nid: A\nkind: policy\nanchor: tool.pre_invoke\neffect: block\n' }, { name: 'bad-rule.yaml', text: 'oar: "1.0"\nid: X\n' }] }),
    ];
    const r = oarc(['adapter'], `${lines.join('\n')}\n`);
    const [cap, rule] = r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { error: { kind: string; message: string } }).error);
    expect(cap?.kind).toBe('pack');
    expect(cap?.message).toMatch(/^mycap\.yaml:2:1: /);
    expect(cap?.message).not.toContain('<capability>');
    expect(rule?.message).toMatch(/^bad-rule\.yaml:1:1: /);
  });
});
