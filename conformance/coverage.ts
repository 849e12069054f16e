/**
 * Clause coverage (section 10.3): every normative MUST / MUST NOT clause of the specification is
 * cited by the `covers` of at least one fixture, or listed in `conformance/exempt.json` with the
 * unit test that verifies it instead.
 *
 *   node dist/conformance/coverage.js [spec.md] [--fixtures <dir>] [--exempt <file>]
 *
 * The clauses are the committed `conformance/clauses.json` (clauses.ts extracts it from the
 * specification), or those of `spec.md` when one is given — to check the corpus against another
 * text before regenerating. Defaults: `conformance/fixtures`, `conformance/exempt.json`. Exit
 * status 1 when any problem is found, 2 for a usage error, 0 otherwise.
 *
 * Which clauses are defined, retired and normative is read by `extractClauses` (clauses.ts).
 * Retired clauses bind nothing; they need no coverage, and a fixture or exemption citing one is a
 * problem — it claims to test what no longer exists. Section 10.3 narrows coverage to clauses
 * "describing engine behavior or document syntax"; that is a judgement no text rule makes
 * reliably, so every MUST clause is held to it, and one that a fixture cannot reach is listed in
 * exempt.json with the test that verifies it and why.
 *
 * Problems reported: a normative clause neither covered nor exempt; a fixture whose `id` is not its
 * file name stem, that cannot be read, or whose `covers` names an unknown or retired clause; an
 * exemption naming an unknown or retired clause, lacking `test` or `why`, or whose test file does
 * not exist or does not mention the clause id.
 *
 * `checkCoverageFiles` (and so the command) also lints the corpus (corpus-lint.ts): a fixture using
 * host anchors or host facts without covering a clause that justifies them, or supplying a fact
 * outside its declared vocabulary ([OAR-CONF-23]); and a capability declaration whose removal leaves
 * the fixture's outcome unchanged, found by re-running the fixture in process without it
 * ([OAR-CONF-36]). Each violation is a problem like any other.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultSpecDataFile, extractClauses, readSpecData, type Clause } from './clauses.js';
import { lintCorpus, type CorpusLintResult } from './corpus-lint.js';
import { repoRoot } from './root.js';

/** `OAR-CONF-2` inside a text, but not as the start of `OAR-CONF-22`. */
export function mentions(text: string, id: string): boolean {
  return new RegExp(`(?<![A-Za-z0-9-])${id.replace(/[-]/g, '\\-')}(?![0-9])`).test(text);
}

export interface ExemptEntry {
  test: string;
  why: string;
}

export interface CoverageInput {
  /** The specification's clauses (`extractClauses`), in order of definition. */
  clauses: readonly Clause[];
  /** Fixture files: path (for messages and the stem check) and text. */
  fixtures: readonly { file: string; text: string }[];
  /** The exemption list's text, or undefined when there is none. */
  exemptText?: string;
  /** Resolves an exemption's `test` path; undefined when the file does not exist. */
  readTest: (path: string) => string | undefined;
}

