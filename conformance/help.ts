/**
 * The conformance runner's help: one text for `node dist/conformance/cli.js --help` and for
 * `oarc conformance --help` (which puts the CLI's one-paragraph introduction above it). No imports,
 * so the CLI's help pulls in nothing of the runner.
 */
export const RUNNER_USAGE = 'usage: oarc conformance <fixture files or directories…> [--json]';

export const RUNNER_HELP = `${RUNNER_USAGE}
       node dist/conformance/cli.js <fixture files or directories…> [--json]   (in a clone)

Runs every fixture given through oarc's own loader and engine ([OAR-CONF-38]). A file is run
whatever its name; a directory is searched recursively for *.json, passing over manifest.json.
A directory's manifest.json that lists fixture ids ({"fixtures": [id…]}) makes a listed id with
no file an errored case.

Options:
      --json                print the report as JSON (schema/conformance-report.schema.json):
                            every case, the counts, the adoptable capabilities, and the corpus
                            measured (paths, fixture files, SHA-256 digest)
  -h, --help                show this help

Verdicts, one per fixture:
  passed    every asserted member of expected matched
  failed    some member differed; the table shows expected and actual for each
  skipped   the fixture's capability document cannot be adopted; names what ([OAR-CONF-20]).
            A baseline fixture is never skipped ([OAR-CONF-35]); a skip is never a pass
  errored   the case could not be run: a malformed fixture, an unreadable file, an id that is
            not its file name stem, a covers clause the spec does not define ([OAR-CONF-17])

Summary lines (the table's last two; the last one's format is fixed, for CI):
  N fixtures: N passed, N failed (N errored: could not be run), N skipped (not adoptable)
  N passed, N failed, N skipped          errored counted as failed

Exit status:
  0   no case failed or errored, and at least one passed or failed
  1   a case failed or errored; no fixture was found; or none was run (every case skipped
      or errored; a conformance claim cannot be built of skips, [OAR-CONF-35]); or the
      report does not validate against its schema
  2   usage error: unknown option, no fixture files or directories given
`;
