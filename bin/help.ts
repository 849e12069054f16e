/** The help texts: `oarc --help` and `oarc <command> --help`. */

const EXIT = `Exit status:
  0   success
  1   errors in the input: load diagnostics, a missing or unreadable file, an occurrence
      that cannot be decided, a failed conformance run
  2   usage error: unknown command or option, missing option or argument
  70  internal error in oarc`;

export const TOP = `oarc — an Open Agent Rules (OAR) 1.0 engine that compiles rule packs to JavaScript

Usage: oarc <command> [options]

Commands:
  compile      load and check rule documents, write a bundle module
  check        load and check rule documents, write nothing
  eval         decide occurrences against rule documents or a compiled bundle
  portability  report which rules are portable and exactly why not ([OAR-PROF-8])
  conformance  run conformance fixtures (the corpus, or your own) through oarc
  bench        run oarc's own benchmarks (from a clone of the repository)

Options:
  -h, --help      show this help; \`oarc <command> --help\` for a command
  -v, --version   print the version

Rule files are YAML or JSON: one rule, a multi-document YAML stream or a JSON array of rules;
a directory is read recursively (*.json, *.yaml, *.yml). Diagnostics are printed on stderr as
  file:line:col: message [OAR-XXX-n]

Colour is used only when the output is a terminal and NO_COLOR is unset.

${EXIT}
`;

const PACK_OPTIONS = `      --capability <file>   the host's capability document (section 8.2 of the spec); required
      --config <file>       an operator configuration document (section 9); repeatable,
                            applied in the order given
      --allow-empty         accept a pack with no rules (it allows everything); without it,
                            no rules is an error`;

