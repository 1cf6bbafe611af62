/**
 * HTTP sessions (`session_id`): one engine connection kept across requests, so `SET`, `USE` and
 * temporary tables persist like on the real server. One request at a time per session
 * (SESSION_IS_LOCKED otherwise); an idle session closes after its `session_timeout`.
 *
 * A request for a busy session waits briefly (LOCK_WAIT_MS) before SESSION_IS_LOCKED: the server
 * restores the session's settings after the response went out, and a client such as
 * clickhouse-connect sends its next query the moment it has read the previous response.
 */
import type { Engine, EngineConnection } from './engine';
import { serverError } from './errors';

interface SessionEntry {
  conn: EngineConnection;
  busy: boolean;
  timeoutMs: number;
  timer?: NodeJS.Timeout;
  /** Requests waiting for the session, first come first served; each takes it over on release. */
  waiters: (() => void)[];
  /** A request asked to close the session while others were waiting for it. */
  closeAfterWaiters?: boolean;
}

/** How long a request waits for a busy session before SESSION_IS_LOCKED. */
export const LOCK_WAIT_MS = 2_000;

/** ClickHouse's default `session_timeout` (seconds). */
export const DEFAULT_SESSION_TIMEOUT_SEC = 60;

/** The live HTTP sessions of one server. */
export class SessionRegistry {
  private readonly sessions = new Map<string, SessionEntry>();

  /** Registry of sessions on `engine`. */
  constructor(private readonly engine: Engine) {}

  /**
   * Takes session `id` for one request, creating it unless `mustExist` (session_check=1); a busy
   * session is waited for up to `waitMs`.
   */
  async acquire(
    id: string,
    timeoutSec: number | undefined,
    mustExist: boolean,
    waitMs = LOCK_WAIT_MS,
  ): Promise<EngineConnection> {
    let entry = this.sessions.get(id);
    if (!entry) {
      if (mustExist) throw serverError('SESSION_NOT_FOUND', `Session ${id} not found`);
      entry = {
        conn: this.engine.connect(),
        busy: false,
        timeoutMs: DEFAULT_SESSION_TIMEOUT_SEC * 1000,
        waiters: [],
      };
      this.sessions.set(id, entry);
    }
    if (entry.busy) await this.waitFor(id, entry, waitMs);
    entry.busy = true;
    clearTimeout(entry.timer);
    if (timeoutSec !== undefined && Number.isFinite(timeoutSec) && timeoutSec > 0)
      entry.timeoutMs = timeoutSec * 1000;
    return entry.conn;
  }

  /** Resolves when release() hands the session to this waiter; rejects after `waitMs`. */
  private waitFor(id: string, entry: SessionEntry, waitMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const handOver = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        entry.waiters.splice(entry.waiters.indexOf(handOver), 1);
        reject(serverError('SESSION_IS_LOCKED', `Session ${id} is locked by a concurrent client`));
      }, waitMs);
      entry.waiters.push(handOver);
    });
  }

  /** Returns session `id` after a request; closes it when asked to or re-arms its idle timer. */
  release(id: string, close: boolean): void {
    const entry = this.sessions.get(id);
    if (!entry) return;
    const next = entry.waiters.shift();
    if (next) {
      // Handed over still busy: the waiter owns it now (a close request closes it for good later).
      if (close) entry.closeAfterWaiters = true;
      next();
      return;
    }
    entry.busy = false;
    if (close || entry.closeAfterWaiters) {
      this.drop(id);
      return;
    }
    entry.timer = setTimeout(() => this.drop(id), entry.timeoutMs);
    entry.timer.unref();
  }

  private drop(id: string): void {
    const entry = this.sessions.get(id);
    if (!entry || entry.busy) return;
    clearTimeout(entry.timer);
    this.sessions.delete(id);
    entry.conn.close();
  }

  /** Closes every idle session (at shutdown). */
  closeAll(): void {
    for (const id of [...this.sessions.keys()]) this.drop(id);
  }
}
