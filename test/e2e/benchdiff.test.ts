/**
 * `oarc bench` on a user's pack and `oarc diff`, end to end: the BUILT CLI run as a user runs it,
 * on the example pack. Bench runs are short (--time under a second): these tests check the shape of
 * the figures and the gate's verdicts, never a speed.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../support/build.js';

const CLI = join(ROOT, 'dist', 'bin', 'oarc.js');
const GW = 'examples/gateway';
const PACK = [`${GW}/rules.yaml`, '--capability', `${GW}/capability.yaml`, '--detectors', `${GW}/detectors.mjs`];
const SESSION = ['--occurrence', `${GW}/session.jsonl`];

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function oarc(args: readonly string[]): Run {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', OARC_DEBUG: '' }, timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function expectFailure(r: Run, status: number, message: string): void {
  expect(r.status, r.stderr).toBe(status);
  expect(r.stderr).toContain(message);
  expect(r.stderr).not.toMatch(/^ {4}at /m);
}

let tmp = '';
const file = (name: string, text: string) => {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
};

beforeAll(() => {
  ensureBuilt(['bin', 'compiler', 'runtime', 'packtest', 'packbench', 'diff', 'format']);
  tmp = mkdtempSync(join(tmpdir(), 'oarc-benchdiff-'));
});

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

type Figures = import('../../packbench/run.js').Figures;

describe('oarc bench <pack>', () => {
  let first: Figures;

  it('--json writes the figures: per occurrence and overall, both back ends, compile time and size', () => {
    const r = oarc(['bench', ...PACK, ...SESSION, '--time', '800ms', '--json']);
    expect(r.status, r.stderr).toBe(0);
    first = JSON.parse(r.stdout) as Figures;
    writeFileSync(join(tmp, 'baseline.json'), r.stdout);
    expect(first).toMatchObject({ oarc_bench: 1, occurrences: { file: `${GW}/session.jsonl`, count: 7, sessions: 1 }, backends_agree: true });
    expect(first.pack.rules).toBe(9);
    expect(first.pack.bundle_bytes).toBeGreaterThan(1000);
    expect(first.pack.compile_ms?.load).toBeGreaterThan(0);
    expect(Object.keys(first.backends)).toEqual(['specialised', 'interpreter']);
    for (const b of Object.values(first.backends)) {
      const o = b.overall;
      expect(o.median_ns).toBeGreaterThan(0);
      expect(o.p50_ns).toBe(o.median_ns);
      expect(o.p99_ns).toBeGreaterThanOrEqual(o.median_ns);
      expect(o.decisions_per_s).toBe(Math.round(1e9 / o.median_ns));
      expect(o.samples_ns.length).toBe(first.method.samples);
      expect(o.alloc_bytes_per_decision).toBeGreaterThan(0);
      expect(b.occurrences.map((x) => [x.index, x.anchor])).toEqual([1, 2, 3, 4, 5, 6].map((i) => [i, 'tool.pre_invoke']).concat([[7, 'content.output']]));
      for (const x of b.occurrences) expect(x.median_ns).toBeGreaterThan(0);
    }
    expect(first.compiled_over_interpreter).toBeGreaterThan(0);
    expect(['exposed', 'runtime-flag', 'unavailable']).toContain(first.method.gc);
    expect(first.method.samples).toBeGreaterThanOrEqual(5);
  });

  it('the text report shows the same figures', () => {
    const r = oarc(['bench', ...PACK, '--occurrence', `${GW}/occurrence.json`, '--time', '300ms']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('pack: examples/gateway/rules.yaml — 9 rules, bundle ');
    expect(r.stdout).toMatch(/^specialised +\d/m);
    expect(r.stdout).toMatch(/^interpreter +\d/m);
    expect(r.stdout).toMatch(/^compiled\/interpreter: \d/m);
    expect(r.stdout).toMatch(/^1 +tool\.pre_invoke bash \{"command":"rm -rf \/"\}/m);
  });

  it('a rerun of the same pack gets a verdict that agrees with its exit status', () => {
    // Two runs on a shared machine may differ by more than noise (the load changes between them),
    // so this checks the gate's report and status agree; the verdicts themselves are checked below
    // on saved figures, and in test/packbench/compare.test.ts.
    const r = oarc(['bench', ...PACK, ...SESSION, '--time', '800ms', '--baseline', join(tmp, 'baseline.json')]);
    expect([0, 4], r.stdout + r.stderr).toContain(r.status);
    expect(r.stdout).toMatch(/^baseline \(specialised\): .* per decision/m);
    expect(r.stdout).toContain(r.status === 0 ? '  no regression' : '  REGRESSION');
  });

  it('a noise-level change passes the gate, a large one fails it (--compare, on saved figures)', () => {
    // The first run's figures, moved: each sample x becomes m·scale·(x/m)^spread — the median
    // scaled, the log spread multiplied. Within the threshold; beyond it but inside a far wider
    // noise; and ten times slower, its noise scaled alike.
    const moved = (scale: number, spread: number) => {
      const f = structuredClone(first);
      const o = f.backends.specialised!.overall;
      const m = o.median_ns;
      o.samples_ns = o.samples_ns.map((x) => m * scale * (x / m) ** spread);
      for (const k of ['median_ns', 'p50_ns'] as const) o[k] = m * scale;
      return file(`moved-${scale}-${spread}.json`, JSON.stringify(f));
    };
    const base = join(tmp, 'baseline.json');
    const compare = (f: string) => oarc(['bench', '--baseline', base, '--compare', f]);
    const within = compare(moved(1.05, 1));
    expect(within.status, within.stdout + within.stderr).toBe(0);
    expect(within.stdout).toContain('over 10.0%: no');
    // 30% slower, with samples spread far wider than the run's: inside the noise.
    const n = compare(moved(1.3, 20));
    expect(n.status, n.stdout).toBe(0);
    expect(n.stdout).toContain('outside the noise: no');
    const slow = compare(moved(10, 1));
    expect(slow.status, slow.stdout).toBe(4);
    expect(slow.stdout).toContain('  REGRESSION');
  });

  it('a slowed build fails the gate with exit 4: a baseline a thousand times faster than this build', () => {
    // What a build much slower looks like from the new run's side: every figure of the baseline
    // divided by 1000, its noise included. (Ten times was not enough on a loaded machine: the
    // live run's own noise, 2 × pooled log sd up to 1.9, covered the 1.4 log change it measured there.)
    const fast = structuredClone(first);
    const o = fast.backends.specialised!.overall;
    for (const k of ['median_ns', 'p50_ns', 'p99_ns', 'mean_ns', 'sd_ns', 'robust_sd_ns'] as const) o[k] /= 1000;
    o.samples_ns = o.samples_ns.map((x) => x / 1000);
    const baseline = file('fast.json', JSON.stringify(fast));
    const r = oarc(['bench', ...PACK, ...SESSION, '--time', '800ms', '--baseline', baseline, '--json']);
    expect(r.status, r.stderr).toBe(4);
    const out = JSON.parse(r.stdout) as Figures & { baseline: Record<string, unknown> };
    expect(out.baseline).toMatchObject({ file: baseline, threshold: 0.1, floor_ns: 25, over_threshold: true, over_floor: true, outside_noise: true, regression: true });
    expect(r.stderr).toContain('REGRESSION');
  });

  it('benchmarks a compiled bundle: no interpreter, no compile time', () => {
    const bundle = join(tmp, 'gw.bundle.mjs');
    const runtime = pathToFileURL(join(ROOT, 'dist', 'runtime', 'internal.js')).href;
    const c = oarc(['compile', `${GW}/rules.yaml`, '--capability', `${GW}/capability.yaml`, '-o', bundle, '--runtime', runtime]);
    expect(c.status, c.stderr).toBe(0);
    const r = oarc(['bench', bundle, '--detectors', `${GW}/detectors.mjs`, ...SESSION, '--time', '300ms', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const f = JSON.parse(r.stdout) as Figures;
    expect(Object.keys(f.backends)).toEqual(['specialised']);
    expect(f.compiled_over_interpreter).toBeNull();
    expect(f.pack.compile_ms).toBeNull();
    expect(f.pack.bundle_bytes).toBe(readFileSync(bundle).byteLength);
  });

  it('says what is wrong: no pack, suite flags, bad durations, baselines and occurrences', () => {
    expectFailure(oarc(['bench']), 2, "oarc bench: no pack given: oarc bench <rules…|bundle.mjs> --capability <file> --occurrence <file> benchmarks your pack; oarc's own benchmarks are `npm run bench`");
    expectFailure(oarc(['bench', '--quick']), 2, 'oarc bench: --quick is an option of oarc\'s own benchmark suite: add --suite');
    expectFailure(oarc(['bench', '--suite', `${GW}/rules.yaml`]), 2, '--suite runs oarc\'s own benchmarks and takes no pack');
    expectFailure(oarc(['bench', ...PACK]), 2, 'oarc bench: missing --occurrence <file>');
    expectFailure(oarc(['bench', ...PACK, ...SESSION, '--time', 'soon']), 2, '--time takes a duration from 50ms to 3600s, such as 3s or 500ms; `soon` is not one');
    expectFailure(oarc(['bench', ...PACK, ...SESSION, '--threshold', 'lots']), 2, '--threshold takes a percentage such as 10%');
    expectFailure(oarc(['bench', ...PACK, ...SESSION, '--baseline', join(tmp, 'none.json')]), 1, `oarc bench: cannot read figures ${join(tmp, 'none.json')}: no such file or directory`);
    expectFailure(oarc(['bench', '--compare', join(tmp, 'baseline.json')]), 2, '--compare <new.json> needs --baseline <old.json>');
    expectFailure(oarc(['bench', ...PACK, ...SESSION, '--baseline', file('bad.json', '{"x":1}')]), 1, 'not an `oarc bench --json` document (no oarc_bench member)');
    const wrong = file('wrong.json', '{"anchor": "tool.pre_invok"}');
    expectFailure(oarc(['bench', ...PACK, '--occurrence', wrong]), 1, `${wrong}:1:1: oarc bench:`);
    expectFailure(oarc(['bench', ...PACK, '--occurrence', join(tmp, 'nope.json')]), 1, `oarc bench: cannot read occurrence file ${join(tmp, 'nope.json')}: no such file or directory`);
    // An occurrence file with none in it names the command and the file, and says what belongs there.
    const none = file('none.yaml', '# nothing yet\n');
    expectFailure(oarc(['bench', ...PACK, '--occurrence', none]), 1, `oarc bench: ${none}: no occurrence found (the file is empty or holds only comments); an occurrence file holds one occurrence`);
  });
});

describe('oarc diff', () => {
  const CAP = ['--capability', `${GW}/capability.yaml`, '--detectors', `${GW}/detectors.mjs`];
  const rules = () => readFileSync(join(ROOT, GW, 'rules.yaml'), 'utf8');

  it('finds a planted semantic change, grouped, with an example occurrence; exit 1', () => {
    const planted = file('planted.yaml', rules().replace('contains(tool_arg_string("command"), "rm -rf")', 'contains(tool_arg_string("command"), "rm -rf /")'));
    const r = oarc(['diff', `${GW}/rules.yaml`, planted, ...CAP, '--runs', '1500', '--json']);
    expect(r.status, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout) as import('../../diff/report.js').DiffReport;
    expect(out.same).toBe(false);
    expect(out.rules).toEqual({ added: [], removed: [], changed: [{ rule: 'acme.security/BLOCK_RM_RF', fields: ['when'] }], unchanged: 8 });
    const g = out.changes.find((c) => c.title === '`block` → `none` at tool.pre_invoke, rule acme.security/BLOCK_RM_RF no longer fires');
    expect(g, JSON.stringify(out.changes.map((c) => c.title))).toBeDefined();
    const cmd = g!.example.occurrence.tool_call?.arguments?.command as string;
    // The example shows the change: old fires on it, new does not.
    expect(cmd).toContain('rm -rf');
    expect(cmd).not.toContain('rm -rf /');
    expect(g!.example.occurrence.tool_call?.name).toBe('bash');
  });

  it('the text and markdown forms name the change and the rule', () => {
    const planted = file('planted2.yaml', rules().replace("effect: block\ncopy:\n  title: 'Destructive shell command'", "effect: warn\ncopy:\n  title: 'Destructive shell command'"));
    const text = oarc(['diff', `${GW}/rules.yaml`, planted, ...CAP, '--occurrence', `${GW}/session.jsonl`, '--runs', '0']);
    expect(text.status, text.stderr).toBe(1);
    expect(text.stdout).toContain('  changed  acme.security/BLOCK_RM_RF (effect)');
    expect(text.stdout).toContain('1. `block` → `warn` at tool.pre_invoke, rule acme.security/BLOCK_RM_RF — 1 occurrence of the file');
    expect(text.stdout).toContain('   occurrence: {"anchor":"tool.pre_invoke","tool_call":{"name":"bash","arguments":{"command":"rm -rf /"}}}');
    const md = oarc(['diff', `${GW}/rules.yaml`, planted, ...CAP, '--occurrence', `${GW}/session.jsonl`, '--runs', '0', '--format', 'markdown']);
    expect(md.status).toBe(1);
    expect(md.stdout).toMatch(/^### oarc diff\n/);
    expect(md.stdout).toContain('| `acme.security/BLOCK_RM_RF` | changed: effect |');
    expect(md.stdout).toContain('```json\n{"anchor":"tool.pre_invoke","tool_call":{"name":"bash","arguments":{"command":"rm -rf /"}}}\n```');
  });

  it('reports no change for a reformatted copy of the same pack; exit 0', () => {
    // Hand-reformatted (block style, other quoting, reordered fields), then through oarc fmt too.
    const hand = rules()
      .replace('selector: { tool: [ bash ] }', 'selector:\n  tool:\n    - bash')
      .replace("when: 'contains(tool_arg_string(\"command\"), \"rm -rf\")'", 'when: >-\n  contains( tool_arg_string("command") ,\n  "rm -rf" )')
      .replace("namespace: acme.security\nkind: policy\nanchor: tool.pre_invoke\nselector:", "kind: policy\nnamespace: acme.security\nanchor: tool.pre_invoke\nselector:");
    expect(hand).not.toBe(rules());
    const handFile = file('hand.yaml', hand);
    const fmt = oarc(['fmt', handFile]);
    expect(fmt.status, fmt.stderr).toBe(0);
    expect(fmt.stdout).not.toBe(rules());
    const formatted = file('formatted.yaml', fmt.stdout);
    for (const copy of [handFile, formatted]) {
      const r = oarc(['diff', `${GW}/rules.yaml`, copy, ...CAP, '--occurrence', `${GW}/session.jsonl`, '--runs', '500']);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('rules: 0 added, 0 removed, 0 changed, 9 unchanged');
      expect(r.stdout).toContain('no decision changed');
    }
  });

  it('--old/--new lists, rules added and removed, and the same report for the same seed', () => {
    const extra = file('extra.yaml', 'oar: "1.0"\nid: NO_CURL\nnamespace: t\nkind: policy\nanchor: tool.pre_invoke\nselector: { tool: [ curl ] }\nrequires: { profiles: [ tool ] }\neffect: block\n');
    const args = ['diff', '--old', `${GW}/rules.yaml`, '--new', `${GW}/rules.yaml`, '--new', extra, ...CAP, '--runs', '300', '--seed', '5', '--json'];
    const a = oarc(args);
    const b = oarc(args);
    expect(a.status, a.stderr).toBe(1);
    expect(a.stdout).toBe(b.stdout);
    const out = JSON.parse(a.stdout) as import('../../diff/report.js').DiffReport;
    expect(out.rules.added).toEqual(['t/NO_CURL']);
    expect(out.changes.map((c) => c.title)).toContain('`none` → `block` at tool.pre_invoke, rule t/NO_CURL now fires');
    const back = oarc(['diff', '--old', `${GW}/rules.yaml`, '--old', extra, '--new', `${GW}/rules.yaml`, ...CAP, '--runs', '300', '--json']);
    expect((JSON.parse(back.stdout) as typeof out).rules.removed).toEqual(['t/NO_CURL']);
  });

  it('says what is wrong with the command line or the input', () => {
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, ...CAP]), 2, 'oarc diff: give two packs, <old> <new>');
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, `${GW}/rules.yaml`, ...CAP, '--format', 'html']), 2, 'oarc diff: --format takes text, markdown, json; `html` is not one of them');
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, `${GW}/rules.yaml`, ...CAP, '--format', 'markdwn']), 2, '`markdwn` is not one of them (did you mean `markdown`?)');
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, `${GW}/rules.yaml`, ...CAP, '--runs', 'many']), 2, '--runs takes a whole number');
    // The seeds of oarc fuzz, whose generator diff uses: 0 to 2^32 − 1.
    const top = oarc(['diff', `${GW}/rules.yaml`, `${GW}/rules.yaml`, ...CAP, '--runs', '20', '--seed', '4294967295', '--json']);
    expect(top.status, top.stderr).toBe(0);
    expect((JSON.parse(top.stdout) as { seed: number }).seed).toBe(4294967295);
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, `${GW}/rules.yaml`, ...CAP, '--seed', '4294967296']), 2, 'oarc diff: --seed takes an integer from 0 to 4294967295, not `4294967296`');
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, 'no/such.yaml', ...CAP]), 1, 'no/such.yaml:1:1: cannot read `no/such.yaml`: no such file or directory');
    const noOccurrence = file('no-occurrence.yaml', '');
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, `${GW}/rules.yaml`, ...CAP, '--occurrence', noOccurrence]), 1, `oarc diff: ${noOccurrence}: no occurrence found (the file is empty or holds only comments); an occurrence file holds one occurrence (a JSON or YAML object such as {"anchor": "tool.pre_invoke"`);
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, `${GW}/rules.yaml`, ...CAP, '--occurrence', file('no-occurrences.json', '[]')]), 1, 'no-occurrences.json: the list of occurrences is empty; an occurrence file holds');
    // A pack with no rules is refused as by every command that loads one, unless --allow-empty.
    const empty = join(tmp, 'empty-pack');
    mkdirSync(empty, { recursive: true });
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, empty, ...CAP]), 1, `${empty}:1:1: no rules: ${empty} holds no rule document, and a pack without rules allows everything; pass --allow-empty if that is meant`);
    const allowed = oarc(['diff', `${GW}/rules.yaml`, empty, ...CAP, '--runs', '50', '--allow-empty', '--json']);
    expect(allowed.status, allowed.stderr).toBe(1);
    expect((JSON.parse(allowed.stdout) as import('../../diff/report.js').DiffReport).rules.removed).toHaveLength(9);
    const wrong = file('wrong-diff.json', '{"anchor": "tool.pre_invoke", "facts": {"acme.tenant_teir": "x"}}');
    expectFailure(oarc(['diff', `${GW}/rules.yaml`, `${GW}/rules.yaml`, ...CAP, '--occurrence', wrong]), 1, `${wrong}:1:1: oarc diff:`);
  });
});

describe('the README shows what oarc diff and oarc bench print', () => {
  const readme = () => readFileSync(join(ROOT, 'README.md'), 'utf8');
  /** The first ```sh block after `heading` (continuations joined) and the first plain ``` block. */
  const section = (heading: string) => {
    const text = readme();
    const at = text.indexOf(heading);
    expect(at, heading).toBeGreaterThan(-1);
    const blocks: { info: string; body: string }[] = [];
    let open: { info: string; lines: string[] } | undefined;
    for (const line of text.slice(at).split('\n')) {
      if (open === undefined && line.startsWith('```')) open = { info: line.slice(3), lines: [] };
      else if (open !== undefined && line === '```') {
        blocks.push({ info: open.info, body: `${open.lines.join('\n')}\n` });
        open = undefined;
      } else open?.lines.push(line);
    }
    const sh = blocks.find((b) => b.info === 'sh')?.body ?? '';
    return { sh: sh.replace(/\\\n\s*/g, ''), out: blocks.find((b) => b.info === '')?.body ?? '' };
  };

  it('the diff example prints exactly the output shown', () => {
    const { sh, out } = section('## What a pack change does: oarc diff');
    const cmd = sh.split('\n').find((l) => l.startsWith('npx oarc diff '));
    expect(cmd).toBeDefined();
    const newRules = file('rules-new.yaml', readFileSync(join(ROOT, GW, 'rules.yaml'), 'utf8').replace('"rm -rf")', '"rm -rf /")'));
    expect(sh).toContain(`sed 's/"rm -rf")/"rm -rf \\/")/' examples/gateway/rules.yaml > /tmp/rules-new.yaml`);
    const args = (cmd as string).trim().split(/\s+/).slice(2).map((a) => (a === '/tmp/rules-new.yaml' ? newRules : a));
    const r = oarc(args);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout.replaceAll(newRules, '/tmp/rules-new.yaml')).toBe(out);
  });

  it('the bench sample has the lines this build prints: the pack line exactly, the rest with its figures masked', () => {
    const { out } = section('## Benchmarking your pack');
    const shown = out.split('\n').slice(0, out.split('\n').indexOf('…'));
    const r = oarc(['bench', ...PACK, ...SESSION, '--time', '300ms']);
    expect(r.status, r.stderr).toBe(0);
    const printed = r.stdout.split('\n');
    expect(printed[0]).toBe(shown[0]); // pack and bundle size: no measurement in it
    // A measured figure (and its unit, which follows its size) is the only thing that may differ.
    const mask = (l: string) => l.replace(/\d+(\.\d+)?( ?(ns|µs|ms|s|k\/s|B))?/g, '#').replace(/\s+/g, ' ').trim();
    expect(printed.slice(0, shown.length).map(mask)).toEqual(shown.map(mask));
  }, 60_000);
});
