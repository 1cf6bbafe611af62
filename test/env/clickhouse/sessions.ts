/**
 * HTTP sessions (`session_id`): one engine connection kept across requests, so `SET`, `USE` and
 * temporary tables persist like on the real server. One request at a time per session
 * (SESSION_IS_LOCKED otherwise); an idle session closes after its `session_timeout`.
 */
import type { Engine, EngineConnection } from './engine';
import { serverError } from './errors';

interface SessionEntry {
  conn: EngineConnection;
  busy: boolean;
  timeoutMs: number;
  timer?: NodeJS.Timeout;
}

/** ClickHouse's default `session_timeout` (seconds). */
export const DEFAULT_SESSION_TIMEOUT_SEC = 60;

/** The live HTTP sessions of one server. */
export class SessionRegistry {
  private readonly sessions = new Map<string, SessionEntry>();

  /** Registry of sessions on `engine`. */
  constructor(private readonly engine: Engine) {}

  /** Takes session `id` for one request, creating it unless `mustExist` (session_check=1). */
  acquire(id: string, timeoutSec: number | undefined, mustExist: boolean): EngineConnection {
    let entry = this.sessions.get(id);
    if (!entry) {
      if (mustExist) throw serverError('SESSION_NOT_FOUND', `Session ${id} not found`);
      entry = { conn: this.engine.connect(), busy: false, timeoutMs: DEFAULT_SESSION_TIMEOUT_SEC * 1000 };
      this.sessions.set(id, entry);
    }
    if (entry.busy) throw serverError('SESSION_IS_LOCKED', `Session ${id} is locked by a concurrent client`);
    entry.busy = true;
    clearTimeout(entry.timer);
    if (timeoutSec !== undefined && Number.isFinite(timeoutSec) && timeoutSec > 0)
      entry.timeoutMs = timeoutSec * 1000;
    return entry.conn;
  }

  /** Returns session `id` after a request; closes it when asked to or re-arms its idle timer. */
  release(id: string, close: boolean): void {
    const entry = this.sessions.get(id);
    if (!entry) return;
    entry.busy = false;
    if (close) {
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
