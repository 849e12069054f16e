/**
 * `oarc diff` as a library: decide the same occurrences with an old and a new pack, and collect
 * every occurrence whose decision, deciding rule, copy, transforms or transformed content differ,
 * grouped by what changed, each group with a small example (shrunk while it still shows the same
 * change).
 *
 * A case is a session: the occurrence file given (decided in order, as `oarc eval` decides it) or a
 * generated one. Each case decides in sessions of its own on both engines (its session ids suffixed
 * with the case number) and ends them afterwards, so no case sees another's counters or activity.
 */
import { createEngine, decisionToJson, occurrenceFromJson, HostInputError, type Bundle, type Decision, type Detector, type Engine, type OccurrenceJson } from '../runtime/index.js';

export interface DiffCase {
  origin: 'given' | 'generated';
  occurrences: OccurrenceJson[];
}

/** The part of a decision `oarc diff` compares. */
export interface Outcome {
  decision: Decision['decision'];
  rule: string | null;
  copy: Decision['copy'];
  transforms: Decision['transforms'];
  content?: string;
}

export type Aspect = 'decision' | 'rule' | 'copy' | 'transforms' | 'content';

export interface ChangeGroup {
  /** One line: "`block` → `none` at tool.pre_invoke, rule acme/X no longer fires". */
  title: string;
  anchor: string;
  from: { decision: string; rule: string | null };
  to: { decision: string; rule: string | null };
  aspects: Aspect[];
  /** Occurrences showing this change: from the file given, and generated. */
  given: number;
  generated: number;
  example: {
    /** Occurrences decided before it in the same session, when they are needed to show the change. */
    before: OccurrenceJson[];
    occurrence: OccurrenceJson;
    old: Outcome;
    new: Outcome;
  };
}

export interface DiffRun {
  cases: { given: number; generated: number; refused: number };
  decided: number;
  changed: number;
  groups: ChangeGroup[];
}

const outcome = (d: Decision): Outcome => {
  const j = decisionToJson(d);
  return { decision: j.decision, rule: j.rule, copy: j.copy, transforms: j.transforms, ...(j.content === undefined ? {} : { content: j.content }) };
};

const text = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));

function aspects(a: Outcome, b: Outcome): Aspect[] {
  const out: Aspect[] = [];
  if (a.decision !== b.decision) out.push('decision');
  if (a.rule !== b.rule) out.push('rule');
  if (text(a.copy) !== text(b.copy)) out.push('copy');
  if (text(a.transforms) !== text(b.transforms)) out.push('transforms');
  if (a.content !== b.content) out.push('content');
  return out;
}

function keyOf(anchor: string, a: Outcome, b: Outcome, as: readonly Aspect[]): string {
  return text([anchor, a.decision, b.decision, a.rule, b.rule, as]);
}

export function titleOf(anchor: string, a: Outcome, b: Outcome, as: readonly Aspect[]): string {
  const rule =
    a.rule !== null && b.rule === null ? `rule ${a.rule} no longer fires`
    : a.rule === null && b.rule !== null ? `rule ${b.rule} now fires`
    : a.rule !== b.rule ? `decided by ${b.rule} instead of ${a.rule}`
    : a.rule !== null ? `rule ${a.rule}`
    : '';
  // Another deciding rule means other copy and transforms: only say so when the rule is the same.
  const also = a.rule === b.rule ? as.filter((x) => x !== 'decision' && x !== 'rule') : [];
  const head = a.decision !== b.decision ? `\`${a.decision}\` → \`${b.decision}\` at ${anchor}` : `\`${a.decision}\` at ${anchor}`;
  const parts = [head, rule, also.length > 0 ? `${also.join(' and ')} changed` : ''].filter((s) => s !== '');
  return parts.join(', ');
}

/** The two engines, and a counter making every case's sessions its own. */
class Pair {
  private n = 0;
  constructor(readonly old: Engine, readonly now: Engine) {}

  /**
   * Decide a case on both packs: every occurrence's two outcomes, or undefined when the engine
   * refuses an occurrence (an anchor or fact the capability does not declare: the same on both,
   * as both packs share the capability).
   */
  run(occs: readonly OccurrenceJson[]): [Outcome, Outcome][] | undefined {
    const tag = `\u0000diff#${this.n++}`;
    const sessions = new Set<string>();
    const out: [Outcome, Outcome][] = [];
    try {
      for (const json of occs) {
        const occ = occurrenceFromJson(json);
        occ.session = `${occ.session ?? ''}${tag}`;
        sessions.add(occ.session);
        out.push([outcome(this.old.decide(occ)), outcome(this.now.decide(occ))]);
      }
      return out;
    } catch (e) {
      if (e instanceof HostInputError) return undefined;
      throw e;
    } finally {
      for (const s of sessions) {
        this.old.endSession(s);
        this.now.endSession(s);
      }
    }
  }
}

export interface DiffInput {
  old: Bundle;
  new: Bundle;
  detectors: Readonly<Record<string, Detector>>;
  cases: Iterable<DiffCase>;
}

