/**
 * A host's programming mistakes in the occurrence it hands to `decide()`: an anchor the bundle does
 * not know, a member the engine does not read, a fact name that is not declared, a member of the
 * wrong shape. Each would otherwise decide `none` where the rules block — the one failure a
 * guardrail must never have — so each is a thrown `HostInputError` naming the member, and the
 * declared name it was probably meant to be, before anything is evaluated.
 *
 * The check is of the occurrence's *shape* against the bundle's vocabulary. The *values* of
 * declared facts are observations: a wrong-typed one is a fact-provider failure the consuming rule
 * handles by its `on_error` ([OAR-FACT-26]), never a thrown error. A member whose own reading
 * throws (a getter, a Proxy trap) is left to evaluation, which routes it the same way.
 */
import type { Bundle } from './bundle.js';
import type { Occurrence } from './occurrence.js';
import { closest, didYouMean } from './suggest.js';
import { describeThrown } from './thrown.js';

/** A mistake in the occurrence a host passed to `decide()` / `decideAsync()`. */
export class HostInputError extends Error {
  override readonly name = 'HostInputError';
  constructor(
    /** Where in the occurrence, in its TypeScript form: `['facts', 'acme.x']`, `['anchor']`. */
    readonly path: readonly (string | number)[],
    message: string,
  ) {
    super(message);
  }
}

/** The members of the TypeScript `Occurrence`, and the JSON spelling a host may have used instead. */
const MEMBERS: ReadonlyMap<string, string | undefined> = new Map([
  ['anchor', undefined],
  ['session', 'session_id'],
  ['facts', undefined],
  ['content', undefined],
  ['toolCall', 'tool_call'],
  ['recentActivity', 'recent_activity'],
  ['detectorFacts', 'detector_facts'],
]);
const JSON_SPELLING: ReadonlyMap<string, string> = new Map([...MEMBERS].filter(([, j]) => j !== undefined).map(([ts, j]) => [j as string, ts]));

const hasOwn = Object.prototype.hasOwnProperty;
const OBJECT_PROTOTYPE = Object.prototype;
const MAP_PROTOTYPE = Map.prototype;

