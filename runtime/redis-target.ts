/**
 * Where the shared counter store lives, as a command line or configuration file says it: one
 * server, a Redis Cluster (seed nodes), or a primary watched by Sentinels (sentinels + master
 * name). Parsing needs no Redis client, so `oarc serve --redis` / `oarc mcp --redis` can reject a
 * bad target before anything connects, and with a message saying what would be accepted.
 *
 *   redis://[user:pass@]host:6379[/db]              one server (rediss:// for TLS), passed to ioredis as is
 *   redis+cluster://[user:pass@]h1:p1,h2:p2         cluster seed nodes (rediss+cluster:// for TLS)
 *   redis+sentinel://[user:pass@]s1:p1,s2:p2/name   sentinels and the master name (rediss+sentinel://)
 *
 * Cluster seeds and sentinels may also be given as several texts of the same kind (a repeated
 * `--redis`): their hosts are joined, and every text must agree on the rest (credentials, master
 * name, TLS). Ports default to 6379 for servers and cluster nodes and to 26379 for sentinels. The
 * user and password are the data nodes' (for Sentinel: the primary's and replicas'); sentinels
 * that require a password of their own take `sentinelPassword` (`?sentinel_password=` in the
 * text).
 */

export interface HostPort {
  host: string;
  port: number;
}

export type RedisTarget =
  | { kind: 'server'; url: string }
  | { kind: 'cluster'; nodes: HostPort[]; username?: string; password?: string; tls: boolean }
  | { kind: 'sentinel'; sentinels: HostPort[]; name: string; username?: string; password?: string; sentinelPassword?: string; db?: number; tls: boolean };

const FORMS = 'redis://host:port, redis+cluster://host:port,host:port or redis+sentinel://host:port,host:port/mastername';

/** A target a person got wrong: the message names the text and what would be accepted. */
export class RedisTargetError extends Error {
  override readonly name = 'RedisTargetError';
}

function fail(text: string, why: string): never {
  throw new RedisTargetError(`Redis target ${JSON.stringify(redacted(text))}: ${why} (expected ${FORMS})`);
}

/**
 * A target's text fit for a message or a log: its password (after the user, before the last `@`
 * of the authority) and a `sentinel_password` parameter replaced by `***`. A userinfo without a
 * colon is replaced whole: `redis://secret@host` may be a password written where the user goes.
 */
export function redacted(text: string): string {
  const start = text.indexOf('://');
  if (start < 0) return text;
  const q = text.indexOf('?', start + 3);
  const authority = text.slice(start + 3, q < 0 ? text.length : q);
  const at = authority.lastIndexOf('@');
  let out = text.slice(0, start + 3);
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    const colon = userinfo.indexOf(':');
    out += `${colon < 0 ? '***' : `${userinfo.slice(0, colon)}:***`}${authority.slice(at)}`;
  } else out += authority;
  if (q >= 0) out += text.slice(q).replace(/([?&]sentinel_password=)[^&#]*/gi, '$1***');
  return out;
}

function hostPort(text: string, part: string, defaultPort: number): HostPort {
  let host: string;
  let portText: string | undefined;
  if (part.startsWith('[')) {
    // [IPv6]:port
    const end = part.indexOf(']');
    if (end < 0) fail(text, `unclosed [ in ${JSON.stringify(part)}`);
    host = part.slice(1, end);
    const rest = part.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) fail(text, `unexpected ${JSON.stringify(rest)} after ${JSON.stringify(part.slice(0, end + 1))}`);
    portText = rest === '' ? undefined : rest.slice(1);
  } else {
    const colon = part.lastIndexOf(':');
    host = colon < 0 ? part : part.slice(0, colon);
    portText = colon < 0 ? undefined : part.slice(colon + 1);
  }
  if (host === '') fail(text, `a host is missing in ${JSON.stringify(part)}`);
  if (portText === undefined) return { host, port: defaultPort };
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) fail(text, `port ${JSON.stringify(portText)} is not a number from 1 to 65535`);
  return { host, port: Number(portText) };
}

type Multi = Exclude<RedisTarget, { kind: 'server' }>;

