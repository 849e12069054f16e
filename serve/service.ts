/**
 * The decision service behind the HTTP routes: the pack being served, swapped atomically on
 * reload, and deciding against it. A request takes the engine current when it starts and keeps it
 * to the end, so a reload never changes the pack under a decision in flight, and never drops one.
 */
import { randomBytes } from 'node:crypto';
import { MemoryCounterStore, createEngine, occurrenceFromJson, type AsyncCounterStore, type Bundle, type Decision, type Engine, type Occurrence } from '../runtime/index.js';
import type { SessionBound } from '../runtime/session-table.js';
import type { DecisionLog, MaskPath } from './decision-log.js';
import { mask } from './decision-log.js';
import type { Metrics } from './metrics.js';
import { loadServedPack, type LoadProblem, type PackSource } from './pack.js';
import { plural } from '../runtime/plural.js';

export interface BundleInfo {
  revision: string;
  compiler: string;
  rules: number;
  loaded_at: string;
  warnings: LoadProblem[];
}

export interface ReloadReport {
  ok: boolean;
  at: string;
  revision?: string;
  problems?: LoadProblem[];
}

interface Serving {
  engine: Engine;
  bundle: Bundle;
  info: BundleInfo;
}

export interface ServiceOptions {
  source: PackSource;
  metrics: Metrics;
  /** The shared store (`--redis`): decisions go through `decideAsync`. */
  store?: AsyncCounterStore;
  log?: DecisionLog;
  /** The bound on in-memory sessions: the counter store's and each engine's activity windows. */
  sessions?: SessionBound;
  mask?: readonly MaskPath[];
  /** One line for the service log (stderr). */
  say: (line: string) => void;
}

export class Service {
  private serving: Serving | undefined;
  private last: ReloadReport | undefined;
  private loads: Promise<ReloadReport> = Promise.resolve({ ok: true, at: '' });
  private loadCount = 0;
  /**
   * In-memory counters outlive a reload: one store shared by every engine the service creates, so
   * a rule still in the new pack keeps its counts. (Activity windows are an engine's own and start
   * afresh with the new pack.)
   */
  private readonly memory: MemoryCounterStore;

  constructor(private readonly opts: ServiceOptions) {
    this.memory = new MemoryCounterStore(opts.sessions);
  }

  get ready(): boolean {
    return this.serving !== undefined;
  }

  get bundleInfo(): BundleInfo | undefined {
    return this.serving?.info;
  }

  get lastLoad(): ReloadReport | undefined {
    return this.last;
  }

  /** Load the pack again (one load at a time, in order); a pack that fails keeps the current one serving. */
  load(): Promise<ReloadReport> {
    this.loads = this.loads.then(() => this.loadOnce());
    return this.loads;
  }

  private async loadOnce(): Promise<ReloadReport> {
    const first = this.loadCount++ === 0;
    const at = new Date().toISOString();
    let report: ReloadReport;
    try {
      const r = await loadServedPack(this.opts.source);
      if (r.ok) {
        const { bundle, detectors, revision } = r.loaded;
        const engine = createEngine(bundle, { detectors, counters: this.memory, ...(this.opts.sessions ? { sessions: this.opts.sessions } : {}), ...(this.opts.store ? { asyncCounters: this.opts.store } : {}) });
        // The swap: one assignment. Requests already deciding hold the engine they started with.
        this.serving = { engine, bundle, info: { revision, compiler: bundle.compiler, rules: bundle.rules.length, loaded_at: at, warnings: r.warnings } };
        report = { ok: true, at, revision };
        for (const w of r.warnings) this.opts.say(w.message);
        this.opts.say(`${first ? 'loaded' : 'reloaded'} revision ${revision}: ${plural(bundle.rules.length, 'rule')}`);
      } else {
        report = { ok: false, at, problems: r.problems };
      }
    } catch (e) {
      report = { ok: false, at, problems: [{ severity: 'error', message: e instanceof Error ? e.message : String(e) }] };
    }
    if (!report.ok) {
      for (const p of report.problems ?? []) this.opts.say(p.message);
      this.opts.say(`${first ? 'load' : 'reload'} failed${this.serving ? `; still serving revision ${this.serving.info.revision}` : '; no pack is being served'}`);
    }
    if (!first) this.opts.metrics.reloaded(report.ok);
    this.last = report;
    return report;
  }

  /**
   * The engine serving now, and the occurrences of a request body checked against the JSON form
   * (a `HostInputError` with the JSON path on a bad one). Undefined when no pack is loaded yet.
   */
  take(): Serving | undefined {
    return this.serving;
  }

  /** Parse one occurrence, the session header filling in a missing `session_id`. */
  static occurrence(json: unknown, session: string | undefined): Occurrence {
    const occ = occurrenceFromJson(json);
    if (occ.session === undefined && session !== undefined) occ.session = session;
    return occ;
  }

  /**
   * Decide one occurrence on `serving`, recording metrics and the decision log: synchronously in
   * memory (no promise, no turn of the microtask queue per decision), a promise through the shared store.
   */
  decide(serving: Serving, occ: Occurrence, raw: unknown): Decision | Promise<Decision> {
    const start = performance.now();
    if (this.opts.store) return serving.engine.decideAsync(occ).then((d) => this.record(serving, occ, raw, d, start));
    return this.record(serving, occ, raw, serving.engine.decide(occ), start);
  }

  private record(serving: Serving, occ: Occurrence, raw: unknown, d: Decision, start: number): Decision {
    const seconds = (performance.now() - start) / 1000;
    this.opts.metrics.decided(occ.anchor, d, seconds);
    this.opts.log?.write({
      id: randomBytes(8).toString('hex'),
      time: new Date().toISOString(),
      revision: serving.info.revision,
      anchor: occ.anchor,
      session: occ.session ?? null,
      decision: d.decision,
      rule: d.rule,
      applied: d.applied,
      latency_ms: seconds * 1000,
      occurrence: this.opts.mask && this.opts.mask.length > 0 ? mask(raw, this.opts.mask) : raw,
    });
    return d;
  }
}
