/**
 * The proxy between two in-memory transports (the SDK's own): everything but tools/call passes
 * untouched, both ways; tools/call is decided before and after, with the decision function
 * recording what it was asked.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { RawLines, ReadLine } from '../../mcp/lines.js';
import { McpProxy } from '../../mcp/proxy.js';
import type { Decided } from '../../mcp/result.js';
import type { Occurrence } from '../../runtime/index.js';

const NONE: Decided = { decision: 'none', rule: null, copy: null, advisories: [] };

/** Lines as the stdio reader keeps them: the line a message object was parsed from, and the lines the server was sent. */
function fakeLines() {
  const known = new WeakMap<object, ReadLine>();
  const sent: string[] = [];
  const lines: RawLines = { lineOf: (m) => known.get(m), send: async (l) => void sent.push(l) };
  /** The message parsed from `line`, as the client's transport would hand it over. */
  const parse = (line: string, refused = false): JSONRPCMessage => {
    const m = JSON.parse(line) as JSONRPCMessage;
    known.set(m, { line, refused });
    return m;
  };
  return { lines, sent, parse };
}

async function rig(decide: (occ: Occurrence) => Decided & { content?: string }, lines?: RawLines) {
  const [client, clientSide] = InMemoryTransport.createLinkedPair();
  const [serverSide, server] = InMemoryTransport.createLinkedPair();
  const asked: Occurrence[] = [];
  const said: string[] = [];
  const proxy = new McpProxy(clientSide, serverSide, {
    anchors: { pre: 'pre', results: ['post', 'result'] },
    facts: { 'h.f': 'v' },
    say: (l) => said.push(l),
    verbose: true,
    decide: async (occ) => {
      asked.push(structuredClone(occ));
      return decide(occ);
    },
  });
  if (lines !== undefined) proxy.forwardLines(lines);
  const atClient: JSONRPCMessage[] = [];
  const atServer: JSONRPCMessage[] = [];
  client.onmessage = (m) => atClient.push(m);
  server.onmessage = (m) => atServer.push(m);
  for (const t of [client, clientSide, serverSide, server]) await t.start();
  const settle = async () => {
    for (let i = 0; i < 5; i++) await proxy.settled();
  };
  return { proxy, client, server, atClient, atServer, asked, said, settle };
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
    // The server answers what it has been sent: a response to no request in flight is dropped.
    await r.settle();
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
    await r.settle();
    await r.server.send({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'secret' }], structuredContent: { s: 'secret' } } });
    await r.settle();
    expect(r.atClient).toEqual([{ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '[oarc] Tool result withheld by rule ns/B.\nb' }, { type: 'text', text: '[oarc] Nudge from rule ns/N:\nn' }], isError: true } }]);
    // The second result anchor is not asked once the first has blocked.
    expect(r.asked.map((o) => o.anchor)).toEqual(['pre', 'post']);
  });

  it('decides a secret that is only in structuredContent: redacted there, or withheld by a block [OAR-PROF-10]', async () => {
    const secret = { content: [{ type: 'text', text: 'done' }], structuredContent: { key: 'sk-1', n: 2 } };
    const redact = await rig((occ) => (occ.anchor === 'post' ? { ...NONE, decision: 'transform', content: (occ.content ?? '').replaceAll('sk-1', '[R]') } : NONE));
    await redact.client.send(call(1, 'read'));
    await redact.settle();
    await redact.server.send({ jsonrpc: '2.0', id: 1, result: secret });
    await redact.settle();
    expect(redact.asked.map((o) => o.content)).toEqual([undefined, 'done\n{"key":"sk-1","n":2.0}', 'done\n{"key":"[R]","n":2.0}']);
    expect(redact.atClient).toEqual([{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }], structuredContent: { key: '[R]', n: 2 } } }]);

    const block = await rig((occ) => (occ.anchor === 'post' && (occ.content ?? '').includes('sk-') ? { decision: 'block', rule: 'ns/S', copy: null, advisories: [] } : NONE));
    await block.client.send(call(2, 'read'));
    await block.settle();
    await block.server.send({ jsonrpc: '2.0', id: 2, result: secret });
    await block.settle();
    expect(block.atClient).toEqual([{ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '[oarc] Tool result withheld by rule ns/S.' }], isError: true } }]);

    // A transform that breaks the structured content's JSON cannot be delivered: withheld.
    const breaking = await rig((occ) => (occ.anchor === 'post' ? { ...NONE, decision: 'transform', content: (occ.content ?? '').replace('"sk-1"', '[R]') } : NONE));
    await breaking.client.send(call(3, 'read'));
    await breaking.settle();
    await breaking.server.send({ jsonrpc: '2.0', id: 3, result: secret });
    await breaking.settle();
    expect(breaking.atClient).toEqual([
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: '[oarc] Tool result withheld: a rule transformed the read result, but the transformed structuredContent is no longer the canonical JSON of a value' }], isError: true } },
    ]);
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

  it('passes a JSON-RPC error answering a call through', async () => {
    const r = await rig(() => NONE);
    await r.client.send(call(4));
    await r.settle();
    await r.server.send({ jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'unknown tool' } });
    await r.settle();
    expect(r.atServer).toEqual([call(4)]);
    expect(r.atClient).toEqual([{ jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'unknown tool' } }]);
    expect(r.asked).toHaveLength(1);
  });

  it('forwards an allowed call as the message decided on when it has no line (re-serialised)', async () => {
    const r = await rig(() => NONE);
    expect(r.proxy.forwarding).toBe('reserialised');
    const m = call(6, 'read', { path: '/a', nested: { deep: [1, 'two'] } });
    await r.client.send(m);
    await r.settle();
    expect(r.atServer).toEqual([m]);
    expect(r.asked[0]?.toolCall).toEqual({ name: 'read', arguments: { path: '/a', nested: { deep: [1, 'two'] } } });
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

describe('request ids: a response is matched to the one request it answers', () => {
  const error = (id: number | string | undefined, code: number, message: string) => ({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), error: { code, message } });
  const call = (id: number | string, args: Record<string, unknown> = { path: '/a' }): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read', arguments: args } });
  const redact = (occ: Occurrence): Decided & { content?: string } => (occ.anchor === 'post' ? { ...NONE, decision: 'transform', content: (occ.content ?? '').replace('sk-1', '[R]') } : NONE);

  it('refuses a request whose id is that of a tools/call in flight; the real result is decided', async () => {
    const r = await rig(redact);
    await r.client.send(call(7));
    await r.client.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
    await r.settle();
    expect(r.atServer).toEqual([call(7)]);
    expect(r.atClient).toEqual([error(7, -32600, 'invalid request: id 7 is already the id of a tools/call request the server has not answered, and the two responses could not be told apart')]);
    await r.server.send({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'key sk-1' }] } });
    await r.settle();
    expect(r.atClient[1]).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'key [R]' }] } });
    // Answered: the id is free again.
    await r.client.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
    await r.settle();
    expect(r.atServer).toEqual([call(7), { jsonrpc: '2.0', id: 7, method: 'ping' }]);
  });

  it('refuses a tools/call whose id is that of any request in flight, before deciding it', async () => {
    const r = await rig(redact);
    await r.client.send({ jsonrpc: '2.0', id: 'x', method: 'resources/read', params: { uri: 'file:///a' } });
    await r.client.send(call('x'));
    await r.client.send(call(3));
    await r.client.send(call(3, { path: '/b' }));
    await r.settle();
    expect(r.atServer).toEqual([{ jsonrpc: '2.0', id: 'x', method: 'resources/read', params: { uri: 'file:///a' } }, call(3)]);
    expect(r.asked).toHaveLength(1);
    expect(r.atClient).toEqual([
      error('x', -32600, 'invalid tools/call request: id "x" is already the id of a resources/read request the server has not answered, and the two responses could not be told apart'),
      error(3, -32600, 'invalid tools/call request: id 3 is already the id of a tools/call request the server has not answered, and the two responses could not be told apart'),
    ]);
  });

  it('keeps string and number ids apart', async () => {
    const r = await rig(redact);
    await r.client.send(call(5));
    await r.client.send({ jsonrpc: '2.0', id: '5', method: 'ping' });
    await r.settle();
    await r.server.send({ jsonrpc: '2.0', id: '5', result: {} });
    await r.server.send({ jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'sk-1' }] } });
    await r.settle();
    expect(r.atServer).toHaveLength(2);
    expect(r.atClient).toEqual([{ jsonrpc: '2.0', id: '5', result: {} }, { jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: '[R]' }] } }]);
  });

  it('refuses a tools/call whose numeric id is not a safe integer, answering without an id', async () => {
    const l = fakeLines();
    const r = await rig(redact, l.lines);
    // 9007199254740993 is 9007199254740992 to JSON.parse (the SDK's reader), not to a Python server.
    await r.client.send(l.parse('{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"read","arguments":{}}}'));
    await r.settle();
    const r2 = await rig(redact);
    await r2.client.send(call(1e300));
    await r2.settle();
    expect(l.sent).toEqual([]);
    expect(r2.atServer).toEqual([]);
    expect(r.asked).toEqual([]);
    const why = 'an integer beyond ±(2^53−1), which JSON readers round: the proxy could not tell the response to this call from the response to another request';
    expect(r.atClient).toEqual([error(undefined, -32600, `invalid tools/call request: id 9007199254740993 is ${why}`)]);
    expect(r2.atClient).toEqual([error(undefined, -32600, `invalid tools/call request: id ${String(1e300)} is ${why}`)]);
  });

  it('drops a response from the server that answers no request in flight (a second result, say), and says so', async () => {
    const r = await rig(redact);
    await r.client.send(call(1));
    await r.settle();
    await r.server.send({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'sk-1' }] } });
    await r.server.send({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'sk-1' }] } });
    await r.server.send({ jsonrpc: '2.0', id: 99, result: {} });
    await r.settle();
    expect(r.atClient).toEqual([{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '[R]' }] } }]);
    expect(r.said).toEqual(['dropped a response from the server with id 1, which answers no request in flight', 'dropped a response from the server with id 99, which answers no request in flight']);
  });
});

