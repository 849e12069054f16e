/**
 * `--decision-log <file|->`: one JSON line per decision, written behind the response, never in
 * front of it. Lines wait in a bounded buffer while the sink is busy; when the sink is slower than
 * the traffic and the buffer is full, new lines are dropped — decisions are never slowed down or
 * refused for the log's sake — and each drop is counted (`oarc_decision_log_dropped_total`), with
 * one `{"dropped": N}` line written once the sink catches up, so a reader of the log sees the gap.
 */
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Writable } from 'node:stream';

/**
 * A masked path: JSON-Pointer-like segments into the occurrence's JSON form (`/tool_call/arguments/token`),
 * where a `*` segment matches every member. The value at the path is replaced by `"***"`.
 */
export type MaskPath = readonly string[];

export const MASKED = '***';

/** `/tool_call/arguments/*` → its segments; `~1` and `~0` unescape as in RFC 6901. */
export function parseMaskPath(text: string): MaskPath | string {
  if (!text.startsWith('/') || text === '/') return `\`${text}\` is not a path: write it as /member/member…, e.g. /tool_call/arguments/api_key`;
  return text.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A copy of `value` with every masked path replaced; the original (the request's) is not touched. */
export function mask(value: unknown, paths: readonly MaskPath[]): unknown {
  let out = value;
  for (const p of paths) out = maskOne(out, p, 0);
  return out;
}

function maskOne(value: unknown, path: MaskPath, i: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const seg = path[i] as string;
  const last = i === path.length - 1;
  const at = (v: unknown) => (last ? MASKED : maskOne(v, path, i + 1));
  if (Array.isArray(value)) {
    if (seg === '*') return value.map(at);
    const n = Number(seg);
    if (!Number.isInteger(n) || n < 0 || n >= value.length) return value;
    const copy = [...value];
    copy[n] = at(copy[n]);
    return copy;
  }
  const obj = value as Record<string, unknown>;
  if (seg === '*') return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, at(v)]));
  if (!Object.hasOwn(obj, seg)) return value;
  return { ...obj, [seg]: at(obj[seg]) };
}

/**
 * A record as one line of JSON. An integer beyond ±(2^53−1) is a `bigint` when the occurrence was
 * read exactly (`oarc mcp` reads tool calls so, [OAR-FACT-23]); it is written as its digits — a
 * JSON number, the value the decision read — rather than costing the record its line, which would
 * let a caller keep a call out of the log by adding a large integer to it.
 */
export function recordJson(record: unknown): string {
  try {
    return JSON.stringify(record);
  } catch (e) {
    if (!(e instanceof TypeError) || !/BigInt/i.test(e.message)) throw e;
    return exactJson(record) ?? 'null';
  }
}

