/**
 * RowBinary rows -> one Native block. The encoder writes (and validates, and rolls back) rows in
 * RowBinary, whose rows are byte ranges: row isolation, regrouping by partition key and the
 * dead-letter path keep cutting the RowBinary body by rows. What goes over the wire is a Native
 * block of the chosen rows, built here in one column-major pass (a cursor per row walks its
 * values), because the engine ingests Native for about a third less CPU than RowBinary (PLAN.md).
 *
 * Native block (HTTP, no client_protocol_version): varint columns, varint rows, then per column
 * its name, its type and its data: fixed-width values back to back; String values as LEB128
 * length + bytes (the same bytes as RowBinary); Nullable as a null map (1 byte per row) followed by
 * the nested column with a default value in NULL rows. LowCardinality(T) is declared as T (the
 * engine converts; dictionaries would cost the worker more than they save).
 */
import type { ColumnPlan } from '../consumer/src/encode/column-plan';
import { T_DATETIME, T_DATETIME64, T_ENUM, T_INT, T_IPV4, T_IPV6 } from '../common/src/columns/column-type';

/** How one column's values are laid out in the RowBinary rows. */
export interface NativeColumn {
  name: Buffer;
  /** Native type text: the configured type without LowCardinality. */
  type: Buffer;
  nullable: boolean;
  /** Fixed value width in bytes; 0 for String. */
  width: number;
}

function stripLowCardinality(text: string): string {
  let t = text.trim();
  const lc = /^LowCardinality\((.*)\)$/s.exec(t);
  if (lc) t = lc[1].trim();
  const nl = /^Nullable\(\s*LowCardinality\((.*)\)\s*\)$/s.exec(t);
  return nl ? `Nullable(${nl[1].trim()})` : t;
}

/** The Native layout of a column plan (computed once per plan). */
export function nativeLayout(plan: ColumnPlan): NativeColumn[] {
  return plan.columns.map((c) => {
    const t = c.type;
    const width =
      t.kind === T_INT
        ? t.bits / 8
        : t.kind === T_ENUM
          ? t.text.includes('Enum16')
            ? 2
            : 1
          : t.kind === T_DATETIME || t.kind === T_IPV4
            ? 4
            : t.kind === T_DATETIME64
              ? 8
              : t.kind === T_IPV6
                ? 16
                : 0;
    return {
      name: Buffer.from(c.name, 'utf8'),
      type: Buffer.from(stripLowCardinality(t.text), 'utf8'),
      nullable: t.nullable,
      width,
    };
  });
}

/**
 * LEB128 `n` at `o`; returns the new offset. A plain function on purpose: the earlier closure that
 * advanced the builder's offset variable sometimes lost a header byte on Node 26 (outputs differed
 * between processes for identical input, making chdb reject the block's type names).
 */
function writeVarint(out: Buffer, o: number, n: number): number {
  while (n >= 0x80) {
    out[o++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  out[o++] = n;
  return o;
}

/** Reused scratch: output buffer and per-row cursors. */
export class NativeBlockBuilder {
  private out = Buffer.allocUnsafe(1 << 20);
  private cursors = new Uint32Array(1024);

  constructor(private readonly layout: readonly NativeColumn[]) {}

  /**
   * A Native block of rows `order` (indexes into rowStarts) or of rows [from, to) when `order` is
   * absent; the result is a view into a reused buffer, valid until the next call.
   */
  build(body: Uint8Array, rowStarts: Uint32Array, from: number, to: number, order?: Uint32Array): Buffer {
    const rows = order ? order.length : to - from;
    if (this.cursors.length < rows) this.cursors = new Uint32Array(Math.max(rows, this.cursors.length * 2));
    const cur = this.cursors;
    let bytes = 0;
    for (let r = 0; r < rows; r++) {
      const row = order ? order[r] : from + r;
      cur[r] = rowStarts[row];
      bytes += rowStarts[row + 1] - rowStarts[row];
    }
    let need = bytes + 32;
    for (const c of this.layout)
      need += c.name.length + c.type.length + 10 + (c.nullable ? rows * (1 + c.width) : 0);
    if (this.out.length < need) this.out = Buffer.allocUnsafe(Math.max(need, this.out.length * 2));
    const out = this.out;
    let o = 0;
    o = writeVarint(out, o, this.layout.length);
    o = writeVarint(out, o, rows);
    for (const c of this.layout) {
      o = writeVarint(out, o, c.name.length);
      o += c.name.copy(out, o);
      o = writeVarint(out, o, c.type.length);
      o += c.type.copy(out, o);
      const w = c.width;
      if (c.nullable) {
        for (let r = 0; r < rows; r++) out[o++] = body[cur[r]];
      }
      for (let r = 0; r < rows; r++) {
        let p = cur[r];
        if (c.nullable && body[p++] === 1) {
          // NULL: the nested column holds a default value.
          if (w === 0) out[o++] = 0;
          else {
            out.fill(0, o, o + w);
            o += w;
          }
          cur[r] = p;
          continue;
        }
        let n = w;
        if (w === 0) {
          // LEB128 length, copied with the bytes.
          let len = 0;
          let shift = 1;
          let q = p;
          for (;;) {
            const b = body[q++];
            len += (b & 0x7f) * shift;
            if (b < 0x80) break;
            shift *= 128;
          }
          n = q - p + len;
        }
        if (n < 64) for (let i = 0; i < n; i++) out[o++] = body[p + i];
        else {
          out.set(body.subarray(p, p + n), o);
          o += n;
        }
        cur[r] = p + n;
      }
    }
    return out.subarray(0, o);
  }
}