export const COMMANDS: Record<string, string> = {
  compile: `Usage: oarc compile <rules…> --capability <file> [--config <file>…] -o <bundle.mjs> [--dts] [--root <dir>] [--runtime <specifier>]

Load and check the rule documents against the capability document, then write the pack as an
ES module bundle. Errors and warnings are printed on stderr; any error exits 1 and writes
nothing, warnings alone do not fail the build. The same pack gives the same bytes wherever it
is compiled: rule sources are recorded relative to --root.

Options:
${PACK_OPTIONS}
  -o, --output <file>       where to write the bundle module; \`-\` writes it to stdout
      --dts                 also write TypeScript declarations beside it (gateway.bundle.d.mts
                            for gateway.bundle.mjs): the default export as a Bundle, and the
                            HostAnchor and HostOccurrence types naming the bundle's anchors
      --root <dir>          the directory rule sources are recorded relative to in the bundle
                            (default: the working directory); diagnostics keep the paths given
      --runtime <specifier> the module the bundle imports its runtime helpers from, written
                            into the bundle verbatim (default: oarc/runtime/internal). A bare
                            specifier resolves from the bundle's location: install oarc beside
                            it, or give a URL such as file:///…/oarc/dist/runtime/internal.js
  -h, --help                show this help

Example:
  oarc compile examples/gateway/rules.yaml --capability examples/gateway/capability.yaml -o gateway.bundle.mjs --dts

${EXIT}
`,

  check: `Usage: oarc check <rules…> --capability <file> [--config <file>…] [--format <format>] [--max-warnings <n>]

Load and check the rule documents exactly as \`oarc compile\` does, and write nothing. Every
error is reported in one pass, in reading order (file, line, column), each naming its rule and,
where a declared name is close, the one probably meant. Warnings point out valid OAR that is
almost surely a mistake (codes oarc/…): a counter read but never incremented, a rule never
selected, a condition that is false, a monitor rule's overrides, an on_error substitute bound
to another anchor.

Options:
${PACK_OPTIONS}
      --format <format>     text (default: diagnostics with a code frame on stderr), json
                            ({ ok, errors, warnings, diagnostics } on stdout), sarif (SARIF
                            2.1.0 on stdout, for code-scanning upload) or github (workflow
                            commands: annotations on the pull request)
      --json                the same as --format json
      --max-warnings <n>    fail (exit 1) when there are more than n warnings
  -h, --help                show this help

${EXIT}
`,

  eval: `Usage: oarc eval <bundle.mjs | rules…> --occurrence <file|-> [--capability <file>] [options]

Decide anchor occurrences and print each decision with its trace. The rules are either a
compiled bundle (a .mjs or .js file, which carries its capability; --capability is then
optional and, when given, must describe the same host) or rule documents, compiled in process
(--capability is then required).

An occurrence is written as a conformance fixture writes one:
  { "anchor": "tool.pre_invoke",               the host-local anchor ([OAR-CONF-29])
    "tool_call": { "name": "bash", "arguments": { "command": "ls" } },
    "facts": { … }, "detector_facts": { … }, "content": "…",
    "recent_activity": ["read", …], "session_id": "…" }
Only "anchor" is required. The --occurrence input is one such object (JSON or YAML), a JSON
array of them, or JSON Lines — one object per line. Several occurrences are decided in order
as one session, sharing counters and activity. \`-\` reads stdin, deciding each line as it
arrives. A line that cannot be read or decided ends the session there, reported at its line and
column (exit 1): deciding the lines after it without it would show them counters and recent
activity that never happened.

Options:
      --capability <file>   the capability document (required with rule documents)
      --config <file>       an operator configuration document; repeatable (rule documents only)
      --occurrence <file|-> the occurrence(s) to decide; required
      --detectors <module>  a JavaScript module whose default export maps detector://
                            references to detector functions, for rules of kind detector:
                            ({ ref, rule, anchor, occurrence, facts }) => ({ fact: value, … }),
                            facts as observations, never a verdict; throwing is a failure. The three reserved detectors (detector://noop,
                            detector://error, detector://fixture) are built in. For the
                            example pack: --detectors examples/gateway/detectors.mjs
      --session <id>        the session of occurrences that carry no session_id
      --json                print each Decision object as one line of JSON
  -h, --help                show this help

Examples:
  oarc eval examples/gateway/rules.yaml --capability examples/gateway/capability.yaml \\
    --detectors examples/gateway/detectors.mjs --occurrence examples/gateway/occurrence.json
  oarc eval gateway.bundle.mjs --detectors examples/gateway/detectors.mjs \\
    --occurrence - < examples/gateway/session.jsonl

${EXIT}
`,

  portability: `Usage: oarc portability <rules…> --capability <file> [--config <file>…] [--json] [--strict]

Report, for every rule, whether it is portable ([OAR-PROF-6]) and exactly what makes it not:
a host-native anchor, a host-tier fact or function. A non-portable rule is legal, so this is a
report and not a load failure ([OAR-PROF-8]); the command fails only when the pack does not load
at all — or, with --strict, when a rule is not portable.

Options:
${PACK_OPTIONS}
      --json                print { "ok", "portable", "rules": [{ rule, portable, reasons, notes }] }
      --strict              exit 1 when any rule is not portable
  -h, --help                show this help

${EXIT}
`,

  conformance: `oarc conformance — run conformance fixtures ([OAR-CONF-17]) through oarc's own loader and
engine ([OAR-CONF-38]) and print the report: every case with its verdict (passed, failed,
skipped with the capability that could not be adopted, or errored). Directories are read
recursively. Exits 0 when no case failed or errored, 1 when one did or no fixture was found,
2 for a usage error.

Example (the corpus is in a clone of the repository; the installed package runs fixtures you give it):
  oarc conformance conformance/fixtures

The runner's own usage:
`,

  bench: `Usage: oarc bench [--quick] [--only=<section,…>] [--json]

Run oarc's own benchmarks (bench/: generated packs, against hand-written and third-party
baselines) in this process and print the report as markdown on stdout, with progress on stderr.
Every figure is a median of interleaved samples; on a shared machine read the ratios, not the
absolute times. A full run writes bench/results/<section>.json.

The benchmarks run from a clone of the oarc repository (npm ci && npm run bench); the installed
package does not include them, and there this command says so and exits 2.

Options:
      --quick               tiny counts for a smoke run: the numbers mean nothing, and no
                            result file is written
      --only <section,…>    run only these sections: conditions, decide, alloc, compile
      --json                print the results as JSON instead of markdown
  -h, --help                show this help

${EXIT}
`,
};
