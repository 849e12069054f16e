/**
 * The client's own lines, so that an allowed `tools/call` reaches the server as the very text the
 * pack decided on, not a re-serialisation of a parsed object.
 *
 * The MCP SDK's stdio transports parse each line into a message and keep the text to themselves,
 * and write a message by serialising it; neither offers the line. Both hold it in private members:
 * the server transport (the client's side) reads stdin through `_readBuffer`, the client transport
 * (the server's side) writes to `_process.stdin`. `tapClientLines` puts a reader of its own, with
 * the SDK's behaviour, in `_readBuffer`'s place that remembers each message's line;
 * `serverLineWriter` writes a line where `send` would. Each checks the shape it relies on first and
 * returns undefined when it is not there (another SDK version, another transport): the proxy then
 * forwards the parsed message re-serialised, as it does any other message, and says so.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { firstLine, schemaProblem } from './schema-problem.js';

/** A message's line as the client wrote it (without the newline, or a `\r` before it). */
export interface ReadLine {
  line: string;
  /** The SDK's schema refused the message (the reader passed it on so that it can be answered). */
  refused: boolean;
  /** Why, in one line, when it did. */
  problem?: string;
}

/** What the proxy needs to forward the client's lines. */
export interface RawLines {
  lineOf(m: object): ReadLine | undefined;
  /** Writes one line, and its newline, to the server. */
  send(line: string): Promise<void>;
}

/** The SDK's `STDIO_DEFAULT_MAX_BUFFER_SIZE`, used when the reader replaced does not say its own. */
const DEFAULT_MAX_BUFFER = 10 * 1024 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A request (it has a method) whose id an answer can carry: a string or a safe integer. */
const isAnswerable = (m: Record<string, unknown>): boolean =>
  Object.prototype.hasOwnProperty.call(m, 'method') && (typeof m.id === 'string' || (typeof m.id === 'number' && Number.isSafeInteger(m.id)));

/**
 * A line reader that behaves as the SDK's `ReadBuffer` (the same size limit, newline, `\r`,
 * parse and schema), but remembers the line each message came from. Two differences. A line
 * that is JSON the SDK's schema refuses, but is a tools/call or a request with an id to answer
 * it by, is passed on as parsed, marked refused, instead of only being reported: the client
 * awaits an answer to it, and the proxy gives one (the SDK would drop it unanswered, and the
 * client wait for ever). And what is reported — a line that is not JSON, a refused message
 * with no id — is one line, not the schema's issue tree (schema-problem.ts).
 */
export class LineReader {
  private buffer: Buffer | undefined;

  constructor(
    private readonly deserialize: (line: string) => JSONRPCMessage,
    private readonly lines: WeakMap<object, ReadLine>,
    private readonly maxBufferSize = DEFAULT_MAX_BUFFER,
  ) {}

  append(chunk: Buffer): void {
    const size = (this.buffer?.length ?? 0) + chunk.length;
    if (size > this.maxBufferSize) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBufferSize} bytes`);
    }
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
  }

  readMessage(): JSONRPCMessage | null {
    if (!this.buffer) return null;
    const nl = this.buffer.indexOf('\n');
    if (nl === -1) return null;
    const line = this.buffer.toString('utf8', 0, nl).replace(/\r$/, '');
    this.buffer = this.buffer.subarray(nl + 1);
    let message: JSONRPCMessage;
    let read: ReadLine = { line, refused: false };
    try {
      message = this.deserialize(line);
    } catch (e) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new Error(`dropped a line that is not JSON: ${firstLine(e)}`);
      }
      const problem = schemaProblem(e);
      if (!isObject(parsed) || !(parsed.method === 'tools/call' || isAnswerable(parsed))) {
        throw new Error(`dropped a message the MCP schema does not accept, with no id to answer it by: ${problem}`);
      }
      message = parsed as JSONRPCMessage;
      read = { line, refused: true, problem };
    }
    this.lines.set(message, read);
    return message;
  }

  clear(): void {
    this.buffer = undefined;
  }
}

const isFunction = (v: unknown): boolean => typeof v === 'function';

/**
 * Replaces the reader of an SDK stdio server transport, before it starts, with a `LineReader`;
 * returns how to find a message's line, or undefined when the transport has no such reader.
 */
export function tapClientLines(transport: Transport, deserialize: (line: string) => JSONRPCMessage): ((m: object) => ReadLine | undefined) | undefined {
  const t = transport as unknown as { _readBuffer?: Record<string, unknown> };
  const old = t._readBuffer;
  if (!isObject(old) || !isFunction(old.append) || !isFunction(old.readMessage) || !isFunction(old.clear)) return undefined;
  const lines = new WeakMap<object, ReadLine>();
  t._readBuffer = new LineReader(deserialize, lines, typeof old._maxBufferSize === 'number' ? old._maxBufferSize : DEFAULT_MAX_BUFFER) as unknown as Record<string, unknown>;
  return (m) => lines.get(m);
}

interface LineSink {
  write(text: string): boolean;
  once(event: 'drain', f: () => void): unknown;
}

/**
 * How to write a line to the child of a started SDK stdio client transport, as its `send` writes
 * a serialised message; undefined when the transport has no such child stream.
 */
export function serverLineWriter(transport: Transport): ((line: string) => Promise<void>) | undefined {
  const t = transport as unknown as { _process?: { stdin?: Partial<LineSink> | null } };
  const stdin = t._process?.stdin;
  if (!stdin || !isFunction(stdin.write) || !isFunction(stdin.once)) return undefined;
  return (line) =>
    new Promise((resolve, reject) => {
      // Looked up at each write, as `send` does: the transport drops its child when it closes.
      const sink = t._process?.stdin as LineSink | null | undefined;
      if (!sink) {
        reject(new Error('Not connected'));
        return;
      }
      if (sink.write(`${line}\n`)) resolve();
      else sink.once('drain', resolve);
    });
}
