/**
 * The benchmark harness: one entry for every section, as `npm run bench` and as `runBench()` (for a
 * future `oarc bench` command).
 *
 *   conditions — one condition, compiled vs interpreter vs cel-js vs hand-written (conditions.ts)
 *   decide     — whole decisions on generated gateway packs of 10/100/1000 rules, compiled vs
 *                interpreter vs a hand-written guard; growth with unselected rules (decide.ts)
 *   decide-content — whole decisions on the hand-written content pack (bench/content-pack), the
 *                specialised procedures vs the generic engine vs a hand-written guard (decide-content.ts)
 *   alloc      — bytes allocated per decision, and the size of the Decision itself (alloc.ts)
 *   compile    — compile time per rule up to 10,000 rules, bundle size, import time (compile.ts)
 *
 * Usage: npm run bench [-- --quick] [-- --only=decide,alloc] [-- --json]
 *   --quick  tiny counts for a CI smoke run (< 30 s); its numbers mean nothing, and it does not
 *            overwrite bench/results/.
 *   --only   a comma-separated list of sections.
 *   --json   print the results as JSON instead of markdown.
 * Writes bench/results/<section>.json (not for --quick). Markdown goes to stdout, progress to
 * stderr. Every number is a median over interleaved samples taken in one process: on a shared
 * machine absolute times move from run to run, ratios much less.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../examples/root.js';
import { renderReport as renderConditions, resultJson as conditionsJson, runConditionBench, type BenchOptions as ConditionOptions, type BenchResult as ConditionResult } from './conditions.js';
import { decideJson, renderDecide, runDecideBench, type DecideOptions, type DecideResult } from './decide.js';
import { contentJson, renderContent, runContentBench, type ContentOptions, type ContentResult } from './decide-content.js';
import { allocJson, renderAlloc, runAllocBench, type AllocOptions, type AllocResult } from './alloc.js';
import { compileJson, renderCompile, runCompileBench, type CompileOptions, type CompileResult } from './compile.js';

export const SECTIONS = ['conditions', 'decide', 'decide-content', 'alloc', 'compile'] as const;
export type Section = (typeof SECTIONS)[number];

type Own<T> = Omit<T, 'quick' | 'log'>;

export interface RunBenchOptions {
  /** Tiny counts for a CI smoke run. */
  quick?: boolean;
  /** Sections to run (default: all, in the order of SECTIONS). */
  only?: readonly Section[];
  /** Write bench/results/<section>.json; default: unless quick. */
  write?: boolean;
  /** Where to write (default: <package>/bench/results). */
  resultsDir?: string;
  /** Progress lines (silent by default; the CLI sends them to stderr). */
  log?: (line: string) => void;
  /** Per-section overrides. */
  conditions?: Own<ConditionOptions>;
  decide?: Own<DecideOptions>;
  'decide-content'?: Own<ContentOptions>;
  alloc?: Own<AllocOptions>;
  compile?: Own<CompileOptions>;
}

export interface BenchRun {
  quick: boolean;
  sections: { conditions?: ConditionResult; decide?: DecideResult; 'decide-content'?: ContentResult; alloc?: AllocResult; compile?: CompileResult };
  /** The whole report as markdown. */
  markdown: string;
  /** Result files written. */
  written: string[];
  seconds: number;
}

function demote(markdown: string): string {
  return markdown.split('\n').map((l) => (l.startsWith('#') ? `#${l}` : l)).join('\n');
}

