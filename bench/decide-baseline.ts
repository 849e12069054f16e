/**
 * The hand-written baseline of the decision benchmark: for one generated pack (packs.ts), the
 * JavaScript a competent engineer would write as a bespoke gateway guard for exactly those rules —
 * generated as source from the pack's rule list, so it exists for every pack size, and then loaded
 * once.
 *
 * What it is: a dispatch on the anchor, then on the tool name (a `switch` for a handful of tools, a
 * `Map` from tool name to handler when there are hundreds — what a switch of hundreds of string
 * cases should be); per tool, one straight-line handler that runs exactly the rules that tool
 * selects, in the order the spec fixes ([OAR-EVAL-1], with [OAR-EVAL-18] applied once, at
 * generation time), with every condition written as direct JavaScript over the call's arguments
 * (`typeof args.path === "string" && args.path.startsWith("/etc/")`). It keeps the same counters
 * (a `Map` keyed by rule, session and `tool_args_fingerprint`, read before and written after the
 * evaluation, [OAR-FIRE-6]) and returns the same `Decision` object — effect, code, rule, rendered
 * copy, advisories, the applied-rules trace with `suppressed` and `monitored_*` outcomes, side
 * effects, events, changed counters, transforms and transformed content.
 *
 * What it leaves out, because no rule of a generated pack needs it on a generated stream: fault
 * routing (`on_error`; no condition here can raise on the stream's values), fact type checks
 * (it trusts the host's shapes), lazy fact providers, overlapping spans ([OAR-OPS-16] skips; it
 * throws instead), flows, and recording the activity window. The benchmark proves the omissions do
 * not matter for these packs: before anything is timed, the baseline must return a decision
 * deep-equal to the engine's on every occurrence of the stream, or the run aborts.
 *
 * The tool-call fingerprint is the spec's ([OAR-FACT-28]): the host adapter computes it, so both
 * sides call the same `toolArgsFingerprint` — a bespoke guard keying counters by call must compute
 * the same digest to share counters with any other engine.
 */
import type { Decision, Occurrence } from '../runtime/index.js';
import { toolArgsFingerprint } from '../runtime/index.js';
import { COPY_ORDER, LOCAL_ANCHOR, type Cond, type CopyText, type GeneratedPack, type RuleSpec } from './packs.js';

export interface Baseline {
  decide(occ: Occurrence): Decision;
  /** Forget every counter (a fresh gateway process). */
  reset(): void;
}

const KIND_RANK: Readonly<Record<RuleSpec['kind'], number>> = { policy: 1, invariant: 2, detector: 3 };

/** [OAR-EVAL-1]: kind, then qualified identifier by code point (the generated ids are ASCII). */
export function evaluationOrder(rules: readonly RuleSpec[]): RuleSpec[] {
  return [...rules].sort((a, b) => KIND_RANK[a.kind] - KIND_RANK[b.kind] || (a.qid < b.qid ? -1 : a.qid > b.qid ? 1 : 0));
}

const overridesOf = (r: RuleSpec): string[] => (r.overrides ?? []).map((id) => (id.includes('/') ? id : `${r.namespace}/${id}`));

/**
 * [OAR-EVAL-18] over one selected set (already in [OAR-EVAL-1] order): repeatedly take the first
 * rule none of whose remaining suppressors is still unevaluated.
 */
