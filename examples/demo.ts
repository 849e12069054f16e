/**
 * `npm run demo`: the condition language on a few examples, then a whole example gateway pack
 * compiled to a bundle module, imported, and run over a scripted session, and then the pack's own
 * tests (examples/gateway/gateway.test.yaml), as `npx oarc test examples/gateway --coverage` runs them.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkConditionSource, interpret, loadCondition } from '../compiler/expr/index.js';
import { compile, formatDiagnostic, loadPackFiles } from '../compiler/index.js';
import { createEngine, occurrenceFromJson, type Bundle, type Decision } from '../runtime/index.js';
import { ObjectFactReader } from '../runtime/facts.js';
import { symbolTable } from '../runtime/types.js';
import { secretScanner } from './secret-scanner.js';
import { packageRoot } from './root.js';
import { DETECTOR_REF, SEED_CORPUS, corpusDetector, factNames } from '../injection/detector.js';
import { formatCoverage, formatText, runTests } from '../packtest/index.js';

const root = packageRoot();

function conditions(): void {
  console.log('== Conditions (Appendix A), compiled and interpreted ==\n');
  const tool = { kind: 'profile', profile: 'tool' } as const;
  const symbols = symbolTable([
    { kind: 'fact', name: 'tool', type: 'string', tier: tool },
    { kind: 'fact', name: 'tool_args', type: 'map', tier: tool },
    { kind: 'function', name: 'tool_arg_string', param: 'string', result: 'string', tier: tool },
    { kind: 'fact', name: 'principal_roles', type: 'list<string>', tier: { kind: 'profile', profile: 'session' } },
  ]);
  const facts = {
    tool: 'read',
    tool_args: { path: '/etc/passwd' },
    tool_arg_string: (name: unknown) => (name === 'path' ? '/etc/passwd' : ''),
    principal_roles: ['developer'],
  };
  const examples = [
    'tool == "read" && "path" in tool_args',
    'starts_with(tool_arg_string("path"), "/etc/")',
    'tool in ["bash", "exec"] || "admin" in principal_roles',
    '-7 / 2 == -3 && -7 % 2 == -1',
    'size("😀é") == 2 && "\\uFF5E" < "😀"',
    '9223372036854775807 + 1 > 0',
    'tool_args.path == "/etc/passwd"',
    'size(tool)',
  ];
  for (const src of examples) {
    const c = checkConditionSource(src, symbols);
    if (!c.ok) {
      const e = c.errors[0]!;
      console.log(`  ${src}\n    rejected at load: ${e.message} [${e.clause}]\n`);
      continue;
    }
    const compiled = loadCondition(c.condition.typed);
    const reader = () => new ObjectFactReader(symbols, facts);
    const interpreted = interpret(c.condition.typed, reader());
    let result: string;
    try {
      result = String(compiled(reader()));
    } catch (e) {
      result = `raises: ${String(e)}`;
    }
    const oracle = interpreted.ok ? String(interpreted.value) : `raises: ${interpreted.raise.toString()}`;
    console.log(`  ${src}\n    compiled: ${result}   interpreter: ${oracle}   (${c.condition.nodes} nodes)\n`);
  }
}

function describe(d: Decision): string {
  const lines = [`  decision: ${d.decision}${d.rule ? ` by ${d.rule}` : ''}`];
  if (d.copy && Object.keys(d.copy).length > 0) lines.push(`  copy: ${JSON.stringify(d.copy)}`);
  for (const a of d.advisories.slice(1)) lines.push(`  also: ${a.rule}`);
  lines.push(`  trace: ${d.applied.map((t) => `${t.rule}:${t.outcome}`).join(', ') || '(no rule selected)'}`);
  if (d.onFire.length > 0) lines.push(`  on_fire: ${d.onFire.map((s) => `${s.rule} ${s.action}`).join(', ')}`);
  if (Object.keys(d.counters).length > 0) lines.push(`  counters: ${JSON.stringify(d.counters)}`);
  if (d.events.length > 0) lines.push(`  events: ${JSON.stringify(d.events)}`);
  if (d.transforms.length > 0) lines.push(`  content: ${JSON.stringify(d.content)}`);
  return lines.join('\n');
}

async function pack(): Promise<void> {
  console.log('== The example gateway pack (examples/gateway) ==\n');
  const dir = join(root, 'examples', 'gateway');
  const r = loadPackFiles({ capability: join(dir, 'capability.yaml'), rules: [join(dir, 'rules.yaml')] });
  if (!r.ok) {
    for (const d of r.diagnostics) console.error(formatDiagnostic(d));
    process.exitCode = 1;
    return;
  }
  // The precompiled path: write the bundle module and import it, as a gateway would.
  const out = mkdtempSync(join(tmpdir(), 'oarc-demo-'));
  const file = join(out, 'bundle.mjs');
  const runtime = pathToFileURL(join(root, 'dist', 'runtime', 'internal.js')).href;
  writeFileSync(file, compile(r.pack, runtime));
  const bundle = (await import(pathToFileURL(file).href)).default as Bundle;
  console.log(`compiled ${bundle.rules.length} rules to ${file}\n`);

  const injection = corpusDetector([{ path: SEED_CORPUS }], factNames(bundle.capability.host));
  const engine = createEngine(bundle, { detectors: { 'detector://secret-scanner': secretScanner, [DETECTOR_REF]: injection } });
  // The session in the JSON form the CLI and fixtures use, converted as every JSON reader does.
  const session = (JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8')) as unknown[]).map((o) => occurrenceFromJson(o));
  session.forEach((occ, i) => {
    const what = occ.toolCall ? `${occ.toolCall.name} ${JSON.stringify(occ.toolCall.arguments)}` : JSON.stringify(occ.content);
    console.log(`#${i + 1} ${occ.anchor}: ${what}`);
    console.log(describe(engine.decide({ ...occ, session: 'demo' })));
    console.log();
  });
}

async function tests(): Promise<void> {
  console.log('== The example pack\'s tests (npx oarc test examples/gateway --coverage) ==\n');
  const r = await runTests([relative(process.cwd(), join(root, 'examples', 'gateway')) || '.'], { backend: 'both' });
  console.log(formatText(r, { verbose: true }));
  console.log(formatCoverage(r.coverage));
  if (r.failed > 0) process.exitCode = 1;
}

conditions();
await pack();
await tests();
