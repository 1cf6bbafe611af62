/**
 * Byte-level helpers shared by the parsers. Everything works on (buffer, start, end) spans so the
 * hot path never converts a line to a JS string; helpers return sentinels instead of throwing.
 */

/** Encodes an ASCII literal once at module load, for byte comparisons against spans. */
export function ascii(text: string): Buffer {
  return Buffer.from(text, 'latin1');
}

/** True when byte `c` is an ASCII digit. */
export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Lower-cases an ASCII letter byte and leaves every other byte unchanged. */
export function lowerAscii(c: number): number {
  return c >= 65 && c <= 90 ? c | 32 : c;
}

/** True when the span [s, e) equals `lit` byte for byte. */
export function spanEquals(buf: Uint8Array, s: number, e: number, lit: Uint8Array): boolean {
  const n = lit.length;
  if (e - s !== n) return false;
  for (let i = 0; i < n; i++) if (buf[s + i] !== lit[i]) return false;
  return true;
}

/** True when the span [s, e) equals the lower-case literal `lit`, ignoring ASCII case. */
export function spanEqualsIgnoreCase(buf: Uint8Array, s: number, e: number, lit: Uint8Array): boolean {
  const n = lit.length;
  if (e - s !== n) return false;
  for (let i = 0; i < n; i++) if (lowerAscii(buf[s + i]) !== lit[i]) return false;
  return true;
}

/** True when the bytes at `pos` (not crossing `end`) start with `lit`. */
export function startsWith(buf: Uint8Array, pos: number, end: number, lit: Uint8Array): boolean {
  const n = lit.length;
  if (end - pos < n) return false;
  for (let i = 0; i < n; i++) if (buf[pos + i] !== lit[i]) return false;
  return true;
}

/** True when the span [s, e) contains the lower-case literal `lit`, ignoring ASCII case. */
export function containsIgnoreCase(buf: Uint8Array, s: number, e: number, lit: Uint8Array): boolean {
  const n = lit.length;
  const first = lit[0];
  for (let i = s; i + n <= e; i++) {
    if (lowerAscii(buf[i]) !== first) continue;
    let j = 1;
    while (j < n && lowerAscii(buf[i + j]) === lit[j]) j++;
    if (j === n) return true;
  }
  return false;
}

/** Position of the first `byte` in [s, e), or -1; a JS loop beats a native call on short spans. */
export function indexOfByte(buf: Uint8Array, byte: number, s: number, e: number): number {
  for (let i = s; i < e; i++) if (buf[i] === byte) return i;
  return -1;
}

/** Position of the first byte that is not a space or tab at or after `pos` (or `end`). */
export function skipSpaces(buf: Uint8Array, pos: number, end: number): number {
  while (pos < end && (buf[pos] === 32 || buf[pos] === 9)) pos++;
  return pos;
}

/** Position of the next space or tab at or after `pos` (or `end`). */
export function findSpace(buf: Uint8Array, pos: number, end: number): number {
  while (pos < end && buf[pos] !== 32 && buf[pos] !== 9) pos++;
  return pos;
}

/** End of the span after dropping trailing spaces and tabs. */
export function trimEnd(buf: Uint8Array, s: number, e: number): number {
  while (e > s && (buf[e - 1] === 32 || buf[e - 1] === 9)) e--;
  return e;
}

/**
 * Decimal value of the span if it is 1..15 ASCII digits, else -1. Fifteen digits keep the result
 * exact in a double; longer values (nanosecond clocks) are handled by their own parsers.
 */
export function parseUint(buf: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n <= 0 || n > 15) return -1;
  let v = 0;
  for (let i = s; i < e; i++) {
    const d = buf[i] - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** Value of exactly `n` digits at `pos`, or -1 when any of them is not a digit or out of range. */
export function fixedDigits(buf: Uint8Array, pos: number, n: number, end: number): number {
  if (pos + n > end) return -1;
  let v = 0;
  for (let i = 0; i < n; i++) {
    const d = buf[pos + i] - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}
