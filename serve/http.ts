/**
 * The HTTP face of the service, on node:http: five routes, JSON bodies read with a size limit,
 * errors as RFC 9457 problem details. Bad input is a 400 naming the member (a JSON Pointer into
 * the request body) — never a decision and never a stack trace; a fault in oarc is a 500 whose id
 * is also in the service log, beside the stack.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HostInputError, decisionJsonText, occurrencePathToJson, type Decision, type Occurrence } from '../runtime/index.js';
import type { Metrics } from './metrics.js';
import { Service } from './service.js';

export interface RouteOptions {
  service: Service;
  metrics: Metrics;
  maxBodyBytes: number;
  /** The bearer token every route but health requires (`--token-file`). */
  token?: string;
  say: (line: string) => void;
}

/** The header a host may name a session in, for occurrences that carry no `session_id`. */
export const SESSION_HEADER = 'oarc-session';

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

/** The rest of an oversized body is not read: the connection closes after the 413. */
const tooLarge = (limit: number) =>
  new HttpProblem({ type: 'urn:oarc:problem:body-too-large', title: 'Request body too large', status: 413, detail: `the request body is over the limit of ${limit} bytes (--max-body)` }, { connection: 'close' });

/** `application/json`, or a structured suffix of it (`application/problem+json`), with parameters or not. */
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

const EMPTY = Buffer.alloc(0);

/**
 * Read the JSON body (up to `--max-body` bytes; one over is a 413 without reading the rest), then
 * call `then` with it. Every failure — of the body, or of `then`, thrown or rejected — is answered
 * by `fail`. Callbacks rather than a promise: a decision made in memory is answered in the turn
 * that delivered the body's last chunk, with no promise or microtask per request.
 */
function withJson(req: IncomingMessage, res: ServerResponse, o: RouteOptions, then: (body: unknown) => Promise<void> | void): void {
  const type = req.headers['content-type'];
  // The common spelling skips the pattern.
  if (type !== undefined && type !== 'application/json' && !JSON_TYPE.test(type)) {
    throw problem(415, 'unsupported-media-type', 'Unsupported media type', `the body must be application/json, not ${type}`);
  }
  const limit = o.maxBodyBytes;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
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
      req.resume();
      fail(o, res, tooLarge(limit));
      return;
    }
    if (first === undefined) first = c;
    else (chunks ??= [first]).push(c);
  });
  req.on('end', () => {
    if (done) return;
    done = true;
    try {
      const body = parseBody((chunks !== undefined ? Buffer.concat(chunks) : (first ?? EMPTY)).toString('utf8'));
      then(body)?.catch((e: unknown) => fail(o, res, e));
    } catch (e) {
      fail(o, res, e);
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
    fail(o, res, e);
  });
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
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

const ROUTES: Record<string, Partial<Record<string, Handler>>> = {
  '/v1/decide': { POST: decideOne },
  '/v1/decide/batch': { POST: decideBatch },
  '/v1/health': { GET: health },
  '/v1/bundle': { GET: bundle },
  '/metrics': { GET: metrics },
};

/** Answer a failure: a problem as its status, anything else as a 500 whose id is in the service log. */
function fail(o: RouteOptions, res: ServerResponse, e: unknown): void {
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
  send(res, p.problem.status, JSON.stringify(p.problem), 'application/problem+json', p.headers);
}

/** The request listener: route, authorise, and turn every failure — thrown or rejected — into a problem response. */
export function handler(o: RouteOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let pending: Promise<void> | void;
    try {
      pending = route(req, res, o);
    } catch (e) {
      fail(o, res, e);
      return;
    }
    pending?.catch((e: unknown) => fail(o, res, e));
  };
}

/** The route's handler, after the checks every route shares; a promise only from a route that reads a body. */
function route(req: IncomingMessage, res: ServerResponse, o: RouteOptions): Promise<void> | void {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const methods = Object.hasOwn(ROUTES, path) ? ROUTES[path] : undefined;
  if (methods === undefined) throw problem(404, 'not-found', 'Not found', `no route ${path}; the routes are ${Object.keys(ROUTES).join(', ')}`);
  const h = methods[req.method ?? 'GET'];
  if (h === undefined) {
    const allow = Object.keys(methods).join(', ');
    throw new HttpProblem({ type: 'urn:oarc:problem:method-not-allowed', title: 'Method not allowed', status: 405, detail: `${path} takes ${allow}` }, { allow });
  }
  // Health stays open: a load balancer's probe carries no token.
  if (o.token !== undefined && path !== '/v1/health' && !authorised(req, o.token)) {
    throw new HttpProblem(
      { type: 'urn:oarc:problem:unauthorized', title: 'Unauthorized', status: 401, detail: 'this service requires Authorization: Bearer <token>' },
      { 'www-authenticate': 'Bearer' },
    );
  }
  return h(req, res, o);
}

function serving(o: RouteOptions) {
  const s = o.service.take();
  if (s === undefined) throw problem(503, 'not-ready', 'No pack loaded', 'the service has not loaded a pack yet; GET /v1/health says why');
  return s;
}

function sessionHeader(req: IncomingMessage): string | undefined {
  const h = req.headers[SESSION_HEADER];
  return typeof h === 'string' ? h : undefined;
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

function decideOne(req: IncomingMessage, res: ServerResponse, o: RouteOptions): void {
  withJson(req, res, o, (body) => {
    const s = serving(o);
    let occ: Occurrence;
    try {
      occ = Service.occurrence(body, sessionHeader(req));
    } catch (e) {
      if (e instanceof HostInputError) throw invalidOccurrence(e, [], 'json');
      throw e;
    }
    const d = decideChecked(o, s, occ, body, []);
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
  const occs = body.map((raw, i) => {
    try {
      return Service.occurrence(raw, session);
    } catch (e) {
      if (e instanceof HostInputError) throw invalidOccurrence(e, [i], 'json', { decided: 0 });
      throw e;
    }
  });
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
  sendJson(res, info ? 200 : 503, {
    status: info ? 'ok' : 'not_ready',
    ...(info ? { revision: info.revision } : {}),
    ...(last ? { last_load: last } : {}),
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
