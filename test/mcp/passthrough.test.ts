/**
 * The proxy between two in-memory transports (the SDK's own): everything but tools/call passes
 * untouched, both ways; tools/call is decided before and after, with the decision function
 * recording what it was asked.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { McpProxy } from '../../mcp/proxy.js';
import type { Decided } from '../../mcp/result.js';
import type { Occurrence } from '../../runtime/index.js';

const NONE: Decided = { decision: 'none', rule: null, copy: null, advisories: [] };

async function rig(decide: (occ: Occurrence) => Decided & { content?: string }) {
  const [client, clientSide] = InMemoryTransport.createLinkedPair();
  const [serverSide, server] = InMemoryTransport.createLinkedPair();
  const asked: Occurrence[] = [];
  const said: string[] = [];
  const proxy = new McpProxy(clientSide, serverSide, {
    anchors: { pre: 'pre', results: ['post', 'result'] },
    facts: { 'h.f': 'v' },
    say: (l) => said.push(l),
    decide: async (occ) => {
      asked.push(structuredClone(occ));
      return decide(occ);
    },
  });
  const atClient: JSONRPCMessage[] = [];
  const atServer: JSONRPCMessage[] = [];
  client.onmessage = (m) => atClient.push(m);
  server.onmessage = (m) => atServer.push(m);
  for (const t of [client, clientSide, serverSide, server]) await t.start();
  const settle = async () => {
    for (let i = 0; i < 5; i++) await proxy.settled();
  };
  return { client, server, atClient, atServer, asked, said, settle };
}

describe('passing through', () => {
  it('forwards requests, responses and notifications other than tools/call unchanged, both ways', async () => {
    const r = await rig(() => NONE);
    const fromClient: JSONRPCMessage[] = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'r2', method: 'resources/read', params: { uri: 'file:///a', _meta: { progressToken: 7 } } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'r2', reason: 'user' } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} },
      { jsonrpc: '2.0', id: 4, result: { roots: [] } },
    ];
    const fromServer: JSONRPCMessage[] = [
      { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 7, progress: 1, total: 2 } },
      { jsonrpc: '2.0', id: 'r2', error: { code: -32800, message: 'cancelled' } },
      { jsonrpc: '2.0', id: 3, result: { tools: [{ name: 't', inputSchema: { type: 'object' } }] } },
      { jsonrpc: '2.0', id: 4, method: 'roots/list' },
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ];
    for (const m of fromClient) await r.client.send(m);
    for (const m of fromServer) await r.server.send(m);
    await r.settle();
    expect(r.atServer).toEqual(fromClient);
    expect(r.atClient).toEqual(fromServer);
    expect(r.asked).toEqual([]);
  });
});

describe('tools/call', () => {
  const call = (id: number, name = 'write', args: Record<string, unknown> = { path: '/x' }): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

  it('decides the call at the pre anchor, then the result at each result anchor in turn, on the transformed text', async () => {
    const r = await rig((occ) => (occ.anchor === 'post' ? { ...NONE, decision: 'transform', content: (occ.content ?? '').replace('sk-1', '[R]') } : NONE));
    await r.client.send(call(1, 'read', { path: '/a' }));
    await r.settle();
    expect(r.atServer).toEqual([call(1, 'read', { path: '/a' })]);
    await r.server.send({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'key sk-1' }] } });
    await r.settle();
    expect(r.atClient).toEqual([{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'key [R]' }] } }]);
    expect(r.asked.map((o) => [o.anchor, o.content])).toEqual([['pre', undefined], ['post', 'key sk-1'], ['result', 'key [R]']]);
    expect(r.asked[0]).toMatchObject({ toolCall: { name: 'read', arguments: { path: '/a' } }, facts: { 'h.f': 'v' }, session: expect.any(String) });
    expect(new Set(r.asked.map((o) => o.session)).size).toBe(1);
  });

  it('answers a blocked call itself; the server never sees it [OAR-PROF-10]', async () => {
    const r = await rig((occ) => (occ.anchor === 'pre' ? { decision: 'block', rule: 'ns/NO', copy: { what: 'No writes.' }, advisories: [] } : NONE));
    await r.client.send(call(9));
    await r.settle();
    expect(r.atServer).toEqual([]);
    expect(r.atClient).toEqual([{ jsonrpc: '2.0', id: 9, result: { content: [{ type: 'text', text: '[oarc] Tool call blocked by rule ns/NO.\nNo writes.' }], isError: true } }]);
  });

  it('withholds a result blocked after the call, keeping the call\'s advisories', async () => {
    const nudge: Decided = { decision: 'nudge', rule: 'ns/N', copy: { what: 'n' }, advisories: [{ code: 'N', rule: 'ns/N', copy: { what: 'n' } }] };
    const r = await rig((occ) => (occ.anchor === 'pre' ? nudge : occ.anchor === 'post' ? { decision: 'block', rule: 'ns/B', copy: { what: 'b' }, advisories: [] } : NONE));
    await r.client.send(call(2));
    await r.server.send({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'secret' }], structuredContent: { s: 'secret' } } });
    await r.settle();
    expect(r.atClient).toEqual([{ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '[oarc] Tool result withheld by rule ns/B.\nb' }, { type: 'text', text: '[oarc] Nudge from rule ns/N:\nn' }], isError: true } }]);
    // The second result anchor is not asked once the first has blocked.
    expect(r.asked.map((o) => o.anchor)).toEqual(['pre', 'post']);
  });

  it('fails closed when a decision cannot be made', async () => {
    const r = await rig(() => {
      throw new Error('store down');
    });
    await r.client.send(call(3));
    await r.settle();
    expect(r.atServer).toEqual([]);
    expect(r.atClient).toEqual([{ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: '[oarc] Tool call refused: oarc could not decide the write call: store down' }], isError: true } }]);
  });

  it('passes a JSON-RPC error answering a call through, and leaves a malformed call to the server', async () => {
    const r = await rig(() => NONE);
    const bad: JSONRPCMessage = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'x', arguments: 'not an object' } };
    await r.client.send(call(4));
    await r.client.send(bad);
    await r.server.send({ jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'unknown tool' } });
    await r.settle();
    expect(r.atServer).toEqual([call(4), bad]);
    expect(r.atClient).toEqual([{ jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'unknown tool' } }]);
    expect(r.asked).toHaveLength(1);
  });

  it('starts a new session at each initialize', async () => {
    const r = await rig(() => NONE);
    const init = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } });
    await r.client.send(init(1));
    await r.client.send(call(2));
    await r.client.send(init(3));
    await r.client.send(call(4));
    await r.settle();
    expect(r.asked[0]?.session).not.toBe(r.asked[1]?.session);
  });
});
