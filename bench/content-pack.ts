/**
 * The content benchmark's pack and traffic. The pack is hand-written YAML in bench/content-pack/
 * (not generated): 19 rules of a chat assistant host screening what users send the model
 * (`model.input`), what the model replies (`model.output`) and what tools hand back
 * (`tool.post_invoke`) — span redactions of credentials and personal data, a jailbreak block with
 * a nudge it overrides, an injection block, length advisories (one in monitor mode), and counters:
 * redactions counted per session, a warning after repeated pasted secrets, and a circuit breaker
 * (`increment_breaker`) that ends up withholding a leaky conversation's replies.
 *
 * The detectors (DLP spans, jailbreak and injection scores) are the host's; their output reaches
 * the rules through `detector://fixture` as each occurrence's `detectorFacts`, so every variant
 * sees the same observations and the benchmark times rule evaluation, not a detector.
 *
 * The stream is conversations, interleaved as a gateway sees them: each conversation (a session)
 * runs 8–40 occurrences and then ends, and a new one starts. Text is ordinary prose with, at
 * random, credentials (API keys, GitHub and AWS tokens, bearer headers) and personal data
 * (e-mail addresses, phone numbers) at the very start, in the middle or at the very end; accented
 * and CJK text (one UTF-16 unit per code point) and emoji (two units), before, between and after
 * the spans, so code points and UTF-16 offsets differ; sometimes a bearer header reported twice
 * by the secret scanner (overlapping spans within one transform, merged), a connection string
 * that is both a credential and an e-mail address (a span of a later transform overlapping an
 * earlier one's, skipped), and a span past the end of content the host truncated (ignored). A
 * few conversations are leaky (credentials in most replies), so the breaker trips in them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../examples/root.js';
import { formatDiagnostic, loadPackTexts, type LoadedPack } from '../compiler/index.js';
import type { Occurrence } from '../runtime/index.js';
import { prng } from './stats.js';

/** The pack's rule files, in reading order. */
export const CONTENT_RULE_FILES: readonly string[] = ['reply.yaml', 'prompt.yaml', 'tool-result.yaml'];

/** The host-local anchors of bench/content-pack/capability.yaml. */
export const CONTENT_ANCHORS = { reply: 'chat.reply', prompt: 'chat.prompt', toolResult: 'tool.result' } as const;

/** The tools the stream's tool results come from (the last two are selected by no span rule). */
export const CONTENT_TOOLS: readonly string[] = ['http.fetch', 'fs.read', 'shell.exec', 'db.query', 'mail.read', 'calendar.list', 'search.web'];

export interface ContentPackTexts {
  capability: string;
  rules: readonly string[];
}

/** The pack's texts, read from bench/content-pack/ (from source and from dist/ alike). */
export function contentPackTexts(): ContentPackTexts {
  const dir = join(packageRoot(), 'bench', 'content-pack');
  return {
    capability: readFileSync(join(dir, 'capability.yaml'), 'utf8'),
    rules: CONTENT_RULE_FILES.map((f) => readFileSync(join(dir, f), 'utf8')),
  };
}

/** Load the pack; throws with every diagnostic if it does not load. */
export function loadContentPack(): LoadedPack {
  const r = loadPackTexts(contentPackTexts());
  if (!r.ok) {
    throw new Error(`bench: the content pack (bench/content-pack/) does not load:\n${r.diagnostics.slice(0, 10).map(formatDiagnostic).join('\n')}`);
  }
  return r.pack;
}

// ---------------------------------------------------------------------------------------------
// Text with spans.

interface Span {
  start: number;
  end: number;
  kind: string;
  confidence: number;
}

/** Builds a text and the spans the detectors report on it, in code points. */
class Text {
  text = '';
  cps = 0;
  readonly secrets: Span[] = [];
  readonly pii: Span[] = [];

  add(s: string): void {
    this.text += s;
    this.cps += Array.from(s).length;
  }

  /** Add `s` and report it as a span of `list`. */
  span(list: Span[], s: string, kind: string, rand: () => number): void {
    const start = this.cps;
    this.add(s);
    list.push({ start, end: this.cps, kind, confidence: Math.round((0.8 + rand() * 0.2) * 100) / 100 });
  }
}

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

const WORDS = (
  'the deployment finished and the service is healthy again; I checked the logs, compared the ' +
  'metrics with last week and updated the runbook. Your order ships tomorrow and the invoice is ' +
  'attached below. To rotate the credentials, open the console, create a new key and revoke the ' +
  'old one. The meeting moved to Thursday, please confirm whether the agenda still works for you'
).split(' ');
/** Words that are not ASCII: one UTF-16 unit per code point (BMP). */
const WIDE = ['café', 'Grüße', 'naïve', 'façade', 'Zürich', 'déjà', '東京', '日本語', 'résumé', 'Ελλάδα', 'São', 'Kraków'];
/** Astral code points: two UTF-16 units each. */
const ASTRAL = ['🚀', '✅🎉', '😀', '🔑', '𝔘𝔫𝔦', '👩‍💻', '📎'];

