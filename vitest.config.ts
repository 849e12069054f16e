import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Says which tests this machine left out and how to run them (the Redis tests, the spec check).
    globalSetup: ['test/support/notices.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
