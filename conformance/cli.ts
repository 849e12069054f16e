/**
 * `node dist/conformance/cli.js <fixture files or directories…> [--json]` — the conformance runner
 * as a command (report.ts `main`); `bin/oarc conformance …` calls the same `main`.
 */
import { main } from './report.js';

process.exitCode = main(process.argv.slice(2));