const b36 = (rand: () => number, n: number) => {
  let s = '';
  while (s.length < n) s += Math.floor(rand() * 36 ** 6).toString(36);
  return s.slice(0, n);
};

function secretValue(rand: () => number): [string, string] {
  switch (Math.floor(rand() * 4)) {
    case 0:
      return [`sk-live-${b36(rand, 24)}`, 'api_key'];
    case 1:
      return [`ghp_${b36(rand, 36)}`, 'github_token'];
    case 2:
      return [`AKIA${b36(rand, 16).toUpperCase()}`, 'aws_access_key'];
    default:
      return [`xoxb-${Math.floor(rand() * 1e12)}-${b36(rand, 20)}`, 'slack_token'];
  }
}

function piiValue(rand: () => number): [string, string] {
  if (rand() < 0.6) return [`${pick(rand, ['jane', 'omar', 'li', 'ana', 'søren', 'zoë'])}.${pick(rand, ['doe', 'khan', 'wei', 'silva', 'møller'])}@example.com`, 'email'];
  return [`+44 20 7946 ${String(Math.floor(rand() * 10000)).padStart(4, '0')}`, 'phone'];
}

interface TextShape {
  /** Words of prose. */
  words: number;
  /** Chance, per word, of a credential / of personal data after it. */
  secretRate: number;
  piiRate: number;
}

/** Prose with spans at random places, sometimes at the very start or end. */
function textWithSpans(rand: () => number, shape: TextShape): Text {
  const t = new Text();
  const wide = rand() < 0.3;
  const astral = rand() < 0.25;
  // A span at offset 0.
  if (rand() < shape.secretRate * 3) t.span(t.secrets, secretValue(rand)[0], 'api_key', rand);
  else if (rand() < shape.piiRate * 3) t.span(t.pii, piiValue(rand)[0], 'email', rand);
  for (let i = 0; i < shape.words; i++) {
    if (t.text.length > 0) t.add(' ');
    t.add(wide && rand() < 0.12 ? pick(rand, WIDE) : pick(rand, WORDS));
    if (astral && rand() < 0.05) t.add(` ${pick(rand, ASTRAL)}`);
    const r = rand();
    if (r < shape.secretRate) {
      t.add(' ');
      const u = rand();
      if (u < 0.12) {
        // A bearer header the scanner reports twice: the whole header and the token inside it.
        const [token] = secretValue(rand);
        const start = t.cps;
        t.add(`Authorization: Bearer ${token}`);
        t.secrets.push({ start, end: t.cps, kind: 'auth_header', confidence: 0.9 });
        t.secrets.push({ start: t.cps - Array.from(token).length, end: t.cps, kind: 'bearer_token', confidence: 0.97 });
      } else if (u < 0.22) {
        // A connection string: a credential to the secret scanner, an e-mail to the PII detector.
        const [mail] = piiValue(rand);
        const start = t.cps;
        t.add('postgres://');
        const at = t.cps;
        t.add(`${mail}:${b36(rand, 12)}@db.internal:5432/app`);
        t.secrets.push({ start, end: t.cps, kind: 'connection_string', confidence: 0.95 });
        t.pii.push({ start: at, end: at + Array.from(mail).length, kind: 'email', confidence: 0.9 });
      } else {
        const [v, kind] = secretValue(rand);
        t.span(t.secrets, v, kind, rand);
      }
    } else if (r < shape.secretRate + shape.piiRate) {
      t.add(' ');
      const [v, kind] = piiValue(rand);
      t.span(t.pii, v, kind, rand);
    }
  }
  // A span ending exactly at the end of the content.
  if (rand() < shape.piiRate * 3) {
    t.add(' ');
    t.span(t.pii, piiValue(rand)[0], 'email', rand);
  } else {
    t.add('.');
  }
  return t;
}

const score = (rand: () => number, bands: readonly (readonly [number, number, number])[]): number => {
  // bands: [probability, low, high]; the rest is below the first band's low.
  let r = rand();
  for (const [p, lo, hi] of bands) {
    if (r < p) return Math.min(1, Math.round((lo + rand() * (hi - lo)) * 100) / 100);
    r -= p;
  }
  return Math.round(rand() * 0.3 * 100) / 100;
};

