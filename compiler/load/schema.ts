/**
 * Schema validation of rule, capability, configuration and fixture documents, and of conformance
 * reports, with every ajv error turned into a `Diagnostic` that carries the clause it enforces and
 * names the token that clause says must be named.
 *
 * The validators are compiled once, lazily, at module level — never per document. Each is run with
 * `allErrors`, so a document reports every problem in one pass; ajv's bookkeeping errors (`if`,
 * combinator branches) are dropped and the rest reported once each.
 *
 * Which clause an error enforces is decided by the tables below, not by code: they are the
 * reviewable statement of how each field of section 2 maps to the specification.
 */
import { basename, extname } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { error, type Diagnostic, type SourceLocation } from '../diagnostics.js';
import { closest, meantHint } from '../../runtime/suggest.js';
import type { DocPath, SourceDoc } from './source.js';
import ruleSchema from '../../schema/rule.schema.json' with { type: 'json' };
import capabilitySchema from '../../schema/capability.schema.json' with { type: 'json' };
import configSchema from '../../schema/config.schema.json' with { type: 'json' };
import fixtureSchema from '../../schema/fixture.schema.json' with { type: 'json' };
import reportSchema from '../../schema/conformance-report.schema.json' with { type: 'json' };

/** Where a path sits in its source: `SourceDoc.locate`, or any function with its shape. */
export type Locate = (path: DocPath) => SourceLocation;

// ---------------------------------------------------------------------------------------------
// Clause tables

/**
 * One row of a clause table. `field` is a path pattern over the offending field — for `required`
 * the missing member, for `additionalProperties` the unknown one, for a key check the key — where
 * `*` matches any one segment and `**` any path.
 *
 * Lookup, for an error with keyword K at field path P:
 *   1. a row with `keyword: K` whose `field` matches P exactly (fewest wildcards wins);
 *   2. a row with `keyword: K` and `field: '**'`;
 *   3. a row without `keyword` whose `field` matches the longest prefix of P;
 *   4. the table's fallback clause.
 */
export interface ClauseEntry {
  field: string;
  keyword?: string;
  clause: string;
  /** Name the offending value rather than the field, where the clause says "naming the value". */
  token?: 'value';
  /** What the message adds to the generic wording. */
  hint?: string;
}

/** The rule schema's errors by field ([OAR-DOC-*] of section 2, with the clauses they lean on). */
export const RULE_CLAUSES: readonly ClauseEntry[] = [
  // A required field is missing [OAR-DOC-2]; the version marker is checked before the schema.
  { field: '/oar', keyword: 'required', clause: 'OAR-DOC-2' },
  { field: '/id', keyword: 'required', clause: 'OAR-DOC-2' },
  { field: '/kind', keyword: 'required', clause: 'OAR-DOC-2' },
  { field: '/anchor', keyword: 'required', clause: 'OAR-DOC-2' },
  { field: '/effect', keyword: 'required', clause: 'OAR-DOC-2' },
  // A field the specification does not define, anywhere in the document [OAR-DOC-27].
  { field: '**', keyword: 'additionalProperties', clause: 'OAR-DOC-27' },
  { field: '/oar', clause: 'OAR-DOC-3' },
  { field: '/id', clause: 'OAR-DOC-6', token: 'value' },
  { field: '/namespace', clause: 'OAR-DOC-7', token: 'value' },
  { field: '/kind', clause: 'OAR-DOC-10' },
  { field: '/effect', clause: 'OAR-DOC-11' },
  { field: '/anchor', clause: 'OAR-DOC-12' },
  { field: '/selector', clause: 'OAR-DOC-13' },
  { field: '/selector/*', clause: 'OAR-SEL-1', hint: 'a selector clause is a list of strings' },
  { field: '/when', clause: 'OAR-DOC-14' },
  { field: '/flow', clause: 'OAR-DOC-15' },
  { field: '/flow', keyword: 'minItems', clause: 'OAR-DOC-15', hint: 'an empty flow has no agreed meaning; omit it instead' },
  { field: '/enforcement', clause: 'OAR-DOC-16' },
  { field: '/mandatory', clause: 'OAR-DOC-17' },
  { field: '/on_error', clause: 'OAR-DOC-18', hint: 'expected fail_closed, fail_open, or a qualified or bare rule identifier' },
  { field: '/on_fire', clause: 'OAR-DOC-19' },
  { field: '/on_fire/*', clause: 'OAR-FIRE-1', token: 'value' },
  { field: '/overrides', clause: 'OAR-DOC-20' },
  { field: '/overrides/*', clause: 'OAR-DOC-20', token: 'value', hint: 'expected a qualified or bare rule identifier' },
  { field: '/requires', clause: 'OAR-DOC-21' },
  { field: '/transform', clause: 'OAR-DOC-22' },
  { field: '/transform', keyword: 'required', clause: 'OAR-DOC-22', hint: 'a rule with effect: transform must carry transform' },
  { field: '/transform', keyword: 'false schema', clause: 'OAR-DOC-22', hint: 'only a rule with effect: transform may carry transform' },
  { field: '/transform/*', clause: 'OAR-OPS-13' },
  { field: '/transform/replacement', keyword: 'required', clause: 'OAR-OPS-13', hint: 'replace and annotate must carry replacement' },
  { field: '/detector', clause: 'OAR-DOC-23' },
  { field: '/detector', keyword: 'required', clause: 'OAR-DOC-23', hint: 'a rule with kind: detector must carry detector' },
  { field: '/detector', keyword: 'false schema', clause: 'OAR-DOC-23', hint: 'only a rule with kind: detector may carry detector' },
  { field: '/detector/ref', keyword: 'required', clause: 'OAR-DOC-23' },
  { field: '/detector/ref', clause: 'OAR-OPS-12', token: 'value', hint: 'expected detector://<name>' },
  { field: '/copy', clause: 'OAR-DOC-24' },
  { field: '/references', clause: 'OAR-DOC-25' },
  { field: '/status', clause: 'OAR-DOC-29' },
  { field: '/related', clause: 'OAR-DOC-30' },
  { field: '/related/*/id', clause: 'OAR-DOC-30', token: 'value' },
  { field: '/counter_scope', clause: 'OAR-DOC-32' },
];

