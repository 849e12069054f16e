/**
 * A toy secret detector for the example gateway: it reports spans that look like API keys. It
 * returns observations — spans, in code points — never a verdict ([OAR-OPS-11]); the rule owns the
 * decision.
 */
import type { Detector } from '../runtime/index.js';

const KEY = /sk-[A-Za-z0-9-]{8,}/gu;

export const secretScanner: Detector = ({ occurrence }) => {
  const content = occurrence.content ?? '';
  const matches: { start: number; end: number; kind: string }[] = [];
  for (const m of content.matchAll(KEY)) {
    const start = Array.from(content.slice(0, m.index)).length; // UTF-16 index → code points
    matches.push({ start, end: start + Array.from(m[0]).length, kind: 'api_key' });
  }
  return { secret_matches: matches };
};
