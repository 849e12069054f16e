// Detector implementations for the example gateway pack, for `oarc eval --detectors`:
// the default export maps each `detector://` reference a rule names to a function that
// receives { ref, rule, anchor, occurrence, facts } and returns facts by name — observations,
// never a verdict ([OAR-OPS-11]). The scanner itself is examples/secret-scanner.ts, compiled
// by `npm run build`.
import { secretScanner } from '../../dist/examples/secret-scanner.js';

export default {
  'detector://secret-scanner': secretScanner,
};