/** The capability schema's errors: every member must be declared [OAR-FACT-21], and valid [OAR-FACT-24]. */
export const CAPABILITY_CLAUSES: readonly ClauseEntry[] = [
  { field: '**', keyword: 'required', clause: 'OAR-FACT-21' },
  { field: '**', keyword: 'additionalProperties', clause: 'OAR-FACT-24' },
  { field: '/oar_capability_version', clause: 'OAR-FACT-24' },
  { field: '/host', clause: 'OAR-FACT-18', token: 'value', hint: 'the host namespace uses the namespace grammar' },
  { field: '/anchors', clause: 'OAR-PROF-2' },
  { field: '/anchors/host', clause: 'OAR-PROF-5' },
  { field: '/profiles', clause: 'OAR-FACT-16' },
  { field: '/activity_window', clause: 'OAR-PROF-3' },
  { field: '/supports_transform', clause: 'OAR-FACT-21' },
  { field: '/expression_nodes_max', clause: 'OAR-EXPR-17' },
  { field: '/host_facts', clause: 'OAR-FACT-21' },
  { field: '/host_facts/*/name', clause: 'OAR-FACT-18' },
  { field: '/host_facts/*/type', clause: 'OAR-FACT-22', token: 'value' },
  { field: '/detectors', clause: 'OAR-FACT-21' },
  { field: '/detectors/*', clause: 'OAR-OPS-12', token: 'value', hint: 'expected detector://<name>' },
];

/** The configuration schema's errors: anything but the three members is rejected [OAR-CFG-1]. */
export const CONFIG_CLAUSES: readonly ClauseEntry[] = [
  { field: '/disable', clause: 'OAR-CFG-2' },
  { field: '/disable/*', clause: 'OAR-CFG-2', token: 'value', hint: 'expected a qualified or bare rule identifier' },
  { field: '/enforcement', clause: 'OAR-CFG-3' },
];

