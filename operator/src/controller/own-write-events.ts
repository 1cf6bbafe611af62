/**
 * Watch events that arrive while their pipeline's reconcile runs, judged when it has finished.
 * A reconcile's own write (the finalizer patch, a child's server-side apply) often comes back as
 * a watch event before the write's response is read, so "is this exactly what we stored?" cannot
 * be answered yet; queueing the key anyway cost a new pipeline one more reconcile (issue 18).
 * Once the reconcile is done every write it sent is recorded: events that are our own are
 * dropped, any other queues the key again (level-triggered, nothing is lost).
 */

/** Defers the own-write check of events for keys whose reconcile is running. */
export class OwnWriteEvents {
  private readonly running = new Map<string, Array<() => boolean>>();
  /** Events dropped as our own write after their reconcile finished (tests, metrics). */
  droppedAfterReconcile = 0;

  /** Marks the reconcile of `key` as running. */
  begin(key: string): void {
    this.running.set(key, []);
  }

  /**
   * True when the reconcile of `key` is running: `isOwn` (is this event exactly our write?) is kept
   * for `end`. False: the caller judges the event now.
   */
  defer(key: string, isOwn: () => boolean): boolean {
    const events = this.running.get(key);
    if (!events) return false;
    events.push(isOwn);
    return true;
  }

  /** Ends the reconcile of `key`; true when an event that came meanwhile was not our own write. */
  end(key: string): boolean {
    const events = this.running.get(key) ?? [];
    this.running.delete(key);
    let foreign = false;
    for (const isOwn of events) {
      if (isOwn()) this.droppedAfterReconcile++;
      else foreign = true;
    }
    return foreign;
  }
}
