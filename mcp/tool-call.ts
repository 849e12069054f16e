/**
 * What the proxy makes of a `tools/call` from the client before the pack decides it: the call
 * (id, tool name, arguments), or why there is none to decide. A call the proxy cannot read,
 * exactly as the server will, as one tool name and one arguments object is never forwarded
 * ([OAR-PROF-10]: a call that cannot be decided does not go through undecided): it is answered
 * with a JSON-RPC error — -32600 (invalid request) for the envelope, -32602 (invalid params) for
 * the params — or, sent as a notification (no id, so nothing can be answered), dropped.
 */
import { kindOf } from '../runtime/host-input.js';
import { pathText, sameName, scanDuplicateKeys } from './duplicate-keys.js';
import { integerBeyondInt64, readExactly } from './exact-read.js';

export const INVALID_REQUEST = -32600 as const;
export const INVALID_PARAMS = -32602 as const;

export type ToolCallRead =
  | { ok: true; id: string | number; name: string; args: Record<string, unknown> }
  /** Sent as a notification: nobody to answer. */
  | { ok: false; dropped: string }
  /** Answered with this error; `id` when the request's id could be read. */
  | { ok: false; code: typeof INVALID_REQUEST | typeof INVALID_PARAMS; message: string; id?: string | number };

/** The members a JSON-RPC request has ([JSON-RPC 2.0 §4]; the MCP schema allows no other). */
const ENVELOPE = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The members of a tools/call's params the proxy decides or passes knowingly. Any other is
 * something the server may act on that no rule read — `task` above all (MCP's task-augmented
 * calls): the server then answers with a task, and the result comes through `tasks/result`, which
 * the proxy does not decide, so a secret in it would reach the client unredacted.
 */
const PARAMS = new Set(['name', 'arguments', '_meta']);

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/**
 * An id the proxy can match a response to: a string, or an integer JSON readers all read alike.
 * Beyond ±(2^53−1) they do not — 9007199254740993 and 9007199254740992 are one number to
 * `JSON.parse` (the SDK's reader, so the proxy's), two to Python — and a response could be taken
 * for another request's.
 */
const isId = (v: unknown): v is string | number => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
const isUnsafeInteger = (v: unknown): boolean => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v));

/**
 * Reads a `tools/call` message (its `method` is `tools/call`). `line`, when given, is the text it
 * was parsed from (`m` is `JSON.parse` of it, used only for the id of an answer until the line is
 * read): checked for repeated member names, then read exactly (exact-read.ts), and that reading
 * is the call. `refused`: the SDK's schema refused it.
 */
export function readToolCall(loose: Record<string, unknown>, line?: string, refused = false): ToolCallRead {
  let m = loose;
  if (!hasOwn(m, 'id')) return { ok: false, dropped: 'a tools/call sent as a notification (no id) cannot be answered, so it is not forwarded' };
  const id = isId(m.id) ? m.id : undefined;
  const withId = id === undefined ? {} : { id };
  const request = (message: string, known: { id?: string | number } = withId) => ({ ok: false as const, code: INVALID_REQUEST, message: `invalid tools/call request: ${message}`, ...known });
  const params = (message: string) => ({ ok: false as const, code: INVALID_PARAMS, message: `invalid tools/call params: ${message}`, ...withId });

  if (line !== undefined) {
    const scan = scanDuplicateKeys(line);
    if ('malformed' in scan) return request(`it could not be read (${scan.malformed})`);
    if ('duplicate' in scan) {
      const { key, earlier, path } = scan.duplicate;
      const where = path.length === 0 ? '' : ` in ${pathText(path)}`;
      const message =
        earlier === undefined
          ? `two members named ${JSON.stringify(key)}${where} (JSON readers differ on which one counts, so the call could be decided on one and run on the other)`
          : `two members named ${JSON.stringify(earlier)} and ${JSON.stringify(key)}${where}, names that differ only in case (Go's encoding/json, as mcp-go uses it, matches member names regardless of case and keeps the last, so the call could be decided on one and run on the other)`;
      // Which id the client meant is one of the things in doubt when it is the id that is repeated.
      if (path.length === 0) return request(message, sameName(key, 'id') ? {} : withId);
      return params(message);
    }
    const exact = readExactly(line);
    if (!exact.ok) return params(`they cannot be read exactly as a server reads them: ${exact.problem}`);
    m = exact.value as Record<string, unknown>;
  }
  if (m.jsonrpc !== '2.0') return request(`jsonrpc must be "2.0"${hasOwn(m, 'jsonrpc') ? `, not ${JSON.stringify(m.jsonrpc)}` : ', and is missing'}`);
  if (isUnsafeInteger(m.id)) {
    return request(`id ${String(m.id)} is an integer beyond ±(2^53−1), which JSON readers round: the proxy could not tell the response to this call from the response to another request`, {});
  }
  if (!isId(m.id)) return request(`id must be a string or an integer, not ${typeof m.id === 'number' ? String(m.id) : kindOf(m.id)}`);
  const extra = Object.keys(m).filter((k) => !ENVELOPE.has(k));
  if (extra.length > 0) return request(`a JSON-RPC request has no member ${extra.map((k) => JSON.stringify(k)).join(', ')}`);

  if (!hasOwn(m, 'params')) return params('params is missing: a tools/call needs params.name, the name of the tool');
  const p = m.params;
  if (!isPlainObject(p)) return params(`params must be an object, not ${kindOf(p)}`);
  if (!hasOwn(p, 'name')) return params('params.name is missing: the name of the tool to call');
  if (typeof p.name !== 'string') return params(`params.name must be a string, not ${kindOf(p.name)}`);
  if (p.name === '') return params('params.name must name a tool, not be the empty string');
  if (hasOwn(p, 'arguments') && !isPlainObject(p.arguments)) return params(`params.arguments must be an object, not ${kindOf(p.arguments)}`);
  if (hasOwn(p, '_meta') && !isPlainObject(p._meta)) return params(`params._meta must be an object, not ${kindOf(p._meta)}`);
  if (hasOwn(p, 'task')) {
    return params('params.task asks for a task-augmented call, whose result comes back through tasks/result, which oarc does not decide: the result would reach the client undecided, so the call is not forwarded');
  }
  const unknown = Object.keys(p).filter((k) => !PARAMS.has(k));
  if (unknown.length > 0) {
    return params(`params has ${unknown.length === 1 ? 'a member' : 'members'} ${unknown.map((k) => JSON.stringify(k)).join(', ')} besides name, arguments and _meta, which no rule reads and the server might act on`);
  }
  // Whatever else the schema found wrong (a _meta member of the wrong type, say): still not forwarded.
  if (refused) return params('the MCP schema does not accept them');
  const args = hasOwn(p, 'arguments') ? (p.arguments as Record<string, unknown>) : {};
  const beyond = integerBeyondInt64(args, ['params', 'arguments']);
  if (beyond !== undefined) return params(beyond);
  return { ok: true, id: m.id, name: p.name, args };
}
