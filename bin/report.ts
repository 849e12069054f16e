/**
 * Diagnostics in the forms CI reads: `json` (oarc's own), `sarif` (SARIF 2.1.0, for code-scanning
 * upload) and `github` (workflow commands, shown as annotations on the pull request). The text form
 * is `printDiagnostics` (output.ts).
 */
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { COMPILER_VERSION } from '../compiler/version.js';
import { inert, type Diagnostic } from '../compiler/diagnostics.js';
import { toJson } from './output.js';

export const FORMATS = ['text', 'json', 'sarif', 'github'] as const;
export type Format = (typeof FORMATS)[number];

export function jsonReport(ok: boolean, diagnostics: readonly Diagnostic[]): string {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  return `${toJson({ ok, errors, warnings: diagnostics.length - errors, diagnostics }, 2)}\n`;
}

/** A SARIF artifact URI: a relative path stays relative (to the working directory), with `/`. */
function uri(file: string): string {
  return isAbsolute(file) ? pathToFileURL(file).href : file.split('\\').join('/').split('/').map(encodeURIComponent).join('/');
}

function region(d: Diagnostic): Record<string, number> {
  const s = d.source ?? {};
  const r: Record<string, number> = { startLine: s.line ?? 1, startColumn: s.column ?? 1 };
  if (s.endLine !== undefined && s.endColumn !== undefined) {
    r.endLine = s.endLine;
    r.endColumn = s.endColumn;
  }
  return r;
}

export function sarifReport(diagnostics: readonly Diagnostic[]): string {
  const ids = [...new Set(diagnostics.map((d) => d.clause))].sort();
  const rules = ids.map((id) => ({
    id,
    name: id,
    shortDescription: { text: id.startsWith('OAR-') ? `Open Agent Rules 1.0, clause ${id}` : `oarc check ${id}` },
    ...(id.startsWith('OAR-') ? { helpUri: 'https://openagentrules.org/spec/1.0/' } : {}),
  }));
  const results = diagnostics.map((d) => ({
    ruleId: d.clause,
    ruleIndex: ids.indexOf(d.clause),
    level: d.severity,
    message: { text: d.rule !== undefined && !d.message.includes(d.rule) ? `rule ${d.rule}: ${d.message}` : d.message },
    locations: [{ physicalLocation: { artifactLocation: { uri: uri(d.source?.file ?? '<input>') }, region: region(d) } }],
    properties: {
      ...(d.rule !== undefined ? { rule: d.rule } : {}),
      ...(d.token !== undefined ? { token: d.token } : {}),
      ...(d.suggestion !== undefined ? { suggestion: d.suggestion } : {}),
      ...(d.path !== undefined ? { path: d.path } : {}),
    },
  }));
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'oarc', version: COMPILER_VERSION, informationUri: 'https://openagentrules.org/spec/1.0/', rules } },
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  };
  return `${toJson(log, 2)}\n`;
}

/** Workflow-command escaping: data escapes `%`, CR and LF; a property also `:` and `,`. */
const data = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const property = (s: string) => data(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

export function githubReport(diagnostics: readonly Diagnostic[]): string {
  return diagnostics
    .map((d) => {
      const s = d.source ?? {};
      const props = [`file=${property(s.file ?? '<input>')}`, `line=${s.line ?? 1}`, `col=${s.column ?? 1}`];
      if (s.endLine !== undefined && s.endColumn !== undefined) props.push(`endLine=${s.endLine}`, `endColumn=${s.endColumn}`);
      props.push(`title=${property(d.rule === undefined ? d.clause : `${d.clause} ${d.rule}`)}`);
      const rule = d.rule !== undefined && !d.message.includes(d.rule) ? `rule ${d.rule}: ` : '';
      return `::${d.severity} ${props.join(',')}::${data(inert(`${rule}${d.message} [${d.clause}]`))}\n`;
    })
    .join('');
}