/** The fixture schema's errors (section 10.2). */
export const FIXTURE_CLAUSES: readonly ClauseEntry[] = [
  { field: '/*', keyword: 'required', clause: 'OAR-CONF-17' },
  { field: '/*', keyword: 'additionalProperties', clause: 'OAR-CONF-17' },
  { field: '/input/capability', keyword: 'required', clause: 'OAR-CONF-19' },
  { field: '/input/anchor', keyword: 'required', clause: 'OAR-CONF-18', hint: 'input carries anchor or occurrences' },
  { field: '/input/*', keyword: 'false schema', clause: 'OAR-CONF-18', hint: 'input carries anchor or occurrences, not both spellings' },
  { field: '/input/*', keyword: 'additionalProperties', clause: 'OAR-CONF-18' },
  { field: '/input/occurrences/*/*', keyword: 'additionalProperties', clause: 'OAR-CONF-31' },
  { field: '/expected/*', keyword: 'additionalProperties', clause: 'OAR-CONF-22' },
  { field: '/input/occurrences/*/expected/*', keyword: 'additionalProperties', clause: 'OAR-CONF-22' },
  { field: '/input/facts/*', keyword: 'false schema', clause: 'OAR-CONF-32', hint: 'a counter is arrived at through declared side-effects, never supplied' },
  { field: '/input/detector_facts/*', keyword: 'false schema', clause: 'OAR-CONF-32', hint: 'a counter is arrived at through declared side-effects, never supplied' },
  { field: '/input/occurrences/*/facts/*', keyword: 'false schema', clause: 'OAR-CONF-32', hint: 'a counter is arrived at through declared side-effects, never supplied' },
  { field: '/input/occurrences/*/detector_facts/*', keyword: 'false schema', clause: 'OAR-CONF-32', hint: 'a counter is arrived at through declared side-effects, never supplied' },
  { field: '/id', clause: 'OAR-CONF-17' },
  { field: '/covers', clause: 'OAR-CONF-17' },
  { field: '/rules', clause: 'OAR-CONF-17' },
  { field: '/input', clause: 'OAR-CONF-18' },
  { field: '/input/capability', clause: 'OAR-CONF-19' },
  { field: '/input/anchor', clause: 'OAR-CONF-29' },
  { field: '/input/content', clause: 'OAR-CONF-34' },
  { field: '/input/tool_call', clause: 'OAR-CONF-40' },
  { field: '/input/config', clause: 'OAR-CFG-7' },
  { field: '/input/occurrences', clause: 'OAR-CONF-31' },
  { field: '/input/occurrences/*/content', clause: 'OAR-CONF-34' },
  { field: '/input/occurrences/*/tool_call', clause: 'OAR-CONF-40' },
  { field: '/expected', clause: 'OAR-CONF-21' },
  { field: '/expected/advisories', clause: 'OAR-CONF-37' },
  { field: '/expected/counters', clause: 'OAR-CONF-33' },
  { field: '/expected/error', clause: 'OAR-CONF-30', hint: 'an expected error is a single machine token, not a phrase' },
  { field: '/expected/skipped_transforms', clause: 'OAR-CONF-39' },
  { field: '/input/occurrences/*/expected', clause: 'OAR-CONF-21' },
  { field: '/input/occurrences/*/expected/advisories', clause: 'OAR-CONF-37' },
  { field: '/input/occurrences/*/expected/counters', clause: 'OAR-CONF-33' },
  { field: '/input/occurrences/*/expected/error', clause: 'OAR-CONF-30', hint: 'an expected error is a single machine token, not a phrase' },
  { field: '/input/occurrences/*/expected/skipped_transforms', clause: 'OAR-CONF-39' },
];

// ---------------------------------------------------------------------------------------------
// Compiled validators: once per process, on first use

type SchemaName = 'rule' | 'capability' | 'config' | 'fixture' | 'report';

const SCHEMAS: Record<SchemaName, object> = {
  rule: ruleSchema,
  capability: capabilitySchema,
  config: configSchema,
  fixture: fixtureSchema,
  report: reportSchema,
};

let ajv: Ajv2020 | undefined;
const compiled = new Map<SchemaName, ValidateFunction>();

function validator(name: SchemaName): ValidateFunction {
  let v = compiled.get(name);
  if (!v) {
    // Strict, except `strictRequired`: `then: { required: [...] }` naming a member declared in
    // the parent's `properties` is the standard way to write a conditional pairing.
    // `verbose` gives each error its schema, so an unknown field can be matched to the fields the
    // schema defines there ("did you mean").
    ajv ??= new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, verbose: true });
    v = ajv.compile(SCHEMAS[name]);
    compiled.set(name, v);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Version markers

/** This engine implements OAR 1.0 ([OAR-DOC-4], [OAR-DOC-5]). */
export const IMPLEMENTED_VERSION = { major: 1n, minor: 0n } as const;

interface VersionClauses {
  missing: string;
  malformed: string;
  major: string;
  minor: string;
}

const RULE_VERSION: VersionClauses = { missing: 'OAR-DOC-2', malformed: 'OAR-DOC-3', major: 'OAR-DOC-4', minor: 'OAR-DOC-5' };
const CONFIG_VERSION: VersionClauses = { missing: 'OAR-CFG-1', malformed: 'OAR-CFG-1', major: 'OAR-CFG-1', minor: 'OAR-CFG-1' };
const CAPABILITY_VERSION: VersionClauses = { missing: 'OAR-FACT-21', malformed: 'OAR-FACT-24', major: 'OAR-FACT-24', minor: 'OAR-FACT-24' };

const VERSION_PATTERN = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;

/**
 * Checks a `<major>.<minor>` marker: present, a string, well formed ("01.0" is not a version,
 * [OAR-DOC-3]), a supported major, and a minor no greater than the one implemented. Compared as
 * integers of any size, so "1.99999999999999999999" is a greater minor, not a rounded one.
 */
