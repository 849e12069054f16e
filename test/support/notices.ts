/**
 * Vitest global setup: the tests a run leaves out because this machine cannot run them, one line
 * each with how to run them, printed once after the run — so a skip is never silent and never
 * repeated per file.
 */
import { redisNotice } from '../redis/server.js';
import { specNotice } from './spec.js';

export default function setup(): () => void {
  const notices = [redisNotice(), specNotice()].filter((n) => n !== undefined);
  return () => {
    for (const n of notices) process.stderr.write(`${n}\n`);
  };
}
