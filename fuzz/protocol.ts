/**
 * The engine protocol of docs/engine-protocol.md: JSON Lines over an engine's stdin and stdout.
 * One request per line, one response line per request, in order:
 *
 *   → {"type":"pack","capability":{name,text},"rules":[{name,text}…],"configs":[{name,text}…]}
 *   ← {"ready":true,"engine":"<name version>"}            or an error line
 *   → {"type":"decide","occurrence":{…the wire form, with session_id…}}
 *   ← {…the decision in the wire form…}                     or an error line
 *   error line: {"error":{"kind":"pack"|"occurrence"|"protocol"|"internal","message":"…"}}
 *
 * `EngineClient` drives an engine (`oarc fuzz --against`); `serveProtocol` is oarc's own side of
 * it (`oarc adapter`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Answer, Backend } from './backends.js';
import { parseJsonText, toJsonText } from './json.js';
import type { DecisionJson, OccurrenceJson } from '../runtime/wire.js';

export interface SourceText {
  name: string;
  text: string;
}

export interface PackRequest {
  type: 'pack';
  capability: SourceText;
  rules: SourceText[];
  configs: SourceText[];
}

/** The engine broke the protocol or went away: the run cannot go on (not a difference). */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An external engine, started with `command` (run by the shell), spoken to over the protocol. */
export class EngineClient implements Backend {
  readonly name: string;
  private readonly child: ChildProcess;
  private readonly waiting: { resolve: (line: string) => void; reject: (e: Error) => void }[] = [];
  private ended: Error | undefined;
  engine = '';

  constructor(
    private readonly command: string,
    private readonly timeoutMs = 30_000,
  ) {
    this.name = `external (${command})`;
    this.child = spawn(command, { shell: true, stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: this.child.stdout as Readable });
    lines.on('line', (line) => {
      if (line.trim() === '') return;
      const w = this.waiting.shift();
      if (w) w.resolve(line);
    });
    const gone = (why: string) => {
      this.ended ??= new ProtocolError(`the engine \`${command}\` ${why}`);
      for (const w of this.waiting.splice(0)) w.reject(this.ended);
    };
    this.child.on('error', (e) => gone(`could not be started: ${e.message}`));
    this.child.on('exit', (code, signal) => gone(`exited (${signal ?? `status ${code}`}) before answering`));
    (this.child.stdin as Writable).on('error', () => gone('closed its input'));
  }

  private request(body: unknown): Promise<unknown> {
    if (this.ended) return Promise.reject(this.ended);
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ProtocolError(`the engine \`${this.command}\` did not answer within ${this.timeoutMs / 1000} s`)), this.timeoutMs);
      this.waiting.push({
        resolve: (line) => {
          clearTimeout(timer);
          try {
            resolve(parseJsonText(line));
          } catch (e) {
            reject(new ProtocolError(`the engine \`${this.command}\` answered a line that is ${(e as Error).message}: ${line.slice(0, 200)}`));
          }
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      (this.child.stdin as Writable).write(`${toJsonText(body)}\n`);
    });
  }

  /** Send the pack; throws a ProtocolError carrying the engine's message when it refuses it. */
  async load(pack: PackRequest): Promise<void> {
    const r = await this.request(pack);
    if (isObject(r) && isObject(r.error)) throw new ProtocolError(`the engine \`${this.command}\` refused the pack: ${String(r.error.message)}`);
    if (!isObject(r) || r.ready !== true) throw new ProtocolError(`the engine \`${this.command}\` answered the pack with ${toJsonText(r).slice(0, 200)}, not {"ready":true}`);
    this.engine = typeof r.engine === 'string' ? r.engine : '';
  }

  async decide(occurrences: readonly OccurrenceJson[]): Promise<Answer[]> {
    const out: Answer[] = [];
    for (const occurrence of occurrences) {
      const r = await this.request({ type: 'decide', occurrence });
      if (isObject(r) && isObject(r.error)) {
        out.push({ error: { kind: String(r.error.kind ?? ''), message: String(r.error.message ?? '') } });
        continue;
      }
      if (!isObject(r) || typeof r.decision !== 'string') throw new ProtocolError(`the engine \`${this.command}\` answered an occurrence with ${toJsonText(r).slice(0, 200)}, not a decision`);
      out.push({ decision: r as unknown as DecisionJson });
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    (this.child.stdin as Writable).end();
    const timer = setTimeout(() => this.child.kill(), 2000);
    await exited;
    clearTimeout(timer);
  }
}

/** What serving the protocol needs from the engine: load a pack, then decide occurrences. */
export interface ProtocolEngine {
  /** Load the pack; return an error message when it does not load. */
  load(pack: PackRequest): string | undefined;
  decide(occurrence: unknown): { decision: unknown } | { error: { kind: string; message: string } };
  readonly name: string;
}

/**
 * Serve the protocol on `input` / `output` until the input ends. Every request gets exactly one
 * response line; a malformed request is an error line, never the end of the session.
 */
export async function serveProtocol(input: NodeJS.ReadableStream, output: (line: string) => void, engine: ProtocolEngine): Promise<void> {
  const reply = (v: unknown) => output(`${toJsonText(v)}\n`);
  const error = (kind: string, message: string) => reply({ error: { kind, message } });
  let loaded = false;
  for await (const line of createInterface({ input: input as Readable, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    let req: unknown;
    try {
      req = parseJsonText(line);
    } catch (e) {
      error('protocol', `the request is ${(e as Error).message}`);
      continue;
    }
    if (!isObject(req) || typeof req.type !== 'string') {
      error('protocol', 'a request is a JSON object with a "type": "pack" or "decide"');
      continue;
    }
    if (req.type === 'pack') {
      const bad = checkPackRequest(req);
      if (bad !== undefined) {
        error('protocol', bad);
        continue;
      }
      const why = engine.load(req as unknown as PackRequest);
      if (why !== undefined) error('pack', why);
      else {
        loaded = true;
        reply({ ready: true, engine: engine.name });
      }
    } else if (req.type === 'decide') {
      if (!loaded) error('protocol', 'no pack loaded: send {"type":"pack",…} first');
      else if (!isObject(req.occurrence)) error('protocol', 'a decide request carries "occurrence": an occurrence in the wire form');
      else {
        const r = engine.decide(req.occurrence);
        reply('decision' in r ? r.decision : r);
      }
    } else error('protocol', `unknown request type ${JSON.stringify(req.type)}; the types are "pack" and "decide"`);
  }
}

function checkPackRequest(req: Record<string, unknown>): string | undefined {
  const source = (v: unknown) => isObject(v) && typeof v.name === 'string' && typeof v.text === 'string';
  if (!source(req.capability)) return 'a pack request carries "capability": {"name": …, "text": …}';
  if (!Array.isArray(req.rules) || !req.rules.every(source)) return 'a pack request carries "rules": a list of {"name": …, "text": …}';
  if (req.configs !== undefined && (!Array.isArray(req.configs) || !req.configs.every(source))) return '"configs", when given, is a list of {"name": …, "text": …}';
  return undefined;
}
