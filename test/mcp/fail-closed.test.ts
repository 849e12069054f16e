/**
 * The built `oarc mcp` in front of a fake server that records every byte it receives
 * (fake-server.mjs), driven with raw JSON-RPC lines on stdin: a call that is refused, malformed,
 * repeats a member name or is sent as a notification never reaches the server; an allowed call
 * arrives as the very line the client wrote.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { CLI, PACK, sandbox } from './support.js';

const FAKE = join(import.meta.dirname, 'fake-server.mjs');

beforeAll(() => ensureBuilt(['bin', 'compiler', 'runtime', 'packtest', 'serve', 'mcp', 'injection']));

const init = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}';
// Spacing, member order, escapes and numbers a re-serialisation would not keep: 1.50, a
// 2^60, an int64 with an exact binary64 value (so it has a fingerprint, [OAR-FACT-28]) that
// JSON.stringify writes 1152921504606847000, `\u00e9`, `\/`.
const allowedRead = '{ "jsonrpc" : "2.0", "method":"tools/call", "id" : 10, "params":{ "arguments" : {"path":"/w/caf\\u00e9 \\"q\\" a\\/b", "n": 1.50, "big": 1152921504606846976}, "name":"read_text_file" } }';
const allowedWrite = '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/w/inside.txt","content":"ok"}}}';
// An allowed read wrapping, between raw CRs (JSON whitespace), a write the pack blocks: a reader
// splitting at a lone CR (the fake server does, as Python's does) would run the write.
const smuggledWrite = '{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/etc/passwd","content":"x"}}}';
const smuggling = `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"read_text_file","arguments":{"a":\r${smuggledWrite}\r}}}`;
// Raw U+2028, U+2029, U+0085 inside strings, where str.splitlines breaks a line.
const separators = '{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/a\u2028b\u2029c\u0085d"}}}';
// A secret only in the result's structuredContent, under a text saying "done".
const structuredSecret = '{"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/k","structuredContent":{"key":"sk-demo0123456789abcdefgh","n":1}}}}';
// Not a tools/call, but refused by the SDK's schema: answered, not left waiting.
const schemaRefused = '{"jsonrpc":"2.0","id":38,"method":"ping","Method":"tools/call"}';
/** How the fake server splits what it receives. */
const BREAK = /\r\n|[\n\r\u0085\u2028\u2029]/;
const P = 'invalid tools/call params: ';
const R = 'invalid tools/call request: ';
const TWICE = '(JSON readers differ on which one counts, so the call could be decided on one and run on the other)';
const CASED = "names that differ only in case (Go's encoding/json, as mcp-go uses it, matches member names regardless of case and keeps the last, so the call could be decided on one and run on the other)";

/** Lines the server must never see, each with the error the client gets back (undefined: no answer). */
const refused: [string, number | undefined, number | undefined, string | undefined][] = [
  ['{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/etc/passwd","content":"x"}}}', 20, undefined, undefined],
  ['{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"read_text_file","n\\u0061me":"write_file","arguments":{"path":"/etc/passwd","content":"x"}}}', 21, -32602, `${P}two members named "name" in params ${TWICE}`],
  ['{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/w/a"},"arguments":{"path":"/etc/passwd"}}}', 22, -32602, `${P}two members named "arguments" in params ${TWICE}`],
  ['{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/w/a","content":"x","path":"/etc/passwd"}}}', 23, -32602, `${P}two members named "path" in params.arguments ${TWICE}`],
  ['{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"read_text_file"},"params":{"name":"write_file"}}', 24, -32600, `${R}two members named "params" ${TWICE}`],
  // Differing only in case: one name to a Go server (encoding/json), which would write /etc/passwd.
  ['{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/w/a","content":"x","PATH":"/etc/passwd"}}}', 34, -32602, `${P}two members named "path" and "PATH" in params.arguments, ${CASED}`],
  ['{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/a"},"Name":"write_file"}}', 35, -32602, `${P}two members named "name" and "Name" in params, ${CASED}`],
  // Task-augmented (MCP 2025-11-25): the result would come through tasks/result, never decided.
  ['{"jsonrpc":"2.0","id":36,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/.env"},"task":{"ttl":60000}}}', 36, -32602, `${P}params.task asks for a task-augmented call, whose result comes back through tasks/result, which oarc does not decide: the result would reach the client undecided, so the call is not forwarded`],
  ['{"jsonrpc":"2.0","id":25,"method":"tools/call"}', 25, -32602, `${P}params is missing: a tools/call needs params.name, the name of the tool`],
  ['{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":["write_file"]}}', 26, -32602, `${P}params.name must be a string, not an array`],
  ['{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"write_file","arguments":["/etc/passwd"]}}', 27, -32602, `${P}params.arguments must be an object, not an array`],
  // The SDK's own schema refuses this one; the proxy still answers it.
  ['{"jsonrpc":"2.0","id":28,"method":"tools/call","params":"write_file"}', 28, -32602, `${P}params must be an object, not a string`],
  ['{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/w/a"}},"extra":1}', 29, -32600, `${R}a JSON-RPC request has no member "extra"`],
  // A notification: nobody to answer, and not forwarded.
  ['{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_file","arguments":{"path":"/w/n.txt","content":"x"}}}', undefined, undefined, undefined],
];

