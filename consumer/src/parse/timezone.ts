/**
 * Local-time to UTC conversion for clock stamps that carry no offset (RFC 3164, FortiGate date/time
 * without tz, PAN-OS CSV times). Fixed offsets are arithmetic; IANA zones ask Intl once per
 * 15-minute bucket and cache the offset, so the hot path is a compare with the last bucket (else a
 * Map lookup).
 */

const BUCKET_MS = 15 * 60_000;
const MAX_CACHE = 50_000;

/** Converts local wall-clock epoch values (civil time read as if UTC) to real UTC epoch ms. */
export interface TimeZone {
  /** IANA name or fixed offset this zone was created from. */
  readonly name: string;
  /** UTC epoch ms of a local civil time given as if it were UTC; NaN passes through. */
  localToUtc(localMs: number): number;
}

class FixedZone implements TimeZone {
  constructor(
    readonly name: string,
    private readonly offsetMs: number,
  ) {}

  localToUtc(localMs: number): number {
    return localMs - this.offsetMs;
  }
}

class IanaZone implements TimeZone {
  private readonly format: Intl.DateTimeFormat;
  private readonly offsets = new Map<number, number>();
  /** The last bucket asked for and its offset: neighbouring lines almost always share one. */
  private lastBucket = NaN;
  private lastOffset = 0;

  constructor(readonly name: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  /** Offset (ms east of UTC) in force at a UTC instant, cached per bucket. */
  private offsetAt(utcMs: number): number {
    const bucket = Math.floor(utcMs / BUCKET_MS);
    if (bucket === this.lastBucket) return this.lastOffset;
    let offset = this.offsets.get(bucket);
    if (offset === undefined) {
      offset = this.computeOffset(bucket * BUCKET_MS);
      if (this.offsets.size >= MAX_CACHE) this.offsets.clear();
      this.offsets.set(bucket, offset);
    }
    this.lastBucket = bucket;
    this.lastOffset = offset;
    return offset;
  }

  private computeOffset(utcMs: number): number {
    const parts = this.format.formatToParts(new Date(utcMs));
    const v: Record<string, number> = {};
    for (const p of parts) if (p.type !== 'literal') v[p.type] = Number(p.value);
    const asUtc = Date.UTC(v.year, v.month - 1, v.day, v.hour, v.minute, v.second);
    return asUtc - utcMs;
  }

  localToUtc(localMs: number): number {
    if (localMs !== localMs) return NaN;
    // Guess with the offset at the local value, then correct with the offset at the guess; this
    // resolves everything but the skipped/repeated hour of a DST change, which takes the later offset.
    const guess = localMs - this.offsetAt(localMs);
    return localMs - this.offsetAt(guess);
  }
}

const FIXED = /^(?:UTC|GMT|Z)?([+-])(\d{1,2})(?::?(\d{2}))?$/i;

/**
 * Zone for an IANA name (`Europe/Istanbul`), `UTC`/`GMT`, or a fixed offset (`+03:00`, `UTC+3`).
 * Throws on an unknown name: this runs once at configuration time, never on data.
 */
export function createTimeZone(name: string | undefined): TimeZone {
  const tz = (name ?? 'UTC').trim();
  if (tz === '' || /^(UTC|GMT|Z|Etc\/UTC|Etc\/GMT)$/i.test(tz)) return new FixedZone('UTC', 0);
  const m = FIXED.exec(tz);
  if (m) {
    const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
    if (minutes > 18 * 60) throw new RangeError(`timezone offset out of range: ${tz}`);
    return new FixedZone(tz, (m[1] === '-' ? -minutes : minutes) * 60_000);
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw new RangeError(`unknown timezone: ${tz}`);
  }
  return new IanaZone(tz);
}

/** Shared UTC zone for stamps that already carry an offset. */
export const UTC_ZONE: TimeZone = createTimeZone('UTC');

/** Zone of a fixed offset in minutes east of UTC (cached per distinct offset). */
export function fixedOffsetZone(minutes: number): TimeZone {
  let zone = offsetZones.get(minutes);
  if (zone === undefined) {
    zone = new FixedZone(`${minutes}m`, minutes * 60_000);
    offsetZones.set(minutes, zone);
  }
  return zone;
}
const offsetZones = new Map<number, TimeZone>();
