/** `oarc diff`'s reports: text for a terminal, markdown for a pull-request comment, JSON for tools. */
import { toJsonText } from './json.js';
import type { RuleDiff } from './rules.js';
import type { ChangeGroup, DiffRun, Outcome } from './run.js';
import { plural } from '../runtime/plural.js';

export interface DiffReport {
  /** True when no occurrence's outcome changed. */
  same: boolean;
  old: string[];
  new: string[];
  seed: number;
  runs: number;
  occurrence_file: string | null;
  cases: DiffRun['cases'];
  decided: number;
  changed: number;
  rules: RuleDiff;
  changes: ChangeGroup[];
}


function describeOutcome(o: Outcome): string {
  const parts = [o.decision, o.rule === null ? '' : `by ${o.rule}`];
  if (o.copy !== null && Object.keys(o.copy).length > 0) parts.push(`copy ${toJsonText(o.copy)}`);
  if (o.transforms.length > 0) parts.push(`transforms ${toJsonText(o.transforms)}`);
  if (o.content !== undefined) parts.push(`content ${toJsonText(o.content)}`);
  return parts.filter((p) => p !== '').join(' ');
}

function summaryLine(r: DiffReport): string {
  const changed = r.changed === 0 ? 'no decision changed' : `${plural(r.changed, 'occurrence')} decided differently, in ${plural(r.changes.length, 'group')}`;
  return `${changed} (${r.decided} occurrences decided: ${r.cases.given > 0 ? `the file ${r.occurrence_file}, ` : ''}${plural(r.cases.generated - r.cases.refused, 'generated case')}, seed ${r.seed})`;
}

function ruleLines(rules: RuleDiff): string[] {
  const out: string[] = [];
  for (const q of rules.added) out.push(`added    ${q}`);
  for (const q of rules.removed) out.push(`removed  ${q}`);
  for (const c of rules.changed) out.push(`changed  ${c.rule} (${c.fields.join(', ')})`);
  return out;
}

export function textReport(r: DiffReport): string {
  const out: string[] = [];
  out.push(`rules: ${rules(r.rules)}`);
  for (const l of ruleLines(r.rules)) out.push(`  ${l}`);
  out.push('');
  out.push(summaryLine(r));
  r.changes.forEach((g, i) => {
    out.push('');
    out.push(`${i + 1}. ${g.title} — ${counts(g)}`);
    for (const b of g.example.before) out.push(`   after:      ${toJsonText(b)}`);
    out.push(`   occurrence: ${toJsonText(g.example.occurrence)}`);
    out.push(`   old:        ${describeOutcome(g.example.old)}`);
    out.push(`   new:        ${describeOutcome(g.example.new)}`);
  });
  return `${out.join('\n')}\n`;
}

function rules(d: RuleDiff): string {
  return `${d.added.length} added, ${d.removed.length} removed, ${d.changed.length} changed, ${d.unchanged} unchanged`;
}

function counts(g: ChangeGroup): string {
  return [g.given > 0 ? plural(g.given, 'occurrence') + ' of the file' : '', g.generated > 0 ? `${g.generated} generated` : ''].filter(Boolean).join(', ');
}

/** Markdown for a PR comment: code spans and fenced blocks keep rule text inert. */
export function markdownReport(r: DiffReport): string {
  const out: string[] = ['### oarc diff', ''];
  out.push(`**${summaryLine(r).replace(/ \(/, '** (')}`, '');
  out.push(`**Rules:** ${rules(r.rules)}`, '');
  if (r.rules.added.length + r.rules.removed.length + r.rules.changed.length > 0) {
    out.push('| rule | change |', '| --- | --- |');
    for (const q of r.rules.added) out.push(`| ${code(q)} | added |`);
    for (const q of r.rules.removed) out.push(`| ${code(q)} | removed |`);
    for (const c of r.rules.changed) out.push(`| ${code(c.rule)} | changed: ${c.fields.join(', ')} |`);
    out.push('');
  }
  if (r.changes.length > 0) {
    out.push('| # | change | occurrences |', '| --- | --- | --- |');
    r.changes.forEach((g, i) => out.push(`| ${i + 1} | ${g.title.replace(/\|/g, '\\|')} | ${counts(g)} |`));
    out.push('');
    r.changes.forEach((g, i) => {
      out.push(`<details><summary>${i + 1}. example</summary>`, '', '```json');
      for (const b of g.example.before) out.push(toJsonText(b));
      out.push(toJsonText(g.example.occurrence), '```', '', `- old: ${code(describeOutcome(g.example.old))}`, `- new: ${code(describeOutcome(g.example.new))}`, '', '</details>', '');
    });
  }
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}

/** An inline code span that no backtick in the text can close early. */
function code(s: string): string {
  const longest = Math.max(0, ...(s.match(/`+/g) ?? []).map((m) => m.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${longest > 0 ? ' ' : ''}${s.replace(/\n/g, ' ')}${longest > 0 ? ' ' : ''}${fence}`;
}
