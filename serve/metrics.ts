/**
 * The service's metrics in the Prometheus text exposition format (version 0.0.4), written here
 * rather than through prom-client: a handful of counters and one histogram, whose hot-path update
 * is a Map lookup per label and an increment — no registry, no label-object or key allocation per decision.
 */
import type { Decision } from '../runtime/index.js';

/** Seconds; the default buckets span 50 µs to 100 ms, where an in-process decision falls. */
export const DEFAULT_BUCKETS: readonly number[] = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1];

/** A label value escaped as the exposition format requires (backslash, quote, newline). */
const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** One labelled series of a counter: its label values and its count. */
interface Series {
  readonly values: readonly string[];
  n: number;
}

/** A level of a counter's lookup tree: a label value to the next level, or at the last label to the series. */
type Level = Map<string, Level | Series>;

class Counter {
  /** Every series, in the order first counted — the order they are rendered in. */
  private readonly series: Series[] = [];
  /** The series by their label values, one Map per label: counting builds no key string. */
  private readonly tree: Level = new Map();
  constructor(readonly name: string, readonly help: string, private readonly labels: readonly string[]) {}

  inc(values: readonly string[], by = 1): void {
    this.find(values).n += by;
  }

  private find(values: readonly string[]): Series {
    if (values.length === 0) return (this.series[0] ??= { values, n: 0 });
    let level = this.tree;
    for (let i = 0; i < values.length - 1; i++) {
      const v = values[i] as string;
      let next = level.get(v) as Level | undefined;
      if (next === undefined) level.set(v, (next = new Map()));
      level = next;
    }
    const last = values[values.length - 1] as string;
    let s = level.get(last) as Series | undefined;
    if (s === undefined) {
      s = { values: [...values], n: 0 };
      level.set(last, s);
      this.series.push(s);
    }
    return s;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    if (this.labels.length === 0 && this.series.length === 0) lines.push(`${this.name} 0`);
    for (const { values, n } of this.series) {
      if (this.labels.length === 0) lines.push(`${this.name} ${n}`);
      else lines.push(`${this.name}{${values.map((x, i) => `${this.labels[i]}="${escape(x)}"`).join(',')}} ${n}`);
    }
    return lines.join('\n');
  }
}

class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;
  constructor(readonly name: string, readonly help: string, private readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
  }

  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) {
      if (seconds <= (this.bounds[i] as number)) {
        this.counts[i]!++;
        return;
      }
    }
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    let cumulative = 0;
    this.bounds.forEach((b, i) => {
      cumulative += this.counts[i] as number;
      lines.push(`${this.name}_bucket{le="${b}"} ${cumulative}`);
    });
    lines.push(`${this.name}_bucket{le="+Inf"} ${this.count}`, `${this.name}_sum ${this.sum}`, `${this.name}_count ${this.count}`);
    return lines.join('\n');
  }
}

/** `--latency-buckets 0.001,0.005,0.01`: strictly increasing positive seconds, else a message saying why. */
export function parseBuckets(text: string): number[] | string {
  const values = text.split(',').map((s) => s.trim());
  const out: number[] = [];
  for (const v of values) {
    const n = Number(v);
    if (v === '' || !Number.isFinite(n) || n <= 0) return `\`${v}\` is not a positive number of seconds`;
    if (out.length > 0 && n <= (out[out.length - 1] as number)) return `buckets must increase: ${v} follows ${out[out.length - 1]}`;
    out.push(n);
  }
  return out;
}

export class Metrics {
  private readonly decisions = new Counter('oarc_decisions_total', 'Decisions made, by effect and anchor.', ['effect', 'anchor']);
  private readonly rules = new Counter('oarc_rule_outcomes_total', 'Rule outcomes in decision traces (fired, errored, monitored_fired, ...), by rule.', ['rule', 'outcome']);
  private readonly latency: Histogram;
  private readonly reloads = new Counter('oarc_reloads_total', 'Pack loads after the first, by result (ok or failed).', ['result']);
  private readonly storeErrors = new Counter('oarc_store_errors_total', 'Counter store calls that failed (Redis unreachable, timed out, data loss).', []);
  private readonly badRequests = new Counter('oarc_requests_rejected_total', 'Requests answered with an error status, by status.', ['status']);
  private readonly logDropped = new Counter('oarc_decision_log_dropped_total', 'Decision log lines dropped because the sink was slower than the traffic.', []);

  constructor(buckets: readonly number[] = DEFAULT_BUCKETS) {
    this.latency = new Histogram('oarc_decision_duration_seconds', 'Time to decide one occurrence, in seconds.', buckets);
  }

  decided(anchor: string, d: Decision, seconds: number): void {
    this.decisions.inc([d.decision, anchor]);
    // Passed and suppressed rules are most of a trace and say little; fires and errors are what is watched.
    for (const t of d.applied) if (t.outcome !== 'passed' && t.outcome !== 'monitored_passed' && t.outcome !== 'suppressed') this.rules.inc([t.rule, t.outcome]);
    this.latency.observe(seconds);
  }

  reloaded(ok: boolean): void {
    this.reloads.inc([ok ? 'ok' : 'failed']);
  }

  storeError(): void {
    this.storeErrors.inc([]);
  }

  rejected(status: number): void {
    this.badRequests.inc([String(status)]);
  }

  logLineDropped(): void {
    this.logDropped.inc([]);
  }

  render(): string {
    return `${[this.decisions, this.rules, this.latency, this.reloads, this.storeErrors, this.badRequests, this.logDropped].map((m) => m.render()).join('\n')}\n`;
  }
}
