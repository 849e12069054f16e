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

/** docs/engine-protocol.md: a missing response is a protocol failure after this long. */
export const ENGINE_TIMEOUT_MS = 30_000;
/** docs/engine-protocol.md: how long an engine has to exit once its input is closed. */
export const ENGINE_EXIT_GRACE_MS = 2_000;

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * An external engine, started with `command` (run by the shell), spoken to over the protocol.
 *
 * The engine runs in a process group of its own, and `close()` kills that whole group: the shell
 * that runs the command may not `exec` it, so killing only the shell orphans the engine, which
 * then holds the stdout pipe open and keeps oarc's event loop alive for ever. Being its own group
 * also keeps a terminal's Ctrl-C from reaching it directly, so oarc forwards those signals.
 */
export class EngineClient implements Backend {
  readonly name: string;
  private readonly child: ChildProcess;
  private readonly lines: ReturnType<typeof createInterface>;
  private readonly waiting: { resolve: (line: string) => void; reject: (e: Error) => void }[] = [];
  private ended: Error | undefined;
  private closed = false;
  private readonly exited: Promise<void>;
  engine = '';

  constructor(
    private readonly command: string,
    private readonly timeoutMs = ENGINE_TIMEOUT_MS,
    private readonly graceMs = ENGINE_EXIT_GRACE_MS,
  ) {
    this.name = `external (${command})`;
    this.child = spawn(command, { shell: true, detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
    this.exited = new Promise<void>((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.once('error', () => resolve());
    });
    this.lines = createInterface({ input: this.child.stdout as Readable });
    this.lines.on('line', (line) => {
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
    process.on('exit', this.onExit);
    for (const s of SIGNALS) process.on(s, this.onSignal);
  }

  /** Whatever way oarc ends, the engine does not outlive it. */
  private readonly onExit = (): void => this.killGroup('SIGKILL');

  /** A signal to oarc reaches the engine's group too, then ends oarc as it would have. */
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.killGroup(signal);
    this.forget();
    process.kill(process.pid, signal);
  };

  private forget(): void {
    process.removeListener('exit', this.onExit);
    for (const s of SIGNALS) process.removeListener(s, this.onSignal);
  }

  private killGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // ESRCH: nothing of the group is left.
    }
  }

  private request(body: unknown): Promise<unknown> {
    if (this.ended) return Promise.reject(this.ended);
    return new Promise<unknown>((resolve, reject) => {
      const waiter = {
        resolve: (line: string) => {
          clearTimeout(timer);
          try {
            resolve(parseJsonText(line));
          } catch (e) {
            reject(new ProtocolError(`the engine \`${this.command}\` answered a line that is ${(e as Error).message}: ${line.slice(0, 200)}`));
          }
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        // The run is over: a late answer must not be taken for the next request's.
        this.ended ??= new ProtocolError(`the engine \`${this.command}\` did not answer within ${this.timeoutMs / 1000} s`);
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(this.ended);
      }, this.timeoutMs);
      this.waiting.push(waiter);
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

  /**
   * Close the engine's input, give it `graceMs` to exit, then kill its whole process group —
   * also when the engine itself exited, so nothing it started outlives the run — and let go of
   * the pipes so that nothing of the engine keeps oarc running.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const running = this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null;
    if (running) {
      (this.child.stdin as Writable).end();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.graceMs)))]);
      clearTimeout(timer);
    }
    this.killGroup('SIGKILL');
    this.forget();
    this.lines.close();
    this.child.stdout?.destroy();
    this.child.stdin?.destroy();
    this.child.unref();
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
