/**
 * Timestamp parsing on byte spans without Date objects: civil date -> epoch arithmetic, RFC 3339,
 * BSD syslog stamps (`Jan  5 10:23:45`, optionally with a year) and epoch numbers of any unit.
 * Results are epoch milliseconds; NaN means "not a timestamp". Clock-less local times are turned
 * into UTC by a TimeZone supplied by the caller.
 */
import { fixedDigits, isDigit } from './bytes';
import type { TimeZone } from './timezone';

const MS_PER_DAY = 86_400_000;
/** Earliest accepted clock: anything older is a device with an unset clock. */
export const MIN_TIMESTAMP_MS = Date.UTC(2000, 0, 1);
/** Latest accepted clock: the end of ClickHouse's 32-bit DateTime range. */
export const MAX_TIMESTAMP_MS = 4294967295_000;

/** True when `ms` is a clock ClickHouse DateTime and DateTime64 columns both accept. */
export function isPlausibleTimestamp(ms: number): boolean {
  return ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS;
}

/**
 * Days since 1970-01-01 of a Gregorian date (year >= 1, month 1..12), by the era algorithm.
 * Integer division by `| 0` is exact here because every operand is non-negative.
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = (y / 400) | 0;
  const yoe = y - era * 400;
  const mp = month > 2 ? month - 3 : month + 9;
  const doy = (((153 * mp + 2) / 5) | 0) + day - 1;
  const doe = yoe * 365 + ((yoe / 4) | 0) - ((yoe / 100) | 0) + doy;
  return era * 146097 + doe - 719468;
}

/** Epoch ms of a civil date-time read as UTC; NaN when a part is out of range. */
export function civilToMs(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  ms: number,
): number {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1970 || y > 2200) return NaN;
  if (h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60 || ms < 0) return NaN;
  if (d > 28 && d > daysInMonth(y, mo)) return NaN;
  return daysFromCivil(y, mo, d) * MS_PER_DAY + h * 3_600_000 + mi * 60_000 + (s > 59 ? 59 : s) * 1000 + ms;
}

