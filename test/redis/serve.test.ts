/**
 * Two `oarc serve` processes on one redis-server decide as one: a session's counter advances
 * whichever process a call lands on ([OAR-FIRE-5], [OAR-FIRE-6]).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { PACK_ARGS, call, serve, type Served } from '../support/serve.js';
import { describeRedis, startRedis, type RedisServer } from './server.js';

const REPEAT = { anchor: 'tool.pre_invoke', tool_call: { name: 'grep', arguments: { pattern: 'x' } } };

describeRedis('binary', 'oarc serve --redis', () => {
  let redis: RedisServer;
  let a: Served;
  let b: Served;
  beforeAll(async () => {
    ensureBuilt(['bin', 'compiler', 'runtime', 'packtest', 'watch', 'serve']);
    redis = await startRedis();
    [a, b] = await Promise.all([serve([...PACK_ARGS, '--redis', redis.url, '--redis-prefix', 'serve:']), serve([...PACK_ARGS, '--redis', redis.url, '--redis-prefix', 'serve:'])]);
  });
  afterAll(async () => {
    const codes = await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
    expect(codes).toEqual([0, 0]);
  });

  it('keeps one counter across two server processes', async () => {
    const occ = { ...REPEAT, session_id: 'shared' };
    const effects: string[] = [];
    for (const s of [a, b, a, b]) effects.push(((await call(s.url, '/v1/decide', { body: occ })).json as { decision: string }).decision);
    // Alone, each process would have seen two calls: none, nudge. Together they see four.
    expect(effects).toEqual(['none', 'nudge', 'block', 'block']);
    // The counts live in Redis, under the prefix given.
    expect(await redis.command('KEYS', 'serve:*')).toMatch(/serve:\{[0-9a-f]+\}:acme\.loops\/COUNT_REPEATS/);
  });

  it('decides a batch through the shared store, and counts no store errors while Redis answers', async () => {
    const r = await call(a.url, '/v1/decide/batch', { body: [REPEAT, REPEAT], headers: { 'oarc-session': 'batch' } });
    expect((r.json as { decision: string }[]).map((d) => d.decision)).toEqual(['none', 'nudge']);
    expect(((await call(b.url, '/v1/decide', { body: REPEAT, headers: { 'oarc-session': 'batch' } })).json as { decision: string }).decision).toBe('block');
    expect((await call(a.url, '/metrics')).text).toMatch(/^oarc_store_errors_total 0$/m);
  });

  it('--session-idle is also the TTL of a session\'s keys in Redis', async () => {
    const c = await serve([...PACK_ARGS, '--redis', redis.url, '--redis-prefix', 'idle:', '--session-idle', '90']);
    try {
      await call(c.url, '/v1/decide', { body: { ...REPEAT, session_id: 'idle' } });
      // Replies are raw RESP: a one-key array (`*1`, `$<n>`, the key), then an integer (`:<ttl>`).
      const key = /^\*1\r\n\$\d+\r\n([^\r]+)\r\n$/.exec(await redis.command('KEYS', 'idle:*COUNT_REPEATS*'))?.[1] as string;
      const ttl = Number(/^:(-?\d+)\r\n$/.exec(await redis.command('TTL', key))?.[1]);
      expect(ttl).toBeGreaterThan(80);
      expect(ttl).toBeLessThanOrEqual(90);
    } finally {
      expect(await c.stop()).toBe(0);
    }
  });

  it('[OAR-FIRE-9] a data loss is said once, shown by health as degraded, fails counting closed, and SIGUSR2 acknowledges it', async () => {
    const c = await serve([...PACK_ARGS, '--redis', redis.url, '--redis-prefix', 'loss:']);
    try {
      const occ = { ...REPEAT, session_id: 'loss' };
      expect(((await call(c.url, '/v1/decide', { body: occ })).json as { decision: string }).decision).toBe('none');
      // The keys under the prefix vanish, epoch record included: what a restart without them does.
      const keys = (await redis.command('KEYS', 'loss:*')).split('\r\n').filter((l) => l.startsWith('loss:'));
      expect(await redis.command('DEL', ...keys)).toMatch(/^:\d+/);
      const d = (await call(c.url, '/v1/decide', { body: occ })).json as { decision: string; applied: { outcome: string }[] };
      expect(d.decision).toBe('block');
      expect(d.applied.some((t) => t.outcome === 'errored')).toBe(true);
      await c.waitForLog(/the Redis counter store lost data: found no epoch record .* until an operator acknowledges the loss \(SIGUSR2/);
      const h = (await call(c.url, '/v1/health')).json as { status: string; store?: { data_loss?: { found: { id: null } } } };
      expect(h.status).toBe('degraded');
      expect(h.store?.data_loss?.found.id).toBeNull();
      await call(c.url, '/v1/decide', { body: occ });
      expect(c.log().match(/lost data/g)).toHaveLength(1);
      c.proc.kill('SIGUSR2');
      await c.waitForLog(/data loss acknowledged: counting resumes/);
      expect(((await call(c.url, '/v1/health')).json as { status: string }).status).toBe('ok');
      expect(((await call(c.url, '/v1/decide', { body: { ...occ, session_id: 'after' } })).json as { decision: string }).decision).toBe('none');
    } finally {
      expect(await c.stop()).toBe(0);
    }
  });

  it('counts store errors when Redis stops answering, and the rules take on_error', async () => {
    redis.pause();
    try {
      const r = await call(a.url, '/v1/decide', { body: { ...REPEAT, session_id: 'paused' } });
      expect(r.status).toBe(200);
      expect(JSON.stringify((r.json as { applied: unknown[] }).applied)).toMatch(/errored/);
      expect((await call(a.url, '/metrics')).text).toMatch(/^oarc_store_errors_total [1-9]\d*$/m);
    } finally {
      redis.resume();
    }
  });
});