function checkVersion(obj: Record<string, unknown>, field: string, clauses: VersionClauses, ctx: Ctx, hint = ''): Diagnostic[] {
  const impl = `${IMPLEMENTED_VERSION.major}.${IMPLEMENTED_VERSION.minor}`;
  if (!Object.prototype.hasOwnProperty.call(obj, field)) {
    return [diag(ctx, clauses.missing, `missing required field \`${field}\`: the version marker is checked first${hint}`, [], field)];
  }
  const v = obj[field];
  if (typeof v !== 'string') {
    return [diag(ctx, clauses.malformed, `\`${field}\` must be a string of the form "<major>.<minor>"; got ${typeName(v)}`, [field], field)];
  }
  const m = VERSION_PATTERN.exec(v);
  if (!m) {
    return [
      diag(
        ctx,
        clauses.malformed,
        `\`${field}\` value \`${v}\` is not a version: expected "<major>.<minor>", decimal integers without leading zeros`,
        [field],
        field,
      ),
    ];
  }
  const major = BigInt(m[1]!);
  const minor = BigInt(m[2]!);
  if (major !== IMPLEMENTED_VERSION.major) {
    return [diag(ctx, clauses.major, `\`${field}\` value \`${v}\` has major version ${major}, which this engine does not support (it implements ${impl})`, [field], field)];
  }
  if (minor > IMPLEMENTED_VERSION.minor) {
    return [
      diag(
        ctx,
        clauses.minor,
        `\`${field}\` value \`${v}\` has minor version ${minor}, greater than the ${impl} this engine implements; a later minor may narrow the document`,
        [field],
        field,
      ),
    ];
  }
  return [];
}

// ---------------------------------------------------------------------------------------------
// Public validators

/**
 * Validates the rule document at `path` inside `doc` (the whole document by default; a fixture's
 * rules are `['rules', i]`). `oar` is checked before anything else and a failure there ends the
 * document's processing ([OAR-CONF-2]); then the schema, every error reported ([OAR-CONF-1]).
 */
export function validateRuleDocument(doc: SourceDoc, path: DocPath = []): Diagnostic[] {
  return guarded(() => {
    const value = valueAt(doc.value, path);
    const ctx: Ctx = { root: value, locate: doc.locate, base: path, table: RULE_CLAUSES, fallback: 'OAR-CONF-1', extensions: true };
    if (!isObject(value)) {
      const last = path[path.length - 1];
      const member = path.length > 0 ? typeof last === 'number' : doc.inCollection;
      if (member) {
        const index = typeof last === 'number' ? last : doc.index;
        return [diag(ctx, 'OAR-DOC-31', `rule set member ${index} is ${typeName(value)}, not a rule document`, [])];
      }
      return [diag(ctx, 'OAR-DOC-1', `a rule document must be a JSON object; this is ${typeName(value)}`, [])];
    }
    const version = checkVersion(value, 'oar', RULE_VERSION, ctx, misfiledHint(value));
    if (version.length > 0) return version;
    return runSchema('rule', value, ctx);
  });
}

/**
 * The members only a capability document has at its top level: its schema's required members that
 * no rule declares. `host`, `anchors`… where a rule's `oar` should be are a capability document
 * given where rule files go.
 */
const CAPABILITY_ONLY: readonly string[] = (capabilitySchema as { required: string[] }).required.filter(
  (m) => !Object.hasOwn((ruleSchema as { properties: object }).properties, m),
);

/**
 * For a rule document with no `oar`: when it is another kind of OAR document (a capability, a
 * configuration) given as a rule file, say where it goes, since "missing `oar`" alone suggests
 * adding a marker to a document that is not a rule at all.
 */
function misfiledHint(value: Record<string, unknown>): string {
  if (CAPABILITY_ONLY.some((m) => Object.hasOwn(value, m))) return '; this looks like a capability document: pass it with --capability, not as a rule file';
  if (Object.hasOwn(value, 'oar_config')) return '; this looks like an operator configuration document: pass it with --config, not as a rule file';
  return '';
}

/** Validates a capability document (section 8.2) against its schema ([OAR-FACT-21], [OAR-FACT-24]). */
export function validateCapabilityDocument(value: unknown, locate?: Locate, basePath: DocPath = []): Diagnostic[] {
  return guarded(() => {
    const ctx: Ctx = { root: value, locate, base: basePath, table: CAPABILITY_CLAUSES, fallback: 'OAR-FACT-24', extensions: true };
    if (!isObject(value)) {
      return [diag(ctx, 'OAR-FACT-24', `a capability document must be a JSON object; this is ${typeName(value)}`, [])];
    }
    const version = checkVersion(value, 'oar_capability_version', CAPABILITY_VERSION, ctx);
    if (version.length > 0) return version;
    return runSchema('capability', value, ctx);
  });
}

