/**
 * The fixed vocabularies of OAR 1.0 as data, transcribed row by row from the spec's tables: the
 * core anchors (8.1), the core facts (5.3), the eleven standard profiles (5.4), the reserved words
 * of the condition language ([OAR-EXPR-24]), the corpus's reserved detectors ([OAR-CONF-25]), and
 * the two name grammars a capability document is checked against ([OAR-DOC-7], [OAR-OPS-12]).
 *
 * Order is meaningful: every list keeps the spec's table order, and the symbol environment is built
 * in that order so the same capability always yields the same slots ([OAR-FACT-1]).
 */
import type { FactType, ScalarType } from '../../runtime/types.js';

/** A fact or observation function as a vocabulary declares it, before it is given a slot. */
export type Declaration =
  | { readonly kind: 'fact'; readonly name: string; readonly type: FactType }
  | { readonly kind: 'function'; readonly name: string; readonly param: ScalarType; readonly result: ScalarType };

function fact(name: string, type: FactType): Declaration {
  return Object.freeze({ kind: 'fact', name, type });
}

function fn(name: string, param: ScalarType, result: ScalarType): Declaration {
  return Object.freeze({ kind: 'function', name, param, result });
}

/** The spec's spelling of a declaration's type: `string`, `list<map>`, `(string) -> int`. */
export function declaredType(d: Declaration): string {
  return d.kind === 'fact' ? d.type : `(${d.param}) -> ${d.result}`;
}

/** The eight core anchors of 8.1, in table order ([OAR-PROF-1]). */
export const CORE_ANCHORS: readonly string[] = Object.freeze([
  'tool.pre_invoke',
  'tool.handler',
  'tool.post_invoke',
  'agent.post_turn',
  'agent.finalize',
  'model.input',
  'model.output',
  'model.tool_result',
]);

/** The `core` tier of 5.3: every conforming engine provides exactly these ([OAR-FACT-15]). */
export const CORE_FACTS: readonly Declaration[] = Object.freeze([
  fact('anchor', 'string'),
  fact('fire_count', 'int'),
  fact('breaker_count', 'int'),
  fn('fire_count_of', 'string', 'int'),
  fn('breaker_count_of', 'string', 'int'),
]);

/**
 * The standard profiles of 5.4, in the spec's order, each with every fact and function in table
 * order. A profile is provided whole or not at all ([OAR-FACT-16]).
 */
export const STANDARD_PROFILES: ReadonlyMap<string, readonly Declaration[]> = new Map<string, readonly Declaration[]>([
  ['tool', Object.freeze([
    fact('tool', 'string'),
    fact('tool_args', 'map'),
    fact('tool_args_fingerprint', 'string'),
    fact('arg_validation_errors', 'list<string>'),
    fact('arg_validation_reason', 'string'),
    fact('arg_validation_field', 'string'),
    fact('permission_profile', 'string'),
    fact('policy_denied', 'bool'),
    fn('tool_arg_string', 'string', 'string'),
    fn('tool_arg_int', 'string', 'int'),
    fn('tool_arg_bool', 'string', 'bool'),
  ])],
  ['session', Object.freeze([
    fact('session_posture', 'string'),
    fact('principal', 'string'),
    fact('principal_roles', 'list<string>'),
  ])],
  ['filesystem', Object.freeze([
    fact('is_directory', 'bool'),
    fact('not_found', 'bool'),
    fact('path_denied', 'bool'),
    fn('path_outside_scope', 'string', 'bool'),
  ])],
  ['content-provenance', Object.freeze([
    fact('content_roles', 'list<string>'),
    fact('content_origins', 'list<string>'),
    fact('content_authorities', 'list<string>'),
    fact('content_trust_tiers', 'list<string>'),
    fact('content_sources', 'list<string>'),
    fact('content_segment_count', 'int'),
    fact('content_contains_untrusted', 'bool'),
  ])],
  ['content', Object.freeze([
    fact('content_length', 'int'),
  ])],
  ['secrets', Object.freeze([
    fact('secret_matches', 'list<map>'),
  ])],
  ['pii', Object.freeze([
    fact('pii_entities', 'list<map>'),
  ])],
  ['prompt-injection', Object.freeze([
    fact('prompt_injection_score', 'double'),
  ])],
  ['jailbreak', Object.freeze([
    fact('jailbreak_score', 'double'),
  ])],
  ['moderation', Object.freeze([
    fact('moderation_categories', 'list<string>'),
    fn('moderation_score', 'string', 'double'),
  ])],
  ['mcp', Object.freeze([
    fact('mcp_provider_id', 'string'),
    fact('mcp_tool_name', 'string'),
    fact('mcp_qualified_tool', 'string'),
    fact('mcp_provider_configured', 'bool'),
    fact('mcp_provider_enabled', 'bool'),
    fact('mcp_call_ok', 'bool'),
    fact('mcp_error_code', 'string'),
    fact('mcp_schema_matched', 'bool'),
    fn('mcp_provider_configured_for', 'string', 'bool'),
    fn('mcp_provider_enabled_for', 'string', 'bool'),
    fn('mcp_has_field', 'string', 'bool'),
    fn('mcp_field_bool', 'string', 'bool'),
    fn('mcp_field_string', 'string', 'string'),
    fn('mcp_field_int', 'string', 'int'),
  ])],
]);

/** The standard profile names, in the spec's order. */
export const STANDARD_PROFILE_NAMES: readonly string[] = Object.freeze([...STANDARD_PROFILES.keys()]);

// Profiles whose facts only registered detectors or classifiers can produce ([OAR-OPS-22]): the
// runtime needs the list too ([OAR-COPY-11]), so it is defined there.
export { DETECTOR_BACKED_PROFILES } from '../../runtime/detectors.js';

/** Words the condition language lexes as themselves; no fact or function may take one ([OAR-EXPR-24]). */
export const RESERVED_WORDS: readonly string[] = Object.freeze(['true', 'false', 'in']);

/** The detector references the conformance corpus reserves ([OAR-CONF-25], [OAR-CONF-35]). */
export const RESERVED_DETECTORS: readonly string[] = Object.freeze([
  'detector://noop',
  'detector://error',
  'detector://fixture',
]);

/** The publisher-namespace grammar of [OAR-DOC-7]; host-tier facts live under one ([OAR-FACT-18]). */
export const NAMESPACE_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** A detector reference: `detector://<name>` with the name grammar of [OAR-OPS-12]. */
export const DETECTOR_REF_PATTERN = /^detector:\/\/[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** An implementation extension member name ([OAR-DOC-26]). */
export const EXTENSION_MEMBER_PATTERN = /^x-[a-z0-9]+(-[a-z0-9]+)*$/;
