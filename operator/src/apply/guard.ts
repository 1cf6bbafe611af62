/**
 * The guard of destructive statements (DROP, ON CLUSTER DDL, topic deletion): checked immediately
 * before each one runs, and its signal cancels the statement in flight when this operator instance
 * loses its lease. A leader that lost its lease must never finish a DROP it started as leader.
 */

/** Thrown when a destructive statement is refused because this instance is no longer the leader. */
export class LeadershipLostError extends Error {
  constructor(what: string) {
    super(`not run: this operator instance no longer holds the leader lease (${what})`);
    this.name = 'LeadershipLostError';
  }
}

/** Checked before, and cancelling during, every destructive statement. */
export interface DestructiveGuard {
  /** Aborted when the lease is lost (or the operator stops). */
  readonly signal: AbortSignal;
  /** Throws LeadershipLostError unless this instance still holds the lease right now. */
  confirm(what: string): Promise<void>;
}

/** The guard of an operator without leader election (one replica, tests): never refuses. */
export const UNGUARDED: DestructiveGuard = {
  signal: new AbortController().signal,
  confirm: async () => undefined,
};

/** A guard from a signal and a fresh leadership check. */
export function leaderGuard(signal: AbortSignal, stillLeader: () => Promise<boolean>): DestructiveGuard {
  return {
    signal,
    async confirm(what: string) {
      if (signal.aborted || !(await stillLeader()) || signal.aborted) throw new LeadershipLostError(what);
    },
  };
}
