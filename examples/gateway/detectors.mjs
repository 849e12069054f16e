// Detector implementations for the example gateway pack, for `oarc eval --detectors`:
// the default export maps each `detector://` reference a rule names to a function that
// receives { ref, rule, anchor, occurrence, facts } and returns facts by name — observations,
// never a verdict ([OAR-OPS-11]). The scanner itself is examples/secret-scanner.ts, and the
// injection detector, over the seed corpus oarc ships, injection/detector.ts; both are compiled
// by `npm run build`.
import { secretScanner } from '../../dist/examples/secret-scanner.js';
import { SEED_CORPUS, corpusDetector, factNames } from '../../dist/injection/detector.js';

export default {
  'detector://secret-scanner': secretScanner,
  'detector://injection-corpus': corpusDetector([{ path: SEED_CORPUS }], factNames('acme.gateway')),
};