export interface CoverageResult {
  clauses: readonly Clause[];
  /** Normative, unretired clauses: what must be covered or exempt. */
  required: string[];
  /** Clause id → fixture ids citing it. */
  coveredBy: Map<string, string[]>;
  exempt: Map<string, ExemptEntry>;
  /** Required clauses neither covered nor exempt. */
  uncovered: string[];
  /** Every other problem, one line each. */
  problems: string[];
  /** The corpus lint, when it was run (`checkCoverageFiles`); its problems are in `problems` too. */
  lint?: CorpusLintResult;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The check itself, over texts: no file system, so tests can drive it directly. */
export function checkCoverage(input: CoverageInput): CoverageResult {
  const { clauses } = input;
  const problems: string[] = [];
  const byId = new Map<string, Clause>();
  for (const c of clauses) {
    const first = byId.get(c.id);
    if (first) problems.push(`spec: ${c.id} is defined twice (lines ${first.line} and ${c.line})`);
    else byId.set(c.id, c);
  }
  const citable = (id: string, where: string): boolean => {
    const c = byId.get(id);
    if (c === undefined) problems.push(`${where} names ${id}, which the specification does not define`);
    else if (c.retired) problems.push(`${where} names ${id}, which is retired`);
    return c !== undefined && !c.retired;
  };

  const coveredBy = new Map<string, string[]>();
  for (const { file, text } of input.fixtures) {
    let fx: unknown;
    try {
      fx = JSON.parse(text);
    } catch (e) {
      problems.push(`${file}: not valid JSON (${e instanceof Error ? e.message : String(e)})`);
      continue;
    }
    if (!isObject(fx)) {
      problems.push(`${file}: a fixture is a JSON object`);
      continue;
    }
    const stem = basename(file, extname(file));
    if (fx.id !== stem) problems.push(`${file}: fixture id ${JSON.stringify(fx.id)} is not its file name stem \`${stem}\` [OAR-CONF-17]`);
    const id = typeof fx.id === 'string' ? fx.id : stem;
    if (!Array.isArray(fx.covers) || fx.covers.length === 0) {
      problems.push(`${file}: covers must be a non-empty list of clause identifiers [OAR-CONF-17]`);
      continue;
    }
    for (const c of fx.covers) {
      if (typeof c !== 'string') {
        problems.push(`${file}: covers holds ${JSON.stringify(c)}, not a clause identifier [OAR-CONF-17]`);
        continue;
      }
      if (!citable(c, `${file}: covers`)) continue;
      const list = coveredBy.get(c) ?? [];
      if (!list.includes(id)) list.push(id);
      coveredBy.set(c, list);
    }
  }

  const exempt = new Map<string, ExemptEntry>();
  if (input.exemptText !== undefined) {
    let doc: unknown;
    try {
      doc = JSON.parse(input.exemptText);
    } catch (e) {
      problems.push(`exempt.json: not valid JSON (${e instanceof Error ? e.message : String(e)})`);
    }
    if (doc !== undefined && !isObject(doc)) problems.push('exempt.json: must be an object of clause id -> { test, why }');
    for (const [id, entry] of Object.entries(isObject(doc) ? doc : {})) {
      if (!citable(id, 'exempt.json: the exemption list')) continue;
      if (!isObject(entry) || typeof entry.test !== 'string' || entry.test === '' || typeof entry.why !== 'string' || entry.why.trim() === '') {
        problems.push(`exempt.json: ${id} must be { "test": "<test file>", "why": "<reason>" } with both non-empty`);
        continue;
      }
      const extra = Object.keys(entry).filter((k) => k !== 'test' && k !== 'why');
      if (extra.length > 0) problems.push(`exempt.json: ${id} carries unknown member ${extra.join(', ')}`);
      const testText = input.readTest(entry.test);
      if (testText === undefined) {
        problems.push(`exempt.json: ${id} names test ${entry.test}, which does not exist`);
        continue;
      }
      if (!mentions(testText, id)) {
        problems.push(`exempt.json: ${id} names test ${entry.test}, which never mentions ${id}`);
        continue;
      }
      exempt.set(id, { test: entry.test, why: entry.why });
    }
  }

  const required = clauses.filter((c) => c.normative && byId.get(c.id) === c).map((c) => c.id);
  const uncovered = required.filter((id) => !coveredBy.has(id) && !exempt.has(id));
  return { clauses, required, coveredBy, exempt, uncovered, problems };
}

/** The human report; the last line is the verdict. */
export function renderCoverage(r: CoverageResult): string {
  const lines: string[] = [];
  const byId = new Map(r.clauses.map((c) => [c.id, c]));
  const covered = r.required.filter((id) => r.coveredBy.has(id)).length;
  const exemptOnly = r.required.filter((id) => !r.coveredBy.has(id) && r.exempt.has(id)).length;
  if (r.uncovered.length > 0) {
    lines.push(`normative clauses neither cited by a fixture's covers nor listed in conformance/exempt.json (${r.uncovered.length}):`);
    for (const id of r.uncovered) lines.push(`  ${id} (spec line ${byId.get(id)!.line})`);
  }
  if (r.problems.length > 0) {
    lines.push(`problems (${r.problems.length}):`);
    for (const p of r.problems) lines.push(`  ${p}`);
  }
  if (r.lint !== undefined) {
    if (r.lint.notJudged.length > 0) {
      lines.push(`fixtures whose capability declarations could not be judged (${r.lint.notJudged.length}):`);
      for (const n of r.lint.notJudged) lines.push(`  ${n}`);
    }
    lines.push(
      `corpus lint [OAR-CONF-23] [OAR-CONF-36]: ${r.lint.fixtures} fixtures, ${r.lint.runs} runs to test capability declarations, ` +
        `${r.lint.notJudged.length} not judged, ${Math.round(r.lint.ms)} ms`,
    );
  }
  lines.push(
    `${r.clauses.length} clauses defined (${r.clauses.filter((c) => c.retired).length} retired); ${r.required.length} normative MUST clauses: ` +
      `${covered} covered by fixtures, ${exemptOnly} exempt, ${r.uncovered.length} uncovered`,
  );
  lines.push(r.uncovered.length === 0 && r.problems.length === 0 ? 'coverage: ok' : 'coverage: FAILED');
  return `${lines.join('\n')}\n`;
}

function fixtureFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (extname(e.name).toLowerCase() === '.json') out.push(full);
    }
  };
  if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export interface CoveragePaths {
  /** The committed clause data (`conformance/clauses.json`). */
  clauses: string;
  /** A specification text to read the clauses from instead, when given. */
  spec?: string;
  fixtures: string;
  exempt: string;
  /** Exemption `test` paths are relative to this directory. */
  root: string;
}

