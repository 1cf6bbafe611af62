/**
 * Per-parser settings the vendor parsers read: the zone for clock-less stamps and the reference
 * instant for year inference. The reference is the batch's ingest time (not Date.now() per line),
 * so re-encoding a batch yields identical bytes.
 */
import type { TimeZone } from './timezone';
import type { ParsedRecord } from './record';

/** Settings shared by all vendor parsers of one LineParser. */
export interface ParseContext {
  /** Zone for stamps without an offset (RFC 3164, FortiGate date/time without tz, PAN-OS). */
  tz: TimeZone;
  /** Reference epoch ms for inferring the year of year-less stamps. */
  refMs: number;
}

/** A payload parser: fills `rec` from [s, e) and returns a dead-letter reason or null. */
export type PayloadParser = (
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  ctx: ParseContext,
) => string | null;
