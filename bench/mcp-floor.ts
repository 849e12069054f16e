/**
 * The floor for bench/mcp.ts: a process that relays bytes between its stdio and a child's, and
 * does nothing else — no parsing, no deciding. What a stdio proxy costs before it looks at a
 * single message. Usage: node dist/bench/mcp-floor.js <command> [args…]
 */
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (command === undefined) throw new Error('usage: mcp-floor <command> [args…]');
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
process.stdin.on('end', () => child.kill());
child.on('exit', () => process.exit(0));
