/**
 * Numbers in a tools/call are read for the decision as exactly as a server reads them
 * ([OAR-FACT-23]): the built `oarc mcp` with a pack reading `tool_arg_int` and counting by
 * `tool_args_fingerprint` ([OAR-FACT-28]), in front of the recording fake server.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { CLI, sandbox } from './support.js';

const FAKE = join(import.meta.dirname, 'fake-server.mjs');

beforeAll(() => ensureBuilt(['bin', 'compiler', 'runtime', 'packtest', 'serve', 'mcp', 'injection']));

const CAPABILITY = `oar_capability_version: "1.0"
host: oarc.mcp
anchors:
  core: { tool.pre_invoke: tool.pre_invoke, tool.post_invoke: tool.post_invoke }
  unsupported: [tool.handler, agent.post_turn, agent.finalize, model.input, model.output, model.tool_result]
  host: []
profiles: [tool]
activity_window: 16
supports_transform: true
expression_nodes_max: 1024
`;
const RULES = `oar: "1.0"
id: BIG_PAYMENT
namespace: t.pay
kind: policy
anchor: tool.pre_invoke
selector: { tool: [ pay ] }
requires: { profiles: [ tool ] }
when: 'tool_arg_int("amount") > 1000'
effect: block
copy: { what: 'too big' }
---
oar: "1.0"
id: COUNT_NOTES
namespace: t.pay
kind: invariant
anchor: tool.pre_invoke
selector: { tool: [ note ] }
requires: { profiles: [ tool ] }
counter_scope: tool_args_fingerprint
effect: allow
on_fire: [ increment_counter ]
`;

const call = (id: number, name: string, args: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;

describe('oarc mcp reads a call\'s numbers exactly [OAR-FACT-23]', () => {
  it('decides int64 amounts on their exact value, refuses what no OAR number holds, and fails closed on a fingerprint binary64 cannot carry', () => {
    const box = sandbox();
    const record = join(box.root, 'received.jsonl');
    const log = join(box.root, 'decisions.jsonl');
    try {
      writeFileSync(join(box.root, 'cap.yaml'), CAPABILITY);
      writeFileSync(join(box.root, 'rules.yaml'), RULES);
      const input = [
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
        // JSON.parse reads 9223372036854775808, beyond int64: tool_arg_int read 0 and the rule did not fire.
        call(2, 'pay', '{"amount":9223372036854775807}'),
        call(3, 'pay', '{"amount":5000.0}'),
        call(4, 'pay', '{"amount":12345678901234567890}'),
        call(5, 'pay', '{"amount":1e400}'),
        call(6, 'pay', '{"amount":1e19}'),
        call(7, 'pay', '{"amount":-9223372036854775808}'),
        // An int with no exact binary64 value: its fingerprint cannot be made, a provider failure [OAR-FACT-28].
        call(8, 'note', '{"n":9007199254740993}'),
        // 2^62 has one: fingerprinted and forwarded.
        call(9, 'note', '{"n":4611686018427387904}'),
        call(10, 'pay', '{"amount":7}'),
      ];
      const r = spawnSync(process.execPath, [CLI, 'mcp', join(box.root, 'rules.yaml'), '--capability', join(box.root, 'cap.yaml'), '--decision-log', log, '--', process.execPath, FAKE, record], {
        encoding: 'utf8',
        timeout: 30_000,
        input: `${input.join('\n')}\n`,
        env: { ...process.env, NO_COLOR: '1' },
      });
      expect(r.status, r.stderr).toBe(0);
      const out = new Map(
        r.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { id: number; result?: { content: { text: string }[]; isError?: boolean }; error?: { code: number; message: string } })
          .map((m) => [m.id, m]),
      );
      const blockedBy = (id: number) => out.get(id)?.result?.content[0]?.text;
      expect(blockedBy(2)).toBe('[oarc] Tool call blocked by rule t.pay/BIG_PAYMENT.\ntoo big');
      expect(blockedBy(3)).toBe('[oarc] Tool call blocked by rule t.pay/BIG_PAYMENT.\ntoo big');
      expect(out.get(4)?.error).toEqual({
        code: -32602,
        message: 'invalid tools/call params: params.arguments.amount is 12345678901234567890, an integer beyond the 64-bit range of an OAR int [OAR-FACT-23]: tool_arg_int would read it as zero while the server reads the number',
      });
      expect(out.get(5)?.error).toEqual({ code: -32602, message: 'invalid tools/call params: they cannot be read exactly as a server reads them: number 1e400 is not a finite binary64 value, which a server reads as infinity [OAR-FACT-23]' });
      expect(out.get(6)?.error?.message).toContain('params.arguments.amount is 10000000000000000000, an integer beyond the 64-bit range');
      // The least int64 is an int like any other: below 1000, not blocked, forwarded.
      expect(out.get(7)?.result?.isError).toBeUndefined();
      expect(blockedBy(8)).toBe('[oarc] Tool call blocked by rule t.pay/COUNT_NOTES.');
      expect(out.get(9)?.result?.isError).toBeUndefined();
      expect(out.get(10)?.result?.isError).toBeUndefined();

      const received = readFileSync(record, 'utf8').split('\n').filter(Boolean);
      expect(received.filter((l) => l.includes('tools/call'))).toEqual([input[6], input[8], input[9]]);

      // The decision log holds the exact amount the decision read (not a dropped line).
      let text = '';
      for (let i = 0; i < 50 && !text.includes('"n":4611686018427387904'); i++) {
        text = existsSync(log) ? readFileSync(log, 'utf8') : '';
        spawnSync('sleep', ['0.1']);
      }
      expect(text).toContain('"arguments":{"amount":9223372036854775807}');
      expect(text).toContain('"errored","error":{"code":"provider_failure"');
      expect(text).toContain('the integer 9007199254740993 has no exact binary64 value');
    } finally {
      rmSync(box.root, { recursive: true, force: true });
    }
  });
});
