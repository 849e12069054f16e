/**
 * The pack and helpers shared by the Redis tests.
 *
 * Rules (namespace `t`, anchor `tool.pre_invoke`), selected by the tool name:
 *   count, count2 — COUNT (scoped by `tool_args_fingerprint`, fail_open), TOTAL (unscoped,
 *                   fail_closed) increment; REPEATED warns when COUNT has reached 2 (reads only)
 *   peek          — PEEK warns when TOTAL equals the call's `n` argument (reads only)
 *   plain         — PLAIN nudges on an argument: no counter at all
 *   empty         — SCOPED_EMPTY counts under `acme.gw.key`, unpublished, so an empty scope;
 *                   PEEK_EMPTY warns when that counter is exactly 1
 *   hook          — HOOK (fail_closed) counts when `acme.gw.flag` is "go": a fact read only while
 *                   evaluating, after the batched read and before the batched write, so a test's
 *                   provider can stop or kill the server exactly there
 *   esc           — escalation on repeats: ESC_COUNT counts the call (scoped by its fingerprint),
 *                   ESC_NUDGE nudges on the first repeat, ESC_BLOCK blocks from the second (and,
 *                   evaluated first, stops the count): ten identical calls one at a time decide
 *                   none, nudge, then block × 8
 *   send          — SEND_AFTER_FETCH blocks a `send` when a `fetch` is in the session's activity
 *                   window (4 steps) ([OAR-FACT-12])
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { compileToBundle, type Backend } from '../../compiler/index.js';
import { createEngine, type Decision, type Engine, type Occurrence } from '../../runtime/index.js';
import type { RedisCounterStore } from '../../runtime/redis.js';
import { cap, load, rule } from '../engine/harness.js';
import { ensureBuilt as ensureBuiltDirs } from '../support/build.js';
import { sharedOrOwnRedis } from './server.js';
import { afterAll, beforeAll } from 'vitest';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PRE = 'tool.pre_invoke';

export const CAPABILITY = cap({ profiles: ['tool'], window: 4, hostFacts: [{ name: 'acme.gw.key', type: 'string' }, { name: 'acme.gw.flag', type: 'string' }] });

function r(id: string, effect: string, extra: Record<string, unknown>): string {
  return rule({ id, namespace: 't', anchor: PRE, effect, requires: { profiles: ['tool'], facts: ['acme.gw.key', 'acme.gw.flag'] }, ...extra });
}

export const RULES: readonly string[] = [
  r('COUNT', 'allow', { selector: { tool: ['count', 'count2'] }, counter_scope: 'tool_args_fingerprint', on_fire: ['increment_counter'], on_error: 'fail_open' }),
  r('TOTAL', 'allow', { selector: { tool: ['count', 'count2'] }, on_fire: ['increment_counter'], on_error: 'fail_closed' }),
  r('REPEATED', 'warn', { selector: { tool: ['count', 'count2'] }, when: 'fire_count_of("COUNT") >= 2', on_error: 'fail_open', copy: { what: 'The same {{ tool }} call again.' } }),
  r('PEEK', 'warn', { selector: { tool: ['peek'] }, when: 'fire_count_of("TOTAL") == tool_arg_int("n")', copy: { what: 'TOTAL is at the mark.' } }),
  r('PLAIN', 'nudge', { selector: { tool: ['plain'] }, when: 'tool_arg_string("x") == "y"', copy: { what: 'x is y.' } }),
  r('SCOPED_EMPTY', 'allow', { selector: { tool: ['empty'] }, counter_scope: 'acme.gw.key', on_fire: ['increment_counter'] }),
  r('HOOK', 'allow', { selector: { tool: ['hook'] }, when: 'acme.gw.flag == "go"', on_fire: ['increment_counter'], on_error: 'fail_closed' }),
  r('PEEK_EMPTY', 'warn', { selector: { tool: ['empty'] }, when: 'fire_count_of("SCOPED_EMPTY") == 1', copy: { what: 'counted once' } }),
  r('ESC_COUNT', 'allow', { selector: { tool: ['esc'] }, counter_scope: 'tool_args_fingerprint', on_fire: ['increment_counter'] }),
  r('ESC_NUDGE', 'nudge', { selector: { tool: ['esc'] }, when: 'fire_count_of("ESC_COUNT") == 1', copy: { what: 'again?' } }),
  r('ESC_BLOCK', 'block', { selector: { tool: ['esc'] }, when: 'fire_count_of("ESC_COUNT") >= 2', copy: { what: 'stop repeating' } }),
  r('SEND_AFTER_FETCH', 'block', { selector: { tool: ['send'] }, flow: ['fetch'], copy: { what: 'send after fetch' } }),
];

/** What ten identical `esc` calls of one session decide one at a time. */
export const ESCALATION: readonly string[] = ['none', 'nudge', ...Array<string>(8).fill('block')];

