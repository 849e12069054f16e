/**
 * The proxy proper: JSON-RPC messages forwarded between the client's transport and the server's,
 * unchanged — requests, responses, notifications, cancellation and progress alike, ids untouched,
 * since the proxy originates no request of its own — except `tools/call` requests and their
 * responses, which the pack decides, and what cannot be matched or read as the server will:
 *
 * - a request whose id is that of one in flight, or that the SDK's schema refused, is answered
 *   -32600 and not forwarded; a server response to no request in flight is dropped (`InFlight`);
 * - the call, read first (tool-call.ts): one the proxy cannot read exactly as the server will,
 *   as one tool name and one arguments object — params missing, of the wrong shape or with other
 *   members, a member name written twice or in two cases, a number no OAR type holds, an id that
 *   is not a safe integer — is answered with a JSON-RPC error and never forwarded; one sent as a
 *   notification is dropped;
 * - the call at `tool.pre_invoke`: a block answers the client with a tool error result carrying
 *   the rule's copy and the call never reaches the server ([OAR-PROF-10]); nudge and warn forward
 *   it and their advisories are appended to its result ([OAR-EVAL-20]). An allowed call is
 *   forwarded as the line the client wrote, the text decided on, when the transports give the
 *   proxy lines (lines.ts); otherwise as the message the decision read, re-serialised. Either
 *   way no line the server is sent holds a character some reader takes as a line break
 *   (line-breaks.ts): one line in, one message out;
 * - the result at `tool.post_invoke` and then `model.tool_result` (each the capability maps), its
 *   structuredContent included when the text does not carry it (result.ts): a block withholds it,
 *   a transform delivers the transformed content ([OAR-OPS-16]) or withholds what it cannot.
 *
 * Each direction is handled in arrival order, one message after the other, so a decision that
 * awaits a shared counter store never lets a later message (a cancellation, say) overtake it.
 */
import { randomUUID } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Occurrence } from '../runtime/index.js';
import { lineBreakInSerialised, withoutLineBreaks } from './line-breaks.js';
import type { RawLines } from './lines.js';
import { INVALID_REQUEST, readToolCall } from './tool-call.js';
import { advisoryItems, blockedResult, contentBuffer, withAdvisories, withBuffer, withheldResult, type ContentItem, type Decided, type ToolResult } from './result.js';

export interface Anchors {
  /** The host-local anchor of `tool.pre_invoke`, when the capability maps it. */
  pre?: string;
  /** The host-local anchors of `tool.post_invoke` and `model.tool_result`, in that order, each once. */
  results: string[];
}

/** Decides one occurrence; `what` says where it came from, for the human log. */
export type DecideFn = (occ: Occurrence, what: string) => Promise<Decided & { content?: string }>;

export interface ProxyOptions {
  anchors: Anchors;
  decide: DecideFn;
  /** Host facts every occurrence carries (`--fact`). */
  facts: Readonly<Record<string, unknown>>;
  /** A problem the proxy met (a message it could not handle): one line for stderr. */
  say: (line: string) => void;
  /** Also say each tools/call refused as malformed (a dropped notification is said regardless). */
  verbose?: boolean;
}

interface PendingCall {
  name: string;
  args: Record<string, unknown>;
  session: string;
  advisories: ContentItem[];
}

/**
 * A request of the client's the server was sent and has not answered, by id: the response to it
 * is the first message from the server with that id, and for a tools/call it is the result to
 * decide. Ids are the client's to choose, and MCP forbids reusing one, but nothing stops a client
 * from sending `ping` with the id of a tools/call in flight — whose `{}` would then be decided as
 * the call's result, and the real result delivered undecided. So a request whose id is in flight
 * is refused, whatever its method.
 */
interface InFlight {
  method: string;
  /** A tools/call's, whose response is decided. */
  call?: PendingCall;
}

type Message = JSONRPCMessage & { id?: string | number; method?: string; params?: Record<string, unknown>; result?: unknown; error?: unknown };

