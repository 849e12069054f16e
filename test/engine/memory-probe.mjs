// Retained heap per session (run with --expose-gc; test/engine/memory.test.ts runs it): DECISIONS
// decisions over SESSIONS sessions, each session a run of consecutive tool calls that count (one
// scoped and one unscoped counter) and fill the activity window, then — with `endSession` — ended.
// Prints { perSession, before, after } as JSON; perSession = (heap after − heap before) /
// SESSIONS, both measured after a full GC.
//
//   node --expose-gc test/engine/memory-probe.mjs <end|bounded|unbounded> [decisions] [sessions]
import { compileToBundle, loadPackTexts } from '../../dist/compiler/index.js';
import { createEngine } from '../../dist/runtime/index.js';

const [mode, decisions = '1000000', sessions = '200000'] = process.argv.slice(2);
const DECISIONS = Number(decisions);
const SESSIONS = Number(sessions);
const core = ['tool.pre_invoke', 'tool.handler', 'tool.post_invoke', 'agent.post_turn', 'agent.finalize', 'model.input', 'model.output', 'model.tool_result'];
const capability = JSON.stringify({
  oar_capability_version: '1.0', host: 'acme.gw',
  anchors: { core: { 'tool.pre_invoke': 'tool.pre_invoke' }, unsupported: core.slice(1) },
  profiles: ['tool'], activity_window: 8,
});
const rule = (o) => JSON.stringify({ oar: '1.0', kind: 'policy', namespace: 'm', anchor: 'tool.pre_invoke', requires: { profiles: ['tool'] }, ...o });
const rules = [
  rule({ id: 'COUNT', effect: 'allow', counter_scope: 'tool_args_fingerprint', on_fire: ['increment_counter'] }),
  rule({ id: 'TOTAL', effect: 'allow', on_fire: ['increment_counter'] }),
  rule({ id: 'REPEAT', effect: 'warn', when: 'fire_count_of("COUNT") >= 3', copy: { what: 'again' } }),
  rule({ id: 'FLOW', effect: 'nudge', flow: ['read', 'write'], copy: { what: 'read then write' } }),
];
const loaded = loadPackTexts({ capability, rules });
if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
const bound = mode === 'bounded' ? { maxSessions: 10_000 } : mode === 'unbounded' ? { maxSessions: Infinity } : {};
const engine = createEngine(compileToBundle(loaded.pack), { sessions: bound });
const tools = ['read', 'write', 'bash', 'search'];
const perSession = DECISIONS / SESSIONS;

const heap = () => {
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage().heapUsed;
};
// Warm up (compiled code, the engine's reused state), then measure from a clean heap.
for (let i = 0; i < 20_000; i++) engine.decide({ anchor: 'tool.pre_invoke', session: `warm${i % 50}`, toolCall: { name: tools[i % 4], arguments: { i: i % 3 } } });
for (let i = 0; i < 50; i++) engine.endSession(`warm${i}`);
const before = heap();
for (let i = 0; i < DECISIONS; i++) {
  const s = Math.floor(i / perSession);
  const session = `session-${s}`;
  engine.decide({ anchor: 'tool.pre_invoke', session, toolCall: { name: tools[i % 4], arguments: { path: `/f${i % 3}` } } });
  if (mode === 'end' && (i + 1) % perSession === 0) engine.endSession(session);
}
const after = heap();
process.stdout.write(`${JSON.stringify({ mode, decisions: DECISIONS, sessions: SESSIONS, perSession: (after - before) / SESSIONS, before, after })}\n`);