function targets(s: BenchRun['sections']): string[] {
  const lines: string[] = [];
  const yes = (b: boolean) => (b ? 'met' : '**NOT met**');
  if (s.decide) {
    const d = s.decide;
    const per = (f: (x: (typeof d.sizes)[number]) => number) => d.sizes.map((x) => `${x.size}: ${f(x).toFixed(2)}×`).join(', ');
    const unsel = d.growth.find((g) => g.case === 'unselected');
    const sel = d.growth.find((g) => g.case === 'selected');
    lines.push(`- specialised decide within 1.5× of hand-written at every size — ${yes(d.targets.specialisedWithin1_5xOfHandAtEverySize)} (${per((x) => x.ratios.specialisedVsHand)})`);
    lines.push(`- specialised ≥ 3× faster than the generic engine on the same bundle — ${yes(d.targets.specialised3xFasterThanGenericAtEverySize)} (generic/specialised ${per((x) => x.ratios.compiledVsSpecialised)})`);
    lines.push(`- specialised p99 ≤ 3× p50 over the stream's mix — ${yes(d.targets.specialisedP99Within3xOfP50AtEverySize)} (${per((x) => x.ratios.specialisedTail)}; hand-written ${per((x) => x.ratios.handTail)}: the mix's own spread)`);
    lines.push(`- specialised p99 ≤ 3× p50 for the same decision repeated — ${yes(d.targets.specialisedSameDecisionP99Within3xAtEverySize)} (${per((x) => (x.variants.specialised as { sameDecisionP99: number }).sameDecisionP99)})`);
    if (unsel && sel) {
      lines.push(
        `- unselected-rule cost near zero — ${yes(d.targets.unselectedGrowthNearZero)} (specialised, largest/smallest pack: ` +
          `${(unsel.ratio.specialised as number).toFixed(2)}× at the unselected occurrence, ${(sel.ratio.specialised as number).toFixed(2)}× at the selected one; ` +
          `${(unsel.nsPerUnselectedRule.specialised as number).toFixed(1)} ns per unselected rule)`,
      );
    }
  }
  const c = s['decide-content'];
  if (c) {
    lines.push(
      `- content pack (${c.meta.rules} rules): specialised within 1.5× of hand-written — ${yes(c.targets.specialisedWithin1_5xOfHand)} (${c.ratios.specialisedVsHand.toFixed(2)}×); ` +
        `≥ 3× faster than the generic engine — ${yes(c.targets.specialised3xFasterThanGeneric)} (${c.ratios.compiledVsSpecialised.toFixed(2)}×); ` +
        `p99 ≤ 3× p50 — ${yes(c.targets.specialisedP99Within3xOfP50)} over the mix (${c.ratios.specialisedTail.toFixed(2)}×; hand-written ${c.ratios.handTail.toFixed(2)}×), ` +
        `${yes(c.targets.specialisedSameDecisionP99Within3x)} for the same decision (${c.variants.specialised.sameDecisionP99.toFixed(2)}×)`,
    );
  }
  if (s.compile?.linearity) {
    const l = s.compile.linearity;
    lines.push(`- compile time linear — ${yes(l.met)} (compile(${l.to}) / compile(${l.from}) = ${l.ratio.toFixed(2)}×, target ≤ ${l.target.toFixed(0)}×)`);
  }
  if (s.compile?.tenThousand) {
    const t = s.compile.tenThousand;
    lines.push(`- 10,000 rules compiled in ≤ ${t.targetMs} ms — ${yes(t.met)} (${t.compileMs.toFixed(0)} ms)`);
  }
  if (s.conditions) {
    for (const m of s.conditions.modes) {
      lines.push(
        `- conditions (${m.reader} reader): compiled within 1.5× of hand-written — ${yes(m.targets.compiledWithin1_5xOfHand)} ` +
          `(${m.geomean.ratios.compiledVsHand.toFixed(2)}×); ≥ 5× faster than cel-js — ${yes(m.targets.compiled5xFasterThanCel)} (${(m.geomean.ratios.celVsCompiled ?? NaN).toFixed(2)}×)`,
      );
    }
  }
  return lines;
}

