/**
 * Clock helpers shared by the newer vendor parsers: a date and a time logged as separate values
 * (`date=2024-01-15 time=10:23:45`, also `2024/1/15`), read in a logged offset or the configured
 * zone, and an ISO stamp value. NaN means "present but not a clock".
 */
import { isDigit } from './bytes';
import { civilToMs, parseIsoTimestamp, parseOffset, scan } from './time';
import { fixedOffsetZone, type TimeZone } from './timezone';

/** Reads 1..4 digits at `p`; value in `num.v`, end in `num.end`; -1 when none. */
const num = { v: -1, end: 0 };
function digits(buf: Uint8Array, p: number, e: number, max: number): number {
  let v = 0;
  const s = p;
  while (p < e && p - s < max && isDigit(buf[p])) v = v * 10 + buf[p++] - 48;
  num.v = p === s ? -1 : v;
  num.end = p;
  return num.v;
}

/**
 * Epoch ms of a date span (`YYYY-MM-DD` or `YYYY/M/D`) and a time span (`hh:mm:ss`), local to the
 * offset span [zs, ze) when it parses (`+0300`, `+03:00`, `+03`), else to `tz`.
 */
export function dateTimeMs(
  buf: Uint8Array,
  ds: number,
  de: number,
  ts: number,
  te: number,
  zs: number,
  ze: number,
  tz: TimeZone,
): number {
  const y = digits(buf, ds, de, 4);
  const sep = buf[num.end];
  if (y < 0 || (sep !== 45 && sep !== 47)) return NaN;
  const mo = digits(buf, num.end + 1, de, 2);
  if (mo < 0 || buf[num.end] !== sep) return NaN;
  const d = digits(buf, num.end + 1, de, 2);
  if (d < 0 || num.end !== de) return NaN;
  const h = digits(buf, ts, te, 2);
  if (h < 0 || buf[num.end] !== 58) return NaN;
  const mi = digits(buf, num.end + 1, te, 2);
  if (mi < 0 || buf[num.end] !== 58) return NaN;
  const s = digits(buf, num.end + 1, te, 2);
  if (s < 0 || num.end !== te) return NaN;
  const local = civilToMs(y, mo, d, h, mi, s, 0);
  if (local !== local) return NaN;
  let zone = tz;
  if (zs >= 0) {
    const minutes = parseOffset(buf, zs, ze);
    if (minutes === minutes && scan.end === ze) zone = fixedOffsetZone(minutes);
  }
  return zone.localToUtc(local);
}

/** Epoch ms of an ISO stamp filling [s, e) (a trailing ` UTC` counts as Z), or NaN. */
export function isoValueMs(buf: Uint8Array, s: number, e: number, tz: TimeZone): number {
  const ms = parseIsoTimestamp(buf, s, e, tz);
  if (ms !== ms) return NaN;
  if (scan.end === e) return ms;
  // `2024-01-15 10:23:45 UTC` (SonicWall): the zone name UTC is the only one we trust.
  if (e - scan.end === 4 && buf[scan.end] === 32 && buf[scan.end + 1] === 85 && buf[scan.end + 2] === 84)
    return parseIsoTimestamp(buf, s, scan.end, fixedOffsetZone(0));
  return NaN;
}
