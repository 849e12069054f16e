/**
 * What the cluster and Sentinel tests share: reading every counter straight from the data nodes,
 * and a workload that keeps deciding while a test breaks the topology under it, tallying what the
 * decisions report — decisions, errored decisions, increments reported applied.
 */
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import type { Decision, Engine } from '../../runtime/index.js';
import { describeRedis } from '../redis/server.js';
import { appliedIncrements, call } from '../redis/pack.js';

/** `describe` for a file needing redis-server and redis-cli (mandatory under CI). */
export const describeTopology = (name: string, body: () => void) => describeRedis('topology', name, body);

/** Every counter under `prefix` on the given nodes (a cluster's primaries, or one primary): `<session>\0<name>` → fire_count. */
export async function dumpNodes(ports: readonly number[], prefix: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const port of ports) {
    const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
    await c.connect();
    try {
      let cursor = '0';
      do {
        const [next, batch] = await c.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const k of batch) {
          const m = /^\{([0-9a-f]*)\}:(.*)$/s.exec(k.slice(prefix.length));
          if (m === null) continue; // versions, windows, write records, epochs
          const f = await c.hget(k, 'f');
          const key = `${Buffer.from(m[1] as string, 'hex').toString('utf8')}\u0000${m[2] as string}`;
          if (out.has(key)) throw new Error(`counter ${key} is held by two primaries`);
          out.set(key, Number(f ?? 0));
        }
      } while (cursor !== '0');
    } finally {
      c.disconnect();
    }
  }
  return out;
}

export function sum(m: Map<string, number>): number {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
}

export interface Tally {
  decisions: number;
  errored: number;
  reported: Map<string, number>;
  /** Decisions whose trace says which error, by message (first 80 characters), for the report. */
  errors: Map<string, number>;
  /** Anything thrown out of decideAsync (must stay empty). */
  thrown: unknown[];
}

export function newTally(): Tally {
  return { decisions: 0, errored: 0, reported: new Map(), errors: new Map(), thrown: [] };
}

/**
 * Every decision of the count pack (`count` calls) either applied both increments, or went down
 * on_error with nothing applied ([OAR-FIRE-9], [OAR-OPS-3], [OAR-OPS-4]); anything else fails.
 */
export function record(t: Tally, d: Decision, session: string): void {
  t.decisions++;
  const errored = d.applied.filter((a) => a.outcome === 'errored');
  if (errored.length === 0) {
    expect(d.onFire.map((s) => `${s.rule}:${s.action}`)).toEqual(['t/COUNT:increment_counter', 't/TOTAL:increment_counter']);
    appliedIncrements(d, session, t.reported);
    return;
  }
  t.errored++;
  // TOTAL is fail_closed: the decision blocks naming it, and reports nothing applied.
  expect({ decision: d.decision, rule: d.rule }).toEqual({ decision: 'block', rule: 't/TOTAL' });
  expect(d.onFire).toEqual([]);
  expect(Object.keys(d.counters)).toEqual([]);
  // One cause per decision, the store's own words (the rule-specific wrapping stripped).
  const why = (errored[0]?.error?.message ?? 'no message').replace(/^side-effect of \S+ could not be applied: /, '').replace(/\s+/g, ' ').slice(0, 90);
  t.errors.set(why, (t.errors.get(why) ?? 0) + 1);
}

/**
 * Decide `count` calls over `sessions`, `inFlight` at a time, until `stop()` resolves, then stop.
 * Each call has distinct arguments per session round, so COUNT#<fingerprint> counters spread.
 */
export async function runUntil(engine: Engine, sessions: readonly string[], inFlight: number, until: Promise<unknown>, t: Tally, pauseMs = 2): Promise<void> {
  let done = false;
  void until.finally(() => (done = true));
  let i = 0;
  const worker = async () => {
    while (!done) {
      const n = i++;
      const session = sessions[n % sessions.length] as string;
      try {
        const d = await engine.decideAsync(call('count', { k: Math.floor(n / sessions.length) % 7 }, session));
        record(t, d, session);
      } catch (e) {
        t.thrown.push(e);
      }
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

/** One line for the run's output (the figures the README quotes). */
export function report(what: string, t: Tally, held: Map<string, number>, extra = ''): string {
  const errs = [...t.errors].map(([m, n]) => `${n}× ${m}`).join('; ');
  const line = `${what}: ${t.decisions} decisions, ${t.errored} errored, increments reported ${sum(t.reported)}, held ${sum(held)}${extra}${errs === '' ? '' : ` [${errs}]`}`;
  console.log(line);
  return line;
}
