/**
 * `oarc mcp --redis`: the proxy decides through `decideAsync` against a real redis-server, so the
 * example pack's repeat counter lives in Redis — the third identical call is nudged, and the
 * counter is in the store under the proxy's prefix. Mandatory under CI; elsewhere skipped (with the
 * suite's one line) when no redis-server is installed.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeRedis, rawCommand, sharedOrOwnRedis } from '../redis/server.js';
import { ensureBuilt } from '../support/build.js';
import { PACK, sandbox, texts, throughProxy, type Connected } from './support.js';

describeRedis('server', 'oarc mcp with its counters in Redis', () => {
  let box: { root: string; workspace: string };
  let proxied: Connected | undefined;
  let redis: { url: string; stop(): Promise<void> };
  const prefix = `oarc-mcp-test-${process.pid}-${Date.now()}:`;

  beforeAll(async () => {
    ensureBuilt(['bin', 'compiler', 'runtime', 'packtest', 'serve', 'mcp', 'injection']);
    redis = await sharedOrOwnRedis();
    box = sandbox();
    writeFileSync(join(box.workspace, 'repeat.txt'), 'same again\n');
    proxied = await throughProxy([...PACK, '--fact', `oarc.mcp.workspace=${box.workspace}/`, '--redis', redis.url, '--redis-prefix', prefix], box.root);
  }, 60_000);

  afterAll(async () => {
    await proxied?.close();
    await redis?.stop();
    rmSync(box.root, { recursive: true, force: true });
  });

  it('nudges the third identical call, counting in the store', async () => {
    const c = proxied as Connected;
    const args = { name: 'read_text_file', arguments: { path: join(box.workspace, 'repeat.txt') } };
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await c.client.callTool(args));
    expect(results.map((r) => texts(r).length)).toEqual([1, 1, 2]);
    expect(texts(results[2])[1]).toContain('[oarc] Nudge from rule oarc.mcp.loops/NUDGE_REPEAT');
    const port = Number(new URL(redis.url).port || 6379);
    const keys = await rawCommand(port, ['KEYS', `${prefix}*`]);
    expect(keys).toMatch(/^\*[1-9]/); // at least one key under this proxy's prefix
    expect(c.stderr()).not.toMatch(/store error|could not be read/i);
  }, 60_000);
});