describe('a tools/call that cannot be decided is never forwarded', () => {
  const error = (id: number | undefined, code: number, message: string) => ({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), error: { code, message } });
  const P = 'invalid tools/call params: ';
  const R = 'invalid tools/call request: ';

  it('answers a malformed call with -32602 (params) or -32600 (envelope), naming what is wrong', async () => {
    const cases: [Record<string, unknown>, ReturnType<typeof error>][] = [
      [{ id: 1 }, error(1, -32602, `${P}params is missing: a tools/call needs params.name, the name of the tool`)],
      [{ id: 2, params: 'x' }, error(2, -32602, `${P}params must be an object, not a string`)],
      [{ id: 3, params: [] }, error(3, -32602, `${P}params must be an object, not an array`)],
      [{ id: 4, params: { arguments: {} } }, error(4, -32602, `${P}params.name is missing: the name of the tool to call`)],
      [{ id: 5, params: { name: 7 } }, error(5, -32602, `${P}params.name must be a string, not a number`)],
      [{ id: 6, params: { name: null } }, error(6, -32602, `${P}params.name must be a string, not null`)],
      [{ id: 7, params: { name: '' } }, error(7, -32602, `${P}params.name must name a tool, not be the empty string`)],
      [{ id: 8, params: { name: 'write', arguments: 'not an object' } }, error(8, -32602, `${P}params.arguments must be an object, not a string`)],
      [{ id: 9, params: { name: 'write', arguments: ['/x'] } }, error(9, -32602, `${P}params.arguments must be an object, not an array`)],
      [{ id: 10, params: { name: 'write', arguments: null } }, error(10, -32602, `${P}params.arguments must be an object, not null`)],
      [{ id: 11, params: { name: 'write', _meta: 5 } }, error(11, -32602, `${P}params._meta must be an object, not a number`)],
      [{ id: 12, jsonrpc: '1.0', params: { name: 'write' } }, error(12, -32600, `${R}jsonrpc must be "2.0", not "1.0"`)],
      [{ id: null, params: { name: 'write' } }, error(undefined, -32600, `${R}id must be a string or an integer, not null`)],
      [{ id: 1.5, params: { name: 'write' } }, error(undefined, -32600, `${R}id must be a string or an integer, not 1.5`)],
      [{ id: 13, params: { name: 'write' }, extra: true }, error(13, -32600, `${R}a JSON-RPC request has no member "extra"`)],
      // A task-augmented call's result comes through tasks/result, which the proxy never decides.
      [{ id: 14, params: { name: 'read', arguments: {}, task: { ttl: 60000 } } }, error(14, -32602, `${P}params.task asks for a task-augmented call, whose result comes back through tasks/result, which oarc does not decide: the result would reach the client undecided, so the call is not forwarded`)],
      [{ id: 15, params: { name: 'read', arguments: {}, cwd: '/', env: {} } }, error(15, -32602, `${P}params has members "cwd", "env" besides name, arguments and _meta, which no rule reads and the server might act on`)],
    ];
    const r = await rig(() => NONE);
    for (const [m] of cases) await r.client.send({ jsonrpc: '2.0', method: 'tools/call', ...m } as JSONRPCMessage);
    await r.settle();
    expect(r.atServer).toEqual([]);
    expect(r.asked).toEqual([]);
    expect(r.atClient).toEqual(cases.map(([, e]) => e));
    // And each is said, with --verbose.
    expect(r.said).toHaveLength(cases.length);
    expect(r.said[0]).toBe(`refused (not forwarded), error -32602: ${P}params is missing: a tools/call needs params.name, the name of the tool`);
  });

  it('drops a tools/call sent as a notification, and says so', async () => {
    const r = await rig(() => NONE);
    await r.client.send({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'write', arguments: { path: '/x' } } });
    await r.settle();
    expect(r.atServer).toEqual([]);
    expect(r.atClient).toEqual([]);
    expect(r.asked).toEqual([]);
    expect(r.said).toEqual(['dropped a tools/call sent as a notification (no id) cannot be answered, so it is not forwarded']);
  });

  it('forwards an allowed call as the client\'s line, byte for byte, when it has the line', async () => {
    const l = fakeLines();
    const r = await rig(() => NONE, l.lines);
    expect(r.proxy.forwarding).toBe('lines');
    const line = '{ "jsonrpc":"2.0", "method" : "tools/call","id":7,"params":{"arguments":{"path":"/w/caf\\u00e9 \\"q\\"","n":1.50},"name":"read"}}';
    await r.client.send(l.parse(line));
    // Not a tools/call: re-serialised as before, even with a line (written by the same writer).
    await r.client.send(l.parse('{"jsonrpc":"2.0","id":8,"method":"tools/list"}'));
    await r.settle();
    expect(l.sent).toEqual([line, '{"jsonrpc":"2.0","id":8,"method":"tools/list"}']);
    expect(r.atServer).toEqual([]);
    expect(r.asked[0]?.toolCall).toEqual({ name: 'read', arguments: { path: '/w/café "q"', n: 1.5 } });
  });

  it('forwards an allowed call holding raw line breaks as one line no server splits, the same JSON value [OAR-PROF-10]', async () => {
    const l = fakeLines();
    const r = await rig((occ) => (occ.toolCall?.name === 'write_file' ? { decision: 'block', rule: 'ns/W', copy: null, advisories: [] } : NONE), l.lines);
    // A raw CR is JSON whitespace: a universal-newline reader (Python's TextIOWrapper, Node's
    // readline) would run the write_file call between the two as a message of its own.
    const inner = '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/tmp/evil.txt","content":"x"}}}';
    const smuggling = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_text_file","arguments":{"a":\r${inner}\r}}}`;
    // U+0085, U+2028, U+2029 raw inside strings (TS escapes: the JSON text holds the characters), where str.splitlines breaks a line.
    const separators = '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/a\u2028b","t":"x\u0085y\u2029z"}}}';
    for (const line of [smuggling, separators]) await r.client.send(l.parse(line));
    await r.settle();
    expect(l.sent).toHaveLength(2);
    for (const [i, original] of [smuggling, separators].entries()) {
      const sent = l.sent[i] as string;
      expect(sent).not.toMatch(/[\r\n\u0085\u2028\u2029]/);
      // The same value: only the spelling of whitespace and of three characters in strings changed.
      expect(JSON.parse(sent)).toEqual(JSON.parse(original));
    }
    expect(l.sent[0]).toBe(smuggling.replaceAll('\r', ' '));
    expect(l.sent[1]).toContain('"/w/a\\u2028b"');
    expect(r.asked.map((o) => o.toolCall?.name)).toEqual(['read_text_file', 'read_text_file']);
  });

  it('writes every other message re-serialised with U+0085, U+2028, U+2029 escaped', async () => {
    const l = fakeLines();
    const r = await rig(() => NONE, l.lines);
    await r.client.send(l.parse('{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a\u2028b\u0085c\u2029d"}}'));
    await r.client.send({ jsonrpc: '2.0', method: 'notifications/x', params: { s: 'a\u2028{}' } } as JSONRPCMessage);
    await r.settle();
    expect(l.sent).toEqual([
      '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a\\u2028b\\u0085c\\u2029d"}}',
      '{"jsonrpc":"2.0","method":"notifications/x","params":{"s":"a\\u2028{}"}}',
    ]);
    expect(JSON.parse(l.sent[0] as string)).toEqual({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///a\u2028b\u0085c\u2029d' } });
  });

  it('refuses, when the transport writes it, a message whose JSON would hold a raw line break', async () => {
    const r = await rig(() => NONE);
    await r.client.send({ jsonrpc: '2.0', id: 1, method: 'ping', params: { x: 'a\u2028b' } } as JSONRPCMessage);
    await r.client.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: { p: 'a\u0085b' } } } as JSONRPCMessage);
    await r.client.send({ jsonrpc: '2.0', method: 'notifications/x', params: { x: '\u2029' } } as JSONRPCMessage);
    await r.settle();
    expect(r.atServer).toEqual([]);
    expect(r.asked).toEqual([]);
    expect(r.atClient).toEqual([
      error(1, -32600, 'invalid request: it holds a raw U+2028 (LINE SEPARATOR), which some servers read as the end of a line, and this transport cannot write it escaped'),
      error(2, -32600, 'invalid request: it holds a raw U+0085 (NEXT LINE), which some servers read as the end of a line, and this transport cannot write it escaped'),
    ]);
    expect(r.said).toContain('dropped a notifications/x notification from the client (invalid request: it holds a raw U+2029 (PARAGRAPH SEPARATOR), which some servers read as the end of a line, and this transport cannot write it escaped)');
  });

  it('refuses a call with a member name written twice, or in two cases: -32600 in the envelope, -32602 in params', async () => {
    const l = fakeLines();
    const r = await rig(() => NONE, l.lines);
    const twice = '(JSON readers differ on which one counts, so the call could be decided on one and run on the other)';
    const cased = "names that differ only in case (Go's encoding/json, as mcp-go uses it, matches member names regardless of case and keeps the last, so the call could be decided on one and run on the other)";
    const lines: [string, ReturnType<typeof error>][] = [
      ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"safe","name":"rm"}}', error(1, -32602, `${P}two members named "name" in params ${twice}`)],
      ['{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"safe","n\\u0061me":"rm"}}', error(2, -32602, `${P}two members named "name" in params ${twice}`)],
      ['{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"w","arguments":{"path":"/ok"},"arguments":{"path":"/etc"}}}', error(3, -32602, `${P}two members named "arguments" in params ${twice}`)],
      ['{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"w","arguments":{"o":{"path":"/ok","p\\u0061th":"/etc"}}}}', error(4, -32602, `${P}two members named "path" in params.arguments.o ${twice}`)],
      ['{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"w"},"params":{"name":"rm"}}', error(5, -32600, `${R}two members named "params" ${twice}`)],
      // Which request a repeated id answers is itself in doubt: the error carries none.
      ['{"jsonrpc":"2.0","id":6,"id":7,"method":"tools/call","params":{"name":"w"}}', error(undefined, -32600, `${R}two members named "id" ${twice}`)],
      // Names that differ only in case are one to Go's encoding/json (the last wins), at every level.
      ['{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"w","arguments":{"path":"/ok","PATH":"/etc"}}}', error(8, -32602, `${P}two members named "path" and "PATH" in params.arguments, ${cased}`)],
      ['{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read","arguments":{},"Name":"rm"}}', error(9, -32602, `${P}two members named "name" and "Name" in params, ${cased}`)],
      ['{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"w","arguments":{"\u212aey":"/etc","key":"/ok"}}}', error(10, -32602, `${P}two members named "\u212aey" and "key" in params.arguments, ${cased}`)],
      ['{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"w"},"Params":{"name":"rm"}}', error(11, -32600, `${R}two members named "params" and "Params", ${cased}`)],
      ['{"jsonrpc":"2.0","id":12,"ID":13,"method":"tools/call","params":{"name":"w"}}', error(undefined, -32600, `${R}two members named "id" and "ID", ${cased}`)],
    ];
    for (const [line] of lines) await r.client.send(l.parse(line));
    await r.settle();
    expect(l.sent).toEqual([]);
    expect(r.atServer).toEqual([]);
    expect(r.asked).toEqual([]);
    expect(r.atClient).toEqual(lines.map(([, e]) => e));
  });

  it('reads the call\'s numbers exactly, as the server does: int64 beyond 2^53 as bigint; refuses non-finite and beyond-int64 [OAR-FACT-23]', async () => {
    const l = fakeLines();
    const r = await rig(() => NONE, l.lines);
    const exact = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pay","arguments":{"amount":9223372036854775807,"n":[-9007199254740993,2.50]}}}';
    await r.client.send(l.parse(exact));
    await r.client.send(l.parse('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pay","arguments":{"amount":1e400}}}'));
    await r.client.send(l.parse('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pay","arguments":{"x":{"y":[1,-9223372036854775809]}}}}'));
    await r.client.send(l.parse(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"pay","arguments":${'['.repeat(300)}${']'.repeat(300)}}}`));
    await r.settle();
    expect(r.asked.map((o) => o.toolCall)).toEqual([{ name: 'pay', arguments: { amount: 9223372036854775807n, n: [-9007199254740993n, 2.5] } }]);
    expect(l.sent).toEqual([exact]);
    expect(r.atClient).toEqual([
      error(2, -32602, `${P}they cannot be read exactly as a server reads them: number 1e400 is not a finite binary64 value, which a server reads as infinity [OAR-FACT-23]`),
      error(3, -32602, `${P}params.arguments.x.y[1] is -9223372036854775809, an integer beyond the 64-bit range of an OAR int [OAR-FACT-23]: tool_arg_int would read it as zero while the server reads the number`),
      error(4, -32602, `${P}they cannot be read exactly as a server reads them: document nests deeper than 256 levels; it was not parsed`),
    ]);
  });

  it('refuses a call the SDK\'s schema refused even when its own checks pass', async () => {
    const l = fakeLines();
    const r = await rig(() => NONE, l.lines);
    await r.client.send(l.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w","_meta":{"progressToken":{}}}}', true));
    await r.settle();
    expect(l.sent).toEqual([]);
    expect(r.atClient).toEqual([error(1, -32602, `${P}the MCP schema does not accept them`)]);
  });

  it('answers, with -32600 and one line of why, a request of any method the SDK\'s schema refused', async () => {
    const l = fakeLines();
    const r = await rig(() => NONE, l.lines);
    const m = l.parse('{"jsonrpc":"2.0","id":5,"method":"ping","Method":"tools/call"}', true);
    l.lines.lineOf(m)!.problem = 'Unrecognized key: "Method"';
    await r.client.send(m);
    await r.settle();
    expect(l.sent).toEqual([]);
    expect(r.atClient).toEqual([error(5, -32600, 'invalid request: the MCP schema does not accept this ping request: Unrecognized key: "Method"')]);
    expect(r.said).toEqual(['refused (not forwarded), error -32600: invalid request: the MCP schema does not accept this ping request: Unrecognized key: "Method"']);
  });

  it('reads the call from its line, not from the object the transport parsed', async () => {
    // A transport that handed over an object unlike its line (a schema stripping a member, say):
    // the decision reads what the server will read.
    const l = fakeLines();
    const r = await rig(() => NONE, l.lines);
    const m = l.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm","arguments":{"path":"/etc"}}}');
    (m as unknown as { params: { name: string } }).params.name = 'safe';
    await r.client.send(m);
    await r.settle();
    expect(r.asked[0]?.toolCall).toEqual({ name: 'rm', arguments: { path: '/etc' } });
  });
});