/** Validates a configuration document: `oar_config` first, then nothing but its members ([OAR-CFG-1]). */
export function validateConfigDocument(value: unknown, locate?: Locate, basePath: DocPath = []): Diagnostic[] {
  return guarded(() => {
    const ctx: Ctx = { root: value, locate, base: basePath, table: CONFIG_CLAUSES, fallback: 'OAR-CFG-1', extensions: false };
    if (!isObject(value)) {
      return [diag(ctx, 'OAR-CFG-1', `a configuration document must be a JSON object; this is ${typeName(value)}`, [])];
    }
    const version = checkVersion(value, 'oar_config', CONFIG_VERSION, ctx);
    if (version.length > 0) return version;
    return runSchema('config', value, ctx);
  });
}

/**
 * Validates a fixture's shape (section 10.2), then the checks that span members: `id` equals the
 * file name stem ([OAR-CONF-17]) and an asserted `expected.content` has content to start from
 * ([OAR-CONF-34]). Its rules, capability and configuration are validated by their own validators.
 */
export function validateFixtureDocument(value: unknown, locate?: Locate, basePath: DocPath = []): Diagnostic[] {
  return guarded(() => {
    const ctx: Ctx = { root: value, locate, base: basePath, table: FIXTURE_CLAUSES, fallback: 'OAR-CONF-17', extensions: false };
    if (!isObject(value)) {
      return [diag(ctx, 'OAR-CONF-17', `a fixture must be a JSON object; this is ${typeName(value)}`, [])];
    }
    const out = runSchema('fixture', value, ctx);
    out.push(...fixtureCrossChecks(value, ctx));
    return sortByPosition(out);
  });
}

function fixtureCrossChecks(fx: Record<string, unknown>, ctx: Ctx): Diagnostic[] {
  const out: Diagnostic[] = [];
  const id = typeof fx.id === 'string' ? fx.id : undefined;
  const file = ctx.locate?.([...ctx.base]).file;
  if (id !== undefined && file !== undefined && /\.(json|ya?ml)$/i.test(file)) {
    const stem = basename(file, extname(file));
    if (stem !== id) {
      out.push(diag(ctx, 'OAR-CONF-17', `fixture id \`${id}\` must equal its file name stem \`${stem}\``, ['id'], id));
    }
  }
  const name = id ?? 'content';
  const input = isObject(fx.input) ? fx.input : undefined;
  const expected = isObject(fx.expected) ? fx.expected : undefined;
  const occurrences = Array.isArray(input?.occurrences) ? (input.occurrences as unknown[]) : undefined;
  const asserts = (e: unknown) => isObject(e) && Object.prototype.hasOwnProperty.call(e, 'content');
  const supplies = (o: unknown) => isObject(o) && typeof o.content === 'string';
  if (asserts(expected)) {
    if (occurrences === undefined) {
      if (input && !supplies(input)) {
        out.push(diag(ctx, 'OAR-CONF-34', `fixture \`${name}\` asserts expected.content but input supplies no content`, ['expected', 'content'], name));
      }
    } else if (occurrences.length > 0 && !supplies(occurrences[occurrences.length - 1])) {
      // The fixture-level expectation describes the final occurrence ([OAR-CONF-31]).
      out.push(
        diag(ctx, 'OAR-CONF-34', `fixture \`${name}\` asserts expected.content but its final occurrence supplies no content`, ['expected', 'content'], name),
      );
    }
  }
  occurrences?.forEach((o, i) => {
    if (isObject(o) && asserts(o.expected) && !supplies(o)) {
      out.push(
        diag(ctx, 'OAR-CONF-34', `fixture \`${name}\` occurrence ${i} asserts expected.content but supplies no content`, ['input', 'occurrences', i, 'expected', 'content'], name),
      );
    }
  });
  return out;
}

/**
 * Checks a conformance report: its schema, then the arithmetic a schema cannot state — the counts
 * sum to the total, the total is the number of cases, each count is the number of cases with that
 * verdict, and case ids are unique. Returns one message per problem; empty when valid.
 */
export function validateReport(value: unknown): string[] {
  try {
    const validate = validator('report');
    const out: string[] = [];
    if (!validate(value)) {
      for (const e of validate.errors ?? []) {
        if (e.keyword === 'if') continue;
        const extra = extraSegment(e);
        const where = (e.instancePath || '') + (extra !== undefined ? `/${extra}` : '');
        out.push(`${where || '/'}: ${e.message ?? e.keyword}`);
      }
    }
    if (isObject(value) && Array.isArray(value.cases) && isObject(value.counts)) {
      const counts = value.counts;
      const cases = value.cases as unknown[];
      const verdicts = ['passed', 'failed', 'skipped', 'errored'] as const;
      const sum = verdicts.reduce((s, k) => s + (typeof counts[k] === 'number' ? (counts[k] as number) : 0), 0);
      if (sum !== value.total) out.push(`/counts: passed + failed + skipped + errored = ${sum}, but total is ${String(value.total)}`);
      if (value.total !== cases.length) out.push(`/total: ${String(value.total)}, but cases lists ${cases.length}`);
      for (const k of verdicts) {
        const n = cases.filter((c) => isObject(c) && c.verdict === k).length;
        if (counts[k] !== n) out.push(`/counts/${k}: ${String(counts[k])}, but ${n} cases have verdict ${k}`);
      }
      if (Array.isArray(value.failed_cases)) {
        const named = cases.filter((c) => isObject(c) && (c.verdict === 'failed' || c.verdict === 'errored')).map((c) => (c as { id?: unknown }).id);
        if (JSON.stringify(value.failed_cases) !== JSON.stringify(named)) out.push('/failed_cases: must list the ids of the failed and errored cases, in order');
      }
      const seen = new Set<string>();
      cases.forEach((c, i) => {
        if (!isObject(c) || typeof c.id !== 'string') return;
        if (seen.has(c.id)) out.push(`/cases/${i}/id: duplicate case id ${c.id}`);
        seen.add(c.id);
      });
    }
    return out;
  } catch (e) {
    return [`internal error validating report: ${e instanceof Error ? e.message : String(e)}`];
  }
}

