/**
 * Work serialised per key: tasks under one key run one at a time, in the order they were queued;
 * tasks under different keys run concurrently. `decideAsync` queues each decision under its
 * session, so concurrent decisions of one session observe each other's counters exactly as
 * sequential ones would.
 *
 * A task always starts from a later microtask, never inside `run`: a caller that is itself in the
 * middle of a decision (a provider calling `decideAsync`) is never re-entered. Only keys with work
 * queued are held, so the queue does not grow with the number of sessions a gateway has seen.
 */
export class SessionQueue {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    const result = (previous ?? Promise.resolve()).then(task);
    const tail = result.then(settle, settle);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with a task queued or running. */
  get size(): number {
    return this.tails.size;
  }
}

function settle(): void {}
