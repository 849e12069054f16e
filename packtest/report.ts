/**
 * A test run as people and CI systems read it: text (one line per failing test — file:line, name —
 * then its diff), the JSON report, and JUnit XML for CI test reports.
 */
import { show } from '../conformance/compare.js';
import type { CoverageReport } from './coverage.js';
import type { RunResult, TestResult } from './run.js';

export type Paint = (style: 'red' | 'green' | 'bold' | 'dim', text: string) => string;
const plain: Paint = (_s, t) => t;

/** `3 passed, 1 failed`. */
export function summaryLine(r: RunResult): string {
  return `${r.passed} passed, ${r.failed} failed`;
}

/** What went wrong in one test, one line each: the error, or each mismatch and its values. */
function diffLines(t: TestResult): string[] {
  if (t.error !== undefined) return [t.error];
  const out: string[] = [];
  for (const m of t.mismatches) {
    out.push(m.note);
    // A scalar's note already shows both values; a list or mapping is easier read whole.
    if (typeof m.entry.expected === 'object' && m.entry.expected !== null) {
      out.push(`  - expected ${show(m.entry.expected)}`, `  + actual   ${show(m.entry.actual)}`);
    }
  }
  return out;
}

/** The text report: failures, then (with `verbose`) passes, then the summary line. */
export function formatText(r: RunResult, opts: { verbose?: boolean; paint?: Paint } = {}): string {
  const paint = opts.paint ?? plain;
  const lines: string[] = [];
  for (const u of r.unreadable) lines.push(paint('red', unreadableLine(u)));
  for (const f of r.files) {
    if (f.error) {
      lines.push(paint('red', `FAIL ${f.error[0] ?? f.file}`), ...f.error.slice(1).map((l) => `    ${l}`));
      continue;
    }
    for (const t of f.tests) {
      if (t.status === 'passed') {
        if (opts.verbose) lines.push(`${paint('green', 'ok')}   ${t.file}:${t.line}: ${t.name}`);
        continue;
      }
      lines.push(`${paint('red', 'FAIL')} ${t.file}:${t.line}: ${paint('bold', t.name)}`, ...diffLines(t).map((l) => `    ${l}`));
    }
  }
  if (r.files.length === 0) lines.push('no test files found (*.test.yaml, *.test.yml, *.test.json)');
  lines.push(summaryLine(r));
  return `${lines.join('\n')}\n`;
}

/** The coverage table and the rules left uncovered. */
export function formatCoverage(c: CoverageReport): string {
  const width = Math.max(4, ...c.rules.map((r) => r.rule.length));
  const row = (cells: (string | number)[]) => `${String(cells[0]).padEnd(width)}  ${cells.slice(1).map((x) => String(x).padStart(8)).join('  ')}`;
  const lines = [row(['rule', 'selected', 'fired', 'passed', 'errored']), ...c.rules.map((r) => row([r.rule, r.selected, r.fired, r.passed, r.errored]))];
  lines.push(`not fired by any test: ${c.not_fired.length === 0 ? '(none)' : c.not_fired.join(', ')}`);
  lines.push(`not passed by any test: ${c.not_passed.length === 0 ? '(none)' : c.not_passed.join(', ')}`);
  lines.push(`coverage: ${c.percent}% of rules fired and passed (${c.covered} of ${c.total})`);
  return `${lines.join('\n')}\n`;
}

/** The JSON report (`--format json`). */
export function reportJson(r: RunResult, coverage: boolean): Record<string, unknown> {
  return {
    ok: r.failed === 0 && r.unreadable.length === 0 && r.files.length > 0,
    passed: r.passed,
    failed: r.failed,
    files: r.files.map((f) => ({ file: f.file, ...(f.error ? { error: f.error } : {}), tests: f.tests.length })),
    tests: r.files.flatMap((f) =>
      f.tests.map((t) => ({
        file: t.file,
        line: t.line,
        name: t.name,
        status: t.status,
        ...(t.error !== undefined ? { error: t.error } : {}),
        ...(t.mismatches.length > 0 ? { mismatches: t.mismatches.map((m) => ({ key: m.key, expected: m.entry.expected, actual: m.entry.actual, note: m.note })) } : {}),
      })),
    ),
    ...(r.unreadable.length > 0 ? { unreadable: r.unreadable } : {}),
    ...(coverage ? { coverage: r.coverage } : {}),
  };
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text as XML character data or an attribute value; characters XML 1.0 cannot hold become U+FFFD. */
export function xmlEscape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c] as string).replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD');
}

/** `missing.test.yaml: cannot read: no such file or directory`: a path given that is not there. */
export function unreadableLine(u: { path: string; reason: string }): string {
  return `${u.path}: cannot read: ${u.reason}`;
}

/**
 * A path given that could not be read, as a suite of one `<error>` testcase: left out, a CI report
 * would show green (no tests, no errors) for a run that exited 1.
 */
function junitUnreadable(u: { path: string; reason: string }): string[] {
  const a = xmlEscape(u.path);
  const why = xmlEscape(`${unreadableLine(u)}; check the path given to oarc test`);
  return [
    `  <testsuite name="${a}" tests="1" failures="0" errors="1">`,
    `    <testcase name="read" classname="${a}" file="${a}">`,
    `      <error message="${why}">${why}</error>`,
    '    </testcase>',
    '  </testsuite>',
  ];
}

/**
 * JUnit XML: one `<testsuite>` per test file, one `<testcase>` per test. A failed expectation is a
 * `<failure>`; a test or file that could not run (a pack that does not load, an occurrence the
 * engine refused, a path given that cannot be read) is an `<error>`, as JUnit separates assertions
 * from errors. Both count as failed in the summary line.
 */
export function formatJunit(r: RunResult): string {
  const a = (s: string | number) => xmlEscape(String(s));
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const unreadable = r.unreadable.length;
  const errors = unreadable + r.files.reduce((n, f) => n + (f.error ? 1 : 0) + f.tests.filter((t) => t.error !== undefined).length, 0);
  const tests = r.passed + r.failed + unreadable;
  out.push(`<testsuites name="oarc test" tests="${tests}" failures="${tests - r.passed - errors}" errors="${errors}">`);
  for (const u of r.unreadable) out.push(...junitUnreadable(u));
  for (const f of r.files) {
    const failures = f.tests.filter((t) => t.status === 'failed' && t.error === undefined).length;
    const errs = (f.error ? 1 : 0) + f.tests.filter((t) => t.error !== undefined).length;
    out.push(`  <testsuite name="${a(f.file)}" tests="${f.tests.length + (f.error ? 1 : 0)}" failures="${failures}" errors="${errs}">`);
    if (f.error) {
      out.push(`    <testcase name="load" classname="${a(f.file)}" file="${a(f.file)}">`);
      out.push(`      <error message="${a(f.error[0] ?? 'the test file could not run')}">${a(f.error.join('\n'))}</error>`, '    </testcase>');
    }
    for (const t of f.tests) {
      const open = `    <testcase name="${a(t.name)}" classname="${a(t.file)}" file="${a(t.file)}" line="${t.line}"`;
      if (t.status === 'passed') {
        out.push(`${open}/>`);
        continue;
      }
      const lines = diffLines(t);
      const tag = t.error !== undefined ? 'error' : 'failure';
      out.push(`${open}>`, `      <${tag} message="${a(lines[0] ?? '')}">${a(lines.join('\n'))}</${tag}>`, '    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}
