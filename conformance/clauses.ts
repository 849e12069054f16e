/**
 * What oarc's tests and its coverage check need from the specification, as project data:
 * `conformance/clauses.json`, committed, so that nothing in the repository reads a file outside it.
 *
 *   node dist/conformance/clauses.js --spec <spec.md> [--out <file>]     (npm run clauses -- --spec …)
 *
 * The specification is `--spec`, or the `OARC_SPEC` environment variable; there is no default — the
 * text lives outside this repository (its canonical home is https://openagentrules.org/spec/1.0/).
 * The output is `conformance/clauses.json` unless `--out` says otherwise. Exit status 1 when the
 * text cannot be read or lacks a part the extraction needs, 2 for a usage error, 0 otherwise.
 * `test/conformance/clauses.test.ts` holds the committed file to the text whenever `OARC_SPEC` is set.
 *
 * What is extracted:
 * - every clause (`extractClauses`; how a clause is read is stated there);
 * - the version the text declares (`**Version x.y**`) and the versions its change log (Appendix B)
 *   lists, in order — [OAR-VER-3];
 * - the fact tables of 5.3 (core facts) and 5.4 (each standard profile, in order), and the core
 *   anchors of 8.1 — [OAR-VER-5].
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from './root.js';

export interface Clause {
  id: string;
  /** 1-based line of the definition in the spec. */
  line: number;
  retired: boolean;
  normative: boolean;
  /** The closed lists the clause's text defines, in order (`ENUMERATION`). */
  enumerations: string[][];
}

/** A fact table row: the name and the declared type (`(string) -> int` for a function). */
export type FactRow = [name: string, type: string];

export interface SpecData {
  version: string;
  changeLog: string[];
  clauses: Clause[];
  coreFacts: FactRow[];
  profiles: { name: string; facts: FactRow[] }[];
  coreAnchors: string[];
}

const DEFINITION = /^\s*[-*+]\s+\*\*\[(OAR-[A-Z]+-[0-9]+)\]\*\*\s?(.*)$/;
const BREAK = /^\s*($|[-*+]\s|#|---|\|)/;
const RETIRED = /^\*?\(retired\)/i;
const MUST = /\bMUST\b/;
/**
 * A closed list: backticked members right after "one of" or "closed vocabulary:", separated by
 * commas or "or" — `a`, `b`, or `c`. The list ends at anything else: ", and `target`" in
 * [OAR-OPS-13] begins the next member of the sentence, not the next action.
 */
const ENUMERATION = /(?:\bone of|\bclosed vocabulary:)\s*(`[^`]+`(?:(?:,\s*(?:or\s+)?|\s+or\s+)`[^`]+`)*)/g;

/**
 * Every clause the spec defines, in order of definition:
 * - A clause is *defined* by a list item that opens with its bold identifier — a line of the form
 *   `- **[OAR-AREA-n]** text…`; its text runs to the next blank line, list item, heading or rule.
 *   Every other `[OAR-…]` in the spec is a reference, not a definition.
 * - A clause is *retired* when its text opens with `(Retired)` (the spec writes `*(Retired)*`).
 * - A clause is *normative* when its text, with inline code spans removed, contains the capitalised
 *   keyword `MUST` (which `MUST NOT` includes) — BCP 14 keywords count only in capitals (the spec's
 *   "Conformance language"). A retired clause is never normative.
 * - Its *enumerations* are the closed lists it defines (`ENUMERATION`).
 *
 * The text itself is not kept: what the tests need from it is these properties, and the
 * specification remains the one place its words are published.
 */
export function extractClauses(spec: string): Clause[] {
  const lines = spec.split(/\r\n|\n|\r/);
  const out: Clause[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = DEFINITION.exec(lines[i]!);
    if (!m) continue;
    const parts = [m[2]!];
    for (let j = i + 1; j < lines.length && !BREAK.test(lines[j]!); j++) parts.push(lines[j]!.trim());
    const text = parts.join(' ').trim();
    const retired = RETIRED.test(text);
    const enumerations = [...text.matchAll(ENUMERATION)].map((e) => [...e[1]!.matchAll(/`([^`]+)`/g)].map((b) => b[1]!));
    out.push({ id: m[1]!, line: i + 1, retired, normative: !retired && MUST.test(text.replace(/`[^`]*`/g, '')), enumerations });
  }
  return out;
}