export function runDiff(input: DiffInput): DiffRun {
  const pair = new Pair(createEngine(input.old, { detectors: input.detectors }), createEngine(input.new, { detectors: input.detectors }));
  const groups = new Map<string, { g: ChangeGroup; size: number }>();
  const run: DiffRun = { cases: { given: 0, generated: 0, refused: 0 }, decided: 0, changed: 0, groups: [] };
  for (const c of input.cases) {
    run.cases[c.origin]++;
    const r = pair.run(c.occurrences);
    if (r === undefined) {
      // The command checks the file given before; a generated occurrence may name what the host refuses.
      run.cases.refused++;
      continue;
    }
    run.decided += r.length;
    r.forEach(([a, b], i) => {
      const as = aspects(a, b);
      if (as.length === 0) return;
      run.changed++;
      const occ = c.occurrences[i] as OccurrenceJson;
      const key = keyOf(occ.anchor, a, b, as);
      const before = c.occurrences.slice(0, i);
      const size = text(c.occurrences.slice(0, i + 1)).length;
      let entry = groups.get(key);
      if (entry === undefined) {
        entry = {
          g: { title: titleOf(occ.anchor, a, b, as), anchor: occ.anchor, from: { decision: a.decision, rule: a.rule }, to: { decision: b.decision, rule: b.rule }, aspects: as, given: 0, generated: 0, example: { before, occurrence: occ, old: a, new: b } },
          size,
        };
        groups.set(key, entry);
      } else if (size < entry.size) {
        entry.g.example = { before, occurrence: occ, old: a, new: b };
        entry.size = size;
      }
      entry.g[c.origin]++;
    });
  }
  for (const [key, entry] of groups) entry.g.example = shrink(pair, key, entry.g.example);
  // Most frequent change first; ties by title, so the report is stable.
  run.groups = [...groups.values()].map((e) => e.g).sort((x, y) => y.given + y.generated - (x.given + x.generated) || (x.title < y.title ? -1 : x.title > y.title ? 1 : 0));
  return run;
}

/** Does this session (its last occurrence) still show the change `key`? */
function shows(pair: Pair, key: string, before: OccurrenceJson[], occ: OccurrenceJson): ChangeGroup['example'] | undefined {
  const r = pair.run([...before, occ]);
  const last = r?.[r.length - 1];
  if (last === undefined) return undefined;
  const [a, b] = last;
  return keyOf(occ.anchor, a, b, aspects(a, b)) === key ? { before, occurrence: occ, old: a, new: b } : undefined;
}

/**
 * Greedy shrinking, a bounded number of tries: drop earlier occurrences of the session, then
 * members of the occurrence (a fact, a tool argument, the activity list, …), keeping each removal
 * that still shows the same change.
 */
function shrink(pair: Pair, key: string, ex: ChangeGroup['example']): ChangeGroup['example'] {
  let best = ex;
  let budget = 200;
  const attempt = (before: OccurrenceJson[], occ: OccurrenceJson): boolean => {
    if (budget-- <= 0) return false;
    const r = shows(pair, key, before, occ);
    if (r !== undefined) best = r;
    return r !== undefined;
  };
  for (let i = best.before.length - 1; i >= 0; i--) attempt(best.before.filter((_, j) => j !== i), best.occurrence);
  const members: ((o: OccurrenceJson) => OccurrenceJson | undefined)[] = [];
  const o0 = best.occurrence;
  for (const k of Object.keys(o0.facts ?? {})) members.push((o) => (o.facts && k in o.facts ? drop(o, 'facts', k) : undefined));
  for (const k of Object.keys(o0.detector_facts ?? {})) members.push((o) => (o.detector_facts && k in o.detector_facts ? drop(o, 'detector_facts', k) : undefined));
  for (const k of Object.keys(o0.tool_call?.arguments ?? {})) {
    members.push((o) => {
      if (o.tool_call?.arguments === undefined || !(k in o.tool_call.arguments)) return undefined;
      const { [k]: _gone, ...rest } = o.tool_call.arguments;
      return { ...o, tool_call: { ...o.tool_call, arguments: rest } };
    });
  }
  members.push((o) => (o.recent_activity === undefined ? undefined : without(o, 'recent_activity')));
  members.push((o) => (o.content === undefined ? undefined : without(o, 'content')));
  for (const m of members) {
    const smaller = m(best.occurrence);
    if (smaller !== undefined) attempt(best.before, tidy(smaller));
  }
  return best;
}

function drop(o: OccurrenceJson, member: 'facts' | 'detector_facts', k: string): OccurrenceJson {
  const { [k]: _gone, ...rest } = o[member] ?? {};
  return { ...o, [member]: rest };
}

function without(o: OccurrenceJson, member: keyof OccurrenceJson): OccurrenceJson {
  const copy = { ...o };
  delete copy[member];
  return copy;
}

/** Empty `facts` and `detector_facts` are left out of an example. */
function tidy(o: OccurrenceJson): OccurrenceJson {
  let out = o;
  if (out.facts !== undefined && Object.keys(out.facts).length === 0) out = without(out, 'facts');
  if (out.detector_facts !== undefined && Object.keys(out.detector_facts).length === 0) out = without(out, 'detector_facts');
  return out;
}