const idKey = (id: string | number) => `${typeof id}:${String(id)}`;
const idInUse = (id: string | number, method: string) =>
  `id ${JSON.stringify(id)} is already the id of a ${method} request the server has not answered, and the two responses could not be told apart`;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class McpProxy {
  /** The MCP session: a new one at each `initialize` the client sends. */
  private session = randomUUID();
  /** By `idKey`: string and number ids are distinct, as JSON-RPC has them. */
  private readonly inFlight = new Map<string, InFlight>();
  private fromClientQueue: Promise<void> = Promise.resolve();
  private fromServerQueue: Promise<void> = Promise.resolve();
  private lines: RawLines | undefined;

  constructor(
    private readonly client: Transport,
    private readonly server: Transport,
    private readonly opts: ProxyOptions,
  ) {
    client.onmessage = (m) => {
      this.fromClientQueue = this.fromClientQueue.then(() => this.fromClient(m as Message)).catch((e: unknown) => this.fault('client', e));
    };
    server.onmessage = (m) => {
      this.fromServerQueue = this.fromServerQueue.then(() => this.fromServer(m as Message)).catch((e: unknown) => this.fault('server', e));
    };
  }

  /**
   * Forward allowed calls as the client's own lines (call before the client's transport starts).
   * Without it, or for a message whose line `lines` does not know, the parsed message is sent.
   */
  forwardLines(lines: RawLines): void {
    this.lines = lines;
  }

  /** How an allowed tools/call reaches the server: as the client's line, or re-serialised. */
  get forwarding(): 'lines' | 'reserialised' {
    return this.lines === undefined ? 'reserialised' : 'lines';
  }

  /** Resolves once every message received so far has been handled. */
  async settled(): Promise<void> {
    await Promise.all([this.fromClientQueue, this.fromServerQueue]);
  }

  private fault(side: string, e: unknown): void {
    this.opts.say(`a message from the ${side} could not be handled: ${e instanceof Error ? e.message : String(e)}`);
  }

  private async fromClient(m: Message): Promise<void> {
    if (this.lines === undefined) {
      // Written by the transport's own serialiser, which the proxy cannot make spell a line break
      // otherwise: a message that would hold one is not sent at all (line-breaks.ts).
      const br = lineBreakInSerialised(JSON.stringify(m));
      if (br !== undefined) {
        await this.refuse(m, `invalid request: it holds a raw ${br}, which some servers read as the end of a line, and this transport cannot write it escaped`);
        return;
      }
    }
    const read = this.lines?.lineOf(m);
    if (read?.refused && m.method !== 'tools/call') {
      // A request the SDK's schema refused, passed on by the reader so that it is answered (lines.ts).
      const what = typeof m.method === 'string' ? `this ${m.method} request` : 'this request';
      await this.refuse(m, `invalid request: the MCP schema does not accept ${what}: ${read.problem ?? 'it is malformed'}`, true);
      return;
    }
    if (m.method === 'initialize' && m.id !== undefined) this.session = randomUUID();
    if (m.method !== 'tools/call') {
      if (m.method !== undefined && (typeof m.id === 'string' || typeof m.id === 'number')) {
        const busy = this.inFlight.get(idKey(m.id));
        if (busy !== undefined) {
          await this.refuse(m, `invalid request: ${idInUse(m.id, busy.method)}`);
          return;
        }
        this.inFlight.set(idKey(m.id), { method: m.method });
      }
      await this.toServer(m);
      return;
    }
    // With its line, the call is read from the line itself, as the server will read what it is
    // sent: the client's line, respelled so that no server reads a line break in it (the same value).
    const line = read === undefined ? undefined : withoutLineBreaks(read.line);
    const msg = (line === undefined ? m : JSON.parse(line)) as Record<string, unknown>;
    const r = readToolCall(msg, line, read?.refused);
    if (!r.ok) {
      if ('dropped' in r) {
        this.opts.say(`dropped ${r.dropped}`);
        return;
      }
      if (this.opts.verbose) this.opts.say(`refused (not forwarded), error ${r.code}: ${r.message}`);
      await this.client.send({ jsonrpc: '2.0', ...(r.id === undefined ? {} : { id: r.id }), error: { code: r.code, message: r.message } } as JSONRPCMessage);
      return;
    }
    const { id, name, args } = r;
    const busy = this.inFlight.get(idKey(id));
    if (busy !== undefined) {
      // Refused before it is decided: a call that is not forwarded moves no counter.
      await this.refuse(m, `invalid tools/call request: ${idInUse(id, busy.method)}`);
      return;
    }
    const call: PendingCall = { name, args, session: this.session, advisories: [] };
    if (this.opts.anchors.pre !== undefined) {
      let d;
      try {
        d = await this.opts.decide(this.occurrence(this.opts.anchors.pre, call), `tools/call ${name}`);
      } catch (e) {
        // The call cannot be decided: it does not go through undecided ([OAR-PROF-10]).
        await this.client.send({ jsonrpc: '2.0', id, result: withheldResult(`oarc could not decide the ${name} call: ${e instanceof Error ? e.message : String(e)}`, 'call') } as JSONRPCMessage);
        return;
      }
      if (d.decision === 'block') {
        // [OAR-PROF-10] a pre-invocation block prevents the operation: the server never sees it.
        await this.client.send({ jsonrpc: '2.0', id, result: blockedResult(d, 'call') } as JSONRPCMessage);
        return;
      }
      call.advisories = advisoryItems(d);
    }
    this.inFlight.set(idKey(id), { method: 'tools/call', call });
    // What was decided is what is sent: the client's line, or the very message the decision read.
    if (line !== undefined && this.lines !== undefined) await this.lines.send(line);
    else await this.toServer(m);
  }

  /**
   * A message the proxy does not read to the server: re-serialised, as the SDK's `send` writes it
   * (`JSON.stringify`, which escapes CR and LF), and with the line writer, U+0085, U+2028 and
   * U+2029 escaped too (`JSON.stringify` leaves them raw).
   */
  private async toServer(m: Message): Promise<void> {
    if (this.lines !== undefined) await this.lines.send(withoutLineBreaks(JSON.stringify(m)));
    else await this.server.send(m);
  }

  /**
   * Not forwarded: a request is answered with -32600 and `message` (said with --verbose, or
   * `always`); anything else is dropped, and said.
   */
  private async refuse(m: Message, message: string, always = false): Promise<void> {
    const id = m.id;
    if (m.method !== undefined && (typeof id === 'string' || typeof id === 'number')) {
      if (this.opts.verbose || always) this.opts.say(`refused (not forwarded), error ${INVALID_REQUEST}: ${message}`);
      await this.client.send({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message } } as JSONRPCMessage);
      return;
    }
    this.opts.say(`dropped a ${m.method === undefined ? 'response' : `${m.method} notification`} from the client (${message})`);
  }

  private async fromServer(m: Message): Promise<void> {
    // Requests and notifications of the server's, and an error without an id (it could not read a
    // request), pass; a response goes only to a request in flight.
    if (m.method !== undefined || (typeof m.id !== 'string' && typeof m.id !== 'number')) {
      await this.client.send(m);
      return;
    }
    const sent = this.inFlight.get(idKey(m.id));
    if (sent === undefined) {
      // A second answer to a request, or one to nothing the client asked: it could be a tool
      // result no rule decided, delivered to a client that took the id for another request.
      this.opts.say(`dropped a response from the server with id ${JSON.stringify(m.id)}, which answers no request in flight`);
      return;
    }
    this.inFlight.delete(idKey(m.id));
    const call = sent.call;
    if (call === undefined) {
      await this.client.send(m);
      return;
    }
    if (!isObject(m.result)) {
      // A JSON-RPC error carries no content to decide, and no place for advisories.
      await this.client.send(m);
      return;
    }
    let result: ToolResult;
    try {
      result = await this.afterCall(call, m.result as ToolResult);
    } catch (e) {
      result = withheldResult(`oarc could not decide the ${call.name} result: ${e instanceof Error ? e.message : String(e)}`);
    }
    await this.client.send(result === m.result ? m : ({ ...m, result } as JSONRPCMessage));
  }

  /** The result the client receives: the server's own object when nothing changes it. */
  private async afterCall(call: PendingCall, result: ToolResult): Promise<ToolResult> {
    const buffer = contentBuffer(result);
    const original = buffer.text;
    let text = original;
    const advisories = [...call.advisories];
    for (const anchor of this.opts.anchors.results) {
      const d = await this.opts.decide({ ...this.occurrence(anchor, call), content: text }, `result of ${call.name}`);
      // [OAR-PROF-10] a post-invocation block withholds the content (the tool has run; nothing is undone).
      if (d.decision === 'block') return withAdvisories(blockedResult(d, 'result'), advisories);
      // [OAR-OPS-16] the content after this anchor's transforms is what the next anchor, and the model, read.
      if (d.decision === 'transform' && d.content !== undefined) text = d.content;
      advisories.push(...advisoryItems(d));
    }
    let out = result;
    if (text !== original) {
      const r = withBuffer(result, buffer, text);
      if ('unfaithful' in r) return withAdvisories(withheldResult(`a rule transformed the ${call.name} result, but ${r.unfaithful}`), advisories);
      out = r;
    }
    return withAdvisories(out, advisories);
  }

  private occurrence(anchor: string, call: PendingCall): Occurrence {
    return { anchor, session: call.session, toolCall: { name: call.name, arguments: call.args }, facts: this.opts.facts };
  }
}