/** Run the selected sections and render them. Writes result files unless quick (or `write: false`). */
export async function runBench(opts: RunBenchOptions = {}): Promise<BenchRun> {
  const started = Date.now();
  const quick = opts.quick ?? false;
  const only = new Set<Section>(opts.only ?? SECTIONS);
  for (const s of only) if (!SECTIONS.includes(s)) throw new Error(`bench: unknown section ${String(s)} (sections: ${SECTIONS.join(', ')})`);
  const log = opts.log ?? (() => {});
  const load0 = loadavg();
  const sections: BenchRun['sections'] = {};
  const parts: string[] = [];
  const json: [Section, string][] = [];

  if (only.has('conditions')) {
    log('== conditions');
    const r = runConditionBench({ ...opts.conditions, quick, log });
    sections.conditions = r;
    parts.push(demote(renderConditions(r)));
    json.push(['conditions', conditionsJson(r)]);
  }
  if (only.has('decide')) {
    log('== decide');
    const r = runDecideBench({ ...opts.decide, quick, log });
    sections.decide = r;
    parts.push(renderDecide(r));
    json.push(['decide', decideJson(r)]);
  }
  if (only.has('decide-content')) {
    log('== decide-content');
    const r = runContentBench({ ...opts['decide-content'], quick, log });
    sections['decide-content'] = r;
    parts.push(renderContent(r));
    json.push(['decide-content', contentJson(r)]);
  }
  if (only.has('alloc')) {
    log('== alloc');
    const r = runAllocBench({ ...opts.alloc, quick, log });
    sections.alloc = r;
    parts.push(renderAlloc(r));
    json.push(['alloc', allocJson(r)]);
  }
  if (only.has('compile')) {
    log('== compile');
    const r = await runCompileBench({ ...opts.compile, quick, log });
    sections.compile = r;
    parts.push(renderCompile(r));
    json.push(['compile', compileJson(r)]);
  }

  const written: string[] = [];
  if (opts.write ?? !quick) {
    const dir = opts.resultsDir ?? join(packageRoot(), 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of json) {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, text);
      written.push(file);
    }
  }
  const load1 = loadavg();
  const cpu = cpus();
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  const head = [
    `# oarc benchmarks${quick ? ' (--quick smoke run: the numbers are not meaningful)' : ''}`,
    '',
    `${process.version} on ${cpu[0]?.model ?? 'unknown cpu'} × ${cpu.length}; sections: ${[...only].join(', ')}; ${seconds} s. ` +
      `Load average ${load0[0]?.toFixed(1)} at the start, ${load1[0]?.toFixed(1)} at the end: on a shared machine absolute times are ` +
      'noisy; every figure is a median of interleaved samples in one process, and the ratios are the numbers to read.',
  ];
  const t = targets(sections);
  if (t.length > 0) head.push('', '**Targets**', '', ...t);
  const markdown = [...head, '', ...parts.flatMap((p) => [p, '']), written.length > 0 ? `Wrote ${written.join(', ')}` : 'No result files written.', ''].join('\n');
  return { quick, sections, markdown, written, seconds };
}

/** The CLI's options. Throws on anything it does not know. */
export function parseArgs(argv: readonly string[]): RunBenchOptions & { json: boolean } {
  const o: RunBenchOptions & { json: boolean } = { json: false };
  for (const a of argv) {
    if (a === '--quick') o.quick = true;
    else if (a === '--json') o.json = true;
    else if (a.startsWith('--only=')) {
      const list = a.slice('--only='.length).split(',').map((s) => s.trim()).filter((s) => s !== '');
      for (const s of list) if (!(SECTIONS as readonly string[]).includes(s)) throw new Error(`bench: unknown section ${s} (sections: ${SECTIONS.join(', ')})`);
      o.only = list as Section[];
    } else throw new Error(`bench: unknown option ${a} (options: --quick --json --only=${SECTIONS.join(',')})`);
  }
  return o;
}

async function main(argv: readonly string[]): Promise<void> {
  const o = parseArgs(argv);
  const run = await runBench({ ...o, log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(o.json ? `${JSON.stringify(run.sections, null, 1)}\n` : run.markdown);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
