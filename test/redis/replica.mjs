// A gateway replica for test/redis/replicas.test.ts: its own process, its own engine (from the
// BUILT dist/) and its own RedisCounterStore, driven over IPC by the test.
//
//   → { type: 'init', url, prefix, capability, rules, timeoutMs }   ← { type: 'ready', id }
//   → { type: 'run', occurrences, concurrency, decisions }          ← { type: 'done', ... }
//     (one session's occurrences in flight at once are queued by the engine, in order)
//   → { type: 'exit' }
//
// `run` decides every occurrence with `decideAsync`, `concurrency` of them in flight at once, and
// reports the increments the decisions say were applied, keyed `<session>\0<counter name>`.
import { compileToBundle, createEngine, loadPackTexts } from '../../dist/compiler/index.js';
import { RedisCounterStore } from '../../dist/runtime/redis.js';

let store;
let engine;

function appliedInto(into, d, session) {
  for (const name of Object.keys(d.counters)) {
    const hash = name.indexOf('#');
    const qid = hash < 0 ? name : name.slice(0, hash);
    const n = d.onFire.filter((s) => s.rule === qid && s.action === 'increment_counter').length;
    if (n > 0) into.set(`${session}\u0000${name}`, (into.get(`${session}\u0000${name}`) ?? 0) + n);
  }
}

async function run(msg) {
  const applied = new Map();
  const decisions = [];
  let errored = 0;
  let next = 0;
  const trips0 = store.roundTrips;
  const conflicts0 = store.conflicts;
  const t0 = process.hrtime.bigint();
  const worker = async () => {
    while (next < msg.occurrences.length) {
      const i = next++;
      const o = msg.occurrences[i];
      const d = await engine.decideAsync({ anchor: 'tool.pre_invoke', session: o.session, toolCall: { name: o.tool, arguments: o.args ?? {} } });
      appliedInto(applied, d, o.session);
      if (d.applied.some((t) => t.outcome === 'errored')) errored++;
      if (msg.decisions) decisions[i] = d;
    }
  };
  await Promise.all(Array.from({ length: msg.concurrency ?? 1 }, worker));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { type: 'done', applied: [...applied], errored, count: msg.occurrences.length, roundTrips: store.roundTrips - trips0, conflicts: store.conflicts - conflicts0, ms, decisions: msg.decisions ? decisions : undefined };
}

process.on('message', (msg) => {
  (async () => {
    if (msg.type === 'init') {
      const loaded = loadPackTexts({ capability: msg.capability, rules: msg.rules });
      if (!loaded.ok) throw new Error(`pack did not load: ${JSON.stringify(loaded.diagnostics)}`);
      store = new RedisCounterStore({ url: msg.url, prefix: msg.prefix, ttlSeconds: 600, timeoutMs: msg.timeoutMs ?? 2000 });
      engine = createEngine(compileToBundle(loaded.pack, 'compiled'), { asyncCounters: store });
      await store.ready();
      process.send({ type: 'ready', id: store.id });
    } else if (msg.type === 'run') {
      process.send(await run(msg));
    } else if (msg.type === 'exit') {
      await store?.settled(10_000);
      await store?.close();
      process.disconnect();
    }
  })().catch((e) => {
    process.send({ type: 'error', message: e instanceof Error ? e.stack : String(e) });
  });
});
