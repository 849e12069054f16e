/**
 * `oarc test` as a library: discover a pack's test files, run them through the real loader and
 * engine, and report (text, JSON, JUnit XML), with rule coverage.
 *
 *   const r = await runTests(['examples/gateway'], { backend: 'both' });
 *   process.stdout.write(formatText(r));
 */
export { runTests, runTestFile, type BackendChoice, type FileResult, type RunOptions, type RunResult, type TestResult } from './run.js';
export { Coverage, meetsThreshold, parseThreshold, percentDown, type CoverageReport, type RuleCoverage } from './coverage.js';
export { formatCoverage, formatJunit, formatText, reportJson, summaryLine, unreadableLine } from './report.js';
export { discoverTestFiles } from './discover.js';
export { readTestFile, TestFileError, TEST_FILE, EXPECT_MEMBERS, type TestCase, type TestFile } from './testfile.js';
export { importDetectors, missingDetector, DetectorModuleError } from './detectors.js';
