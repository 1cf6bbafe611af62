/**
 * Identity coverage of parsed rows, counted on the worker's hot path without allocation: rows per
 * vendor, rows missing each identity field, and for rows without src_ip the "shape" of the line
 * (a hash of its first bytes with letters and digits folded into classes), so an operator can find
 * which kind of line lacks identity without any line content leaving the worker.
 */
import { VENDOR_NAMES, ParsedRecord } from '../parse/record';

/** Identity fields whose absence is counted (Prometheus label `field`). */
export const IDENTITY_FIELDS = ['src_ip', 'dst_ip', 'src_port', 'dst_port'] as const;
const SHAPE_BYTES = 64;
const MAX_SHAPES = 256;

/** What a drained window holds. */
export interface IdentitySnapshot {
  /** Parsed records (stored rows plus rows dead-lettered as missing_field). */
  rows: number;
  byVendor: Record<string, number>;
  missing: Record<(typeof IDENTITY_FIELDS)[number], number>;
  /** `<vendor>#<8 hex>` -> rows without src_ip of that shape. */
  shapes: Record<string, number>;
}

/**
 * Shape hash of a line: FNV-1a over the first 64 bytes after folding runs of letters to `a` and
 * runs of digits to `0` (so clocks, hosts and addresses of one layout hash alike). Pure; also used by
 * `logpipeline parse` to show which lines carry a reported shape.
 */
export function lineShape(buf: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5;
  let prev = -1;
  const end = e - s > SHAPE_BYTES ? s + SHAPE_BYTES : e;
  for (let i = s; i < end; i++) {
    let c = buf[i];
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c >= 128) c = 97;
    else if (c >= 48 && c <= 57) c = 48;
    if (c === prev && (c === 97 || c === 48)) continue;
    prev = c;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}

/** Formats a shape id as reported in metrics-free places (status, stats table, CLI). */
export function shapeId(vendor: string, hash: number): string {
  return `${vendor}#${hash.toString(16).padStart(8, '0')}`;
}

/** Accumulates identity coverage until drained. */
export class IdentityStats {
  private rows = 0;
  private readonly byVendor = new Float64Array(VENDOR_NAMES.length);
  private readonly missing = new Float64Array(IDENTITY_FIELDS.length);
  private readonly shapes = new Map<number, number>();

  /** Counts one parsed record (its line is rec.src[lineStart, lineEnd)). */
  count(rec: ParsedRecord): void {
    this.rows++;
    if (rec.format >= 0) this.byVendor[rec.format]++;
    if (rec.srcIpVersion === 0) {
      this.missing[0]++;
      this.countShape(rec);
    }
    if (rec.dstIpVersion === 0) this.missing[1]++;
    if (rec.srcPort < 0) this.missing[2]++;
    if (rec.dstPort < 0) this.missing[3]++;
  }

  private countShape(rec: ParsedRecord): void {
    // Key: shape hash mixed with the vendor id (formats < 32), kept as one number.
    const key = lineShape(rec.src, rec.lineStart, rec.lineEnd) * 32 + (rec.format & 31);
    const n = this.shapes.get(key);
    if (n !== undefined) this.shapes.set(key, n + 1);
    else if (this.shapes.size < MAX_SHAPES) this.shapes.set(key, 1);
  }

  /** Returns the counts since the last drain and starts a new window. */
  drain(): IdentitySnapshot {
    const byVendor: Record<string, number> = {};
    VENDOR_NAMES.forEach((name, i) => {
      if (this.byVendor[i] > 0) byVendor[name] = this.byVendor[i];
    });
    const missing = Object.fromEntries(
      IDENTITY_FIELDS.map((f, i) => [f, this.missing[i]]),
    ) as IdentitySnapshot['missing'];
    const shapes: Record<string, number> = {};
    for (const [key, n] of this.shapes) {
      const format = key % 32;
      shapes[shapeId(VENDOR_NAMES[format] ?? 'unknown', Math.floor(key / 32))] = n;
    }
    const snapshot = { rows: this.rows, byVendor, missing, shapes };
    this.rows = 0;
    this.byVendor.fill(0);
    this.missing.fill(0);
    this.shapes.clear();
    return snapshot;
  }
}
