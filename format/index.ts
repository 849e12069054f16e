/**
 * `oarc fmt` as a library: the canonical layout of rule documents (YAML and JSON), and the files
 * it applies to.
 *
 *   const r = formatText(readFileSync('rules.yaml', 'utf8'), 'rules.yaml');
 *   if (r.ok && r.text !== before) process.stdout.write(unifiedDiff(before, r.text, 'a', 'b'));
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { formatJson } from './json.js';
import { formatYaml, type FormatOutcome } from './yaml.js';

export { RULE_FIELDS, NESTED_FIELDS } from './order.js';
export { unifiedDiff } from './diff.js';
export type { FormatOutcome, FormatProblem } from './yaml.js';

/** Format a rule file's text; `file` decides the syntax (`.json` is JSON, anything else YAML). */
export function formatText(text: string, file: string): FormatOutcome {
  return /\.json$/i.test(file) ? formatJson(text, file) : formatYaml(text);
}

const RULE_FILE = /\.(json|ya?ml)$/i;
const TEST_FILE = /\.test\.(json|ya?ml)$/i;

/**
 * The files `oarc fmt` formats under `paths`: a file given is taken whatever its name; a
 * directory is searched recursively for `*.json`, `*.yaml` and `*.yml`, passing over test files
 * (`*.test.yaml`, …), `node_modules` and dot-directories. Sorted by path within each directory.
 */
export function formatTargets(paths: readonly string[]): { files: string[]; unreadable: string[] } {
  const files: string[] = [];
  const unreadable: string[] = [];
  const walk = (dir: string, found: string[]) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && !e.name.startsWith('.')) walk(full, found);
      } else if (e.isFile() && RULE_FILE.test(e.name) && !TEST_FILE.test(e.name)) found.push(full);
    }
  };
  for (const p of paths) {
    try {
      if (!statSync(p).isDirectory()) {
        files.push(p);
        continue;
      }
      const found: string[] = [];
      walk(p, found);
      files.push(...found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    } catch {
      unreadable.push(p);
    }
  }
  return { files, unreadable };
}