/** `JSON.stringify` for values that may hold bigints (no indentation; `undefined` members left out, as it does). */
function exactJson(v: unknown): string | undefined {
  if (typeof v === 'bigint') return v.toString();
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return exactJson((v as { toJSON(): unknown }).toJSON());
  if (Array.isArray(v)) return `[${v.map((x) => exactJson(x) ?? 'null').join(',')}]`;
  const members: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    const text = exactJson(x);
    if (text !== undefined) members.push(`${JSON.stringify(k)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

export interface DecisionLogOptions {
  /** `-` for stdout, a file appended to, or a stream of one's own (closed by its owner). */
  target: string | Writable;
  /** Bytes of lines held while the sink is busy; default 8 MiB. */
  bufferBytes?: number;
  onDrop?: () => void;
  /** A line for the service log: the sink failing (once), a record that is not JSON (at most once a minute). */
  say?: (line: string) => void;
}

/** How often a record that cannot be written as JSON is said in the service log, at most. */
const UNSERIALISABLE_SAY_MS = 60_000;

export class DecisionLog {
  private readonly sink: Writable;
  private readonly ownsSink: boolean;
  private readonly limit: number;
  private readonly onDrop: () => void;
  private queue: string[] = [];
  private queued = 0;
  private dropped = 0;
  private writing = false;
  private idle: (() => void)[] = [];
  private failure: Error | undefined;
  private readonly say: (line: string) => void;
  private unserialisableSaidAt = -Infinity;

  /**
   * A log whose file is opened before this resolves: a path that cannot be appended to (a missing
   * directory, a directory, no permission) rejects here, naming it, so a service fails to start
   * instead of starting with a log that loses every line.
   */
  static async open(opts: DecisionLogOptions): Promise<DecisionLog> {
    const { target } = opts;
    if (typeof target !== 'string' || target === '-') return new DecisionLog(opts);
    let handle;
    try {
      handle = await open(target, 'a');
    } catch (e) {
      throw new Error(`cannot open the decision log ${target}: ${(e as Error).message}`);
    }
    return new DecisionLog({ ...opts, target: createWriteStream('', { fd: handle }) }, true);
  }

  constructor(opts: DecisionLogOptions, ownsStream = false) {
    this.ownsSink = ownsStream || (typeof opts.target === 'string' && opts.target !== '-');
    this.sink = typeof opts.target !== 'string' ? opts.target : opts.target === '-' ? process.stdout : createWriteStream(opts.target, { flags: 'a' });
    this.limit = opts.bufferBytes ?? 8 * 1024 * 1024;
    this.onDrop = opts.onDrop ?? (() => undefined);
    this.say = opts.say ?? (() => undefined);
    this.sink.on('error', (e) => {
      // A sink that fails (disk full, a closed pipe) loses lines, not the service: count them as
      // dropped, and say it once — every later line is dropped the same way.
      if (this.failure === undefined) this.say(`decision log failed, its lines are dropped from now on (oarc_decision_log_dropped_total counts them): ${e.message}`);
      this.failure = e;
      this.writing = false;
      for (const f of this.idle.splice(0)) f();
    });
  }

  /** The error the sink failed with, if it did. */
  get error(): Error | undefined {
    return this.failure;
  }

  write(record: object): void {
    let line: string;
    try {
      line = `${recordJson(record)}\n`;
    } catch (e) {
      // A value JSON cannot write (a cycle, a throwing toJSON) costs its line, never the
      // decision or the service: dropped and counted, and said at most once a minute.
      this.dropped++;
      this.onDrop();
      const now = Date.now();
      if (now - this.unserialisableSaidAt >= UNSERIALISABLE_SAY_MS) {
        this.unserialisableSaidAt = now;
        this.say(`a decision log line was dropped: it cannot be written as JSON (${(e as Error).message})`);
      }
      return;
    }
    if (this.failure !== undefined || this.queued + line.length > this.limit) {
      this.dropped++;
      this.onDrop();
      return;
    }
    this.queue.push(line);
    this.queued += line.length;
    if (!this.writing) this.pump();
  }

  /** Write what is queued, in one chunk per turn, waiting for the sink to drain between chunks. */
  private pump(): void {
    if (this.queue.length === 0 || this.failure !== undefined) {
      this.writing = false;
      for (const f of this.idle.splice(0)) f();
      return;
    }
    this.writing = true;
    let chunk = this.queue.join('');
    this.queue = [];
    this.queued = 0;
    if (this.dropped > 0) {
      chunk += `${JSON.stringify({ dropped: this.dropped, time: new Date().toISOString() })}\n`;
      this.dropped = 0;
    }
    if (this.sink.write(chunk)) setImmediate(() => this.pump());
    else this.sink.once('drain', () => this.pump());
  }

  /** Resolves once every line queued so far has been handed to the sink (and a file closed). */
  async close(): Promise<void> {
    if (this.writing) await new Promise<void>((r) => this.idle.push(r));
    if (this.dropped > 0 && this.failure === undefined) this.sink.write(`${JSON.stringify({ dropped: this.dropped, time: new Date().toISOString() })}\n`);
    if (!this.ownsSink) return;
    if (this.failure !== undefined) this.sink.destroy();
    else await new Promise<void>((r) => this.sink.end(r));
  }
}
