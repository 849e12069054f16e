/**
 * The line taps on the SDK's own stdio transports (mcp/lines.ts): the reader that replaces the
 * server transport's keeps each message's line and reads as the SDK's does; the writer writes a
 * line to the client transport's child; both say undefined on a transport without those members.
 */
import { PassThrough } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { serverLineWriter, tapClientLines } from '../../mcp/lines.js';

describe('tapClientLines', () => {
  it('keeps the line of each message an SDK stdio server transport reads', async () => {
    const stdin = new PassThrough();
    const t = new StdioServerTransport(stdin, new PassThrough());
    const lineOf = tapClientLines(t, deserializeMessage);
    expect(lineOf).toBeDefined();
    const got: JSONRPCMessage[] = [];
    const errors: string[] = [];
    t.onmessage = (m) => got.push(m);
    t.onerror = (e) => errors.push(e.message);
    await t.start();
    const call = '{"jsonrpc":"2.0", "id":1,"method":"tools/call","params":{"name":"n\\u0061me","arguments":{}}}';
    const list = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}';
    // Split across chunks, with a CRLF, as a pipe may deliver them.
    stdin.write(call.slice(0, 20));
    stdin.write(`${call.slice(20)}\r\n${list}\n`);
    // The SDK's schema refuses these: a tools/call, or a request with an id, is passed on, marked,
    // to be answered; anything else is reported, in one line.
    const badCall = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}';
    const badList = '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":"x"}';
    const extra = '{"jsonrpc":"2.0","id":"p","method":"ping","Method":"x"}';
    stdin.write(`${badCall}\n${badList}\n${extra}\nnot json\n{"jsonrpc":"2.0","method":"notifications/x","Method":"x"}\n{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","Method":"x"}\n`);
    await new Promise((r) => setImmediate(r));
    expect(got.map((m) => ('id' in m ? m.id : undefined))).toEqual([1, 2, 3, 4, 'p']);
    expect(got.map((m) => lineOf?.(m))).toEqual([
      { line: call, refused: false },
      { line: list, refused: false },
      { line: badCall, refused: true, problem: 'params: Invalid input: expected object, received string' },
      { line: badList, refused: true, problem: 'params: Invalid input: expected object, received string' },
      { line: extra, refused: true, problem: 'Unrecognized key: "Method"' },
    ]);
    // The schema still ran on what it accepts (the same message the SDK's own reader gives).
    expect(got[0]).toEqual(deserializeMessage(call));
    expect(errors).toEqual([
      `dropped a line that is not JSON: Unexpected token 'o', "not json" is not valid JSON`,
      'dropped a message the MCP schema does not accept, with no id to answer it by: Unrecognized key: "Method"',
      // An id no answer can carry exactly is no id to answer by.
      'dropped a message the MCP schema does not accept, with no id to answer it by: Unrecognized keys: "id", "Method"',
    ]);
    expect(lineOf?.({})).toBeUndefined();
  });

  it('keeps the SDK reader\'s size limit', async () => {
    const stdin = new PassThrough();
    const t = new StdioServerTransport(stdin, new PassThrough(), { maxBufferSize: 64 });
    tapClientLines(t, deserializeMessage);
    const errors: string[] = [];
    t.onerror = (e) => errors.push(e.message);
    await t.start();
    stdin.write('x'.repeat(100));
    await new Promise((r) => setImmediate(r));
    expect(errors).toEqual(['ReadBuffer exceeded maximum size of 64 bytes']);
  });

  it('says undefined for a transport without the SDK stdio reader', () => {
    const [a] = InMemoryTransport.createLinkedPair();
    expect(tapClientLines(a, deserializeMessage)).toBeUndefined();
  });
});

describe('serverLineWriter', () => {
  it('writes a line to the child of a started SDK stdio client transport, and not after it closed', async () => {
    const t = new StdioClientTransport({ command: process.execPath, args: ['-e', 'process.stdin.pipe(process.stdout)'], stderr: 'ignore' });
    // Before it starts there is no child to write to.
    expect(serverLineWriter(t)).toBeUndefined();
    const echoed: JSONRPCMessage[] = [];
    const back = new Promise<void>((resolve) => {
      t.onmessage = (m) => {
        echoed.push(m);
        resolve();
      };
    });
    await t.start();
    const write = serverLineWriter(t);
    expect(write).toBeDefined();
    await write?.('{"jsonrpc":"2.0","method":"x/echo","params":{"a":1}}');
    await back;
    expect(echoed).toEqual([{ jsonrpc: '2.0', method: 'x/echo', params: { a: 1 } }]);
    await t.close();
    await expect(write?.('{}')).rejects.toThrow('Not connected');
  });

  it('says undefined for a transport without a child', () => {
    const [a] = InMemoryTransport.createLinkedPair();
    expect(serverLineWriter(a)).toBeUndefined();
  });
});
