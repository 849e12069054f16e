/**
 * The HTTP face of the service, on node:http: five routes, JSON bodies read with a size limit,
 * errors as RFC 9457 problem details. Bad input is a 400 naming the member (a JSON Pointer into
 * the request body) or the header — never a decision and never a stack trace; a fault in oarc is a
 * 500 whose id is also in the service log, beside the stack. A request is refused from its head
 * where it can be (`admit`: before `100 Continue`, before its body is read), and what node's own
 * parser refuses is answered as a problem too (`serveOn`). The checks on the path every decision
 * takes are string and number tests on the head, with nothing allocated unless they refuse.
 */
import { isUtf8 } from 'node:buffer';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HostInputError, decisionJsonText, occurrencePathToJson, type Decision, type Occurrence } from '../runtime/index.js';
import { BodyJsonError, readJsonBody } from './json-body.js';
import type { Metrics } from './metrics.js';
import { Service } from './service.js';
import type { DataLoss } from '../runtime/redis.js';

export interface RouteOptions {
  service: Service;
  metrics: Metrics;
  maxBodyBytes: number;
  /** The bearer token every route but health requires (`--token-file`). */
  token?: string;
  /** With `--redis`: the data loss the store detected, shown by health until acknowledged. */
  dataLoss?: () => DataLoss | undefined;
  say: (line: string) => void;
}

/** The header a host may name a session in, for occurrences that carry no `session_id`. */
export const SESSION_HEADER = 'oarc-session';

/** The longest session id, in UTF-16 code units, the header or an occurrence's `session_id` may name. */
export const MAX_SESSION_LENGTH = 1024;

/** A problem details object ([RFC 9457]); `pointer` is a JSON Pointer into the request body. */
interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  pointer?: string;
  [extension: string]: unknown;
}

class HttpProblem extends Error {
  constructor(readonly problem: Problem, readonly headers: Record<string, string> = {}) {
    super(problem.detail);
  }
}

const problem = (status: number, kind: string, title: string, detail: string, more: Partial<Problem> = {}) =>
  new HttpProblem({ type: `urn:oarc:problem:${kind}`, title, status, detail, ...more });

/** RFC 6901: `["tool_call", "name"]` → `/tool_call/name`. */
export function jsonPointer(path: readonly (string | number)[]): string {
  return path.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function send(res: ServerResponse, status: number, body: string, type: string, headers?: Record<string, string>): void {
  const head = { 'content-type': type, 'content-length': Buffer.byteLength(body) };
  res.writeHead(status, headers === undefined ? head : { ...head, ...headers });
  res.end(body);
}

const sendJson = (res: ServerResponse, status: number, value: unknown) => send(res, status, JSON.stringify(value), 'application/json');

const tooLarge = (limit: number) => problem(413, 'body-too-large', 'Request body too large', `the request body is over the limit of ${limit} bytes (--max-body)`);

/** `application/json`, or a structured suffix of it (`application/problem+json`), with parameters or not. */
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

const EMPTY = Buffer.alloc(0);

/**
 * Read the JSON body (up to `--max-body` bytes; one over is a 413 without reading the rest), then
 * call `then` with it. Every failure — of the body, or of `then`, thrown or rejected — is answered
 * by `fail`. Callbacks rather than a promise: a decision made in memory is answered in the turn
 * that delivered the body's last chunk, with no promise or microtask per request. The media type
 * and a declared length over the limit were refused from the head already (`admit`).
 */
function withJson(req: IncomingMessage, res: ServerResponse, o: RouteOptions, then: (body: unknown) => Promise<void> | void): void {
  const limit = o.maxBodyBytes;
  // A small body is one chunk: decoded where it lies, not copied into a new buffer first.
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let size = 0;
  let done = false;
  req.on('data', (c: Buffer) => {
    if (done) return;
    size += c.length;
    if (size > limit) {
      done = true;
      req.removeAllListeners('data');
      fail(o, req, res, tooLarge(limit));
      return;
    }
    if (first === undefined) first = c;
    else (chunks ??= [first]).push(c);
  });
  req.on('end', () => {
    if (done) return;
    done = true;
    try {
      const bytes = chunks !== undefined ? Buffer.concat(chunks) : (first ?? EMPTY);
      const text = bytes.toString('utf8');
      // The decoder puts U+FFFD where the bytes are not UTF-8; only then are the bytes checked,
      // since a body may spell U+FFFD itself. The hot path pays one scan of the text.
      if (text.indexOf('\uFFFD') !== -1 && !isUtf8(bytes)) {
        throw problem(400, 'invalid-utf8', 'Body is not UTF-8', 'the request body is not valid UTF-8, which JSON must be (RFC 8259 §8.1)', { pointer: '' });
      }
      then(parseBody(text))?.catch((e: unknown) => fail(o, req, res, e));
    } catch (e) {
      fail(o, req, res, e);
    }
  });
  req.on('error', (e) => {
    if (done) return;
    done = true;
    // A client that went away mid-body (node reports "aborted", ECONNRESET) is not oarc's fault:
    // nobody is left to answer, and logging a stack per hang-up would let any client fill the log.
    if (req.destroyed || (e as NodeJS.ErrnoException).code === 'ECONNRESET') {
      res.destroy();
      return;
    }
    fail(o, req, res, e);
  });
}

function parseBody(text: string): unknown {
  try {
    return readJsonBody(text);
  } catch (e) {
    if (e instanceof BodyJsonError) {
      // JSON the reader will not guess about: a repeated name, a number beyond binary64.
      const why = e.message.startsWith('duplicate key') ? ' (JSON readers differ on which of the two counts; send it once)' : '';
      throw problem(400, 'invalid-json', 'Body cannot be read exactly', `the request body cannot be read exactly: ${e.message} at offset ${e.offset}${why}`, { pointer: '' });
    }
    throw problem(400, 'invalid-json', 'Body is not JSON', `the request body is not valid JSON: ${(e as Error).message}`, { pointer: '' });
  }
}

/**
 * A `HostInputError` as a 400 pointing at the member. The shape check (`occurrenceFromJson`) gives
 * paths in the JSON spelling already; the engine's (an unknown anchor or fact) in the TypeScript one.
 */
function invalidOccurrence(e: HostInputError, prefix: (string | number)[], spelling: 'json' | 'ts', extra: Partial<Problem> = {}): HttpProblem {
  const path = [...prefix, ...(spelling === 'ts' ? occurrencePathToJson(e.path) : e.path)];
  return problem(400, 'invalid-occurrence', 'Invalid occurrence', e.message, { pointer: jsonPointer(path), ...extra });
}

/** Constant-time comparison of the presented bearer token with the configured one. */
function authorised(req: IncomingMessage, token: string): boolean {
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  if (m === null) return false;
  // Digests have one length, so timingSafeEqual never throws and the token's length does not leak.
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(m[1] as string), digest(token));
}

