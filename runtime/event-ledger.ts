/**
 * The events of one `decideAsync` occurrence, published once its counter writes are in the shared
 * store ([OAR-FIRE-8], [OAR-FIRE-9], [OAR-OPS-4]).
 *
 * `decideAsync` evaluates against a snapshot and writes every counter op in one batch afterwards,
 * so an evaluation may be thrown away — the session moved under it (another replica wrote), or the
 * batch write failed and the writing rules must take their `on_error`. An event published during
 * such an evaluation could not be taken back: a rule that then errored, or was never reached,
 * would have told the event stream it fired. So an evaluation only *records* its events (the sink
 * it is given accepts them), and the ledger publishes them, in order, after the batch write held.
 *
 * A refusal at that point makes the refusing rule one that cannot be evaluated; the occurrence is
 * evaluated again with the ledger's sink replaying what happened: the events before it (already
 * published: accepted, not sent again), the refused one (thrown again, with the sink's own error),
 * and the rest recorded for the next publication. The evaluation is deterministic over one
 * snapshot and the memoised providers, so the k-th event of every pass is the same one up to the
 * first refusal; a pass that disagrees is reported as the rule's failure, never published twice.
 */
import type { EventRecord } from './decision.js';
import type { EventSink } from './engine.js';

export class EventLedger {
  /** Ordinal → the event published there: ordinal i is the i-th event of every pass. */
  private readonly published = new Map<number, EventRecord>();
  /** Ordinal → what the sink threw when it refused that event. */
  private readonly refused = new Map<number, unknown>();
  /** This pass's events not yet published, with their ordinals. */
  private readonly recorded: { at: number; event: EventRecord }[] = [];
  private ordinal = 0;
  private readonly replay: EventSink = { publish: (event) => this.take(event) };

  constructor(
    private readonly sink: EventSink,
    /** Throws if what `publish` returned was not a synchronous acceptance (a Promise). */
    private readonly accepted: (result: unknown) => void,
  ) {}

  /** Has the sink been given an event yet (so the occurrence must not be read afresh)? */
  get started(): boolean {
    return this.published.size > 0 || this.refused.size > 0;
  }

  /** The sink for one evaluation pass. */
  pass(): EventSink {
    this.ordinal = 0;
    this.recorded.length = 0;
    return this.replay;
  }

  private take(event: EventRecord): void {
    const at = this.ordinal++;
    const earlier = this.published.get(at);
    if (earlier !== undefined) {
      if (earlier.rule === event.rule) return;
      throw new Error(`oarc: the occurrence evaluated differently on a second pass (its event ${at + 1} was ${earlier.rule}'s, now ${event.rule}'s); not published`);
    }
    if (this.refused.has(at)) throw this.refused.get(at);
    this.recorded.push({ at, event });
  }

  /** Publish this pass's recorded events in order; false at the first refusal (kept for the next pass). */
  publish(): boolean {
    for (const { at, event } of this.recorded) {
      try {
        this.accepted(this.sink.publish(event));
      } catch (e) {
        this.refused.set(at, e);
        return false;
      }
      this.published.set(at, event);
    }
    this.recorded.length = 0;
    return true;
  }
}
