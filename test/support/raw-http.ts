/**
 * HTTP/1.1 on a bare TCP connection, for the tests that send what fetch will not (no Content-Type,
 * a repeated header, `Expect: 100-continue`, an absolute-form target, a broken request line) and
 * watch what the server does with the connection afterwards.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Map<string, string[]>;
  body: string;
  json: unknown;
}

export interface RawExchange {
  /** Every response read off the connection, in order (a `100 Continue` is one). */
  responses: RawResponse[];
  /** Everything the server wrote. */
  text: string;
  /** Whether the server closed (or reset) the connection before `waitMs` ran out. */
  closed: boolean;
  /** The connection was reset rather than closed. */
  reset: boolean;
  /** Milliseconds from the first byte received to the close (or to giving up). */
  closedAfterMs: number;
}

/** Parse the responses in `text`: a head, then a body as long as its Content-Length. */
export function parseResponses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd === -1) break;
    const [line, ...fields] = text.slice(at, headEnd).split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(line as string)?.[1]);
    const headers = new Map<string, string[]>();
    for (const f of fields) {
      const colon = f.indexOf(':');
      const name = f.slice(0, colon).toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), f.slice(colon + 1).trim()]);
    }
    const length = Number(headers.get('content-length')?.[0] ?? 0);
    if (headEnd + 4 + length > text.length) break; // the body is not all here yet
    // Content-Length counts bytes; the tests' bodies are ASCII.
    const body = text.slice(headEnd + 4, headEnd + 4 + length);
    const type = headers.get('content-type')?.[0] ?? '';
    out.push({ status, headers, body, json: /json/.test(type) && body !== '' ? JSON.parse(body) : undefined });
    at = headEnd + 4 + length;
  }
  return out;
}

/**
 * Connect to `port`, let `drive` write (it gets the socket and a promise of the server's first
 * bytes), and collect what comes back until the server closes the connection, `waitMs` passes, or
 * what came back satisfies `until`.
 */
export function exchange(port: number, drive: (c: Socket, firstBytes: Promise<string>) => void | Promise<void>, waitMs = 5000, until?: (responses: RawResponse[]) => boolean): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const c = connect(port, '127.0.0.1');
    let text = '';
    let firstAt = 0;
    let reset = false;
    let gotFirst!: (t: string) => void;
    const first = new Promise<string>((r) => (gotFirst = r));
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      c.destroy();
      resolve({ responses: parseResponses(text), text, closed, reset, closedAfterMs: firstAt === 0 ? -1 : Date.now() - firstAt });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    c.on('data', (d: Buffer) => {
      if (firstAt === 0) firstAt = Date.now();
      text += d.toString('latin1');
      gotFirst(text);
      if (until?.(parseResponses(text))) finish(false);
    });
    c.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') reset = true;
      else reject(e);
    });
    c.on('close', () => finish(true));
    c.on('connect', () => {
      void Promise.resolve(drive(c, first)).catch(reject);
    });
  });
}

/** One request written whole (head and body in one write), and what came back. */
export function rawRequest(port: number, head: string, body: string | Buffer = '', waitMs?: number): Promise<RawExchange> {
  return exchange(port, (c) => {
    c.write(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), typeof body === 'string' ? Buffer.from(body) : body]));
  }, waitMs);
}
