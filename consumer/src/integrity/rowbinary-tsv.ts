/**
 * RowBinary rows -> the TabSeparated text the digester canonicalises (BatchDigester.addTsv):
 * Strings TSV-escaped, Enum values as their names, integers and epoch seconds in decimal,
 * DateTime64 as `seconds.fraction`, IPv4 dotted, IPv6 as eight hex groups, NULL as `\N`. The worker
 * no longer uses it (RowBinary rows are canonicalised directly: canonical-rowbinary.ts); it stays as
 * the reference route that tests and bench/integrity-digest.ts compare the direct one against.
 * To stay an independent oracle it shares no code with the direct route: Strings and Enum names
 * are escaped by the links' text escaper (chain.ts tsvText, a regular expression over the bytes
 * read as latin1) instead of the direct route's escape table, and values are rendered as text.
 */
import {
  parseColumnType,
  T_DATETIME,
  T_DATETIME64,
  T_ENUM,
  T_INT,
  T_IPV4,
  T_IPV6,
  T_STRING,
} from '../../../common/src/columns/column-type';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { tsvText } from '../../../common/src/integrity/chain';

const HEX = Buffer.from('0123456789abcdef', 'latin1');

interface Col {
  kind: number;
  nullable: boolean;
  bits: number;
  signed: boolean;
  precision: number;
  /** Enum value -> its name's UTF-8 bytes as a latin1 string (one char per byte). */
  enumNames: Map<number, string>;
  enumWidth: number;
}

/** Per-plan converter with a reused output buffer. */
export class RowBinaryToTsv {
  private readonly cols: Col[];
  private out = Buffer.allocUnsafe(1 << 20);
  private o = 0;

  constructor(columns: readonly CanonicalColumn[]) {
    this.cols = columns.map((c) => {
      const t = parseColumnType(c.type);
      const enumNames = new Map<number, string>();
      t.enumNames.forEach((n, i) =>
        enumNames.set(t.enumValues[i], Buffer.from(n, 'utf8').toString('latin1')),
      );
      return {
        kind: t.kind,
        nullable: t.nullable,
        bits: t.bits,
        signed: t.signed,
        precision: t.precision,
        enumNames,
        enumWidth: t.text.includes('Enum16') ? 2 : 1,
      };
    });
  }

  private ensure(n: number): void {
    if (this.o + n <= this.out.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.o + n));
    this.out.copy(next, 0, 0, this.o);
    this.out = next;
  }

  private text(s: string): void {
    this.ensure(s.length);
    this.o += this.out.write(s, this.o, 'latin1');
  }

  /** Converts the RowBinary rows of `body` (whole rows); the result is a view valid until the next call. */
  convert(body: Buffer): Buffer {
    this.o = 0;
    let p = 0;
    const cols = this.cols;
    while (p < body.length) {
      for (let k = 0; k < cols.length; k++) {
        const c = cols[k];
        if (k > 0) this.text('\t');
        if (c.nullable && body[p++] === 1) {
          this.text('\\N');
          continue;
        }
        switch (c.kind) {
          case T_STRING: {
            const [len, start] = varUInt(body, p);
            p = start + len;
            this.text(tsvText(body.toString('latin1', start, p)));
            break;
          }
          case T_ENUM: {
            const v = c.enumWidth === 2 ? body.readInt16LE(p) : body.readInt8(p);
            p += c.enumWidth;
            const name = c.enumNames.get(v);
            if (name === undefined) throw new RangeError(`enum value ${v} not declared`);
            this.text(tsvText(name));
            break;
          }
          case T_INT: {
            const w = c.bits / 8;
            let v: bigint | number;
            if (w === 8) v = c.signed ? body.readBigInt64LE(p) : body.readBigUInt64LE(p);
            else if (w === 4) v = c.signed ? body.readInt32LE(p) : body.readUInt32LE(p);
            else if (w === 2) v = c.signed ? body.readInt16LE(p) : body.readUInt16LE(p);
            else v = c.signed ? body.readInt8(p) : body.readUInt8(p);
            p += w;
            this.text(String(v));
            break;
          }
          case T_DATETIME:
            this.text(String(body.readUInt32LE(p)));
            p += 4;
            break;
          case T_DATETIME64: {
            const ticks = body.readBigInt64LE(p);
            p += 8;
            const scale = 10n ** BigInt(c.precision);
            const sec = ticks >= 0n ? ticks / scale : -((-ticks + scale - 1n) / scale);
            const frac = ticks - sec * scale;
            this.text(c.precision === 0 ? String(sec) : `${sec}.${String(frac).padStart(c.precision, '0')}`);
            break;
          }
          case T_IPV4: {
            const v = body.readUInt32LE(p);
            p += 4;
            this.text(`${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`);
            break;
          }
          case T_IPV6: {
            this.ensure(40);
            for (let g = 0; g < 8; g++) {
              if (g > 0) this.out[this.o++] = 58;
              for (let j = 0; j < 2; j++) {
                const b = body[p++];
                this.out[this.o++] = HEX[b >> 4];
                this.out[this.o++] = HEX[b & 15];
              }
            }
            break;
          }
          default:
            throw new RangeError(`column type kind ${c.kind} has no canonical form`);
        }
      }
      this.text('\n');
    }
    return this.out.subarray(0, this.o);
  }
}

/** The LEB128 length prefix at `p`: [length, position after the prefix]. */
function varUInt(b: Buffer, p: number): [number, number] {
  let len = 0;
  for (let shift = 1; ; shift *= 128) {
    const x = b[p++];
    len += (x & 0x7f) * shift;
    if (x < 0x80) return [len, p];
  }
}
