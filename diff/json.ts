/** JSON text in which a bigint (an int beyond ±(2^53−1)) is the exact JSON integer, as bin/output.ts writes it. */
export function toJsonText(value: unknown): string {
  return write(value) ?? 'null';
}

function write(v: unknown): string | undefined {
  if (typeof v === 'bigint') return v.toString();
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => write(x) ?? 'null').join(',')}]`;
  const members: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    const t = write(x);
    if (t !== undefined) members.push(`${JSON.stringify(k)}:${t}`);
  }
  return `{${members.join(',')}}`;
}
