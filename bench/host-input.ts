/**
 * What the occurrence check costs (runtime/host-input.ts): `decide()` on the decision benchmark's
 * generated gateway packs and streams (packs.ts), with the check as shipped, against the same engine
 * with the check switched off — which no public option can do; this benchmark reaches into the
 * engine to measure what an opt-out would buy. Interleaved rounds in one process, process CPU time,
 * each round deciding the whole stream on both; the figure is the median over rounds of the paired
 * ratio checked / unchecked.
 *
 * Usage: npm run bench:host-input [-- --quick]
 */
import { createEngine, MemoryCounterStore, type Bundle, type Engine } from '../runtime/index.js';
import { cpuNow, preparePack } from './decide.js';
import { median, shuffle, prng } from './stats.js';

interface Variant {
  id: 'checked' | 'unchecked';
  engine: Engine;
  store: MemoryCounterStore;
}

function variant(id: Variant['id'], bundle: Bundle): Variant {
  const store = new MemoryCounterStore();
  const engine = createEngine(bundle, { counters: store });
  // The engine keeps its check in a private field: replace it with one that accepts everything.
  if (id === 'unchecked') (engine as unknown as { inputCheck: { check(): void } }).inputCheck = { check() {} };
  return { id, engine, store };
}

export interface HostInputResult {
  size: number;
  checkedNs: number;
  uncheckedNs: number;
  /** Median over rounds of checked / unchecked in the same round. */
  ratio: number;
}

export function runHostInputBench(opts: { quick?: boolean; sizes?: readonly number[]; rounds?: number } = {}): HostInputResult[] {
  const sizes = opts.sizes ?? (opts.quick ? [10] : [10, 100, 1000]);
  const rounds = opts.rounds ?? (opts.quick ? 3 : 41);
  const streamLength = opts.quick ? 200 : 2000;
  const passes = opts.quick ? 2 : 10;
  const random = prng(7);
  const out: HostInputResult[] = [];
  for (const size of sizes) {
    const p = preparePack(size, streamLength);
    // Separate bundles, so the two engines' call sites do not share type feedback.
    const variants = [variant('checked', p.compiled), variant('unchecked', p.compiled)];
    const ns: Record<Variant['id'], number[]> = { checked: [], unchecked: [] };
    for (let round = -1; round < rounds; round++) {
      for (const v of shuffle([...variants], random)) {
        v.store.clear();
        const t0 = cpuNow();
        for (let k = 0; k < passes; k++) for (const occ of p.stream) v.engine.decide(occ);
        const perDecision = ((cpuNow() - t0) * 1e6) / (passes * p.stream.length); // ms → ns
        if (round >= 0) ns[v.id].push(perDecision);
      }
    }
    out.push({
      size,
      checkedNs: median(ns.checked),
      uncheckedNs: median(ns.unchecked),
      ratio: median(ns.checked.map((c, i) => c / (ns.unchecked[i] as number))),
    });
  }
  return out;
}

function main(): void {
  const quick = process.argv.includes('--quick');
  const rows = runHostInputBench({ quick });
  console.log('| rules | decide with the check, ns | without, ns | with / without |');
  console.log('| ---: | ---: | ---: | ---: |');
  for (const r of rows) console.log(`| ${r.size} | ${r.checkedNs.toFixed(0)} | ${r.uncheckedNs.toFixed(0)} | ${r.ratio.toFixed(3)}× |`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
