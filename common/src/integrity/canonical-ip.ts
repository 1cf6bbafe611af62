/**
 * IP address text -> the canonical form of the integrity hash: the 16 bytes ClickHouse stores for
 * an IPv6 column (IPv4 text becomes IPv4-mapped ::ffff:a.b.c.d, as ClickHouse's IPv6 parser and
 * toIPv6(IPv4) do) written as 32 lowercase hex digits. Works on byte spans without allocating.
 */

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
const HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;
  HEX_VALUE['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/** Scratch for the 8 parsed 16-bit groups (module-level: the digester is single-threaded). */
const groups = new Uint16Array(8);

/** Parses dotted IPv4 in [s, e) into `groups[at]`, `groups[at+1]`; false when malformed. */
function parseIpv4Into(b: Uint8Array, s: number, e: number, at: number): boolean {
  let value = 0;
  let parts = 0;
  let i = s;
  while (parts < 4) {
    let octet = 0;
    let digits = 0;
    while (i < e && b[i] >= 48 && b[i] <= 57 && digits < 4) {
      octet = octet * 10 + (b[i] - 48);
      digits++;
      i++;
    }
    if (digits === 0 || digits > 3 || octet > 255) return false;
    value = value * 256 + octet;
    parts++;
    if (parts < 4) {
      if (i >= e || b[i] !== 46) return false;
      i++;
    }
  }
  if (i !== e) return false;
  groups[at] = Math.floor(value / 65536);
  groups[at + 1] = value & 0xffff;
  return true;
}

/** Parses IPv6 text (with `::` and an optional dotted IPv4 tail) into `groups`; false when malformed. */
function parseIpv6(b: Uint8Array, s: number, e: number): boolean {
  let count = 0;
  let gap = -1;
  let i = s;
  if (e - s >= 2 && b[s] === 58 && b[s + 1] === 58) {
    gap = 0;
    i += 2;
  }
  while (i < e) {
    let j = i;
    let v = 0;
    while (j < e && j - i < 4 && HEX_VALUE[b[j]] >= 0) v = v * 16 + HEX_VALUE[b[j++]];
    if (j < e && b[j] === 46) {
      if (count > 6 || !parseIpv4Into(b, i, e, count)) return false;
      count += 2;
      i = e;
      break;
    }
    if (j === i || count === 8) return false;
    groups[count++] = v;
    if (j === e) {
      i = e;
      break;
    }
    if (b[j] !== 58) return false;
    j++;
    if (j < e && b[j] === 58) {
      if (gap >= 0) return false;
      gap = count;
      j++;
    } else if (j === e) {
      return false;
    }
    i = j;
  }
  if (gap < 0) return count === 8;
  if (count > 7) return false;
  // Shift the groups after the gap to the end and zero the gap.
  const tail = count - gap;
  for (let k = 0; k < tail; k++) groups[7 - k] = groups[count - 1 - k];
  for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  return true;
}

/**
 * Writes the 32-hex-digit canonical form of the address text [s, e) into `out` at `pos`;
 * returns the new position, or -1 when the text is not an IPv4 or IPv6 address.
 */
export function writeCanonicalIp(b: Uint8Array, s: number, e: number, out: Uint8Array, pos: number): number {
  const dotted = e - s <= 15 && e > s && b[e - 1] !== 58 && indexOfColon(b, s, e) < 0;
  if (dotted) {
    if (!parseIpv4Into(b, s, e, 6)) return -1;
    groups.fill(0, 0, 5);
    groups[5] = 0xffff;
  } else if (!parseIpv6(b, s, e)) {
    return -1;
  }
  for (let k = 0; k < 8; k++) {
    const g = groups[k];
    out[pos++] = HEX_DIGITS[g >> 12];
    out[pos++] = HEX_DIGITS[(g >> 8) & 15];
    out[pos++] = HEX_DIGITS[(g >> 4) & 15];
    out[pos++] = HEX_DIGITS[g & 15];
  }
  return pos;
}

function indexOfColon(b: Uint8Array, s: number, e: number): number {
  for (let i = s; i < e; i++) if (b[i] === 58) return i;
  return -1;
}

/** Canonical form of an address string (convenience for tests and tools); null when invalid. */
export function canonicalIp(text: string): string | null {
  const src = Buffer.from(text, 'latin1');
  const out = Buffer.alloc(32);
  return writeCanonicalIp(src, 0, src.length, out, 0) < 0 ? null : out.toString('latin1');
}

/**
 * Parses address text [s, e) into its 16 bytes (IPv4 text as IPv4-mapped ::ffff:a.b.c.d, the way
 * ClickHouse's IPv6 parser stores it), big-endian, at `out[pos..pos+16)`; false when not an address.
 * Shared by the RowBinary encoder (IPv6 columns) and the canonical form.
 */
export function writeIpv6Bytes(b: Uint8Array, s: number, e: number, out: Uint8Array, pos: number): boolean {
  const dotted = e - s <= 15 && e > s && b[e - 1] !== 58 && indexOfColon(b, s, e) < 0;
  if (dotted) {
    if (!parseIpv4Into(b, s, e, 6)) return false;
    groups.fill(0, 0, 5);
    groups[5] = 0xffff;
  } else if (!parseIpv6(b, s, e)) {
    return false;
  }
  for (let k = 0; k < 8; k++) {
    out[pos++] = groups[k] >> 8;
    out[pos++] = groups[k] & 0xff;
  }
  return true;
}

/** The IPv4 text [s, e) as its 32-bit value, or -1 when it is not dotted IPv4. */
export function ipv4Value(b: Uint8Array, s: number, e: number): number {
  if (!parseIpv4Into(b, s, e, 0)) return -1;
  return groups[0] * 65536 + groups[1];
}
