/**
 * The built `oarc serve` (dist/bin/oarc.js) in its own process, on an ephemeral loopback port read
 * from its "listening on" log line, for the e2e tests: requests go to 127.0.0.1 only, and `stop()`
 * (SIGTERM, then SIGKILL after 10 s) always ends it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './build.js';

export const CLI = join(ROOT, 'dist', 'bin', 'oarc.js');
export const GW = join(ROOT, 'examples', 'gateway');
export const PACK_ARGS = [join(GW, 'rules.yaml'), '--capability', join(GW, 'capability.yaml'), '--detectors', join(GW, 'detectors.mjs')];

export interface Served {
  readonly url: string;
  readonly proc: ChildProcess;
  /** Everything the service logged on stderr so far. */
  log(): string;
  /** Resolves once the log holds a line matching `re` (rejects after `ms`). */
  waitForLog(re: RegExp, ms?: number): Promise<void>;
  /** SIGTERM and the exit code. */
  stop(): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

export async function serve(args: readonly string[], opts: { cwd?: string } = {}): Promise<Served> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { cwd: opts.cwd ?? ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', OARC_DEBUG: '' } });
  let log = '';
  const waiters: (() => void)[] = [];
  proc.stderr.on('data', (d: Buffer) => {
    log += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  proc.stdout.resume();
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const waitForLog = (re: RegExp, ms = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`oarc serve: no log line matching ${re} within ${ms} ms; log:\n${log}`)), ms);
      const check = () => {
        if (re.test(log)) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  await Promise.race([waitForLog(/listening on http:\/\/127\.0\.0\.1:\d+/), exited.then((c) => Promise.reject(new Error(`oarc serve exited ${c}:\n${log}`)))]);
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log)?.[1] as string;
  return {
    url,
    proc,
    log: () => log,
    waitForLog,
    exited,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      return exited;
    },
  };
}

export interface Reply {
  status: number;
  type: string;
  text: string;
  json: unknown;
  headers: Headers;
}

/** A request to the service; a body that is not a string is sent as JSON. */
export async function call(url: string, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  const body = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  const res = await fetch(`${url}${path}`, {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, text, json: /json/.test(type) ? JSON.parse(text) : undefined, headers: res.headers };
}
