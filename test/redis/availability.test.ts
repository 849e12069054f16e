/**
 * When the Redis tests run (test/redis/server.ts): where a redis-server is on PATH, always under
 * CI, and whenever the developer named one; skipped otherwise, with one line saying how to run them.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { redisNotice, redisRuns } from './server.js';

const root = mkdtempSync(join(tmpdir(), 'oarc-redis-path-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A PATH directory holding files named redis-server (and, when asked, redis-cli) with `mode`. */
function pathWith(name: string, mode: number, files = ['redis-server']): string {
  const dir = join(root, name);
  mkdirSync(dir);
  for (const f of files) {
    writeFileSync(join(dir, f), '#!/bin/sh\n');
    chmodSync(join(dir, f), mode);
  }
  return dir;
}

describe('redisRuns and redisNotice', () => {
  const executable = pathWith('exec', 0o755, ['redis-server', 'redis-cli']);
  const serverOnly = pathWith('server-only', 0o755);
  const notExecutable = pathWith('plain', 0o644);
  const empty = join(root, 'empty');
  mkdirSync(empty);

  it('run where redis-server is an executable on PATH, and print nothing', () => {
    const env = { PATH: `${empty}:${executable}` };
    expect(redisRuns('binary', env)).toBe(true);
    expect(redisRuns('server', env)).toBe(true);
    expect(redisRuns('topology', env)).toBe(true);
    expect(redisNotice(env)).toBeUndefined();
  });

  it('the cluster and sentinel tests also need redis-cli, and say so when it is missing', () => {
    const env = { PATH: serverOnly };
    expect(redisRuns('binary', env)).toBe(true);
    expect(redisRuns('topology', env)).toBe(false);
    expect(redisNotice(env)).toMatch(/^redis cluster and sentinel tests skipped \(test\/redis-cluster\): no redis-cli on PATH; install it \(apt-get install redis-tools\)/);
    expect(redisRuns('topology', { ...env, CI: 'true' })).toBe(true);
  });

  it('skip where none is, or only a file that cannot be run, with one line saying how to run them', () => {
    for (const env of [{ PATH: empty }, { PATH: notExecutable }, {}, { CI: 'false', PATH: empty }]) {
      expect(redisRuns('binary', env), JSON.stringify(env)).toBe(false);
      expect(redisRuns('server', env), JSON.stringify(env)).toBe(false);
      expect(redisNotice(env)).toBe(
        'redis tests skipped (test/redis): no redis-server on PATH; install it (apt-get install redis-server) or set OARC_REDIS_SERVER=/path/to/redis-server; CI=true makes them mandatory',
      );
    }
  });

  it('are mandatory under CI, and run whenever a server is named (a wrong name then fails, never skips)', () => {
    for (const env of [{ CI: 'true', PATH: empty }, { CI: '1', PATH: empty }, { OARC_REDIS_SERVER: '/no/such/redis-server', PATH: empty }]) {
      expect(redisRuns('binary', env), JSON.stringify(env)).toBe(true);
      expect(redisNotice(env)).toBeUndefined();
    }
  });

  it('OARC_REDIS_URL serves the tests that need any server, not those that kill their own', () => {
    const env = { OARC_REDIS_URL: 'redis://127.0.0.1:6379', PATH: empty };
    expect(redisRuns('server', env)).toBe(true);
    expect(redisRuns('binary', env)).toBe(false);
    expect(redisNotice(env)).toMatch(/^redis failure tests skipped \(test\/redis\/failure\.test\.ts kills its own servers/);
  });
});
