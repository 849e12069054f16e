/** `oarc bench`'s text report: the figures as a reader scans them, and the baseline verdict. */
import type { Comparison } from './compare.js';
import type { Figures } from './run.js';
import { plural } from '../runtime/plural.js';

const ns = (x: number) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} ms` : x >= 1e3 ? `${(x / 1e3).toFixed(2)} µs` : `${x.toFixed(0)} ns`);
const rate = (x: number) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} M/s` : x >= 1e3 ? `${(x / 1e3).toFixed(1)} k/s` : `${x}/s`);
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd()).join('\n');
}

export function textReport(f: Figures): string {
  const out: string[] = [];
  const compile = f.pack.compile_ms;
  out.push(`pack: ${f.pack.inputs.join(' ')} — ${plural(f.pack.rules, 'rule')}, bundle ${f.pack.bundle_bytes} bytes`);
  if (compile !== null) out.push(`compile: load+check ${compile.load.toFixed(1)} ms, emit ${compile.emit.toFixed(1)} ms, in process ${compile.in_process.toFixed(1)} ms`);
  out.push(`occurrences: ${f.occurrences.file} — ${f.occurrences.count} in ${plural(f.occurrences.sessions, 'session')}, reset between passes`);
  out.push(`method: ${f.method.samples} samples × ${f.method.passes_per_sample} passes, clock read ${f.method.timer_ns} ns subtracted, gc ${f.method.gc}, ${f.node}`);
  out.push('');
  const rows = [['back end', 'median', 'p99', 'robust sd', 'decisions/s', 'alloc/decision']];
  for (const [name, b] of Object.entries(f.backends)) {
    const o = b.overall;
    rows.push([name, ns(o.median_ns), ns(o.p99_ns), ns(o.robust_sd_ns), rate(o.decisions_per_s), o.alloc_bytes_per_decision === null ? 'n/a' : `${Math.round(o.alloc_bytes_per_decision)} B`]);
  }
  out.push(table(rows));
  if (f.compiled_over_interpreter !== null) out.push(`\ncompiled/interpreter: ${f.compiled_over_interpreter} (median ns per decision, this run)`);
  else out.push('\ncompiled/interpreter: n/a (a compiled bundle was given; give rule documents to measure the interpreter)');
  if (!f.backends_agree) out.push('warning: the back ends decided some occurrence differently (run oarc test --backend both, or report it)');
  out.push('');
  const names = Object.keys(f.backends);
  const head = ['#', 'anchor', ...names.flatMap((n) => [`${n} median`, 'p99'])];
  const perOcc = [head];
  const first = f.backends[names[0]!]!;
  first.occurrences.forEach((o, i) => {
    perOcc.push([String(o.index), `${o.anchor}${o.summary ? ` ${clip(o.summary, 40)}` : ''}`, ...names.flatMap((n) => {
      const x = f.backends[n]!.occurrences[i]!;
      return [ns(x.median_ns), ns(x.p99_ns)];
    })]);
  });
  out.push(table(perOcc));
  return `${out.join('\n')}\n`;
}

export function comparisonReport(c: Comparison, threshold: number, floorNs: number): string {
  const lines = [
    `baseline (${c.backend}): ${ns(c.old_median_ns)} → ${ns(c.new_median_ns)} per decision (${pct(c.change)}, ${c.delta_ns >= 0 ? '+' : ''}${c.delta_ns} ns; log change ${c.log_change.toFixed(3)} against 2 × pooled log sd ${(2 * c.pooled_log_sd).toFixed(3)})`,
    `  over ${(threshold * 100).toFixed(1)}%: ${c.over_threshold ? 'yes' : 'no'}; over ${floorNs} ns: ${c.over_floor ? 'yes' : 'no'}; outside the noise: ${c.outside_noise ? 'yes' : 'no'}`,
    c.regression ? '  REGRESSION: slower beyond the threshold, the floor and the noise of both runs' : '  no regression',
  ];
  return `${lines.join('\n')}\n`;
}

function clip(s: string, n: number): string {
  const cps = Array.from(s);
  return cps.length > n ? `${cps.slice(0, n - 1).join('')}…` : s;
}
