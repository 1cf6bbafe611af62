/**
 * Structured logs: one JSON object per line on stdout, with a level, a message and flat fields.
 * Callers pass identifiers (namespace, name, reason), never object contents, so no secret can
 * reach a log line through here.
 */

/** Log levels, in increasing severity. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** A structured logger; `child` adds fields to every line. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A JSON-lines logger writing to `write` (stdout by default), dropping lines below `level`. */
export function createLogger(
  opts: { level?: LogLevel; base?: Record<string, unknown>; write?: (line: string) => void } = {},
): Logger {
  const min = RANK[opts.level ?? 'info'];
  const write = opts.write ?? ((line: string) => process.stdout.write(line + '\n'));
  const base = opts.base ?? {};
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[level] < min) return;
    const line: Record<string, unknown> = { ts: new Date().toISOString(), level, msg, ...base, ...fields };
    if (line.err instanceof Error) line.err = line.err.message;
    write(JSON.stringify(line));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ level: opts.level, base: { ...base, ...fields }, write }),
  };
}

/** A logger that drops everything (tests, libraries without a logger). */
export const silentLogger: Logger = createLogger({ write: () => undefined });
