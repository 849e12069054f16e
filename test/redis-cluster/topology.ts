/** The topology harness lives in bench/ (built into dist/, so bench/redis-topologies.ts uses it too). */
export * from '../../bench/redis-topology.js';
