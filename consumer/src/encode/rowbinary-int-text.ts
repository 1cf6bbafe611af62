/**
 * Decimal integer text into a RowBinary integer column: an exact range check against the column's
 * bounds as text (no float rounding past 2^53), then the binary value. Separate from the emitter
 * because it is the one digit-level parser of the RowBinary path, mirrored by TsvRowWriter's
 * intTextFits, and is read and tested as such.
 */
import { BinaryOutput } from './binary-output';
import { PlannedColumn } from './column-plan';

/** Decimal integer text, range-checked exactly (as TsvRowWriter's intTextFits), written binary. */
export function intText(out: BinaryOutput, col: PlannedColumn, b: Buffer, s: number, e: number): boolean {
  let i = s;
  const negative = b[i] === 45;
  if (negative) {
    if (!col.type.signed) return false;
    i++;
  }
  while (i < e - 1 && b[i] === 48) i++;
  if (i >= e) return false;
  const n = e - i;
  const limit = negative ? col.intMinText.slice(1) : col.intMaxText;
  if (n > limit.length) return false;
  for (let j = i; j < e; j++) {
    const d = b[j] - 48;
    if (d < 0 || d > 9) return false;
    if (n === limit.length) {
      const l = limit.charCodeAt(j - i) - 48;
      if (d !== l) {
        if (d > l) return false;
        // Smaller at the first difference: in range.
        for (let k = j; k < e; k++) if (b[k] < 48 || b[k] > 57) return false;
        break;
      }
    }
  }
  if (n <= 15) {
    let v = 0;
    for (let j = i; j < e; j++) v = v * 10 + (b[j] - 48);
    out.int(negative ? -v : v, col.type.bits);
  } else {
    const big = BigInt(b.toString('latin1', i, e));
    out.big64(negative ? -big : big);
  }
  return true;
}
