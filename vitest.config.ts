import { defineConfig } from 'vitest/config';

/**
 * Tests that fail a Redis primary over (kill, SIGSTOP, Sentinel promotion, cluster failover) judge
 * what a client does within timeouts of a few hundred milliseconds. On a 2-core machine, with the
 * other test files' workers busy beside them, a server or a Sentinel can miss those timeouts for
 * reasons that are the machine's, not the code's (CI failed that way). So they run after
 * everything else, one file at a time, with the machine to themselves; the rest runs in parallel.
 */
const failover = ['test/redis-cluster/**/*.test.ts', 'test/redis/failure.test.ts', 'test/redis/faults.test.ts'];

const timeouts = { testTimeout: 120_000, hookTimeout: 120_000 };

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: failover,
          ...timeouts,
          // Says which tests this machine left out and how to run them (the Redis tests, the spec
          // check): once per run, so in one project only.
          globalSetup: ['test/support/notices.ts'],
        },
      },
      { test: { name: 'failover', include: failover, fileParallelism: false, sequence: { groupOrder: 1 }, ...timeouts } },
    ],
  },
});
