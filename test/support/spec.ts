/**
 * The specification text the committed `conformance/clauses.json` is compared with: `OARC_SPEC`,
 * when set. Nothing in the repository knows where the text lives; `.ci/run` sets the variable when
 * a copy is beside the clone.
 */
export const specToCompare = (env: NodeJS.ProcessEnv = process.env): string | undefined =>
  env.OARC_SPEC !== undefined && env.OARC_SPEC !== '' ? env.OARC_SPEC : undefined;

/** Why the comparison does not run, and how to make it; undefined when it runs. */
export const specNotice = (env: NodeJS.ProcessEnv = process.env): string | undefined =>
  specToCompare(env) === undefined
    ? 'clauses.json not compared with the specification (test/conformance/clauses.test.ts): OARC_SPEC is not set; set OARC_SPEC=<path to open-agent-rules-1.0.md> to compare'
    : undefined;