// ---------------------------------------------------------------------------------------------
// ajv errors → diagnostics

interface Ctx {
  /** The document (or sub-document) being validated. */
  root: unknown;
  locate: Locate | undefined;
  /** Where `root` sits in the source document, prefixed to every reported path. */
  base: DocPath;
  table: readonly ClauseEntry[];
  fallback: string;
  /** Whether the document kind admits x- extension members (rules and capabilities do). */
  extensions: boolean;
}

function runSchema(name: SchemaName, value: unknown, ctx: Ctx): Diagnostic[] {
  const validate = validator(name);
  if (validate(value)) return [];
  return sortByPosition(mapErrors(validate.errors ?? [], ctx));
}

const NAMES_FIELD = new Set(['required', 'additionalProperties', 'propertyNames', 'dependentRequired']);

/**
 * Words an author might write for an effect or kind the spec spells otherwise: too far apart for
 * edit distance, and the same mistake every time.
 */
const SYNONYMS: Readonly<Record<string, string>> = {
  deny: 'block', reject: 'block', forbid: 'block', refuse: 'block', prevent: 'block', stop: 'block',
  permit: 'allow', accept: 'allow', pass: 'allow',
  redact: 'transform', rewrite: 'transform', modify: 'transform', replace: 'transform', mask: 'transform',
  alert: 'warn', warning: 'warn', log: 'warn', notify: 'warn',
  hint: 'nudge', suggest: 'nudge', remind: 'nudge',
};

/** The allowed value a wrong one was probably meant to be. */
function meantValue(value: unknown, allowed: unknown): string | undefined {
  if (typeof value !== 'string' || !Array.isArray(allowed)) return undefined;
  const names = allowed.filter((x): x is string => typeof x === 'string');
  const synonym = Object.hasOwn(SYNONYMS, value.toLowerCase()) ? SYNONYMS[value.toLowerCase()] : undefined;
  if (synonym !== undefined && names.includes(synonym)) return synonym;
  return closest(value, names);
}

/** The fields the schema defines where ajv found an unknown one. */
function definedFields(e: ErrorObject): string[] {
  const props = (e.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return props === undefined ? [] : Object.keys(props);
}

/**
 * An unknown field that is a misspelling of a required field the same object lacks is one mistake,
 * not two: the unknown field's error names the fix, and the "missing" error is dropped.
 */
function misspelledRequired(errors: readonly ErrorObject[]): Map<ErrorObject, string> {
  const out = new Map<ErrorObject, string>();
  const dropped = new Set<string>();
  for (const e of errors) {
    if (e.keyword !== 'additionalProperties') continue;
    const unknown = (e.params as { additionalProperty?: unknown }).additionalProperty;
    if (typeof unknown !== 'string') continue;
    const missing = errors
      .filter((m) => m.keyword === 'required' && m.instancePath === e.instancePath)
      .map((m) => (m.params as { missingProperty?: unknown }).missingProperty)
      .filter((m): m is string => typeof m === 'string' && !dropped.has(`${e.instancePath}/${m}`));
    const meant = closest(unknown, missing);
    if (meant === undefined) continue;
    out.set(e, meant);
    dropped.add(`${e.instancePath}/${meant}`);
  }
  return out;
}

function mapErrors(errors: readonly ErrorObject[], ctx: Ctx): Diagnostic[] {
  // A combinator's branch errors restate, one branch at a time, what the combinator's own error says.
  const combinators = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => `${e.schemaPath}/`);
  const misspelled = misspelledRequired(errors);
  const covered = new Set([...misspelled].map(([e, m]) => `${e.instancePath}/${m}`));
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    // `if` only reports that `then` failed, and `then`'s own error is in the list.
    if (e.keyword === 'if') continue;
    if (combinators.some((p) => e.schemaPath.startsWith(p))) continue;
    if (e.keyword === 'required' && covered.has(`${e.instancePath}/${String((e.params as { missingProperty?: unknown }).missingProperty)}`)) continue;
    const extra = extraSegment(e);
    const at = pointerToPath(e.instancePath, ctx.root);
    const field = extra === undefined ? at : [...at, extra];
    const entry = lookupClause(ctx.table, e.keyword, field);
    const clause = entry?.clause ?? ctx.fallback;
    const value = valueAt(ctx.root, field);
    const name = fieldName(field);
    const namesKey = NAMES_FIELD.has(e.keyword) || e.propertyName !== undefined;
    const token = !namesKey && entry?.token === 'value' && isNameable(value) ? value : name;
    const key = `${clause}\u0000${field.join('\u0001')}\u0000${token}`;
    if (seen.has(key)) continue; // e.g. a key's own error and propertyNames' summary of it
    seen.add(key);
    const required = misspelled.get(e);
    const present = isObject(valueAt(ctx.root, at)) ? Object.keys(valueAt(ctx.root, at) as object) : [];
    const meant =
      required ??
      (e.keyword === 'additionalProperties' ? closest(name, definedFields(e).filter((f) => !present.includes(f))) : undefined) ??
      (e.keyword === 'enum' ? meantValue(value, (e.params as { allowedValues?: unknown }).allowedValues) : undefined);
    const hint = required !== undefined ? ` (did you mean \`${required}\`? \`${required}\` is required and missing)` : meantHint(meant);
    const d = diag(ctx, clause, describe(e, field, name, value, entry, ctx.extensions) + hint, field, token);
    out.push(meant === undefined ? d : { ...d, suggestion: meant });
  }
  return out;
}

