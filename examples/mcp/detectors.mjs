// Detectors for the example `oarc mcp` pack (--detectors examples/mcp/detectors.mjs). A detector
// reports observations — here the spans of what looks like a credential, in code points — never a
// verdict ([OAR-OPS-11]); the rule decides what to do about them.
const PATTERNS = [
  ['api_key', /\bsk-[A-Za-z0-9_-]{16,}/gu],
  ['aws_access_key', /\bAKIA[0-9A-Z]{16}\b/gu],
  ['github_token', /\bgh[pousr]_[A-Za-z0-9]{36,}\b/gu],
  ['private_key', /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/gu],
];

/** UTF-16 index → code-point offset ([OAR-OPS-19]: spans are in code points). */
const codePoints = (text, index) => Array.from(text.slice(0, index)).length;

function secretScanner({ occurrence }) {
  const content = occurrence.content ?? '';
  const matches = [];
  for (const [kind, pattern] of PATTERNS) {
    for (const m of content.matchAll(pattern)) {
      const start = codePoints(content, m.index);
      matches.push({ start, end: start + Array.from(m[0]).length, kind });
    }
  }
  return { secret_matches: matches };
}

export default { 'detector://secret-scanner': secretScanner };
