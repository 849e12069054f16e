/**
 * The SARIF 2.1.0 requirements a code-scanning upload depends on, checked on oarc's output: the
 * version, a tool driver with a name, results whose level is one of the four, whose message has
 * text, whose ruleIndex names the driver rule with the result's ruleId, and whose regions are
 * 1-based with the end not before the start. Returns one message per violation.
 */
const LEVELS = new Set(['none', 'note', 'warning', 'error']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const positive = (v: unknown) => Number.isInteger(v) && (v as number) >= 1;

export function validateSarif(log: unknown): string[] {
  const out: string[] = [];
  if (!isObject(log)) return ['the log is not an object'];
  if (log.version !== '2.1.0') out.push(`version is ${String(log.version)}, not 2.1.0`);
  if (!Array.isArray(log.runs) || log.runs.length === 0) return [...out, 'runs is not a non-empty array'];
  log.runs.forEach((run: unknown, r) => {
    if (!isObject(run) || !isObject(run.tool) || !isObject(run.tool.driver) || typeof run.tool.driver.name !== 'string') {
      out.push(`runs[${r}].tool.driver.name is missing`);
      return;
    }
    const rules = Array.isArray(run.tool.driver.rules) ? (run.tool.driver.rules as unknown[]) : [];
    if (!Array.isArray(run.results)) return void out.push(`runs[${r}].results is not an array`);
    run.results.forEach((res: unknown, i) => {
      const at = `runs[${r}].results[${i}]`;
      if (!isObject(res)) return void out.push(`${at} is not an object`);
      if (!isObject(res.message) || typeof res.message.text !== 'string' || res.message.text === '') out.push(`${at}.message.text is missing`);
      if (!LEVELS.has(String(res.level))) out.push(`${at}.level ${String(res.level)} is not none, note, warning or error`);
      const rule = typeof res.ruleIndex === 'number' ? rules[res.ruleIndex] : undefined;
      if (!isObject(rule) || rule.id !== res.ruleId) out.push(`${at}.ruleIndex does not name rule ${String(res.ruleId)}`);
      const locations = Array.isArray(res.locations) ? res.locations : [];
      for (const loc of locations) {
        const pl = isObject(loc) && isObject(loc.physicalLocation) ? loc.physicalLocation : undefined;
        if (!pl || !isObject(pl.artifactLocation) || typeof pl.artifactLocation.uri !== 'string') out.push(`${at}: a location has no artifactLocation.uri`);
        const reg = pl && isObject(pl.region) ? pl.region : undefined;
        if (!reg || !positive(reg.startLine) || !positive(reg.startColumn)) {
          out.push(`${at}: a region has no 1-based startLine and startColumn`);
          continue;
        }
        if (reg.endLine !== undefined && (!positive(reg.endLine) || (reg.endLine as number) < (reg.startLine as number))) out.push(`${at}: endLine before startLine`);
        if (reg.endLine === reg.startLine && reg.endColumn !== undefined && (reg.endColumn as number) <= (reg.startColumn as number)) out.push(`${at}: an empty or reversed region`);
      }
    });
  });
  return out;
}
