/** The help texts: `oarc --help` and `oarc <command> --help`. */
import { REDIS_HELP } from './redis-options.js';

/** `oarc --help`'s exit statuses, every command's, in numeric order. */
const EXIT = `Exit status:
  0   success
  1   errors in the input: load diagnostics, a missing or unreadable file, an occurrence
      that cannot be decided, a failed conformance run
  2   usage error: unknown command or option, missing option or argument
  3   oarc eval --fail-on: an occurrence was decided with one of the listed effects
  4   oarc bench --baseline: slower than the baseline beyond threshold, floor and noise
  70  internal error in oarc`;

/** `oarc compile --help`'s: it decides nothing and runs no conformance, so says neither. */
const COMPILE_EXIT = `Exit status:
  0   the bundle was written (warnings alone do not fail the build)
  1   the pack does not load: a load diagnostic, a missing or unreadable file, no rules
      without --allow-empty; or the bundle or its declarations cannot be written
  2   usage error: unknown option, no rule files, missing --capability or -o, --dts with
      -o -, a --root that is not a directory
  70  internal error in oarc`;

/** `oarc eval --help`'s: what eval reads and decides, and its own --fail-on status. */
const EVAL_EXIT = `Exit status:
  0   every occurrence was decided (whatever the decisions, unless --fail-on says otherwise)
  1   errors in the input: load diagnostics, a missing or unreadable file (rules, capability,
      bundle, occurrences, detectors module), a bundle that does not match --capability, an
      occurrence that cannot be read or decided (the session ends at it)
  2   usage error: unknown option, no bundle or rule files, missing --occurrence or
      --capability, both a bundle and rule files, a bad --fail-on
  3   --fail-on: an occurrence was decided with a listed effect (distinct from 1, so a
      script can tell "the pack decided block" from "the pack or occurrence is broken")
  70  internal error in oarc`;