export const PACK = load({ capability: CAPABILITY, rules: RULES });

export function engineFor(store: RedisCounterStore | undefined, backend: Backend = 'compiled'): Engine {
  return createEngine(compileToBundle(PACK, backend), store ? { asyncCounters: store } : {});
}

export const call = (tool: string, args: Record<string, unknown> = {}, session = 's', facts?: Record<string, unknown>): Occurrence => ({
  anchor: PRE,
  session,
  toolCall: { name: tool, arguments: args },
  ...(facts ? { facts } : {}),
});

const prefixes: string[] = [];

/** A unique key prefix, so tests sharing one server never see each other's keys. */
export function uniquePrefix(tag: string): string {
  const p = `oartest:${tag}:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;
  prefixes.push(p);
  return p;
}

/** Delete every key under the prefixes this test file made (a shared server is left as found). */
export async function deleteTestKeys(url: string): Promise<void> {
  const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await c.connect();
  try {
    for (const p of prefixes.splice(0)) {
      let cursor = '0';
      do {
        const [next, batch] = await c.scan(cursor, 'MATCH', `${p}*`, 'COUNT', 1000);
        cursor = next;
        if (batch.length > 0) await c.del(...batch);
      } while (cursor !== '0');
    }
  } finally {
    c.disconnect();
  }
}

/**
 * The increments a decision reports applied, by `<session>\u0000<counter name>`: for each counter
 * the decision reports changed ([OAR-CONF-33] spelling), the `increment_counter` entries of
 * `onFire` for its rule (a rule has one counter key per occurrence).
 */
export function appliedIncrements(d: Decision, session: string, into = new Map<string, number>()): Map<string, number> {
  for (const name of Object.keys(d.counters)) {
    const hash = name.indexOf('#');
    const qid = hash < 0 ? name : name.slice(0, hash);
    const n = d.onFire.filter((s) => s.rule === qid && s.action === 'increment_counter').length;
    if (n > 0) into.set(`${session}\u0000${name}`, (into.get(`${session}\u0000${name}`) ?? 0) + n);
  }
  return into;
}

export function addInto(into: Map<string, number>, from: Iterable<[string, number]>): Map<string, number> {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
  return into;
}

/** Every counter under `prefix`, read straight from Redis: `<session>\u0000<counter name>` → fire_count. */
export async function dumpCounters(url: string, prefix: string): Promise<Map<string, number>> {
  const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await c.connect();
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await c.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const out = new Map<string, number>();
    for (const k of keys) {
      const m = /^\{([0-9a-f]*)\}:(.*)$/s.exec(k.slice(prefix.length));
      if (m === null) continue; // a store's write record
      const f = await c.hget(k, 'f');
      out.set(`${Buffer.from(m[1] as string, 'hex').toString('utf8')}\u0000${m[2] as string}`, Number(f ?? 0));
    }
    return out;
  } finally {
    c.disconnect();
  }
}

/** Drop zero entries and sort, for comparing two counter maps. */
export function normal(m: Map<string, number>): [string, number][] {
  return [...m].filter(([, v]) => v !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// dist/ for the replica processes: built when older than the sources (as test/e2e does).

export function ensureBuilt(): void {
  ensureBuiltDirs(['compiler', 'runtime']);
}

/**
 * For a Redis test file's `describe`: the shared server (or one started for it) before its tests;
 * after them — and after the file's own `afterAll` hooks, which close its stores and replicas
 * first (hooks run last-registered first) — the test keys deleted and a started server stopped.
 */
export function useTestRedis(): { url(): string } {
  let server: { url: string; stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    ensureBuilt();
    server = await sharedOrOwnRedis();
  });
  afterAll(async () => {
    if (server !== undefined) await deleteTestKeys(server.url);
    await server?.stop();
  });
  return { url: () => server?.url ?? '' };
}