export function amendedOrder(selected: readonly RuleSpec[]): RuleSpec[] {
  const remaining = [...selected];
  const out: RuleSpec[] = [];
  while (remaining.length > 0) {
    const i = remaining.findIndex((c) => !remaining.some((s) => s !== c && overridesOf(s).includes(c.qid)));
    if (i < 0) throw new Error('bench: overrides cycle in a generated pack');
    out.push(remaining.splice(i, 1)[0] as RuleSpec);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Code generation. Every string from the pack reaches the source as a JSON literal.

const lit = (s: string) => JSON.stringify(s);
/** The constant holding one rule's counters: session → scope value → counts. */
const storeName = (qid: string) => `C_${qid.replace(/[^A-Za-z0-9_]/g, (ch) => `$${ch.charCodeAt(0).toString(16)}$`)}`;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const local = (prefix: string, name: string) => `${prefix}_${name.replace(/[^A-Za-z0-9_$]/g, '_')}`;
const member = (obj: string, name: string) => (IDENT.test(name) ? `${obj}.${name}` : `${obj}[${lit(name)}]`);

type Ctx = 'tool' | 'content';

/** Locals a handler reads once at its top: argument values, roles, content facts. */
class Locals {
  readonly decl = new Map<string, string>();
  fingerprint = false;
  use(name: string, init: string): string {
    if (!this.decl.has(name)) this.decl.set(name, init);
    return name;
  }
}

function condJs(c: Cond, r: RuleSpec, ctx: Ctx, locals: Locals): string {
  const go = (x: Cond) => condJs(x, r, ctx, locals);
  const needTool = () => {
    if (ctx !== 'tool') throw new Error(`bench: baseline: rule ${r.qid} reads a tool fact at a content anchor`);
  };
  const strArg = (name: string) => {
    needTool();
    const v = member('args', name);
    return locals.use(local('s', name), `typeof ${v} === "string" ? ${v} : ""`);
  };
  switch (c.k) {
    case 'and':
      return `(${go(c.a)} && ${go(c.b)})`;
    case 'or':
      return `(${go(c.a)} || ${go(c.b)})`;
    case 'not':
      return `!${go(c.a)}`;
    case 'hasArg':
      needTool();
      return `hasOwn.call(args, ${lit(c.arg)})`;
    case 'strArg': {
      const s = strArg(c.arg);
      switch (c.op) {
        case 'starts_with':
          return `${s}.startsWith(${lit(c.value)})`;
        case 'ends_with':
          return `${s}.endsWith(${lit(c.value)})`;
        case 'contains':
          return `${s}.includes(${lit(c.value)})`;
        case 'eq':
          return `${s} === ${lit(c.value)}`;
      }
      break;
    }
    case 'argIn': {
      const s = strArg(c.arg);
      return `(${c.values.map((v) => `${s} === ${lit(v)}`).join(' || ')})`;
    }
    case 'intArgGt': {
      needTool();
      const v = member('args', c.arg);
      return `${locals.use(local('i', c.arg), `Number.isSafeInteger(${v}) ? ${v} : 0`)} > ${c.n}`;
    }
    case 'boolArg':
      needTool();
      return `${locals.use(local('b', c.arg), `${member('args', c.arg)} === true`)}`;
    case 'hasRole':
      return `${locals.use('roles', 'facts !== undefined && Array.isArray(facts.principal_roles) ? facts.principal_roles : EMPTY')}.includes(${lit(c.role)})`;
    case 'countAtLeast': {
      needTool();
      locals.fingerprint = true;
      const target = c.target.includes('/') ? c.target : `${r.namespace}/${c.target}`;
      return `count(${storeName(target)}, session, __FP__) >= ${c.n}`;
    }
    case 'boolFact':
      return `(facts !== undefined && ${member('facts', c.fact)} === true)`;
    case 'nonEmpty':
      if (c.fact === 'arg_validation_errors') {
        return `(facts !== undefined && Array.isArray(facts.arg_validation_errors) && facts.arg_validation_errors.length > 0)`;
      }
      if (ctx !== 'content' || r.detector === undefined) throw new Error(`bench: baseline: ${c.fact} is only read by detector rules at a content anchor`);
      return `${locals.use(local('d', c.fact), `det !== undefined && Array.isArray(${member('det', c.fact)}) ? ${member('det', c.fact)} : EMPTY`)}.length > 0`;
    case 'lengthGt':
      if (ctx !== 'content') throw new Error(`bench: baseline: content_length at a tool anchor`);
      return `${locals.use('len', 'content === undefined ? 0 : cpLength(content)')} > ${c.n}`;
  }
  throw new Error('unreachable');
}

function copyJs(copy: RuleSpec['copy'], ctx: Ctx, locals: Locals): string {
  if (copy === undefined) return '{}';
  const text = (t: CopyText) =>
    t.map((p) => {
      if (typeof p === 'string') return lit(p);
      if (p.fact === 'tool') return ctx === 'tool' ? 'tool' : '""';
      return `String(${locals.use('len', 'content === undefined ? 0 : cpLength(content)')})`;
    }).join(' + ') || '""';
  const members = COPY_ORDER.filter((m) => copy[m] !== undefined).map((m) => `${m}: ${text(copy[m] as CopyText)}`);
  return `{ ${members.join(', ')} }`;
}

/** One handler: the rules `list` (in evaluation order) for one tool, or for a content anchor. */
function handlerJs(name: string, list: readonly RuleSpec[], ctx: Ctx): string {
  const locals = new Locals();
  const pos = new Map(list.map((r, i) => [r.qid, i]));
  const enforced = (r: RuleSpec) => r.monitor !== true;
  // Which rules can be suppressed here: a target of an enforced rule of this list that precedes it.
  const suppressible = new Set<number>();
  list.forEach((r, i) => {
    if (!enforced(r)) return;
    for (const t of overridesOf(r)) {
      const j = pos.get(t);
      if (j === undefined) continue;
      if (j < i) throw new Error(`bench: baseline: ${r.qid} is ordered after ${t}, which it overrides ([OAR-EVAL-18])`);
      suppressible.add(j);
    }
  });
  const hasBlock = list.some((r) => enforced(r) && r.effect === 'block');
  const body: string[] = [];
  const decl: string[] = [];
  list.forEach((r, i) => {
    const Q = lit(r.qid);
    const out: string[] = [];
    out.push(`    // ${r.qid}: ${r.kind}, ${r.effect}${r.monitor ? ', monitor' : ''}`);
    const cond = r.when === undefined ? 'true' : condJs(r.when, r, ctx, locals);
    let inner: string;
    if (!enforced(r)) {
      inner = `applied.push({ rule: ${Q}, outcome: ${cond} ? "monitored_fired" : "monitored_passed" });`;
    } else {
      const fire: string[] = [`applied.push({ rule: ${Q}, outcome: "fired" });`];
      for (const t of overridesOf(r)) if (pos.has(t)) fire.push(`s${pos.get(t)} = true;`);
      if (r.onFire !== undefined && r.onFire.length > 0) {
        decl.push(`x${i} = false`);
        fire.push(`x${i} = true;`);
      }
      if (r.effect === 'block') fire.push(`stop = ${i};`, 'break rules;');
      else if (r.effect !== 'allow') {
        decl.push(`f${i} = false`);
        fire.push(`f${i} = true;`);
      }
      inner = cond === 'true'
        ? fire.join(' ')
        : `if (${cond}) { ${fire.join(' ')} } else applied.push({ rule: ${Q}, outcome: "passed" });`;
    }
    if (suppressible.has(i)) {
      decl.push(`s${i} = false`);
      out.push(`    if (s${i}) applied.push({ rule: ${Q}, outcome: "suppressed" }); else { ${inner} }`);
    } else {
      out.push(`    ${inner}`);
    }
    body.push(...out);
  });

  const lines: string[] = [];
  const params = ctx === 'tool' ? 'tool, args, facts, session' : 'content, det, facts, session';
  lines.push(`function ${name}(${params}) {`);
  lines.push('  const applied = [];');
  // Locals are computed after the rules are rendered (rendering registers them).
  const localLines = [...locals.decl].map(([n, init]) => `  const ${n} = ${init};`);
  lines.push(...localLines);
  if (locals.fingerprint || list.some((r) => r.counterScope !== undefined)) {
    lines.push('  let fp;');
  }
  if (hasBlock) lines.push('  let stop = -1;');
  if (decl.length > 0) lines.push(`  let ${decl.join(', ')};`);
  lines.push('  rules: {');
  lines.push(...body.map((l) => l.split('__FP__').join('(fp === undefined ? (fp = fingerprint(tool, args)) : fp)')));
  lines.push('  }');
  // [OAR-OPS-10]: a suppressed rule after the short-circuit is still recorded.
  if (hasBlock) {
    suppressible.forEach((j) => lines.push(`  if (stop >= 0 && stop < ${j} && s${j}) applied.push({ rule: ${lit((list[j] as RuleSpec).qid)}, outcome: "suppressed" });`));
  }

  // Resolution by precedence ([OAR-EVAL-6], [OAR-EVAL-19], [OAR-EVAL-20]).
  lines.push('  let decision = "none", code = null, rule = null, copy = null, advisories = [];');
  const branches: string[] = [];
  const at = (effect: RuleSpec['effect']) => list.map((r, i) => ({ r, i })).filter(({ r }) => enforced(r) && r.effect === effect);
  if (hasBlock) {
    const cases = at('block').map(({ r, i }) => `case ${i}: code = ${lit(r.id)}; rule = ${lit(r.qid)}; copy = ${copyJs(r.copy, ctx, locals)}; break;`);
    branches.push(`if (stop >= 0) { decision = "block"; switch (stop) { ${cases.join(' ')} } }`);
  }
  const transforms = at('transform');
  if (transforms.length > 0) {
    const pickFirst = transforms.map(({ r, i }) => `if (f${i}) { code = ${lit(r.id)}; rule = ${lit(r.qid)}; copy = ${copyJs(r.copy, ctx, locals)}; }`).join(' else ');
    branches.push(`if (${transforms.map(({ i }) => `f${i}`).join(' || ')}) { decision = "transform"; ${pickFirst} }`);
  }
  for (const effect of ['nudge', 'warn'] as const) {
    const rs = at(effect);
    if (rs.length === 0) continue;
    const pushes = rs.map(({ r, i }) => `if (f${i}) advisories.push({ code: ${lit(r.id)}, rule: ${lit(r.qid)}, copy: ${copyJs(r.copy, ctx, locals)} });`).join(' ');
    branches.push(`if (${rs.map(({ i }) => `f${i}`).join(' || ')}) { decision = ${lit(effect)}; ${pushes} code = advisories[0].code; rule = advisories[0].rule; copy = advisories[0].copy; }`);
  }
  if (branches.length > 0) lines.push(`  ${branches.join(' else ')}`);

  // Side-effects of enforced rules that fired, in evaluation order, after every condition was
  // evaluated ([OAR-EVAL-12], [OAR-FIRE-6], [OAR-FIRE-8]).
  lines.push('  const onFire = [], events = [], counters = {};');
  list.forEach((r, i) => {
    if (!enforced(r) || r.onFire === undefined || r.onFire.length === 0) return;
    const Q = lit(r.qid);
    const act: string[] = [];
    for (const a of r.onFire) {
      act.push(`onFire.push({ rule: ${Q}, action: ${lit(a)} });`);
      if (a === 'publish_event') act.push(`events.push({ rule: ${Q}, anchor: ${lit(r.anchor)}, effect: ${lit(r.effect)} });`);
    }
    if (r.onFire.includes('increment_counter')) {
      if (r.counterScope !== undefined) {
        act.push('if (fp === undefined) fp = fingerprint(tool, args);');
        act.push(`increment(${storeName(r.qid)}, ${lit(`${r.qid}#`)}, session, fp, counters);`);
      } else {
        act.push(`increment(${storeName(r.qid)}, ${Q}, session, "", counters);`);
      }
    }
    lines.push(`  if (x${i}) { ${act.join(' ')} }`);
  });

  if (ctx === 'tool') {
    lines.push('  return { decision, code, rule, copy, advisories, transforms: [], skippedTransforms: [], applied, onFire, events, counters };');
  } else {
    // [OAR-OPS-15], [OAR-OPS-16]: transforms in evaluation order, applied to the original content.
    lines.push('  const transforms = [];');
    lines.push('  let out = content;');
    if (transforms.length > 0) {
      lines.push('  if (decision === "transform") {');
      lines.push('    const edits = [];');
      for (const { r, i } of transforms) {
        const t = r.transform;
        if (t === undefined) throw new Error(`bench: baseline: ${r.qid} has effect transform and no transform`);
        const replacement = t.replacement ?? '[REDACTED]';
        const spans = locals.use(local('d', t.target), `det !== undefined && Array.isArray(${member('det', t.target)}) ? ${member('det', t.target)} : EMPTY`);
        lines.push(`    if (f${i}) { transforms.push({ rule: ${lit(r.qid)}, action: ${lit(t.action)}, target: ${lit(t.target)}, replacement: ${lit(replacement)} }); for (const s of ${spans}) edits.push({ start: s.start, end: s.end, text: ${lit(replacement)} }); }`);
      }
      lines.push('    if (content !== undefined) out = applySpans(content, edits);');
      lines.push('  }');
    }
    lines.push('  const d = { decision, code, rule, copy, advisories, transforms, skippedTransforms: [], applied, onFire, events, counters };');
    lines.push('  if (decision !== "block" && content !== undefined) d.content = out;');
    lines.push('  return d;');
  }
  lines.push('}');
  // Locals registered while rendering copy and transforms, after the first pass, go in too.
  const extra = [...locals.decl].filter(([n]) => !localLines.some((l) => l.startsWith(`  const ${n} = `)));
  if (extra.length > 0) lines.splice(2 + localLines.length, 0, ...extra.map(([n, init]) => `  const ${n} = ${init};`));
  return lines.join('\n');
}

const PRELUDE = `"use strict";
const fingerprint = rt.toolArgsFingerprint;
const hasOwn = Object.prototype.hasOwnProperty;
const EMPTY = Object.freeze([]);
const EMPTY_ARGS = Object.freeze({});
// Counters: one Map per counted rule, session → scope value → counts; the name a decision reports
// is built once, when a counter is first written, never per decision.
const WRITTEN = new Set();
function counterStore() { return new Map(); }
function reset() { for (const m of WRITTEN) m.clear(); WRITTEN.clear(); }
function count(rule, session, scope) {
  const s = rule.get(session);
  if (s === undefined) return 0;
  const v = s.get(scope);
  return v === undefined ? 0 : v.fire_count;
}
function increment(rule, name, session, scope, counters) {
  let s = rule.get(session);
  if (s === undefined) { rule.set(session, (s = new Map())); WRITTEN.add(rule); }
  let v = s.get(scope);
  if (v === undefined) s.set(scope, (v = { fire_count: 0, breaker_count: 0, name: name + scope }));
  v.fire_count++;
  counters[v.name] = { fire_count: v.fire_count, breaker_count: v.breaker_count };
}
function cpLength(s) {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) { n--; i++; }
    }
  }
  return n;
}
// Spans are code-point offsets into the original content; apply from the highest start down.
function applySpans(content, edits) {
  const cps = /[\\uD800-\\uDBFF]/.test(content) ? Array.from(content) : null;
  const length = cps === null ? content.length : cps.length;
  const live = edits.filter((e) => e.start <= e.end && e.end <= length);
  live.sort((a, b) => b.start - a.start);
  for (let i = 1; i < live.length; i++) {
    if (live[i].end > live[i - 1].start) throw new Error("baseline: overlapping spans are not supported");
  }
  if (cps === null) {
    let out = content;
    for (const e of live) out = out.slice(0, e.start) + e.text + out.slice(e.end);
    return out;
  }
  for (const e of live) cps.splice(e.start, e.end - e.start, e.text);
  return cps.join("");
}
function none(occ) {
  const d = { decision: "none", code: null, rule: null, copy: null, advisories: [], transforms: [], skippedTransforms: [], applied: [], onFire: [], events: [], counters: {} };
  if (occ.content !== undefined) d.content = occ.content;
  return d;
}
`;

/** Tools up to this many get a `switch`; more get a `Map` from tool name to handler. */
const SWITCH_MAX = 8;

/** The baseline's source: the body of `function (rt) { … return { decide, reset }; }`. */
export function baselineSource(p: GeneratedPack): string {
  const ordered = evaluationOrder(p.specs);
  const toolRules = ordered.filter((r) => r.anchor === 'tool.pre_invoke');
  const contentRules = ordered.filter((r) => r.anchor === 'model.output');
  const out: string[] = [`// Hand-written gateway guard for the generated ${p.size}-rule pack (seed ${p.seed}).`, PRELUDE];
  const counted = new Set<string>();
  for (const r of p.specs) {
    if (r.onFire?.includes('increment_counter')) counted.add(r.qid);
    const walk = (c: Cond | undefined): void => {
      if (c === undefined) return;
      if (c.k === 'countAtLeast') counted.add(c.target.includes('/') ? c.target : `${r.namespace}/${c.target}`);
      if (c.k === 'and' || c.k === 'or') [c.a, c.b].forEach(walk);
      if (c.k === 'not') walk(c.a);
    };
    walk(r.when);
  }
  for (const q of counted) out.push(`const ${storeName(q)} = counterStore();`);

  // One handler per distinct selected list; tools selecting the same rules share one.
  const handlers = new Map<string, string>();
  const toolHandler = new Map<string, string>();
  const handlerFor = (list: RuleSpec[], ctx: Ctx) => {
    const key = `${ctx}:${list.map((r) => r.qid).join('|')}`;
    let name = handlers.get(key);
    if (name === undefined) {
      name = `${ctx === 'tool' ? 't' : 'c'}${handlers.size}`;
      handlers.set(key, name);
      out.push(handlerJs(name, list, ctx));
    }
    return name;
  };
  const unselective = toolRules.filter((r) => r.tools === undefined);
  const tools = [...new Set(toolRules.flatMap((r) => r.tools ?? []))];
  for (const t of tools) {
    toolHandler.set(t, handlerFor(amendedOrder(toolRules.filter((r) => r.tools === undefined || r.tools.includes(t))), 'tool'));
  }
  const fallback = handlerFor(amendedOrder(unselective), 'tool');

  const dispatch: string[] = [];
  if (toolHandler.size <= SWITCH_MAX) {
    dispatch.push('  switch (tool) {');
    for (const [t, h] of toolHandler) dispatch.push(`    case ${lit(t)}: return ${h}(tool, args, facts, session);`);
    dispatch.push(`    default: return ${fallback}(tool, args, facts, session);`);
    dispatch.push('  }');
  } else {
    out.push(`const TOOLS = new Map([\n${[...toolHandler].map(([t, h]) => `  [${lit(t)}, ${h}]`).join(',\n')}\n]);`);
    dispatch.push('  const h = TOOLS.get(tool);');
    dispatch.push(`  return h === undefined ? ${fallback}(tool, args, facts, session) : h(tool, args, facts, session);`);
  }
  out.push(`function toolCall(occ) {
  const call = occ.toolCall;
  const tool = call === undefined ? "" : call.name;
  const args = call === undefined || call.arguments === undefined ? EMPTY_ARGS : call.arguments;
  const facts = occ.facts;
  const session = occ.session === undefined ? "" : occ.session;
${dispatch.join('\n')}
}`);
  const content = contentRules.filter((r) => r.tools === undefined);
  if (content.length !== contentRules.length) throw new Error('bench: baseline: content rules with a tool selector');
  const contentHandler = content.length > 0 ? handlerFor(amendedOrder(content), 'content') : undefined;
  const cases = [`    case ${lit(LOCAL_ANCHOR['tool.pre_invoke'])}: return toolCall(occ);`];
  if (contentHandler !== undefined) {
    cases.push(`    case ${lit(LOCAL_ANCHOR['model.output'])}: return ${contentHandler}(occ.content, occ.detectorFacts, occ.facts, occ.session === undefined ? "" : occ.session);`);
  }
  out.push(`function decide(occ) {
  switch (occ.anchor) {
${cases.join('\n')}
    default: return none(occ);
  }
}
return { decide, reset };`);
  return out.join('\n');
}

/** Generate and load the baseline for a pack. (Benchmark code, not the engine: `new Function` is fine here.) */
export function buildBaseline(p: GeneratedPack): Baseline & { source: string } {
  const source = baselineSource(p);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const factory = new Function('rt', source) as (rt: { toolArgsFingerprint: typeof toolArgsFingerprint }) => Baseline;
  return { ...factory({ toolArgsFingerprint }), source };
}