export const TOP = `oarc — an Open Agent Rules (OAR) 1.0 engine that compiles rule packs to JavaScript

Usage: oarc <command> [options]

Commands:
  compile      load and check rule documents, write a bundle module
  check        load and check rule documents, write nothing
  eval         decide occurrences against rule documents or a compiled bundle
  portability  report which rules are portable and exactly why not ([OAR-PROF-8])
  test         run a pack's test files (*.test.yaml): expected decisions, coverage
  fmt          lay rule documents out canonically; --check for CI, --write to fix
  corpus       check a prompt-injection corpus; measure detector://injection-corpus on a labeled set
  serve        serve decisions over HTTP (a REST API, reload, health, metrics, decision log)
  mcp          put a pack in front of an MCP server: decide every tools/call and its result
  conformance  run conformance fixtures (the corpus, or your own) through oarc
  bench        benchmark your pack on your occurrences; --baseline gates CI on a regression
  fuzz         differential fuzzing of a pack: oarc's back ends (and another engine) must agree
  adapter      speak the engine protocol (docs/engine-protocol.md) on stdin/stdout, for fuzz --against
  diff         what a pack change does to decisions: old and new pack on the same occurrences

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

${COMPILE_EXIT}
`,

  check: `Usage: oarc check <rules…> --capability <file> [--config <file>…] [--format <format>] [--max-warnings <n>] [--watch]

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
      --watch               check again whenever a file the check read changes (a new file in
                            a rules directory too); runs until interrupted
  -h, --help                show this help

Exit status:
  0   the pack loads with no error (warnings alone pass, up to --max-warnings). --watch runs
      until interrupted, whatever each check finds
  1   the pack does not load: a load diagnostic, an unreadable file, no rules without
      --allow-empty; or more warnings than --max-warnings
  2   usage error: unknown option, no rule files, missing --capability, a bad --format or
      --max-warnings
  70  internal error in oarc
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
      --injection-corpus <file>
                            register detector://injection-corpus over this JSONL corpus;
                            repeatable (see oarc corpus --help). A corpus that does not load
                            is a warning here and the invoking rule's on_error when it runs
      --session <id>        the session of occurrences that carry no session_id
      --json                print each Decision object as one line of JSON
      --fail-on <effects>   exit 3 when any occurrence is decided with one of these effects,
                            a comma-separated list of block, transform, nudge, warn; every
                            occurrence is still decided and printed
  -h, --help                show this help

Examples:
  oarc eval examples/gateway/rules.yaml --capability examples/gateway/capability.yaml \\
    --detectors examples/gateway/detectors.mjs --occurrence examples/gateway/occurrence.json
  oarc eval gateway.bundle.mjs --detectors examples/gateway/detectors.mjs \\
    --occurrence - < examples/gateway/session.jsonl
  oarc eval gateway.bundle.mjs --occurrence request.json --fail-on block   # gate a CI step

${EVAL_EXIT}
`,

  test: `Usage: oarc test [paths…] [--format text|json|junit] [--coverage] [--threshold <P>]
                 [--backend compiled|interpreter|both] [--watch] [--verbose]

Run a pack's tests. Test files (*.test.yaml, *.test.yml, *.test.json) are found under the
paths given (default: the working directory; node_modules and dot-directories are passed over).
A test file names its pack and lists tests, each an occurrence (or a session of them) and the
decision expected:

  capability: ../capability.yaml        # paths are relative to the test file
  rules: [../rules/]                    # files or directories, as for oarc check
  configs: [../operator.yaml]           # optional: configuration documents
  detectors: ./detectors.mjs            # optional: a module as for oarc eval --detectors
  injection_corpus: [./corpus.jsonl]    # optional: detector://injection-corpus over these
                                        # corpus files; one that does not load fails to on_error
  tests:
    - name: blocks a recursive delete
      occurrence: { anchor: tool.pre_invoke, tool_call: { name: bash, arguments: { command: "rm -rf /" } } }
      expect: { decision: block, rule: acme.security/BLOCK_RM_RF }
    - name: nudges on the second identical call
      occurrences:                      # one session, decided in order
        - { anchor: tool.pre_invoke, tool_call: { name: grep, arguments: { pattern: x } } }
        - { anchor: tool.pre_invoke, tool_call: { name: grep, arguments: { pattern: x } },
            expect: { decision: nudge } }

An occurrence is written as for oarc eval. expect names members of the decision's JSON form —
decision, code, rule, copy, content, advisories, applied, counters, events, transforms, on_fire,
skipped_transforms — and each is compared exactly as a conformance fixture's expected is; the
members it does not name are not compared. A test-level expect beside occurrences describes the
last decision, and counters over the whole session.

Every failing test is printed as file:line: name, then what differed; then the summary line
"N passed, N failed". A pack that does not load, or a test file that cannot be read, is a
failure with the reasons; so is an occurrence the engine refuses (an unknown anchor, member or
fact name), located at the member.

Options:
      --format <f>          text (default), json (the whole report) or junit (JUnit XML for
                            CI test reports; with --coverage the table goes to stderr)
      --coverage            per rule, how many tests selected, fired, passed and errored it,
                            and the rules no test fired and no test passed
      --threshold <P>       fail unless at least P% of the rules were both fired and passed by
                            some test (compared exactly: 9999 of 10000 rules is below 100)
      --backend <b>         compiled (default), interpreter, or both: run every test on both
                            back ends and fail it on any difference between their decisions
      --watch               run again whenever a file the run read changes; until interrupted
  -v, --verbose             also list the tests that passed
  -h, --help                show this help

Example:
  oarc test examples/gateway --coverage

Exit status:
  0   every test passed (and the coverage threshold was met)
  1   a test failed, a test file or its pack could not be loaded, no test file was found, or
      coverage is below --threshold
  2   usage error: unknown option, a bad --format, --backend or --threshold
  70  internal error in oarc
`,

  fmt: `Usage: oarc fmt [paths…] [--check | --write]

Lay rule documents out canonically, so a pull request shows changes to rules and not to
layout. Fields in one order — oar, id, namespace, kind, anchor, selector, requires, detector,
counter_scope, flow, when, effect, transform, enforcement, mandatory, on_error, on_fire,
overrides, copy, status, references, related, then x- and other fields as written — and the
members of requires, transform, detector, copy and related in the order the spec lists them;
when and copy strings single-quoted (a value spanning lines as a | block); two-space
indentation and no line folding. Comments, blank lines, flow collections and multi-document
streams are kept. A file holding no rule document (a capability document) is left as it is.

Directories are searched recursively for *.yaml, *.yml and *.json, passing over test files
(*.test.yaml, …), node_modules and dot-directories; the default path is the working directory.

Options:
      --check               change nothing: print a unified diff for every file that is not
                            formatted, and exit 1 if there is one
  -w, --write               rewrite the files that are not formatted, in place
  -h, --help                show this help
Without either, the formatted text of the one file given is printed on stdout.

Example:
  oarc fmt --check examples/gateway

Exit status:
  0   every file is formatted (with --write: now is)
  1   --check found a file that is not formatted; a file cannot be read, is not UTF-8 or
      does not parse (it is left untouched); or the paths hold no rule file at all
  2   usage error: unknown option, both --check and --write, several files without either
  70  internal error in oarc
`,

  portability: `Usage: oarc portability <rules…> --capability <file> [--config <file>…] [--json] [--strict]

Report, for every rule, whether it is portable ([OAR-PROF-6]) and exactly what makes it not:
a host-native anchor, a host-tier fact or function. A non-portable rule is legal, so this is a
report and not a load failure ([OAR-PROF-8]); the command fails only when the pack does not load
at all — or, with --strict, when a rule is not portable.

Options:
${PACK_OPTIONS}
      --json                print { "ok", "portable", "rules": [{ rule, portable, reasons, notes }],
                            "diagnostics" }; ok is false exactly when the exit status is 1, and
                            then "error" says why (or "diagnostics", when the pack does not load)
      --strict              exit 1 when any rule is not portable, naming them on stderr
  -h, --help                show this help

Exit status:
  0   the pack loads; every rule's portability is reported (a rule that is not portable is
      legal, and not a failure without --strict)
  1   the pack does not load (load diagnostics, an unreadable file, no rules without
      --allow-empty); or, with --strict, a rule is not portable
  2   usage error: unknown option, no rule files, missing --capability
  70  internal error in oarc
`,

  conformance: `oarc conformance — run conformance fixtures ([OAR-CONF-17]) through oarc's own loader and
engine and print the report: every case with its verdict.

Example (the corpus is in a clone of the repository; the installed package runs fixtures you give it):
  oarc conformance conformance/fixtures

`,

  corpus: `Usage: oarc corpus check <files…> [--strict] [--json]
       oarc corpus eval --labeled <file.jsonl> [--corpus <file>…] [--strict] [--json]

A prompt-injection corpus is JSON Lines: one record a line, {"id", "text", "signal", "source"},
with id, text and signal required and source (provenance) optional; lines starting with # and
blank lines are skipped; a leading byte-order mark is ignored. signal is one of
instruction-override, network-egress, data-access, code-exec, filesystem-read, exfil-email,
secret-access, cred-enum, benign.

check reads every file and reports every problem in one pass, as file:line: field \`f\`: what
is wrong — a line that is not UTF-8 or not JSON, a missing or empty field, a bad signal, an
unknown field, an id used twice (within a file or across files; both places are named). A file
with no record at all (empty, or only comments) is an error: it is almost surely a wrong path.

eval scores every record of the labeled set with detector://injection-corpus over the corpus
(default: the seed corpus oarc ships, injection/corpus/seed-v1.jsonl) and prints ROC AUC
(benign is the negative class), precision and recall at the default threshold 0.5, recall at
1% and 5% false-positive rate, and per bucket how often the nearest record's signal is right.

Options:
      --strict              also require every id to be the hex sha256 of its text
      --corpus <file>       a corpus file to score against; repeatable (eval only)
      --labeled <file>      the labeled set to score; required (eval only). Keep it apart from
                            the corpus: a record in both scores as a perfect match
      --json                check: { ok, records, diagnostics }; eval: the figures, with the
                            member names roc_auc, precision, recall, recall_at_1pct_fpr, …
  -h, --help                show this help

Example:
  oarc corpus eval --labeled injection/eval/labeled-v1.jsonl

Exit status:
  0   check: every record of every file is valid; eval: the figures were computed
  1   check: a problem in a file (every one is listed), or a file with no record at all;
      eval: the corpus or the labeled set cannot be read or does not load
  2   usage error: no subcommand or an unknown one, unknown option, no files, missing --labeled
  70  internal error in oarc
`,

  bench: `Usage: oarc bench <bundle.mjs | rules…> --occurrence <file> [--capability <file>] [options]
       oarc bench --baseline <old.json> --compare <new.json> [--threshold <P>] [--floor <ns>]
       oarc bench --suite [--quick] [--only=<section,…>] [--json]

Benchmark your pack on your occurrences: how long a decision takes, how much it allocates, what
compiling costs, and how the compiled pack compares with the interpreter. The pack is a compiled
bundle or rule documents (compiled in process; --capability then required), as for oarc eval;
the occurrence file is what oarc eval reads (one occurrence, a JSON array or JSON Lines).

The file is decided in order, as one session (or the sessions its occurrences name), again and
again: every pass decides in fresh sessions of its own, so counters and activity start from
nothing each time; the sessions are ended outside the timed region. A sample is a batch of
passes timed together (at least 50 µs); the figures are over the samples — median (= p50), p99,
a robust standard deviation (1.4826 × MAD) — per occurrence and over the file. Decisions/s is
1e9 / median. Allocation per decision is measured separately (V8's GC profiler; gc is switched
on at run time when node was started without --expose-gc). With rule documents both back ends
are measured in turn, in the same run: the specialised bundle (what a host runs) and the
interpreter; compiled/interpreter is the ratio of their medians (below 1: compiled is faster).

--baseline compares this run with an earlier --json and exits 4 only when the median per
decision over the file (specialised back end) is ALL of: more than --threshold slower, more than
--floor ns slower, and, on a log scale, slower by more than twice the pooled robust standard
deviation of the two runs' log samples. Per-occurrence changes are shown, never gated. On a shared machine read ratios, not times.

Options:
      --capability <file>   the capability document (required with rule documents)
      --config <file>       an operator configuration document; repeatable (rule documents only)
      --occurrence <file>   the occurrence file to decide; required
      --detectors <module>  detector implementations, as for oarc eval
      --time <duration>     how long to measure, warm-up included: 3s (default), 500ms, 10
                            (seconds); split between the back ends
      --json                print the figures as JSON (what --baseline reads) on stdout
      --baseline <file>     an earlier run's --json: compare, and exit 4 on a regression
      --threshold <P>       the relative part of the gate (default 10%)
      --floor <ns>          the absolute part of the gate, ns per decision (default 25)
      --compare <file>      with --baseline: gate two saved --json runs, measuring nothing
                            (measure in one CI job, gate in another)
      --suite               run oarc's own benchmark suite instead (bench/: generated packs,
                            against third-party baselines); from a clone of the repository only
                            (npm ci && npm run bench) — the installed package says so, exit 2
      --quick, --only <section,…>
                            with --suite: a smoke run; only these sections (conditions,
                            decide, alloc, compile)
  -h, --help                show this help

Examples:
  oarc bench examples/gateway/rules.yaml --capability examples/gateway/capability.yaml \\
    --detectors examples/gateway/detectors.mjs --occurrence examples/gateway/session.jsonl \\
    --time 2s --json > bench.json
  oarc bench examples/gateway/rules.yaml --capability examples/gateway/capability.yaml \\
    --detectors examples/gateway/detectors.mjs --occurrence examples/gateway/session.jsonl \\
    --time 2s --baseline bench.json

Exit status:
  0   measured (and, with --baseline, no regression)
  1   errors in the input: load diagnostics, an unreadable file or baseline, an occurrence
      the engine refuses
  2   usage error: no pack given, unknown option, a bad --time, --threshold or --floor
  4   --baseline: a regression by the rule above (distinct from 1, so CI can tell "slower"
      from "broken")
  70  internal error in oarc
`,

  diff: `Usage: oarc diff <old> <new> --capability <file> [options]
       oarc diff --old <rules…> --new <rules…> --capability <file> [options]

What a pack change does to decisions, for pull-request review. <old> and <new> are each a rule
file or a directory of them (--old and --new, repeatable, for lists). Both are loaded against the
same capability and configuration and decide the same occurrences: the --occurrence file (one
session, in order, as oarc eval decides it) and --runs generated cases. Every occurrence whose
decision, deciding rule, copy, transforms or transformed content differ is reported, grouped by
the change, with a small example occurrence per group (shrunk while it shows the same change):

  1. \`block\` → \`none\` at tool.pre_invoke, rule acme.security/BLOCK_RM_RF no longer fires

Rules are compared by qualified identifier on their checked form, not their text: added,
removed, and changed with the fields whose meaning differs (when, effect, copy, …). Layout,
quoting, comments and field order are not changes, so a pack reformatted by oarc fmt shows
none. Generated occurrences are type-directed and seeded: each fact and tool argument the rules
read gets values of its type — the constants the conditions and selectors compare with, values
around them, edge integers, present or absent — and a third of the cases are short sessions
(repeats, for counters). The same packs and --seed give the same cases.

Options:
      --capability <file>   the capability document both packs are loaded against; required
      --config <file>       an operator configuration document, applied to both; repeatable
      --allow-empty         accept a pack with no rules (to diff against nothing); without it,
                            a pack with no rules is an error
      --old <rules>, --new <rules>
                            the packs as lists of files or directories (instead of <old> <new>)
      --occurrence <file>   occurrences to decide besides the generated ones
      --detectors <module>  detector implementations, as for oarc eval
      --runs <n>            generated cases (default 1000; 0: only the --occurrence file)
      --seed <n>            the generator's seed, 0 to 4294967295 as for oarc fuzz (default 1)
      --format <f>          text (default), markdown (a pull-request comment) or json
      --json                the same as --format json
  -h, --help                show this help

Example:
  oarc diff examples/gateway/rules.yaml my-rules.yaml --capability examples/gateway/capability.yaml \\
    --detectors examples/gateway/detectors.mjs --occurrence examples/gateway/session.jsonl

Exit status:
  0   no occurrence was decided differently (rules may still differ where no case reached)
  1   some occurrence was decided differently — or the input is broken (load diagnostics, a
      pack with no rules without --allow-empty, an unreadable file, an occurrence the engine
      refuses), reported on stderr
  2   usage error: unknown option, not two packs, a bad --format, --runs or --seed
  70  internal error in oarc
`,
  serve: `Usage: oarc serve <bundle.mjs | rules…> [--capability <file>] [--config <file>…] [options]

Serve decisions over HTTP, for hosts that cannot embed oarc/runtime. The pack is a compiled
bundle or rule documents compiled in process, as for oarc eval. Binds 127.0.0.1:8181 unless
told otherwise; the service log (one line per event, "oarc serve: …") is written on stderr.

Routes (schema/serve.openapi.json describes them):
  POST /v1/decide         one occurrence, in the JSON form oarc eval reads → its Decision, in
                          the JSON form oarc eval --json prints
  POST /v1/decide/batch   a JSON array of occurrences → an array of decisions, decided in order
  GET  /v1/health         200 once a pack is loaded, else 503; reports the last (re)load
  GET  /v1/bundle         revision (content hash), compiler, rule count, loaded_at
  GET  /metrics           Prometheus text: decisions, rule outcomes, latency, reloads, errors
An occurrence without session_id takes the Oarc-Session request header's. Bad input is a 400
application/problem+json (RFC 9457) whose "pointer" names the member; a body over --max-body
is a 413; an internal error is a 500 whose id is in the log.

Options:
      --capability <file>   the capability document (required with rule documents)
      --config <file>       an operator configuration document; repeatable (rule documents only)
      --detectors <module>  detector implementations, as for oarc eval
      --injection-corpus <file>
                            register detector://injection-corpus over this JSONL corpus, as
                            for oarc eval; repeatable; re-read on reload
      --host <address>      the address to bind (default 127.0.0.1; TLS is the proxy's job)
      --port <n>            the port (default 8181; 0 picks a free one, named in the log)
      --watch               reload whenever an input file changes
${REDIS_HELP}
      --decision-log <f|->  append one JSON line per decision to a file, or - for stdout
      --log-mask <path>     mask a member of the logged occurrence, as a JSON Pointer where
                            * matches every member: /tool_call/arguments/token; repeatable
      --token-file <file>   require Authorization: Bearer <the token in the file> on every
                            route but /v1/health
      --max-body <bytes>    the largest request body (default 1048576)
      --max-sessions <n>    in-memory sessions kept (counters, activity); beyond it the least
                            recently used is forgotten (default 250000)
      --session-idle <s>    seconds after which an unused session is forgotten, in memory
                            and (with --redis) as its keys' TTL (default 86400)
      --max-counters <n>    in-memory counters kept in all sessions (without --redis); beyond
                            it the least recently used sessions are forgotten (default 1000000)
      --max-counters-per-session <n>
                            in-memory counters one session may hold; a rule writing a new one
                            beyond it takes its on_error (default 100000)
      --latency-buckets <s> the latency histogram's bucket bounds in seconds, comma-separated
  -h, --help                show this help

Signals: SIGHUP reloads the pack (a pack that fails to load leaves the previous one serving);
SIGUSR2 acknowledges a data loss of the --redis store (GET /v1/health shows it as degraded;
until then every counting rule fails closed); SIGTERM or SIGINT stops accepting, finishes the
requests in flight, flushes the decision log, closes the store, and exits 0.

Example:
  oarc serve examples/gateway/rules.yaml --capability examples/gateway/capability.yaml \\
    --detectors examples/gateway/detectors.mjs --port 8181

Exit status:
  0   stopped by SIGTERM or SIGINT
  1   the pack did not load (without --watch), the port is taken, Redis did not answer
  2   usage error
  70  internal error in oarc
`,
  mcp: `Usage: oarc mcp <bundle.mjs | rules…> [--capability <file>] [options] -- <server command…>

Enforce a rule pack on the tool calls of any MCP server. Speaks MCP over stdio to the client
and starts the server (the command after --) as a child over stdio. Every message but tools/call
and its result passes through with its content unchanged, ids too, but not byte for byte: the
MCP SDK parses and checks each line, and the message is written again as JSON. tools/call:
  refused       a tools/call oarc cannot decide exactly as the server will read it is
                never forwarded, and is answered with a JSON-RPC error naming what is wrong:
                -32602 when params is missing or not an object, params.name is not a
                non-empty string, arguments or _meta is not an object, params has another
                member (task: its result would come through tasks/result, undecided), a
                member name is written twice anywhere in params ("n\\u0061me" is "name")
                or in two cases ("path" and "PATH": Go's encoding/json takes either), or a
                number is beyond binary64 (1e400) or an integer beyond int64; -32600 when
                jsonrpc or id is wrong, a member is written twice (in any case) at the top,
                the request has a member JSON-RPC does not, its numeric id is not a safe
                integer, or its id is that of a request in flight. One sent as a
                notification (no id) is dropped, unanswered. Each is said on stderr (the
                answered ones with --verbose).
  the call      decided at tool.pre_invoke (tool name, arguments, read exactly: an int64 stays
                exact; the MCP session, a new one at each initialize). A block answers with a
                tool error result (isError: true) carrying the rule's copy, and the server
                never sees the call. A nudge or warn forwards it and appends one text item per
                advisory, "[oarc] Nudge from rule …", to the result's content, where the
                client's model reads it. A call let through is forwarded as the line the
                client wrote — the text the decision read — with a raw CR as a space and raw
                U+0085, U+2028, U+2029 as escapes, so no server's line reader splits it.
                (Should the SDK's transports stop giving oarc the line, it is the message
                decided on, written again as JSON; --verbose says at start-up which.)
  the result    decided at tool.post_invoke, then model.tool_result (those the capability
                maps) with the result's text items joined by newlines as content, and its
                structuredContent's canonical JSON after them unless the text carries it. A
                block withholds it (a tool error result instead); a transform delivers the
                transformed text and structuredContent, or withholds a result it cannot
                transform faithfully. Otherwise it passes as any other message does.
  ids           every request the client has in flight is tracked by id; a request reusing
                one is answered -32600, and a server response answering none is dropped.
A request of any method the SDK's schema refuses is answered -32600 with one line of why; a
line that is not JSON, or a refused message without an id, is said on stderr and dropped.
stdout is the protocol: logs go to stderr, "oarc mcp: …". The SDK, @modelcontextprotocol/sdk,
is an optional peer dependency: npm install @modelcontextprotocol/sdk.

Options:
      --capability <file>   the capability document (required with rule documents)
      --config <file>       an operator configuration document; repeatable (rule documents only)
      --detectors <module>  detector implementations, as for oarc eval
      --injection-corpus <file>
                            register detector://injection-corpus over this JSONL corpus
      --fact <name=value>   a host fact of the capability every occurrence carries: the text
                            for a string fact, JSON for any other type; repeatable
${REDIS_HELP}
      --decision-log <f|->  append one JSON line per decision (the oarc serve format) to a
                            file, or - for stderr
      --log-mask <path>     mask a member of the logged occurrence, as a JSON Pointer where
                            * matches every member: /tool_call/arguments/token; repeatable.
                            /content (a tool's result) and /tool_call/arguments carry what
                            the pack protects: the log writes them in full unless masked
      --verbose             each decision and its trace on stderr, in words, and each tools/call
                            refused as malformed
      --check-schemas       at start-up, list the server's tools (from a second instance of
                            it) and report rules whose selectors or tool_arg_* reads name tools
                            or arguments the tools' inputSchemas lack, with the nearest name
  -h, --help                show this help

Example:
  oarc mcp examples/mcp/rules.yaml --capability examples/mcp/capability.yaml \\
    --detectors examples/mcp/detectors.mjs --fact oarc.mcp.workspace=/tmp/demo/workspace/ \\
    -- node node_modules/@modelcontextprotocol/server-filesystem/dist/index.js /tmp/demo

Exit status:
  0   the client closed the connection, or SIGTERM / SIGINT
  1   the pack did not load, the server could not start or exited, the SDK is missing
  2   usage error
  70  internal error in oarc
`,
  fuzz: `Usage: oarc fuzz <rules…|bundle.mjs> --capability <file> [--config <file>…] [options]

Differential fuzzing of your pack. Sessions of occurrences are generated from the capability and
the pack (constants mined from conditions, selectors, flows and copy; boundary ints; code-point
edge strings; present, absent and wrong-typed facts; spans for transform targets; repeated calls
so counters move) and each is decided by every back end: the bundle's decision procedures
(specialised), the generic engine on compiled conditions (generic) and the interpreter — with
--against, also an external engine over the JSON Lines protocol of docs/engine-protocol.md. The
decisions are compared in the wire form: decision, identifiers, copy, advisories, transforms,
content, skipped spans, trace, side-effects, events, counters. On the first difference the case
is shrunk and written to --out as a conformance fixture (<id>.json, replay with
\`oarc conformance <dir>\`) and as JSON Lines (<id>.jsonl, for \`oarc eval --occurrence\`).
A compiled bundle is fuzzed on its two compiled back ends, and no fixture is written (it
carries no rule documents). Progress goes to stderr about once a second; the same seed gives
the same cases and the same output (timings aside).

Options:
${PACK_OPTIONS}
      --detectors <module>  detector implementations (as for oarc eval)
      --seed <n>            0 to 4294967295; default: a random seed, printed
      --runs <n>            number of cases (sessions) to generate; default 1000
      --time <duration>     run for this long instead (30s, 2m, 500ms)
      --out <dir>           where a finding is written; default ./oarc-fuzz
      --against <command>   also run this engine (started by the shell) over the protocol,
                            e.g. --against "oarc adapter --detectors d.mjs"
      --json                print a summary as JSON on stdout
  -h, --help                show this help

Example:
  oarc fuzz examples/gateway/rules.yaml --capability examples/gateway/capability.yaml \\
    --detectors examples/gateway/detectors.mjs --seed 1 --runs 300

Exit status:
  0   no difference
  1   a difference was found (fixture written), the pack did not load, or the external engine
      broke the protocol
  2   usage error
  70  internal error in oarc
`,
  adapter: `Usage: oarc adapter [--detectors <module>]

oarc as an engine behind the JSON Lines protocol of docs/engine-protocol.md: one request per
line on stdin (a pack, then occurrences), one response per line on stdout. The reference
adapter: \`oarc fuzz … --against "oarc adapter"\` fuzzes oarc against itself through the protocol,
and an implementation in another language is checked against it the same way.

Options:
      --detectors <module>  detector implementations (as for oarc eval)
  -h, --help                show this help

Exit status:
  0   the input ended
  1   the detectors module cannot be used
  2   usage error
  70  internal error in oarc (a bug): the adapter stops. A pack that does not load and an
      occurrence the engine refuses or fails on are answered with an error line instead, and
      the adapter keeps serving
`,
};