/** The member an error is about when ajv reports it on the parent object. */
function extraSegment(e: ErrorObject): string | undefined {
  const p = e.params as Record<string, unknown>;
  if (typeof p.missingProperty === 'string') return p.missingProperty;
  if (typeof p.additionalProperty === 'string') return p.additionalProperty;
  if (typeof e.propertyName === 'string') return e.propertyName;
  if (e.keyword === 'propertyNames' && typeof p.propertyName === 'string') return p.propertyName;
  return undefined;
}

function lookupClause(table: readonly ClauseEntry[], keyword: string, field: DocPath): ClauseEntry | undefined {
  const segs = field.map(String);
  let best: ClauseEntry | undefined;
  let bestWild = Infinity;
  for (const row of table) {
    if (row.keyword !== keyword || row.field === '**') continue;
    const pat = splitPattern(row.field);
    if (pat.length !== segs.length || !matches(pat, segs)) continue;
    const wild = pat.filter((s) => s === '*').length;
    if (wild < bestWild) {
      best = row;
      bestWild = wild;
    }
  }
  if (best) return best;
  const anywhere = table.find((row) => row.keyword === keyword && row.field === '**');
  if (anywhere) return anywhere;
  for (let n = segs.length; n > 0; n--) {
    const prefix = segs.slice(0, n);
    let hit: ClauseEntry | undefined;
    let hitWild = Infinity;
    for (const row of table) {
      if (row.keyword !== undefined) continue;
      const pat = splitPattern(row.field);
      if (pat.length !== n || !matches(pat, prefix)) continue;
      const wild = pat.filter((s) => s === '*').length;
      if (wild < hitWild) {
        hit = row;
        hitWild = wild;
      }
    }
    if (hit) return hit;
  }
  return undefined;
}

function splitPattern(field: string): string[] {
  return field === '' || field === '/' ? [] : field.slice(1).split('/');
}

function matches(pattern: readonly string[], segs: readonly string[]): boolean {
  return pattern.every((p, i) => p === '*' || p === segs[i]);
}

