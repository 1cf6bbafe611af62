/**
 * Calendar days of the daily seal in a time zone (default UTC): a day is `[local midnight, next
 * local midnight)`, 23 or 25 hours long across a DST change. Offsets come from Intl (the IANA
 * database Node ships), so `Europe/Istanbul` days start at 21:00 UTC the evening before. Pure.
 */

/** One day in milliseconds (a UTC day; local days may differ by an hour at DST changes). */
export const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
    } catch {
      throw new RangeError(
        `unknown time zone ${JSON.stringify(timeZone)} (use an IANA name such as Europe/Istanbul)`,
      );
    }
    formatters.set(timeZone, f);
  }
  return f;
}

/** Local calendar fields of an instant in `timeZone`. */
function localFields(ms: number, timeZone: string): { y: number; m: number; d: number; utcOfLocal: number } {
  const parts = formatter(timeZone).formatToParts(new Date(ms));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const y = get('year');
  const m = get('month');
  const d = get('day');
  return { y, m, d, utcOfLocal: Date.UTC(y, m - 1, d, get('hour'), get('minute'), get('second')) };
}

/** Offset of `timeZone` at an instant, in ms (local = UTC + offset). */
function offsetMs(ms: number, timeZone: string): number {
  return localFields(ms, timeZone).utcOfLocal - Math.floor(ms / 1000) * 1000;
}

/** The instant of local midnight starting y-m-d (month 1-based) in `timeZone`. */
function localMidnight(y: number, m: number, d: number, timeZone: string): number {
  const naive = Date.UTC(y, m - 1, d);
  const guess = naive - offsetMs(naive, timeZone);
  return naive - offsetMs(guess, timeZone);
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** Parses YYYY-MM-DD into the day's window in `timeZone`; throws RangeError for anything else. */
export function dayWindow(day: string, timeZone = 'UTC'): { fromMs: number; toMs: number } {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  const y = Number(m?.[1]);
  const mo = Number(m?.[2]);
  const d = Number(m?.[3]);
  const check = m ? new Date(Date.UTC(y, mo - 1, d)).toISOString().slice(0, 10) : '';
  if (!m || check !== day) throw new RangeError(`${JSON.stringify(day)} is not a date YYYY-MM-DD`);
  const next = new Date(Date.UTC(y, mo - 1, d + 1));
  return {
    fromMs: localMidnight(y, mo, d, timeZone),
    toMs: localMidnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone),
  };
}

/** The local day (YYYY-MM-DD) containing epoch ms in `timeZone`. */
export function formatDay(ms: number, timeZone = 'UTC'): string {
  const f = localFields(ms, timeZone);
  return `${pad(f.y, 4)}-${pad(f.m)}-${pad(f.d)}`;
}

/** The day `n` calendar days after `day` (negative: before). */
export function addDays(day: string, n: number): string {
  const { fromMs } = dayWindow(day);
  return new Date(fromMs + n * DAY_MS).toISOString().slice(0, 10);
}

/** The newest day that is complete at `nowMs`: it ended, plus the grace for late lines, by then. */
export function lastCompleteDay(nowMs: number, graceMs: number, timeZone = 'UTC'): string {
  return addDays(formatDay(nowMs - graceMs, timeZone), -1);
}

/** Why a day may not be sealed yet at `nowMs`, or null when it is complete. */
export function incompleteReason(
  day: string,
  nowMs: number,
  graceMs: number,
  timeZone = 'UTC',
): string | null {
  const { toMs } = dayWindow(day, timeZone);
  if (toMs + graceMs <= nowMs) return null;
  return `${day} is not complete: it ends at ${new Date(toMs).toISOString()} and late lines are awaited until ${new Date(toMs + graceMs).toISOString()}`;
}
