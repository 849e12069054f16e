#!/usr/bin/env node
/** The `oarc` executable: see bin/cli.ts for the commands, bin/help.ts for their help. */
import { run } from './cli.js';
import { EXIT_INTERNAL, oneLine } from './errors.js';
import { processIo } from './output.js';

// A reader that stops early (`oarc eval … | head`) is not an error worth a message.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

// Whatever escapes a command (a user module's stray timer, a stream failure) is still one line.
process.on('uncaughtException', (e) => {
  process.stderr.write(`oarc: internal error: ${oneLine(e)}\n`);
  if ((process.env.OARC_DEBUG ?? '') !== '' && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`);
  process.exit(EXIT_INTERNAL);
});

process.exitCode = await run(process.argv.slice(2), processIo());