// ---------------------------------------------------------------------------------------------
// Conversations.

interface Conversation {
  readonly session: string;
  readonly roles: readonly string[];
  readonly channel: string;
  readonly leaky: boolean;
  left: number;
}

const PROFILES: readonly { roles: readonly string[]; channel: string; weight: number }[] = [
  { roles: ['customer'], channel: 'public', weight: 0.45 },
  { roles: ['partner-agent'], channel: 'partner', weight: 0.2 },
  { roles: ['staff'], channel: 'internal', weight: 0.25 },
  { roles: ['staff', 'privacy-officer'], channel: 'partner', weight: 0.1 },
];

export interface ContentStreamOptions {
  length: number;
  seed?: number;
  /** Conversations open at once (interleaved). */
  concurrent?: number;
}

export const CONTENT_SEED = 0xc0de;

/**
 * The occurrence stream: interleaved conversations of replies (40 %), prompts (30 %) and tool
 * results (30 %). The result went through `JSON.parse(JSON.stringify(…))`, as a host gets it from
 * the wire.
 */
export function generateContentStream(opts: ContentStreamOptions): Occurrence[] {
  const rand = prng((opts.seed ?? CONTENT_SEED) ^ 0x7e47);
  const open: Conversation[] = [];
  let next = 0;
  const start = (): Conversation => {
    let r = rand();
    let p = PROFILES[0] as (typeof PROFILES)[number];
    for (const x of PROFILES) {
      p = x;
      if (r < x.weight) break;
      r -= x.weight;
    }
    return { session: `conv-${(next++).toString(36)}`, roles: p.roles, channel: p.channel, leaky: rand() < 0.12, left: 8 + Math.floor(rand() * 33) };
  };
  const concurrent = opts.concurrent ?? 12;
  const out: Occurrence[] = [];
  for (let i = 0; i < opts.length; i++) {
    while (open.length < concurrent) open.push(start());
    const k = Math.floor(rand() * open.length);
    const c = open[k] as Conversation;
    if (--c.left <= 0) open.splice(k, 1);
    const facts = { principal_roles: c.roles, 'acme.assist.channel': c.channel };
    const r = rand();
    let occ: Occurrence;
    if (r < 0.4) {
      // A reply: mostly short, sometimes long (the length advisories), credentials in most replies
      // of a leaky conversation.
      const words = rand() < 0.15 ? 220 + Math.floor(rand() * 160) : 15 + Math.floor(rand() * 120);
      const t = textWithSpans(rand, { words, secretRate: c.leaky ? 0.02 : 0.0015, piiRate: 0.006 });
      occ = { anchor: CONTENT_ANCHORS.reply, session: c.session, content: t.text, facts, detectorFacts: { secret_matches: t.secrets, pii_entities: t.pii, jailbreak_score: score(rand, [[0.02, 0.9, 1.0], [0.03, 0.5, 0.9]]) } };
    } else if (r < 0.7) {
      const words = rand() < 0.1 ? 170 + Math.floor(rand() * 120) : 4 + Math.floor(rand() * 60);
      const t = textWithSpans(rand, { words, secretRate: c.leaky ? 0.02 : 0.003, piiRate: 0.01 });
      occ = { anchor: CONTENT_ANCHORS.prompt, session: c.session, content: t.text, facts, detectorFacts: { secret_matches: t.secrets, pii_entities: t.pii, jailbreak_score: score(rand, [[0.05, 0.85, 1.0], [0.1, 0.5, 0.85]]) } };
    } else {
      const name = pick(rand, CONTENT_TOOLS);
      const words = rand() < 0.1 ? 620 + Math.floor(rand() * 300) : 20 + Math.floor(rand() * 200);
      const t = textWithSpans(rand, { words, secretRate: c.leaky ? 0.01 : 0.002, piiRate: name === 'mail.read' || name === 'db.query' ? 0.02 : 0.004 });
      const det: Record<string, unknown> = { secret_matches: t.secrets, pii_entities: t.pii, prompt_injection_score: score(rand, [[0.04, 0.95, 1.0], [0.1, 0.7, 0.95]]) };
      let content = t.text;
      if (rand() < 0.03) {
        // The host truncated the result after the detectors ran: a span may now reach past the end.
        const cps = Array.from(content);
        content = cps.slice(0, Math.max(1, cps.length - 20)).join('');
      }
      occ = { anchor: CONTENT_ANCHORS.toolResult, session: c.session, toolCall: { name, arguments: { id: `r-${i}` } }, content, facts, detectorFacts: det };
    }
    out.push(occ);
  }
  return JSON.parse(JSON.stringify(out)) as Occurrence[];
}
