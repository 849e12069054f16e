/**
 * `oarc test`'s runner (packtest/) on small packs written to a temporary directory: what passes,
 * what fails and how the failure reads, and that every kind of bad input is a failure naming the
 * test and the member — never a crash, never a pass.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatJunit, formatText, runTests, type RunResult } from '../../packtest/index.js';

let dir = '';

const CAPABILITY = `oar_capability_version: "1.0"
host: acme.t
anchors:
  core: { tool.pre_invoke: tool.pre_invoke }
  unsupported: [tool.handler, tool.post_invoke, agent.post_turn, agent.finalize, model.input, model.output, model.tool_result]
profiles: [tool]
`;

const RULES = `oar: "1.0"
id: BLOCK_BASH
namespace: acme
kind: policy
anchor: tool.pre_invoke
requires: { profiles: [tool] }
when: 'tool == "bash"'
effect: block
copy: { what: 'no {{ tool }}' }
---
oar: "1.0"
id: COUNT
namespace: acme
kind: invariant
anchor: tool.pre_invoke
on_fire: [increment_counter]
effect: allow
`;

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

async function run(name: string, tests: string, backend?: 'both'): Promise<RunResult> {
  const file = write(name, `capability: capability.yaml\nrules: [rules.yaml]\ntests:\n${tests}`);
  return runTests([file], backend ? { backend } : {});
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'oarc-packtest-'));
  write('capability.yaml', CAPABILITY);
  write('rules.yaml', RULES);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bash = '{ anchor: tool.pre_invoke, tool_call: { name: bash, arguments: {} } }';

describe('runTests', () => {
  it('passes a test whose expectations hold, on one back end or both', async () => {
    const tests = `  - name: blocks bash\n    occurrence: ${bash}\n    expect: { decision: block, rule: acme/BLOCK_BASH, copy: { what: no bash } }\n`;
    for (const r of [await run('pass.test.yaml', tests), await run('both.test.yaml', tests, 'both')]) {
      expect([r.passed, r.failed]).toEqual([1, 0]);
    }
  });

  it('fails a test that does not hold, with file:line, its name and what differed', async () => {
    const r = await run('fail.test.yaml', `  - name: ok\n    occurrence: ${bash}\n    expect: { decision: block }\n  - name: wrongly expects none\n    occurrence: ${bash}\n    expect: { decision: none, applied: ["acme/BLOCK_BASH:passed"] }\n`);
    expect([r.passed, r.failed]).toEqual([1, 1]);
    const text = formatText(r);
    expect(text).toContain(`FAIL ${join(dir, 'fail.test.yaml')}:7: wrongly expects none\n    decision: expected "none", actual "block"\n`);
    expect(text).toContain('applied[0]: expected "acme/BLOCK_BASH:passed", actual "acme/BLOCK_BASH:fired"');
    expect(text.endsWith('1 passed, 1 failed\n')).toBe(true);
  });

  it('decides a session in order: per-occurrence expectations and a test-level one over the run', async () => {
    const ls = '{ anchor: tool.pre_invoke, tool_call: { name: ls } }';
    const r = await run('session.test.yaml', `  - name: counts\n    occurrences:\n      - ${ls}\n      - { anchor: tool.pre_invoke, tool_call: { name: ls }, expect: { counters: { acme/COUNT: 2 } } }\n    expect: { decision: none, counters: { acme/COUNT: 3 } }\n`);
    expect(r.failed).toBe(1);
    expect(formatText(r)).toContain('counters: acme/COUNT (fire_count): expected 3, actual 2');
  });

  it('a pack that does not load fails the file with its diagnostics', async () => {
    write('broken.yaml', 'oar: "1.0"\nid: X\nkind: policy\nanchor: tool.pre_invoke\neffect: block\nwhen: nope == 1\n');
    const file = write('broken.test.yaml', `capability: capability.yaml\nrules: broken.yaml\ntests:\n  - name: t\n    occurrence: ${bash}\n    expect: { decision: block }\n`);
    const r = await runTests([file]);
    expect([r.passed, r.failed]).toEqual([0, 1]);
    expect(r.files[0]?.error?.[0]).toBe(`${file}: the pack does not load (1 error):`);
    expect(r.files[0]?.error?.[1]).toMatch(/broken\.yaml:6:\d+: .*nope/);
    expect(formatJunit(r)).toMatch(/<testcase name="load"[^>]*>\n {6}<error message="[^"]*the pack does not load/);
  });

  it('an occurrence the engine refuses fails its test, naming the member at its line', async () => {
    const r = await run('host.test.yaml', `  - name: misspelt anchor\n    occurrence: { anchor: tool.pre_invok }\n    expect: { decision: none }\n  - name: undeclared fact\n    occurrence:\n      anchor: tool.pre_invoke\n      facts: { acme.tier: gold }\n    expect: { decision: none }\n  - name: TypeScript spelling\n    occurrence: { anchor: tool.pre_invoke, toolCall: { name: ls } }\n    expect: { decision: none }\n`);
    expect([r.passed, r.failed]).toEqual([0, 3]);
    const [a, b, c] = r.files[0]?.tests ?? [];
    const file = join(dir, 'host.test.yaml');
    expect(a?.error).toMatch(new RegExp(`^${file}:5: \`anchor\`: .*tool\\.pre_invok.*did you mean \`tool\\.pre_invoke\``));
    expect(b?.error).toMatch(new RegExp(`^${file}:10: \`facts\\.acme\\.tier\`: `));
    expect(c?.error).toMatch(new RegExp(`^${file}:13: \`toolCall\`: unknown occurrence member \`toolCall\` \\(write \`tool_call\``));
  });

  it('a malformed test fails alone, saying what is wrong; the others still run', async () => {
    const r = await run('shape.test.yaml', [
      `  - name: good\n    occurrence: ${bash}\n    expect: { decision: block }`,
      `  - name: typo\n    occurence: ${bash}\n    expect: { decision: block }`,
      `  - name: asserts nothing\n    occurrence: ${bash}`,
      `  - name: bad effect\n    occurrence: ${bash}\n    expect: { decision: blocked }`,
      `  - name: bad key\n    occurrence: ${bash}\n    expect: { decison: block }`,
      `  - name: counter of no rule\n    occurrence: ${bash}\n    expect: { counters: { acme/NOPE: 0 } }`,
      `  - name: good\n    occurrence: ${bash}\n    expect: { decision: block }`,
    ].join('\n') + '\n');
    const errors = (r.files[0]?.tests ?? []).map((t) => t.error ?? 'passed');
    expect(errors).toEqual([
      'passed',
      'unknown member `occurence` (did you mean `occurrence`?); a test has name, occurrence, occurrences, expect',
      'missing `expect`: what the decision must be (a test that asserts nothing cannot fail)',
      '`expect.decision` must be one of block, transform, nudge, warn, none; got `blocked` (did you mean `block`?)',
      'unknown member `expect.decison` (did you mean `decision`?); expect names members of the decision: decision, code, rule, copy, content, advisories, applied, counters, events, transforms, on_fire, skipped_transforms',
      'expect.counters names `acme/NOPE`, but no loaded rule has the qualified identifier `acme/NOPE`',
      'another test in this file is named "good" (line 4); a name says which test failed',
    ]);
  });

  it('a test file that is not one fails as a whole; a missing path is reported', async () => {
    const file = write('bad.test.yaml', 'capability: capability.yaml\nrule: [rules.yaml]\ntests: []\n');
    const r = await runTests([file, join(dir, 'missing.test.yaml')]);
    expect(r.files[0]?.error).toEqual([
      `${file}:2: unknown member \`rule\` (did you mean \`rules\`?); a test file has capability, rules, configs, detectors, injection_corpus, tests`,
      `${file}:1: missing \`rules\`: the rule files or directories to test (relative to the test file)`,
      `${file}:3: \`tests\` must be a non-empty list of tests`,
    ]);
    expect(r.unreadable).toEqual([{ path: join(dir, 'missing.test.yaml'), reason: 'no such file or directory' }]);
  });

  it('JUnit XML: a suite per file, a failure per failed expectation, text escaped', async () => {
    const r = await run('junit.test.yaml', `  - name: "<&'\\">"\n    occurrence: ${bash}\n    expect: { decision: warn }\n`);
    const xml = formatJunit(r);
    expect(xml).toContain('<testsuites name="oarc test" tests="1" failures="1" errors="0">');
    expect(xml).toContain(`<testcase name="&lt;&amp;&apos;&quot;&gt;" classname="${join(dir, 'junit.test.yaml')}"`);
    expect(xml).toContain('<failure message="decision: expected &quot;warn&quot;, actual &quot;block&quot;">');
  });

  it('JUnit XML: a path that cannot be read is an <error>, so a CI report shows the run red', async () => {
    const missing = join(dir, 'missing.test.yaml');
    const r = await runTests([missing]);
    const xml = formatJunit(r);
    expect(xml).toContain('<testsuites name="oarc test" tests="1" failures="0" errors="1">');
    expect(xml).toContain(`<testsuite name="${missing}" tests="1" failures="0" errors="1">`);
    expect(xml).toContain(`<error message="${missing}: cannot read: no such file or directory; check the path given to oarc test">`);
  });
});