type Handler = (req: IncomingMessage, res: ServerResponse, o: RouteOptions) => Promise<void> | void;

interface Route {
  readonly methods: Partial<Record<string, Handler>>;
  /** The Allow header of a 405: HEAD wherever GET is. */
  readonly allow: string;
}

const route = (methods: Partial<Record<string, Handler>>): Route => ({ methods, allow: [...Object.keys(methods), ...('GET' in methods ? ['HEAD'] : [])].join(', ') });

const ROUTES: Record<string, Route> = {
  '/v1/decide': route({ POST: decideOne }),
  '/v1/decide/batch': route({ POST: decideBatch }),
  '/v1/health': route({ GET: health }),
  '/v1/bundle': route({ GET: bundle }),
  '/metrics': route({ GET: metrics }),
};

const PROBLEM_TYPE = 'application/problem+json';

/** Answer a failure: a problem as its status, anything else as a 500 whose id is in the service log. */
function fail(o: RouteOptions, req: IncomingMessage, res: ServerResponse, e: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  let p: HttpProblem;
  if (e instanceof HttpProblem) p = e;
  else {
    const id = randomBytes(6).toString('hex');
    o.say(`internal error ${id}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    p = problem(500, 'internal', 'Internal error', `oarc failed to handle the request; the service log has the details under id ${id}`, { id });
  }
  o.metrics.rejected(p.problem.status);
  const body = JSON.stringify(p.problem);
  if (bodyUnread(req)) refuse(req, res, p.problem.status, body, p.headers, o.maxBodyBytes);
  else send(res, p.problem.status, body, PROBLEM_TYPE, p.headers);
}

/** The request has a body (RFC 9112 §6.3: a Transfer-Encoding, or a Content-Length but 0) not yet read to its end. */
function bodyUnread(req: IncomingMessage): boolean {
  if (req.readableEnded) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** How long, and how much of the refused body (in --max-body multiples), `refuse` reads before it drops the connection. */
const LINGER_MS = 2000;
const LINGER_BODIES = 4;

/**
 * The answer to a request refused before its body was read to the end (a 413 on Content-Length or
 * mid-body, a 415, 401, 404, 405 or 417 with a body on its way, a refused `Expect: 100-continue`).
 * The policy: the response says `Connection: close` and is written at once, whole (Content-Length
 * delimits it, so the client can read it while still sending); the rest of the body is read and
 * discarded, so that closing does not reset the connection under a client that is still writing
 * (a reset can destroy the response before the client reads it). The connection then closes
 * normally once the body has ended, or is destroyed as soon as more than 4 × --max-body bytes of
 * it have been discarded, or 2 s after the refusal, whichever comes first. The connection never
 * carries another request, so no byte of the refused body is ever parsed as one.
 */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, body: string, headers: Record<string, string>, limit: number): void {
  res.writeHead(status, { 'content-type': PROBLEM_TYPE, 'content-length': Buffer.byteLength(body), ...headers, connection: 'close' });
  res.write(body);
  const socket = req.socket;
  let left = LINGER_BODIES * limit;
  let ended = false;
  const drop = () => {
    ended = true;
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(drop, LINGER_MS).unref();
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    res.end();
  };
  req.removeAllListeners('data');
  req.on('data', (c: Buffer) => {
    left -= c.length;
    if (left < 0 && !ended) drop();
  });
  req.on('end', end);
  req.on('close', end);
  req.on('error', () => undefined); // a client hanging up now is expected; 'close' follows
  req.resume();
}

/** The request listener: admit the request from its head, run its route, and turn every failure — thrown or rejected — into a problem response. */
export function handler(o: RouteOptions): (req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean) => void {
  return (req, res, expectsContinue) => {
    let pending: Promise<void> | void;
    try {
      const h = admit(req, o);
      // Only a request that will be read gets `100 Continue`; a refused one gets its refusal instead.
      if (expectsContinue === true) res.writeContinue();
      pending = h(req, res, o);
    } catch (e) {
      fail(o, req, res, e);
      return;
    }
    pending?.catch((e: unknown) => fail(o, req, res, e));
  };
}

/**
 * Serve the routes on `server`, with every refusal a problem response — including what node's
 * HTTP parser refuses and an `Expect` it would answer bare. `each` runs first for every request.
 */
export function serveOn(server: Server, o: RouteOptions, each?: (req: IncomingMessage, res: ServerResponse) => void): void {
  const onRequest = handler(o);
  server.on('request', each === undefined ? onRequest : (req: IncomingMessage, res: ServerResponse) => (each(req, res), onRequest(req, res)));
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    each?.(req, res);
    onRequest(req, res, true);
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    each?.(req, res);
    fail(o, req, res, problem(417, 'expectation-failed', 'Expectation failed', `this service meets Expect: 100-continue only, not ${req.headers.expect}`, { header: 'expect' }));
  });
  server.on('clientError', (e: Error, socket: Duplex) => clientError(o, e as NodeJS.ErrnoException & { reason?: unknown }, socket));
}

/** What the parser refused, as a status and a problem (the statuses node's own bare answers use). */
function parserProblem(e: NodeJS.ErrnoException & { reason?: unknown }): HttpProblem {
  switch (e.code) {
    case 'HPE_HEADER_OVERFLOW':
      return problem(431, 'header-too-large', 'Request header fields too large', `the request's head is over the limit of ${maxHeaderSize} bytes`);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return problem(413, 'chunk-extensions-too-large', 'Chunk extensions too large', 'the chunk extensions of the request body are over the limit');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problem(408, 'request-timeout', 'Request timeout', 'the request was not received in time');
    default:
      return problem(400, 'bad-request', 'Bad request', `the request is not valid HTTP/1.1: ${typeof e.reason === 'string' ? e.reason : e.message}`);
  }
}

/**
 * A request node's parser refused (a bad request line or header, a head too large, bad chunking,
 * a timeout): a problem written on the raw socket — unless the peer is gone, or a response to
 * this connection has begun (another write would corrupt it) — and then the socket destroyed.
 */
function clientError(o: RouteOptions, e: NodeJS.ErrnoException & { reason?: unknown }, socket: Duplex): void {
  // node's own default checks the response in flight the same way (an internal member).
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (e.code === 'ECONNRESET' || !socket.writable || (inFlight != null && inFlight.headersSent)) {
    socket.destroy();
    return;
  }
  const p = parserProblem(e).problem;
  o.metrics.rejected(p.status);
  const body = JSON.stringify(p);
  socket.write(`HTTP/1.1 ${p.status} ${p.title}\r\ncontent-type: ${PROBLEM_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  // Destroyed once the answer is written out (or after LINGER_MS, if the peer does not read it).
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
  const s = socket as Partial<Socket>;
  if (typeof s.destroySoon === 'function') s.destroySoon();
  else socket.end(() => socket.destroy());
}

/** The path of the request target: origin-form (`/v1/decide?x`) or absolute-form (`http://host:port/v1/decide`, RFC 9112 §3.2.2). */
function targetPath(url: string): string {
  let start = 0;
  if (url.charCodeAt(0) !== 0x2f) {
    const scheme = url.indexOf('://');
    if (scheme === -1) return url; // `*`, or no form at all: routes nowhere
    const slash = url.indexOf('/', scheme + 3);
    const q = url.indexOf('?', scheme + 3);
    if (slash === -1 || (q !== -1 && q < slash)) return '/';
    start = slash;
  }
  const query = url.indexOf('?', start);
  if (query === -1) return start === 0 ? url : url.slice(start);
  return url.slice(start, query);
}

/**
 * The route's handler, after the checks that need only the request's head: the route and method,
 * the token, and for a body the media type, a declared length over --max-body, and the session
 * header. A request refused here is refused before `100 Continue` and before its body is read.
 */
function admit(req: IncomingMessage, o: RouteOptions): Handler {
  const path = targetPath(req.url ?? '/');
  const r = Object.hasOwn(ROUTES, path) ? ROUTES[path] : undefined;
  if (r === undefined) throw problem(404, 'not-found', 'Not found', `no route ${path}; the routes are ${Object.keys(ROUTES).join(', ')}`);
  const method = req.method ?? 'GET';
  const h = r.methods[method] ?? (method === 'HEAD' ? r.methods.GET : undefined);
  if (h === undefined) throw new HttpProblem({ type: 'urn:oarc:problem:method-not-allowed', title: 'Method not allowed', status: 405, detail: `${path} takes ${r.allow}` }, { allow: r.allow });
  // Health stays open: a load balancer's probe carries no token.
  if (o.token !== undefined && path !== '/v1/health' && !authorised(req, o.token)) {
    throw new HttpProblem(
      { type: 'urn:oarc:problem:unauthorized', title: 'Unauthorized', status: 401, detail: 'this service requires Authorization: Bearer <token>' },
      { 'www-authenticate': 'Bearer' },
    );
  }
  if (method === 'POST') {
    const type = req.headers['content-type'];
    // The common spelling skips the pattern.
    if (type !== 'application/json' && (type === undefined || !JSON_TYPE.test(type))) {
      throw problem(415, 'unsupported-media-type', 'Unsupported media type', type === undefined ? 'the body must be application/json, and the request has no Content-Type' : `the body must be application/json, not ${type}`, { header: 'content-type' });
    }
    checkSessionHeader(req);
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > o.maxBodyBytes) throw tooLarge(o.maxBodyBytes);
  return h;
}

function serving(o: RouteOptions) {
  const s = o.service.take();
  if (s === undefined) throw problem(503, 'not-ready', 'No pack loaded', 'the service has not loaded a pack yet; GET /v1/health says why');
  return s;
}

const badSession = (detail: string) => problem(400, 'invalid-header', 'Invalid header', `the Oarc-Session header ${detail}`, { header: SESSION_HEADER });

/**
 * One Oarc-Session header, naming a session of 1 to 1024 code units. node joins repeated headers
 * with ", ", so only a value with a comma in it has the raw headers counted.
 */
function checkSessionHeader(req: IncomingMessage): void {
  const h = req.headers[SESSION_HEADER];
  if (h === undefined) return;
  if (typeof h !== 'string' || (h.indexOf(',') !== -1 && sessionHeaderCount(req) > 1)) throw badSession('is repeated; a request names one session');
  if (h === '') throw badSession('is empty; name a session, or leave the header out');
  if (h.length > MAX_SESSION_LENGTH) throw badSession(`is ${h.length} characters long, over the limit of ${MAX_SESSION_LENGTH}`);
}

function sessionHeaderCount(req: IncomingMessage): number {
  let n = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if ((raw[i] as string).toLowerCase() === SESSION_HEADER) n++;
  return n;
}

/** The session header's value, once `admit` has checked it. */
function sessionHeader(req: IncomingMessage): string | undefined {
  return req.headers[SESSION_HEADER] as string | undefined;
}

/** Parse one occurrence (a 400 at `at` when malformed), its `session_id` no longer than the header's limit. */
function occurrenceAt(raw: unknown, session: string | undefined, at: (string | number)[], extra?: Partial<Problem>): Occurrence {
  let occ: Occurrence;
  try {
    occ = Service.occurrence(raw, session);
  } catch (e) {
    if (e instanceof HostInputError) throw invalidOccurrence(e, at, 'json', extra);
    throw e;
  }
  // The header's session was checked already: a longer one is the occurrence's own.
  if (occ.session !== undefined && occ.session.length > MAX_SESSION_LENGTH) {
    throw problem(400, 'invalid-occurrence', 'Invalid occurrence', `session_id is ${occ.session.length} characters long, over the limit of ${MAX_SESSION_LENGTH}`, { pointer: jsonPointer([...at, 'session_id']), ...extra });
  }
  return occ;
}

/**
 * An occurrence the engine refuses (an unknown anchor, member or fact) is bad input, not a fault.
 * The decision comes back as the service makes it: at once in memory, a promise through `--redis`.
 */
function decideChecked(o: RouteOptions, s: NonNullable<ReturnType<Service['take']>>, occ: Occurrence, raw: unknown, at: (string | number)[], extra?: Partial<Problem>): Decision | Promise<Decision> {
  const refused = (e: unknown): never => {
    if (e instanceof HostInputError) throw invalidOccurrence(e, at, 'ts', extra);
    throw e;
  };
  try {
    const d = o.service.decide(s, occ, raw);
    return d instanceof Promise ? d.catch(refused) : d;
  } catch (e) {
    return refused(e);
  }
}

/** The path of the whole body (never changed: a pointer is built from a copy). */
const TOP: (string | number)[] = [];

function decideOne(req: IncomingMessage, res: ServerResponse, o: RouteOptions): void {
  withJson(req, res, o, (body) => {
    const s = serving(o);
    const occ = occurrenceAt(body, sessionHeader(req), TOP);
    const d = decideChecked(o, s, occ, body, TOP);
    if (d instanceof Promise) return d.then((x) => send(res, 200, decisionJsonText(x), 'application/json'));
    send(res, 200, decisionJsonText(d), 'application/json');
  });
}

/**
 * A batch is decided in order, each occurrence after the one before it, as one session when they
 * share a session id. Every occurrence's shape is checked before any is decided; an occurrence the
 * engine refuses stops the batch there (`decided` says how many before it were decided and counted).
 */
function decideBatch(req: IncomingMessage, res: ServerResponse, o: RouteOptions): void {
  withJson(req, res, o, (body) => batch(req, res, o, body));
}

async function batch(req: IncomingMessage, res: ServerResponse, o: RouteOptions, body: unknown): Promise<void> {
  if (!Array.isArray(body)) throw problem(400, 'invalid-batch', 'Invalid batch', 'a batch is a JSON array of occurrences', { pointer: '' });
  const s = serving(o);
  const session = sessionHeader(req);
  const occs = body.map((raw, i) => occurrenceAt(raw, session, [i], { decided: 0 }));
  let out = '[';
  for (let i = 0; i < occs.length; i++) {
    const d = decideChecked(o, s, occs[i] as Occurrence, body[i], [i], { decided: i });
    out += `${i === 0 ? '' : ','}${decisionJsonText(d instanceof Promise ? await d : d)}`;
  }
  send(res, 200, `${out}]`, 'application/json');
}

function health(_req: IncomingMessage, res: ServerResponse, o: RouteOptions): void {
  const info = o.service.bundleInfo;
  const last = o.service.lastLoad;
  const loss = o.dataLoss?.();
  // A data loss leaves the service up and deciding — every counting rule fails closed — so it is
  // `degraded` with 200: a load balancer taking every replica out would turn blocks into outages.
  sendJson(res, info ? 200 : 503, {
    status: info ? (loss ? 'degraded' : 'ok') : 'not_ready',
    ...(info ? { revision: info.revision } : {}),
    ...(last ? { last_load: last } : {}),
    ...(loss ? { store: { data_loss: { at: loss.at.toISOString(), expected: loss.expected, found: loss.found, ...(loss.slot === undefined ? {} : { slot: loss.slot }) } } } : {}),
  });
}

function bundle(_req: IncomingMessage, res: ServerResponse, o: RouteOptions): void {
  const info = o.service.bundleInfo;
  if (info === undefined) throw problem(503, 'not-ready', 'No pack loaded', 'the service has not loaded a pack yet; GET /v1/health says why');
  sendJson(res, 200, info);
}

function metrics(_req: IncomingMessage, res: ServerResponse, o: RouteOptions): void {
  send(res, 200, o.metrics.render(), 'text/plain; version=0.0.4; charset=utf-8');
}