function className(proto: unknown): string {
  const c: unknown = typeof proto === 'object' && proto !== null ? (proto as { constructor?: unknown }).constructor : undefined;
  const name: unknown = typeof c === 'function' ? c.name : undefined;
  return typeof name === 'string' && name !== '' ? name : 'a class';
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** How a message names what a member was instead: `null`, `an array`, `a number`, …. */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** Checks occurrences against one bundle's anchors and declared names. */
export class OccurrenceCheck {
  /** Host-local anchors the bundle knows ([OAR-CONF-29]). */
  private readonly anchors: ReadonlySet<string>;
  private readonly names: ReadonlySet<string>;

  constructor(private readonly bundle: Bundle) {
    const c = bundle.capability;
    this.anchors = new Set([...Object.values(c.coreAnchors), ...c.hostAnchors]);
    this.names = new Set(bundle.symbols.map((s) => s.name));
  }

  /** Throw a `HostInputError` for the first mistake in `occ`; return when there is none. */
  check(occ: Occurrence): void {
    if (!isPlainObject(occ)) throw new HostInputError([], `decide: the occurrence must be an object { anchor, … }, got ${kindOf(occ)}`);
    let anchorSeen = false;
    // One try for the walk, which runs at every decision: `reading` tells a member whose getter
    // threw from members that could not be listed. for…in rather than Object.keys: listing the
    // members allocates nothing on the hot path.
    let key = '';
    let reading = false;
    try {
      for (key in occ) {
        if (!hasOwn.call(occ, key)) continue;
        if (key === 'anchor') {
          anchorSeen = true;
          continue;
        }
        reading = true;
        const value = (occ as unknown as Record<string, unknown>)[key];
        reading = false;
        if (value === undefined && MEMBERS.has(key)) continue;
        this.member(key, value);
      }
    } catch (e) {
      if (e instanceof HostInputError) throw e;
      if (reading) throw new HostInputError([key], `decide: reading the occurrence's \`${key}\` threw: ${describeThrown(e)}`);
      throw new HostInputError([], `decide: the occurrence's members could not be listed: ${describeThrown(e)}`);
    }
    if (!anchorSeen) throw new HostInputError(['anchor'], 'decide: the occurrence has no anchor: name the host-local anchor identifier, e.g. { anchor: "tool.pre_invoke", … }');
    this.checkAnchor(readMember(occ, 'anchor'));
  }

  /** One member's shape. What lies inside it (a facts Proxy, a getter in the tool call) is left to evaluation ([OAR-OPS-3]). */
  private member(key: string, value: unknown): void {
    try {
      switch (key) {
        case 'facts':
        case 'detectorFacts':
          this.checkFacts(key, value);
          break;
        case 'session':
          if (typeof value !== 'string') throw new HostInputError([key], `decide: session must be a string, got ${kindOf(value)}`);
          break;
        case 'content':
          if (typeof value !== 'string') throw new HostInputError([key], `decide: content must be a string (the content at the occurrence), got ${kindOf(value)}`);
          break;
        case 'toolCall':
          checkToolCall(value);
          break;
        case 'recentActivity': {
          if (!Array.isArray(value)) throw new HostInputError([key], `decide: recentActivity must be a list of tool names, got ${kindOf(value)}`);
          const i = value.findIndex((s) => typeof s !== 'string');
          if (i >= 0) throw new HostInputError([key, i], `decide: recentActivity[${i}] must be a tool name (a string), got ${kindOf(value[i])}`);
          break;
        }
        default:
          throw new HostInputError([key], `decide: unknown occurrence member \`${key}\`${this.memberHint(key)}`);
      }
    } catch (e) {
      if (e instanceof HostInputError) throw e;
    }
  }

  private memberHint(key: string): string {
    const ts = JSON_SPELLING.get(key);
    if (ts !== undefined) return ` (did you mean \`${ts}\`? \`${key}\` is the JSON spelling: convert JSON with occurrenceFromJson)`;
    const near = didYouMean(key, MEMBERS.keys());
    return near !== '' ? near : `; an occurrence has ${[...MEMBERS.keys()].join(', ')}`;
  }

  /** [OAR-CONF-29] the host-local anchor; a core spelling the host maps elsewhere is named as such. */
  private checkAnchor(anchor: unknown): void {
    if (typeof anchor !== 'string' || anchor === '') {
      throw new HostInputError(['anchor'], `decide: anchor must be a non-empty string (the host-local anchor identifier), got ${typeof anchor === 'string' ? 'the empty string' : kindOf(anchor)}`);
    }
    if (this.anchors.has(anchor)) return;
    const c = this.bundle.capability;
    const local = hasOwn.call(c.coreAnchors, anchor) ? c.coreAnchors[anchor] : undefined;
    let hint: string;
    if (local !== undefined) hint = `: host ${c.host} spells core anchor ${anchor} as \`${local}\` ([OAR-CONF-29])`;
    else {
      const near = closest(anchor, this.anchors);
      hint = near !== undefined ? ` (did you mean \`${near}\`?)` : `; host ${c.host} has ${[...this.anchors].join(', ') || 'no anchors'}`;
    }
    throw new HostInputError(['anchor'], `decide: unknown anchor \`${anchor}\`${hint}`);
  }

  /** Every key names a declared fact or observation function ([OAR-FACT-1], [OAR-FACT-3]). */
  private checkFacts(member: 'facts' | 'detectorFacts', facts: unknown): void {
    // A Map holds its entries outside its own properties, where facts are read ([OAR-FACT-26]
    // own-property reads): every fact would silently read as its zero.
    if (!isPlainObject(facts) || facts instanceof Map) {
      throw new HostInputError([member], `decide: ${member} must be a plain object mapping declared fact names to values, got ${facts instanceof Map ? 'a Map (use Object.fromEntries)' : kindOf(facts)}`);
    }
    // A Promise (facts fetched but not awaited) or a class instance has no own properties by fact
    // name either, so every fact would read as its zero and a block become an allow. A plain
    // object's prototype is Object.prototype or null; one prototype read per occurrence.
    const proto: unknown = Object.getPrototypeOf(facts);
    if (proto !== OBJECT_PROTOTYPE && proto !== null) {
      const what = typeof (facts as { then?: unknown }).then === 'function' ? 'a Promise (await it first)' : `an instance of ${className(proto)}`;
      throw new HostInputError([member], `decide: ${member} must be a plain object mapping declared fact names to values, got ${what}`);
    }
    for (const name in facts) {
      // A declared name needs no own-property test: it passes either way.
      if (this.names.has(name) || !hasOwn.call(facts, name)) continue;
      throw new HostInputError([member, name], `decide: ${member} names \`${name}\`, which the bundle does not declare${didYouMean(name, this.names)}`);
    }
  }
}

/**
 * A member of the occurrence itself. One whose reading throws (a getter, a Proxy trap) is the
 * host's mistake in the occurrence, reported as such — never a raw exception out of `decide()`.
 * What lies inside a member (a fact's getter, the tool call's arguments) is left to evaluation.
 */
function readMember(occ: Occurrence, key: string): unknown {
  try {
    return (occ as unknown as Record<string, unknown>)[key];
  } catch (e) {
    throw new HostInputError([key], `decide: reading the occurrence's \`${key}\` threw: ${describeThrown(e)}`);
  }
}

function checkToolCall(t: unknown): void {
  if (!isPlainObject(t)) throw new HostInputError(['toolCall'], `decide: toolCall must be an object { name, arguments }, got ${kindOf(t)}`);
  for (const key in t) {
    if (!hasOwn.call(t, key) || key === 'name' || key === 'arguments') continue;
    throw new HostInputError(['toolCall', key], `decide: unknown toolCall member \`${key}\`${didYouMean(key, ['name', 'arguments'])}; a tool call is { name, arguments }`);
  }
  if (typeof t.name !== 'string' || t.name === '') throw new HostInputError(['toolCall', 'name'], `decide: toolCall.name must be a non-empty string, got ${typeof t.name === 'string' ? 'the empty string' : kindOf(t.name)}`);
  const args = t.arguments;
  if (args === undefined) return;
  if (!isPlainObject(args)) throw new HostInputError(['toolCall', 'arguments'], `decide: toolCall.arguments must be an object (the arguments by name), got ${kindOf(args)}`);
  // Arguments are read by own property (or a Map's entries), as the tool will be given them: a
  // class instance's getters, or members inherited from a prototype, would read as absent here
  // while the host's own code reads them — `rm -rf /` decided as a call with no command. So, as
  // for facts: a plain object (prototype Object.prototype or null), or a Map itself.
  const proto: unknown = Object.getPrototypeOf(args);
  if (proto !== OBJECT_PROTOTYPE && proto !== null && proto !== MAP_PROTOTYPE) {
    const what =
      typeof (args as { then?: unknown }).then === 'function' ? 'a Promise (await it first)'
      : className(proto) === 'Object' ? 'an object that inherits members from another (Object.create), which are not read'
      : `an instance of ${className(proto)}`;
    throw new HostInputError(['toolCall', 'arguments'], `decide: toolCall.arguments must be a plain object (or a Map) of the arguments by name, got ${what}; copy it into one ({ ...args } keeps only its own members)`);
  }
}
