/**
 * Free-form clock values found in JSON and CEF fields: epoch digits (s/ms/µs/ns), epoch seconds
 * with a fraction, RFC 3339, or `MMM dd [yyyy] HH:mm:ss[.SSS] [UTC|GMT|±hh:mm]`. Stamps without an
 * offset are read in the configured zone.
 */
import type { ParseContext } from './context';
import { ascii, isDigit, skipSpaces, startsWith } from './bytes';
import {
  bsd,
  bsdToMs,
  parseBsdTimestamp,
  parseEpochDigits,
  parseIsoTimestamp,
  parseOffset,
  scan,
} from './time';
import { fixedOffsetZone, UTC_ZONE } from './timezone';

const UTC_WORD = ascii('UTC');
const GMT_WORD = ascii('GMT');

/** Epoch ms of a clock value in any supported notation, or NaN. */
export function parseFlexibleTimestamp(b: Uint8Array, s: number, e: number, ctx: ParseContext): number {
  if (e <= s) return NaN;
  if (isDigit(b[s])) return numericOrIso(b, s, e, ctx);
  if (!parseBsdTimestamp(b, s, e)) return NaN;
  const z = skipSpaces(b, bsd.end, e);
  let zone = ctx.tz;
  if (z < e) {
    if (startsWith(b, z, e, UTC_WORD) || startsWith(b, z, e, GMT_WORD)) {
      zone = UTC_ZONE;
    } else {
      const minutes = parseOffset(b, z, e);
      if (minutes === minutes) zone = fixedOffsetZone(minutes);
    }
  }
  return bsdToMs(zone, ctx.refMs);
}

function numericOrIso(b: Uint8Array, s: number, e: number, ctx: ParseContext): number {
  let i = s;
  while (i < e && isDigit(b[i])) i++;
  if (i === e) return parseEpochDigits(b, s, e);
  if (b[i] === 46 && i - s === 10) {
    // Seconds with a fraction: 1705310625.123456
    let ms = 0;
    let scale = 100;
    for (let j = i + 1; j < e; j++) {
      if (!isDigit(b[j])) return NaN;
      ms += (b[j] - 48) * scale;
      scale /= 10;
    }
    return parseEpochDigits(b, s, i) + (ms | 0);
  }
  const iso = parseIsoTimestamp(b, s, e, ctx.tz);
  return iso === iso && scan.end === e ? iso : NaN;
}