function daysInMonth(y: number, mo: number): number {
  if (mo === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return mo === 4 || mo === 6 || mo === 9 || mo === 11 ? 30 : 31;
}

/** Month 1..12 of a three-letter English month name at `pos` (any case), or -1. */
export function monthAt(buf: Uint8Array, pos: number, end: number): number {
  if (pos + 3 > end) return -1;
  const key = ((buf[pos] | 32) << 16) | ((buf[pos + 1] | 32) << 8) | (buf[pos + 2] | 32);
  switch (key) {
    case 0x6a616e:
      return 1; // jan
    case 0x666562:
      return 2; // feb
    case 0x6d6172:
      return 3; // mar
    case 0x617072:
      return 4; // apr
    case 0x6d6179:
      return 5; // may
    case 0x6a756e:
      return 6; // jun
    case 0x6a756c:
      return 7; // jul
    case 0x617567:
      return 8; // aug
    case 0x736570:
      return 9; // sep
    case 0x6f6374:
      return 10; // oct
    case 0x6e6f76:
      return 11; // nov
    case 0x646563:
      return 12; // dec
    default:
      return -1;
  }
}

/** Scratch results of the span scanners (module-level: parsing is single-threaded and synchronous). */
export const scan = { end: 0, ms: NaN };

/** Milliseconds of a fraction `.ddd…` at `pos`; sets scan.end past the digits. Truncates beyond ms. */
function fraction(buf: Uint8Array, pos: number, end: number): number {
  let ms = 0;
  let scale = 100;
  let i = pos;
  while (i < end && isDigit(buf[i])) {
    ms += (buf[i] - 48) * scale;
    scale /= 10;
    i++;
  }
  scan.end = i;
  return ms | 0;
}

/**
 * Parses `[+-]hh:mm`, `[+-]hhmm`, `[+-]hh` or `Z` at `pos` into minutes east of UTC; sets scan.end.
 * Returns NaN when there is no offset there.
 */
export function parseOffset(buf: Uint8Array, pos: number, end: number): number {
  if (pos >= end) return NaN;
  const c = buf[pos];
  if (c === 90 || c === 122) {
    scan.end = pos + 1;
    return 0;
  }
  if (c !== 43 && c !== 45) return NaN;
  const hh = fixedDigits(buf, pos + 1, 2, end);
  if (hh < 0 || hh > 18) return NaN;
  let p = pos + 3;
  if (p < end && buf[p] === 58) p++;
  let mm = fixedDigits(buf, p, 2, end);
  if (mm < 0) {
    mm = 0;
    p = pos + 3;
  } else {
    p += 2;
  }
  scan.end = p;
  const minutes = hh * 60 + mm;
  return c === 45 ? -minutes : minutes;
}

/**
 * RFC 3339 / ISO 8601 `YYYY-MM-DD[T ]hh:mm:ss[.fff][Z|±hh:mm]` at `pos`. A stamp without offset is
 * local time in `tz`. Sets scan.end and returns epoch ms, or NaN.
 */
export function parseIsoTimestamp(buf: Uint8Array, pos: number, end: number, tz: TimeZone): number {
  const y = fixedDigits(buf, pos, 4, end);
  if (y < 0 || buf[pos + 4] !== 45 || buf[pos + 7] !== 45) return NaN;
  const mo = fixedDigits(buf, pos + 5, 2, end);
  const d = fixedDigits(buf, pos + 8, 2, end);
  const sep = buf[pos + 10];
  if (mo < 0 || d < 0 || (sep !== 84 && sep !== 116 && sep !== 32)) return NaN;
  const h = fixedDigits(buf, pos + 11, 2, end);
  const mi = fixedDigits(buf, pos + 14, 2, end);
  const s = fixedDigits(buf, pos + 17, 2, end);
  if (h < 0 || mi < 0 || s < 0 || buf[pos + 13] !== 58 || buf[pos + 16] !== 58) return NaN;
  let p = pos + 19;
  let ms = 0;
  if (p < end && (buf[p] === 46 || buf[p] === 44)) {
    ms = fraction(buf, p + 1, end);
    p = scan.end;
  }
  const local = civilToMs(y, mo, d, h, mi, s, ms);
  if (local !== local) return NaN;
  const offset = parseOffset(buf, p, end);
  if (offset === offset) return local - offset * 60_000;
  scan.end = p;
  return tz.localToUtc(local);
}

/** Results of parseBsdTimestamp: civil parts (year -1 when the stamp has none). */
export const bsd = { year: -1, month: 0, day: 0, hour: 0, minute: 0, second: 0, ms: 0, end: 0 };

/**
 * BSD syslog stamp `Mmm dd hh:mm:ss[.fff]`, also `Mmm dd yyyy hh:mm:ss` (Cisco) and a single-digit
 * day padded with a space. Fills `bsd` and returns true when the stamp parses.
 */
export function parseBsdTimestamp(buf: Uint8Array, pos: number, end: number): boolean {
  const month = monthAt(buf, pos, end);
  if (month < 0 || pos + 4 >= end || buf[pos + 3] !== 32) return false;
  let p = pos + 4;
  if (buf[p] === 32) p++;
  let day = 0;
  while (p < end && isDigit(buf[p]) && day < 10) day = day * 10 + buf[p++] - 48;
  if (day < 1 || day > 31 || p >= end || buf[p] !== 32) return false;
  p++;
  bsd.year = -1;
  if (p + 4 < end && buf[p + 4] === 32) {
    bsd.year = fixedDigits(buf, p, 4, end);
    if (bsd.year < 0) return false;
    p += 5;
  }
  const h = fixedDigits(buf, p, 2, end);
  const mi = fixedDigits(buf, p + 3, 2, end);
  const s = fixedDigits(buf, p + 6, 2, end);
  if (h < 0 || mi < 0 || s < 0 || buf[p + 2] !== 58 || buf[p + 5] !== 58) return false;
  p += 8;
  bsd.ms = 0;
  if (p < end && buf[p] === 46) {
    bsd.ms = fraction(buf, p + 1, end);
    p = scan.end;
  }
  bsd.month = month;
  bsd.day = day;
  bsd.hour = h;
  bsd.minute = mi;
  bsd.second = s;
  bsd.end = p;
  return true;
}

/** Copies the civil parts of the last parsed BSD stamp into `to` (to defer its conversion). */
export function saveBsd(to: Int32Array): void {
  to[0] = bsd.year;
  to[1] = bsd.month;
  to[2] = bsd.day;
  to[3] = bsd.hour;
  to[4] = bsd.minute;
  to[5] = bsd.second;
  to[6] = bsd.ms;
}

/** Restores civil parts saved by saveBsd into `bsd`. */
export function loadBsd(from: Int32Array): void {
  bsd.year = from[0];
  bsd.month = from[1];
  bsd.day = from[2];
  bsd.hour = from[3];
  bsd.minute = from[4];
  bsd.second = from[5];
  bsd.ms = from[6];
}

/**
 * Epoch ms of the stamp in `bsd`, read in `tz`. Without a year, the year is the latest one (of the
 * reference year and its neighbours) that does not put the stamp more than 7 days after `refMs`:
 * a "Dec 31" line read on Jan 1 belongs to last year, a "Jan 1" line read on Dec 31 to next year,
 * and a replayed backlog stays in the past instead of jumping months ahead.
 */
export function bsdToMs(tz: TimeZone, refMs: number): number {
  const b = bsd;
  if (b.year >= 0) return tz.localToUtc(civilToMs(b.year, b.month, b.day, b.hour, b.minute, b.second, b.ms));
  const refYear = yearOf(refMs);
  const limit = refMs + FUTURE_SLACK_MS;
  const current = tz.localToUtc(civilToMs(refYear, b.month, b.day, b.hour, b.minute, b.second, b.ms));
  // Fast path: fits, and next year's date would be too far ahead.
  if (current <= limit && current > limit - 350 * MS_PER_DAY) return current;
  for (let y = refYear + 1; y >= refYear - 1; y--) {
    const utc =
      y === refYear ? current : tz.localToUtc(civilToMs(y, b.month, b.day, b.hour, b.minute, b.second, b.ms));
    if (utc <= limit) return utc;
  }
  return NaN;
}

const FUTURE_SLACK_MS = 7 * MS_PER_DAY;
const yearCache = { ms: NaN, year: 0 };

/** UTC year of an epoch ms (cached: the reference time changes once per batch). */
function yearOf(ms: number): number {
  if (ms !== yearCache.ms) {
    yearCache.ms = ms;
    yearCache.year = new Date(ms).getUTCFullYear();
  }
  return yearCache.year;
}

/**
 * Epoch value of a run of digits in any unit, classified by length: <=10 seconds, <=13 ms, <=16
 * microseconds, <=19 nanoseconds (FortiOS eventtime). Only the leading 13 digits are read so the
 * result stays exact. Returns NaN when the span is not 9..19 digits.
 */
export function parseEpochDigits(buf: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n < 9 || n > 19) return NaN;
  // The leading (up to 13) digits make the value, read as two small integers (9 digits, then up to
  // 4) so no step needs floating point; the rest are only checked.
  let hi = 0;
  let i = s;
  const hiEnd = s + 9;
  for (; i < hiEnd; i++) {
    const d = buf[i] - 48;
    if (d < 0 || d > 9) return NaN;
    hi = hi * 10 + d;
  }
  let lo = 0;
  let scale = 1;
  const lead = s + (n > 13 ? 13 : n);
  for (; i < lead; i++) {
    const d = buf[i] - 48;
    if (d < 0 || d > 9) return NaN;
    lo = lo * 10 + d;
    scale *= 10;
  }
  for (; i < e; i++) {
    const d = buf[i] - 48;
    if (d < 0 || d > 9) return NaN;
  }
  const v = hi * scale + lo;
  if (n <= 10) return v * 1000;
  if (n <= 13) return v;
  // v holds the leading 13 digits: microseconds drop 16-n more digits, nanoseconds 19-n (0..2).
  const drop = (n <= 16 ? 16 : 19) - n;
  return drop === 0 ? v : Math.floor(v / (drop === 1 ? 10 : 100));
}
