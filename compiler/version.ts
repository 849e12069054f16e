/** The compiler identity recorded in every bundle; kept equal to package.json by a test. */
export const COMPILER_VERSION = '0.1.0';
export const COMPILER_ID = `oarc@${COMPILER_VERSION}`;
