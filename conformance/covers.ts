/**
 * [OAR-CONF-17] `covers` MUST list clause identifiers this specification defines. The defined ids
 * are the committed clause list (`conformance/clauses.json`, which the coverage check reads too),
 * imported so that it ships with the runner. A retired clause is still defined: citing one is the
 * coverage check's concern (it binds nothing), not a reason to refuse the fixture.
 */
import spec from './clauses.json' with { type: 'json' };
import { closest } from '../runtime/suggest.js';

const DEFINED: readonly string[] = (spec.clauses as { id: string }[]).map((c) => c.id);
const DEFINED_SET: ReadonlySet<string> = new Set(DEFINED);

/** The first id of `covers` the specification does not define, with the nearest one it does. */
export function undefinedClause(covers: readonly string[]): { id: string; nearest: string | undefined } | undefined {
  const id = covers.find((c) => !DEFINED_SET.has(c));
  return id === undefined ? undefined : { id, nearest: nearestClause(id) };
}

/**
 * The defined clause nearest `id`: a close spelling (`OAR-EVAL-4` for `OAR-EVL-4`), else the
 * clause of the same family whose number is nearest (`OAR-EVAL-31` for `OAR-EVAL-99` when the
 * family ends there), the family itself found by spelling when misspelt.
 */
export function nearestClause(id: string): string | undefined {
  const m = /^(OAR-[A-Za-z]+)-([0-9]+)$/.exec(id.trim());
  if (m === null) return closest(id, DEFINED);
  const families = [...new Set(DEFINED.map((d) => d.slice(0, d.lastIndexOf('-'))))];
  const family = families.includes((m[1] as string).toUpperCase()) ? (m[1] as string).toUpperCase() : closest(m[1] as string, families);
  const spelled = closest(id, DEFINED);
  if (family === undefined) return spelled;
  const inFamily = `${family}-${Number(m[2])}`;
  if (DEFINED_SET.has(inFamily)) return inFamily;
  let best: string | undefined;
  let bestGap = Infinity;
  for (const d of DEFINED) {
    if (!d.startsWith(`${family}-`)) continue;
    const gap = Math.abs(Number(d.slice(family.length + 1)) - Number(m[2]));
    if (gap < bestGap) {
      best = d;
      bestGap = gap;
    }
  }
  return best ?? spelled;
}
