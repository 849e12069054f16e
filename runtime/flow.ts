/**
 * Activity windows and flows ([OAR-PROF-9], [OAR-FACT-12]), shared by the generic engine and the
 * decision procedures so both read a host's window, and match a flow against it, the same way.
 */
import { Raise } from './raise.js';
import { describeThrown } from './thrown.js';
import { describe } from './values.js';

/**
 * An explicit activity window ([OAR-PROF-9], [OAR-CONF-40]) as a plain array of step names, or the
 * raise its `flow` rules take: a host value that is not a list of strings is wrong-typed, and one
 * that throws while read (a getter, a Proxy) is a provider failure ([OAR-OPS-3]).
 */
export function readWindow(w: unknown): readonly string[] | Raise {
  try {
    if (!Array.isArray(w)) return new Raise('wrong_type', `recent_activity: expected list<string>, got ${describe(w)}`);
    const steps: string[] = [];
    for (let i = 0; i < w.length; i++) {
      const step: unknown = w[i];
      if (typeof step !== 'string') return new Raise('wrong_type', `recent_activity[${i}]: expected string, got ${describe(step)}`);
      steps.push(step);
    }
    return steps;
  } catch (e) {
    return new Raise('provider_failure', `recent_activity could not be read: ${describeThrown(e)}`);
  }
}

/** [OAR-FACT-12]: the steps appear in order as a (not necessarily contiguous) subsequence. */
export function flowMatches(flow: readonly string[], window: readonly string[]): boolean {
  let i = 0;
  for (const step of window) {
    if (step === flow[i]) i++;
    if (i === flow.length) return true;
  }
  return i === flow.length;
}
