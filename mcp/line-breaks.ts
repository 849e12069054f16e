/**
 * Characters some server's line reader takes as the end of a line, kept out of every line the
 * proxy writes to the server.
 *
 * The MCP stdio transport frames messages by `\n`, and the proxy reads the client that way; but a
 * Python server reading stdin through `TextIOWrapper` (universal newlines), or a Node one using
 * `readline`, also ends a line at a lone `\r`, and `str.splitlines` at U+0085, U+2028 and U+2029.
 * A line holding one of them can be one message to the proxy and two or three to the server: an
 * allowed `read_text_file` call wrapping, between two raw `\r`, a whole `write_file` call that the
 * server then runs undecided ([OAR-PROF-10]).
 *
 * In JSON text the proxy has read, each can only be in one place, and has an equivalent spelling
 * with the same value: a raw `\r` or `\n` only as whitespace between tokens (a string cannot hold
 * a raw control character), so it becomes a space; U+0085, U+2028 and U+2029 only inside strings
 * (they are not JSON whitespace), so each becomes its `\uXXXX` escape. The other characters
 * `str.splitlines` breaks at (U+000B, U+000C, U+001C–U+001E) cannot appear raw in JSON at all.
 */

const BREAKS = /[\n\r\u0085\u2028\u2029]/g;
const IN_STRINGS = /[\u0085\u2028\u2029]/;

const NAMES: Readonly<Record<string, string>> = {
  '\n': 'LF',
  '\r': 'CR',
  '\u0085': 'U+0085 (NEXT LINE)',
  '\u2028': 'U+2028 (LINE SEPARATOR)',
  '\u2029': 'U+2029 (PARAGRAPH SEPARATOR)',
};

/**
 * `json` (text `JSON.parse` accepts) with every line-break character respelled as above: the same
 * JSON value, in text no line reader splits.
 */
export function withoutLineBreaks(json: string): string {
  return json.replace(BREAKS, (c) => (c === '\r' || c === '\n' ? ' ' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/**
 * The first character in `JSON.stringify` output that some reader takes as a line break, named;
 * undefined when there is none. (`JSON.stringify` escapes CR and LF, but not U+0085, U+2028, U+2029.)
 */
export function lineBreakInSerialised(json: string): string | undefined {
  const m = IN_STRINGS.exec(json);
  return m === null ? undefined : lineBreakName(m[0]);
}

export function lineBreakName(c: string): string {
  return NAMES[c] ?? `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}