describe('oarc mcp fails closed', () => {
  it('forwards only what it decided to allow, byte for byte, and answers or drops the rest', () => {
    const box = sandbox();
    const record = join(box.root, 'received.jsonl');
    try {
      const input = [init, '{"jsonrpc":"2.0","method":"notifications/initialized"}', allowedRead, ...refused.map((r) => r[0]), allowedWrite, '{"jsonrpc":"2.0","id":30,"method":"tools/list"}', smuggling, separators, structuredSecret, schemaRefused];
      const r = spawnSync(process.execPath, [CLI, 'mcp', ...PACK, '--fact', 'oarc.mcp.workspace=/w/', '--verbose', '--', process.execPath, FAKE, record], {
        encoding: 'utf8',
        timeout: 30_000,
        input: `${input.join('\n')}\n`,
        env: { ...process.env, NO_COLOR: '1' },
      });
      expect(r.status, r.stderr).toBe(0);
      // Which path ran: the client's lines, reached through the SDK transports' members (mcp/lines.ts).
      expect(r.stderr).toContain('oarc mcp: forwarding each allowed tools/call as the line the client wrote');

      const received = readFileSync(record, 'utf8').split(BREAK).filter(Boolean);
      const calls = received.filter((l) => (JSON.parse(l) as { method?: string }).method === 'tools/call');
      // The allowed calls, as the client wrote them — but for the line breaks a server could split
      // at, respelled with the same value [OAR-PROF-10]; nothing else that was a tools/call.
      expect(calls).toEqual([allowedRead, allowedWrite, smuggling.replaceAll('\r', ' '), '{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/a\\u2028b\\u2029c\\u0085d"}}}', structuredSecret]);
      expect(JSON.parse(calls[3] as string)).toEqual(JSON.parse(separators));
      expect(received.map((l) => (JSON.parse(l) as { method?: string }).method)).toEqual(['initialize', 'notifications/initialized', 'tools/call', 'tools/call', 'tools/list', 'tools/call', 'tools/call', 'tools/call']);

      const out = new Map(
        r.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { id?: number; result?: { content: { text: string }[]; isError?: boolean }; error?: { code: number; message: string } })
          .map((m) => [m.id, m]),
      );
      expect([...out.keys()].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([1, 10, 11, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 33, 34, 35, 36, 37, 38]);
      // The server ran the read the pack decided, with the write inside it as an argument, not as a call.
      expect(JSON.parse(out.get(31)?.result?.content[0]?.text ?? '')).toEqual({ name: 'read_text_file', arguments: { a: JSON.parse(smuggledWrite) } });
      expect(JSON.parse(out.get(33)?.result?.content[0]?.text ?? '')).toEqual({ name: 'read_text_file', arguments: { path: '/w/a\u2028b\u2029c\u0085d' } });
      // The server read the allowed call as the pack did (the fake echoes what it parsed).
      expect(JSON.parse(out.get(10)?.result?.content[0]?.text ?? '')).toEqual({ name: 'read_text_file', arguments: JSON.parse(allowedRead).params.arguments });
      expect(out.get(38)?.error).toEqual({ code: -32600, message: 'invalid request: the MCP schema does not accept this ping request: Unrecognized key: "Method"' });
      // Said in one line, not the schema's issue tree.
      expect(r.stderr).toContain('oarc mcp: refused (not forwarded), error -32600: invalid request: the MCP schema does not accept this ping request: Unrecognized key: "Method"\n');
      expect(r.stderr).not.toContain('invalid_union');
      // The secret only in structuredContent is redacted there too [OAR-PROF-10].
      expect(out.get(37)?.result).toEqual({ content: [{ type: 'text', text: 'done' }], structuredContent: { key: '[REDACTED SECRET]', n: 1 } });
      // A pack block is a tool error result; the others are JSON-RPC errors naming what is wrong.
      expect(out.get(20)?.result?.isError).toBe(true);
      expect(out.get(20)?.result?.content[0]?.text).toContain('Tool call blocked by rule oarc.mcp.fs/WRITE_OUTSIDE_WORKSPACE');
      for (const [, id, code, message] of refused) {
        if (id === undefined || code === undefined) continue;
        expect(out.get(id)?.error, `id ${id}`).toEqual({ code, message });
      }
      expect(r.stderr).toContain(`oarc mcp: refused (not forwarded), error -32602: ${P}two members named "name" in params`);
      expect(r.stderr).toContain('oarc mcp: dropped a tools/call sent as a notification (no id) cannot be answered, so it is not forwarded');
    } finally {
      rmSync(box.root, { recursive: true, force: true });
    }
  });
});