function parseOne(text: string): RedisTarget {
  const m = /^([a-z+]+):\/\/(.*)$/is.exec(text.trim());
  if (m === null) fail(text, 'no scheme');
  const scheme = (m[1] as string).toLowerCase();
  const rest = m[2] as string;
  if (scheme === 'redis' || scheme === 'rediss') {
    if (rest.includes(',')) fail(text, `several hosts need redis+cluster:// or redis+sentinel://`);
    let url: URL | undefined;
    try {
      url = new URL(text.trim());
    } catch {
      fail(text, 'not a URL');
    }
    try {
      // The client decodes them when it connects, where a bad escape is an error naming nothing.
      decodeURIComponent(url.username);
      decodeURIComponent(url.password);
    } catch {
      fail(text, 'the user or password is not valid percent-encoding');
    }
    return { kind: 'server', url: text.trim() };
  }
  const kind = scheme === 'redis+cluster' || scheme === 'rediss+cluster' ? 'cluster' : scheme === 'redis+sentinel' || scheme === 'rediss+sentinel' ? 'sentinel' : undefined;
  if (kind === undefined) fail(text, `unknown scheme ${JSON.stringify(m[1])}`);
  const tls = scheme.startsWith('rediss');
  // userinfo@hosts[/name][?query]
  let body = rest;
  let query = '';
  const q = body.indexOf('?');
  if (q >= 0) {
    query = body.slice(q + 1);
    body = body.slice(0, q);
  }
  const at = body.lastIndexOf('@');
  const userinfo = at < 0 ? undefined : body.slice(0, at);
  body = at < 0 ? body : body.slice(at + 1);
  const slash = body.indexOf('/');
  const hosts = slash < 0 ? body : body.slice(0, slash);
  const path = slash < 0 ? '' : body.slice(slash + 1).replace(/\/$/, '');
  if (hosts === '') fail(text, 'no host');
  const list = hosts.split(',').map((h) => hostPort(text, h, kind === 'sentinel' ? 26379 : 6379));
  let username: string | undefined;
  let password: string | undefined;
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':');
    const dec = (s: string) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return fail(text, 'the user or password is not valid percent-encoding');
      }
    };
    const u = dec(colon < 0 ? userinfo : userinfo.slice(0, colon));
    if (u !== '') username = u;
    if (colon >= 0) password = dec(userinfo.slice(colon + 1));
  }
  const params = new URLSearchParams(query);
  const known = kind === 'sentinel' ? ['sentinel_password', 'db'] : [];
  for (const k of params.keys()) if (!known.includes(k)) fail(text, `unknown parameter ${JSON.stringify(k)}${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}`);
  const auth = { ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }) };
  if (kind === 'cluster') {
    if (path !== '') fail(text, `a cluster has no database or name (${JSON.stringify('/' + path)}); Redis Cluster has only database 0`);
    return { kind, nodes: list, ...auth, tls };
  }
  if (path === '') fail(text, 'the master name is missing: redis+sentinel://host:port/mastername');
  const db = params.get('db');
  if (db !== null && !/^[0-9]+$/.test(db)) fail(text, `db ${JSON.stringify(db)} is not a number`);
  const sp = params.get('sentinel_password');
  let name: string;
  try {
    name = decodeURIComponent(path);
  } catch {
    return fail(text, 'the master name is not valid percent-encoding');
  }
  return { kind, sentinels: list, name, ...auth, ...(sp === null ? {} : { sentinelPassword: sp }), ...(db === null ? {} : { db: Number(db) }), tls };
}

/** Turn one `--redis` text, or several (a repeated option), into a target; throws RedisTargetError. */
export function parseRedisTarget(texts: string | readonly string[]): RedisTarget {
  const all = typeof texts === 'string' ? [texts] : [...texts];
  if (all.length === 0) throw new RedisTargetError(`no Redis target given (expected ${FORMS})`);
  const parsed = all.map(parseOne);
  if (parsed.length === 1) return parsed[0] as RedisTarget;
  const first = parsed[0] as RedisTarget;
  if (first.kind === 'server' || parsed.some((p) => p.kind === 'server')) {
    throw new RedisTargetError(`several Redis targets (${all.map((t) => JSON.stringify(redacted(t))).join(', ')}) are seed nodes of one cluster or sentinels of one primary: write them redis+cluster://… or redis+sentinel://…/mastername`);
  }
  const hostsOf = (p: Multi) => (p.kind === 'cluster' ? p.nodes : p.sentinels);
  const rest = (p: Multi) => JSON.stringify({ ...p, nodes: undefined, sentinels: undefined });
  for (const [i, p] of parsed.entries()) {
    if (p.kind !== first.kind || rest(p as Multi) !== rest(first)) {
      throw new RedisTargetError(`Redis targets ${JSON.stringify(redacted(all[0] as string))} and ${JSON.stringify(redacted(all[i] as string))} disagree (kind, credentials, TLS or master name): repeated targets name more hosts of one cluster or one Sentinel set`);
    }
  }
  const hosts = parsed.flatMap((p) => hostsOf(p as Multi));
  return first.kind === 'cluster' ? { ...first, nodes: hosts } : { ...first, sentinels: hosts };
}

/** The target as a person would write it, without its password (for logs). */
export function describeRedisTarget(t: RedisTarget): string {
  const hp = (h: HostPort) => (h.host.includes(':') ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`);
  if (t.kind === 'server') {
    try {
      const u = new URL(t.url);
      if (u.password !== '') u.password = '***';
      return u.toString();
    } catch {
      return t.url;
    }
  }
  const s = t.tls ? 'rediss' : 'redis';
  if (t.kind === 'cluster') return `${s}+cluster://${t.nodes.map(hp).join(',')}`;
  return `${s}+sentinel://${t.sentinels.map(hp).join(',')}/${t.name}`;
}