export function defaultPaths(root = repoRoot()): CoveragePaths {
  return {
    clauses: defaultSpecDataFile(root),
    fixtures: join(root, 'conformance', 'fixtures'),
    exempt: join(root, 'conformance', 'exempt.json'),
    root,
  };
}

/** Read the files the check needs and run it, with the corpus lint. */
export function checkCoverageFiles(paths: CoveragePaths): CoverageResult {
  const rel = (f: string) => relative(paths.root, f) || f;
  const fixtures = fixtureFiles(paths.fixtures).map((f) => ({ file: rel(f), text: readFileSync(f, 'utf8') }));
  const result = checkCoverage({
    clauses: paths.spec !== undefined ? extractClauses(readFileSync(paths.spec, 'utf8')) : readSpecData(paths.clauses).clauses,
    fixtures,
    ...(existsSync(paths.exempt) ? { exemptText: readFileSync(paths.exempt, 'utf8') } : {}),
    readTest: (p) => {
      const f = resolve(paths.root, p);
      try {
        return statSync(f).isFile() ? readFileSync(f, 'utf8') : undefined;
      } catch {
        return undefined;
      }
    },
  });
  // The host-tier clause list is held to the specification's clauses by its unit test, not here:
  // this check also runs against other specification texts (its own tests use toy ones).
  const lint = lintCorpus(fixtures);
  return { ...result, problems: [...result.problems, ...lint.problems], lint };
}

const USAGE = 'usage: node dist/conformance/coverage.js [spec.md] [--fixtures <dir>] [--exempt <file>]';

export function main(argv: readonly string[], out: (s: string) => void = (s) => void process.stdout.write(s)): number {
  const paths = defaultPaths();
  const args = [...argv];
  while (args.length > 0) {
    const a = args.shift()!;
    if (a === '--fixtures' || a === '--exempt') {
      const v = args.shift();
      if (v === undefined) {
        out(`${USAGE}\n`);
        return 2;
      }
      paths[a === '--fixtures' ? 'fixtures' : 'exempt'] = resolve(v);
    } else if (a === '--help' || a === '-h') {
      out(`${USAGE}\n`);
      return 0;
    } else if (!a.startsWith('-') && paths.spec === undefined) {
      paths.spec = resolve(a);
    } else {
      out(`${USAGE}\n`);
      return 2;
    }
  }
  let result: CoverageResult;
  try {
    result = checkCoverageFiles(paths);
  } catch (e) {
    out(`coverage: cannot run: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  out(renderCoverage(result));
  return result.uncovered.length === 0 && result.problems.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