/** The lines of a section: from its heading to the next heading of the same or a higher level. */
function section(lines: readonly string[], heading: string): string[] {
  const start = lines.findIndex((l) => l.startsWith(heading));
  if (start < 0) throw new Error(`the specification has no section "${heading}"`);
  const level = /^#+/.exec(heading)![0].length;
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && /^#+/.exec(l)![0].length <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** `| \`name\` | \`type\` |` rows of a fact table, in order. */
function factRows(lines: readonly string[]): FactRow[] {
  const out: FactRow[] = [];
  for (const l of lines) for (const m of l.matchAll(/\| `([^`]+)` \| `([^`]+)` \|/g)) out.push([m[1]!, m[2]!]);
  return out;
}

/** 5.4: every standard profile, in order, with its rows. */
function profiles(lines: readonly string[]): SpecData['profiles'] {
  const out: SpecData['profiles'] = [];
  for (const l of section(lines, '### 5.4 Standard profiles')) {
    const p = /^\*\*Profile `([^`]+)`\*\*/.exec(l);
    if (p) out.push({ name: p[1]!, facts: [] });
    else out.at(-1)?.facts.push(...factRows([l]));
  }
  return out;
}

function nonEmpty<T>(what: string, items: T[]): T[] {
  if (items.length === 0) throw new Error(`the specification lists no ${what}`);
  return items;
}

/** Everything `conformance/clauses.json` holds, read from the specification's text. */
export function extractSpecData(spec: string): SpecData {
  const lines = spec.split(/\r\n|\n|\r/);
  const version = /\*\*Version (\d+\.\d+)\*\*/.exec(spec)?.[1];
  if (version === undefined) throw new Error('the specification declares no version (a "**Version x.y**" line)');
  const changeLog = section(lines, '## Appendix B').flatMap((l) => /^\| (\d+\.\d+) \|/.exec(l)?.[1] ?? []);
  const coreAnchors = section(lines, '### 8.1 Core anchors').flatMap((l) => [...l.matchAll(/\| `([a-z_]+\.[a-z_]+)` \|/g)].map((m) => m[1]!));
  const ps = nonEmpty('standard profiles (5.4)', profiles(lines));
  for (const p of ps) nonEmpty(`facts for profile ${p.name} (5.4)`, p.facts);
  return {
    version,
    changeLog: nonEmpty('versions in its change log (Appendix B)', changeLog),
    clauses: nonEmpty('clauses', extractClauses(spec)),
    coreFacts: nonEmpty('core facts (5.3)', factRows(section(lines, '### 5.3 Core facts'))),
    profiles: ps,
    coreAnchors: nonEmpty('core anchors (8.1)', coreAnchors),
  };
}

const COMMENT =
  'What oarc reads from the Open Agent Rules specification (https://openagentrules.org/spec/1.0/). ' +
  'Generated by `npm run clauses -- --spec <spec.md>` (conformance/clauses.ts); do not edit by hand.';

/**
 * The file's text: one clause, row or anchor per line, so that a change to the specification shows
 * in a diff as the lines it changed. Deterministic, so the text itself can be compared.
 */
export function formatSpecData(d: SpecData): string {
  const list = (items: readonly unknown[]) => `[\n${items.map((i) => `    ${JSON.stringify(i)}`).join(',\n')}\n  ]`;
  const members: [string, string][] = [
    ['$comment', JSON.stringify(COMMENT)],
    ['version', JSON.stringify(d.version)],
    ['change_log', JSON.stringify(d.changeLog)],
    ['core_facts', list(d.coreFacts)],
    ['profiles', list(d.profiles)],
    ['core_anchors', list(d.coreAnchors)],
    ['clauses', list(d.clauses)],
  ];
  return `{\n${members.map(([k, v]) => `  ${JSON.stringify(k)}: ${v}`).join(',\n')}\n}\n`;
}

// ---------------------------------------------------------------------------------------------
// Reading the committed file back

type Check = (v: unknown) => boolean;
const isString: Check = (v) => typeof v === 'string';
const listOf = (item: Check): Check => (v) => Array.isArray(v) && v.every(item);
const isRow: Check = (v) => Array.isArray(v) && v.length === 2 && v.every(isString);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isClause: Check = (v) =>
  isRecord(v) &&
  isString(v.id) &&
  Number.isInteger(v.line) &&
  typeof v.retired === 'boolean' &&
  typeof v.normative === 'boolean' &&
  listOf(listOf(isString))(v.enumerations);
const isProfile: Check = (v) => isRecord(v) && isString(v.name) && listOf(isRow)(v.facts);

const SHAPE: [member: string, check: Check, what: string][] = [
  ['version', isString, 'a string'],
  ['change_log', listOf(isString), 'a list of versions'],
  ['core_facts', listOf(isRow), 'a list of [name, type] rows'],
  ['profiles', listOf(isProfile), 'a list of { name, facts }'],
  ['core_anchors', listOf(isString), 'a list of anchor names'],
  ['clauses', listOf(isClause), 'a list of { id, line, retired, normative, enumerations }'],
];

/** `conformance/clauses.json` (or another file of its shape), checked; throws naming what is wrong. */
export function readSpecData(file: string): SpecData {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: cannot read the specification data (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isRecord(doc)) throw new Error(`${file}: the specification data is a JSON object`);
  for (const [member, check, what] of SHAPE) {
    if (!check(doc[member])) throw new Error(`${file}: ${member} must be ${what} (regenerate it: npm run clauses -- --spec <spec.md>)`);
  }
  return {
    version: doc.version as string,
    changeLog: doc.change_log as string[],
    clauses: doc.clauses as Clause[],
    coreFacts: doc.core_facts as FactRow[],
    profiles: doc.profiles as SpecData['profiles'],
    coreAnchors: doc.core_anchors as string[],
  };
}

/** Where the committed data lives. */
export const defaultSpecDataFile = (root = repoRoot()) => join(root, 'conformance', 'clauses.json');

// ---------------------------------------------------------------------------------------------
// The command

const USAGE = 'usage: node dist/conformance/clauses.js --spec <spec.md> [--out <file>]   (or set OARC_SPEC=<spec.md>)';

export function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, out: (s: string) => void = (s) => void process.stdout.write(s)): number {
  let spec = env.OARC_SPEC !== undefined && env.OARC_SPEC !== '' ? env.OARC_SPEC : undefined;
  let file = defaultSpecDataFile();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    if (a === '--help' || a === '-h') {
      out(`${USAGE}\n`);
      return 0;
    }
    if ((a !== '--spec' && a !== '--out') || v === undefined) {
      out(`${USAGE}\n`);
      return 2;
    }
    if (a === '--spec') spec = v;
    else file = resolve(v);
    i++;
  }
  if (spec === undefined) {
    out(`clauses: no specification given: pass --spec <spec.md> or set OARC_SPEC\n${USAGE}\n`);
    return 2;
  }
  if (!existsSync(spec)) {
    out(`clauses: the specification ${spec} does not exist\n`);
    return 1;
  }
  let data: SpecData;
  try {
    data = extractSpecData(readFileSync(spec, 'utf8'));
  } catch (e) {
    out(`clauses: ${spec}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  writeFileSync(file, formatSpecData(data));
  const retired = data.clauses.filter((c) => c.retired).length;
  const normative = data.clauses.filter((c) => c.normative).length;
  out(`clauses: ${file}: version ${data.version}, ${data.clauses.length} clauses (${normative} normative, ${retired} retired), ${data.profiles.length} profiles\n`);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
