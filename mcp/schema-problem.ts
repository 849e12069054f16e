/**
 * One line saying why the MCP SDK's schema refused a message. Its error is a zod error whose
 * message is the whole issue tree as indented JSON — some sixty lines for a request with one
 * member too many, since a JSON-RPC message is a union of four shapes and each says what it
 * missed. The line names the issues of the shape that came nearest (the fewest issues).
 */

interface Issue {
  code?: unknown;
  path?: unknown;
  message?: unknown;
  /** zod 4: each branch's issues. */
  errors?: unknown;
  /** zod 3: each branch's error. */
  unionErrors?: unknown;
}

const MAX = 300;

export function schemaProblem(e: unknown): string {
  const issues = (e as { issues?: unknown } | null)?.issues;
  if (Array.isArray(issues) && issues.length > 0) {
    const text = nearest(issues as Issue[]).map(describe).join('; ');
    if (text !== '') return clip(text);
  }
  return firstLine(e);
}

/** An error's message as one line: its first, clipped. */
export function firstLine(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return clip(message.split('\n', 1)[0] ?? '');
}

function nearest(issues: Issue[]): Issue[] {
  for (let depth = 0; depth < 8 && issues.length === 1 && issues[0]?.code === 'invalid_union'; depth++) {
    const u = issues[0] as Issue;
    const branches = Array.isArray(u.errors)
      ? (u.errors as Issue[][])
      : Array.isArray(u.unionErrors)
        ? (u.unionErrors as { issues?: Issue[] }[]).map((b) => b.issues ?? [])
        : [];
    const best = branches.filter((b) => Array.isArray(b) && b.length > 0).sort((a, b) => a.length - b.length)[0];
    if (best === undefined) break;
    issues = best;
  }
  return issues;
}

function describe(i: Issue): string {
  const path = Array.isArray(i.path) && i.path.length > 0 ? `${i.path.map(String).join('.')}: ` : '';
  return `${path}${typeof i.message === 'string' ? i.message : String(i.code ?? 'invalid')}`;
}

function clip(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > MAX ? `${one.slice(0, MAX - 1)}…` : one;
}
