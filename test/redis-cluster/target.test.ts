/**
 * `--redis` texts (runtime/redis-target.ts, bin/redis-options.ts): one server, a cluster's seed
 * nodes, or Sentinels and a master name — and a text that is none of these is a usage error saying
 * what would be accepted, before anything connects. No server needed.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parse } from '../../bin/args.js';
import { redisConfigFrom, REDIS_OPTIONS } from '../../bin/redis-options.js';
import { describeRedisTarget, parseRedisTarget } from '../../runtime/redis-target.js';
import { ensureBuilt } from '../support/build.js';
import { CLI, PACK_ARGS } from '../support/serve.js';

describe('parseRedisTarget', () => {
  it('reads one server, a cluster and a Sentinel set, with default ports', () => {
    expect(parseRedisTarget('redis://127.0.0.1:6379/2')).toEqual({ kind: 'server', url: 'redis://127.0.0.1:6379/2' });
    expect(parseRedisTarget('redis+cluster://a:7000,b,[::1]:7002')).toEqual({
      kind: 'cluster',
      nodes: [{ host: 'a', port: 7000 }, { host: 'b', port: 6379 }, { host: '::1', port: 7002 }],
      tls: false,
    });
    expect(parseRedisTarget('rediss+sentinel://u:p%40ss@s1,s2:26380/my%20master?sentinel_password=sp&db=3')).toEqual({
      kind: 'sentinel',
      sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26380 }],
      name: 'my master',
      username: 'u',
      password: 'p@ss',
      sentinelPassword: 'sp',
      db: 3,
      tls: true,
    });
  });

  it('joins repeated seeds of one kind, and refuses a mix', () => {
    expect(parseRedisTarget(['redis+cluster://a:1', 'redis+cluster://b:2'])).toMatchObject({ kind: 'cluster', nodes: [{ host: 'a', port: 1 }, { host: 'b', port: 2 }] });
    expect(parseRedisTarget(['redis+sentinel://a/m', 'redis+sentinel://b/m'])).toMatchObject({ kind: 'sentinel', sentinels: [{ host: 'a' }, { host: 'b' }], name: 'm' });
    expect(() => parseRedisTarget(['redis://a', 'redis://b'])).toThrow(/seed nodes of one cluster or sentinels of one primary: write them redis\+cluster/);
    expect(() => parseRedisTarget(['redis+sentinel://a/m', 'redis+sentinel://b/n'])).toThrow(/disagree/);
    expect(() => parseRedisTarget(['redis+cluster://a', 'redis+sentinel://b/m'])).toThrow(/disagree/);
  });

  it('says what is wrong with a bad target, and what would be accepted', () => {
    const cases: [string, RegExp][] = [
      ['localhost:6379', /no scheme/],
      ['http://x', /unknown scheme "http"/],
      ['redis://a,b', /several hosts need redis\+cluster/],
      ['redis+cluster://a:0', /port "0" is not a number from 1 to 65535/],
      ['redis+cluster://a:x', /port "x"/],
      ['redis+cluster://', /no host/],
      ['redis+cluster://a/2', /Redis Cluster has only database 0/],
      ['redis+sentinel://a:26379', /the master name is missing/],
      ['redis+sentinel://a/m?tls=1', /unknown parameter "tls" \(known: sentinel_password, db\)/],
      ['redis+cluster://a,,b', /a host is missing/],
    ];
    for (const [text, why] of cases) {
      expect(() => parseRedisTarget(text), text).toThrow(why);
      expect(() => parseRedisTarget(text), text).toThrow(/expected redis:\/\/host:port, redis\+cluster:\/\/host:port,host:port or redis\+sentinel:\/\/host:port,host:port\/mastername/);
    }
  });

  it.each([
    ['a port out of range', 'redis://:s3cretPW@127.0.0.1:70000', 'redis://:***@127.0.0.1:70000'],
    ['a bad escape in the password', 'redis://u:s3cret%zzPW@h:1', 'redis://u:***@h:1'],
    ['a password where the user goes', 'redis+cluster://s3cretPW@h:99999', 'redis+cluster://***@h:99999'],
    ['a sentinel password in the query', 'redis+sentinel://h:1/m?sentinel_password=s3cretPW&db=x', 'redis+sentinel://h:1/m?sentinel_password=***&db=x'],
    ['no master name', 'redis+sentinel://:s3cretPW@h:1', 'redis+sentinel://:***@h:1'],
  ])('names the target without its password when it is wrong: %s', (_, text, shown) => {
    let message = '';
    try {
      parseRedisTarget(text);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`Redis target ${JSON.stringify(shown)}`);
    expect(message).not.toContain('s3cret');
  });

  it('describes a target without its password', () => {
    expect(describeRedisTarget(parseRedisTarget('redis://:secret@h:1'))).toBe('redis://:***@h:1');
    expect(describeRedisTarget(parseRedisTarget('redis+sentinel://:secret@a,b:2/m'))).toBe('redis+sentinel://a:26379,b:2/m');
  });
});

describe('the --redis options', () => {
  const config = (argv: string[]) => redisConfigFrom(parse(argv, REDIS_OPTIONS, false));

  it('give a target, prefix and WAIT, or nothing without --redis', () => {
    expect(config([])).toBeUndefined();
    expect(config(['--redis', 'redis+cluster://a:1', '--redis', 'redis+cluster://b:2', '--redis-prefix', 'gw:', '--redis-wait-replicas', '1', '--redis-wait-ms', '50', '--redis-fail-fast-ms', '250'])).toEqual({
      target: { kind: 'cluster', nodes: [{ host: 'a', port: 1 }, { host: 'b', port: 2 }], tls: false },
      prefix: 'gw:',
      waitReplicas: 1,
      waitTimeoutMs: 50,
      failFastMs: 250,
    });
  });

  it('are usage errors when inconsistent', () => {
    expect(() => config(['--redis-prefix', 'x:'])).toThrow(/--redis-prefix applies to the Redis store: give --redis <target> too/);
    expect(() => config(['--redis', 'redis://a', '--redis-wait-ms', '50'])).toThrow(/give --redis-wait-replicas <n> too/);
    expect(() => config(['--redis', 'redis://a', '--redis-wait-replicas', 'two'])).toThrow(/--redis-wait-replicas takes a whole number from 0 to 1000, not `two`/);
    expect(() => config(['--redis', 'redis://a', '--redis-wait-replicas', '1', '--redis-wait-ms', '500'])).toThrow(/--redis-wait-ms takes a whole number from 1 to 499/);
    expect(() => config(['--redis', 'redis://a', '--redis-prefix', 'a{b'])).toThrow(/must not contain \{ or \}/);
    expect(() => config(['--redis', 'redis://a', '--redis-fail-fast-ms', '-1'])).toThrow(/--redis-fail-fast-ms takes a whole number from 0 to 3600000/);
    expect(() => config(['--redis-fail-fast-ms', '100'])).toThrow(/--redis-fail-fast-ms applies to the Redis store/);
    expect(() => config(['--redis', 'redis+sentinel://a'])).toThrow(/^--redis: Redis target "redis\+sentinel:\/\/a": the master name is missing/);
  });

  it('oarc serve exits 2 on a bad --redis, before connecting anywhere', () => {
    ensureBuilt(['bin', 'compiler', 'runtime', 'packtest', 'watch', 'serve', 'injection', 'examples']);
    const r = spawnSync(process.execPath, [CLI, 'serve', ...PACK_ARGS, '--port', '0', '--redis', 'redis+cluster://127.0.0.1:1/0'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--redis: Redis target "redis\+cluster:\/\/127\.0\.0\.1:1\/0": a cluster has no database or name/);
  });
});