function describe(e: ErrorObject, field: DocPath, name: string, value: unknown, entry: ClauseEntry | undefined, extensions: boolean): string {
  const p = e.params as Record<string, unknown>;
  const shown = display(field);
  const parent = field.length > 1 ? ` in \`${display(field.slice(0, -1))}\`` : '';
  const hint = entry?.hint ? ` (${entry.hint})` : '';
  if (e.propertyName !== undefined || e.keyword === 'propertyNames') {
    return `key \`${name}\`${parent} is not allowed: ${e.keyword === 'enum' ? `must be one of ${list(p.allowedValues)}` : e.message ?? 'invalid key'}${hint}`;
  }
  switch (e.keyword) {
    case 'required':
      return `missing required field \`${name}\`${parent}${hint}`;
    case 'additionalProperties':
      return extensions
        ? `unknown field \`${name}\`${parent}: only fields this specification defines, or x- extension fields matching ^x-[a-z0-9]+(-[a-z0-9]+)*$, are allowed${hint}`
        : `unknown field \`${name}\`${parent}: only fields this specification defines are allowed${hint}`;
    case 'false schema':
      return `field \`${shown}\` is not allowed here${hint}`;
    case 'enum':
      return `\`${shown}\` must be one of ${list(p.allowedValues)}; got ${show(value)}${hint}`;
    case 'const':
      return `\`${shown}\` must be ${show(p.allowedValue)}; got ${show(value)}${hint}`;
    case 'type':
      return `\`${shown}\` must be ${article(String(p.type))}; got ${typeName(value)}${hint}`;
    case 'pattern':
      return `\`${shown}\` value ${show(value)} does not match ${String(p.pattern)}${hint}`;
    case 'minItems':
      return `\`${shown}\` must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}${hint}`;
    case 'minLength':
      return `\`${shown}\` must not be empty${hint}`;
    case 'minimum':
      return `\`${shown}\` must be at least ${String(p.limit)}; got ${show(value)}${hint}`;
    case 'minProperties':
      return `\`${shown}\` must not be empty${hint}`;
    case 'uniqueItems':
      return `\`${shown}\` repeats an item (items ${String(p.j)} and ${String(p.i)} are equal)${hint}`;
    default:
      return `\`${shown}\` ${e.message ?? `fails ${e.keyword}`}${hint}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

function diag(ctx: Ctx, clause: string, message: string, field: DocPath, token?: string): Diagnostic {
  const path = [...ctx.base, ...field];
  // The named token appears in the message verbatim, whatever the wording around it.
  const text = token !== undefined && !message.includes(token) ? `${message} (${token})` : message;
  return error(clause, text, {
    path,
    ...(token !== undefined ? { token } : {}),
    ...(ctx.locate ? { source: ctx.locate(path) } : {}),
  });
}

function guarded(run: () => Diagnostic[]): Diagnostic[] {
  try {
    return run();
  } catch (e) {
    // Unreachable by design; a defect here must still reject the document, never crash the load.
    return [error('OAR-CONF-1', `internal error validating document: ${e instanceof Error ? e.message : String(e)}`)];
  }
}

function sortByPosition(ds: Diagnostic[]): Diagnostic[] {
  return ds
    .map((d, i) => ({ d, i }))
    .sort((a, b) => {
      const la = a.d.source?.line ?? 0;
      const lb = b.d.source?.line ?? 0;
      if (la !== lb) return la - lb;
      const ca = a.d.source?.column ?? 0;
      const cb = b.d.source?.column ?? 0;
      return ca !== cb ? ca - cb : a.i - b.i;
    })
    .map((x) => x.d);
}

/** JSON pointer → path, with a segment read as an index only where the container is an array. */
function pointerToPath(pointer: string, root: unknown): DocPath {
  if (pointer === '') return [];
  const out: DocPath = [];
  let node = root;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(seg)) {
      const i = Number(seg);
      out.push(i);
      node = node[i];
    } else {
      out.push(seg);
      node = isObject(node) && Object.prototype.hasOwnProperty.call(node, seg) ? node[seg] : undefined;
    }
  }
  return out;
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let node = root;
  for (const seg of path) {
    if (Array.isArray(node) && typeof seg === 'number') node = node[seg];
    else if (isObject(node) && typeof seg === 'string' && Object.prototype.hasOwnProperty.call(node, seg)) node = node[seg];
    else return undefined;
  }
  return node;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Only a string value is named in place of its field: a wrongly typed value is the field's problem. */
/** A value can be named when it is a non-empty string; an empty one names nothing ([OAR-CONF-1]). */
function isNameable(v: unknown): v is string {
  return typeof v === 'string' && v !== '';
}

/** The field a path names: its last member name (an index names its list). */
function fieldName(path: DocPath): string {
  for (let i = path.length - 1; i >= 0; i--) if (typeof path[i] === 'string') return path[i] as string;
  return 'document';
}

/** `transform.action`, `related[0].type`. */
function display(path: DocPath): string {
  if (path.length === 0) return '(document)';
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out === '' ? seg : `.${seg}`;
  return out;
}

function show(v: unknown): string {
  if (typeof v === 'string') return `\`${v}\``;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' || v === null) return String(v);
  return typeName(v);
}

function list(v: unknown): string {
  return Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))).join(', ') : String(v);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  switch (typeof v) {
    case 'string':
      return 'a string';
    case 'boolean':
      return 'a boolean';
    case 'bigint':
      return 'an integer';
    case 'number':
      return Number.isInteger(v) ? 'an integer' : 'a number';
    case 'object':
      return 'an object';
    default:
      return typeof v;
  }
}

function article(type: string): string {
  return type
    .split(',')
    .map((t) => ({ object: 'an object', array: 'a list', integer: 'an integer', string: 'a string', boolean: 'a boolean', number: 'a number', null: 'null' })[t] ?? t)
    .join(' or ');
}
