/**
 * A gateway replica in its own process (test/redis/replica.mjs, running the built dist/), driven
 * over IPC: `init` connects it to a Redis under a key prefix, `run` decides occurrences with
 * `decideAsync`, so many in flight at once, and reports what the decisions applied.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Decision } from '../../runtime/index.js';
import { CAPABILITY, ROOT, RULES } from './pack.js';

export interface Done {
  type: 'done';
  applied: [string, number][];
  errored: number;
  count: number;
  roundTrips: number;
  /** Writes the session version check turned back (another replica wrote first). */
  conflicts: number;
  ms: number;
  decisions?: Decision[];
}

export interface Occ {
  session: string;
  tool: string;
  args?: Record<string, unknown>;
}

export class Replica {
  private readonly child: ChildProcess;
  private readonly inbox: ((m: { type: string }) => void)[] = [];
  private readonly exited: Promise<number | null>;
  id = '';

  constructor() {
    this.child = fork(join(ROOT, 'test', 'redis', 'replica.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: { type: string; message?: string }) => {
      const next = this.inbox.shift();
      if (next) next(m);
    });
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  private request<T>(msg: object): Promise<T> {
    return new Promise((resolve, reject) => {
      this.inbox.push((m) => (m.type === 'error' ? reject(new Error(`replica: ${(m as { message?: string }).message}`)) : resolve(m as T)));
      this.child.send(msg);
    });
  }

  async init(url: string, prefix: string): Promise<void> {
    const r = await this.request<{ id: string }>({ type: 'init', url, prefix, capability: CAPABILITY, rules: RULES });
    this.id = r.id;
  }

  run(occurrences: Occ[], concurrency: number, decisions = false): Promise<Done> {
    return this.request<Done>({ type: 'run', occurrences, concurrency, decisions });
  }

  async exit(): Promise<void> {
    if (this.child.connected) this.child.send({ type: 'exit' });
    const t = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(t);
  }
}

