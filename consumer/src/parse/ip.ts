/**
 * Cheap IP address syntax checks on byte spans. A span that passes is guaranteed to be accepted by
 * ClickHouse's IPv4/IPv6 text parsers, so an address never fails a whole INSERT; a span that fails
 * makes the line dead-letter with `invalid_ip` instead of storing garbage.
 */

const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

/** True when [s, e) is dotted-quad IPv4 (each part 1..3 digits, value <= 255). */
export function isIpv4(buf: Uint8Array, s: number, e: number): boolean {
  return ipv4Number(buf, s, e) >= 0;
}

/**
 * The dotted-quad IPv4 address in [s, e) as an unsigned 32-bit number, -1 when it is none. Each
 * part is read as one to three digits without a per-byte counter: every line carries two to four
 * addresses, so this is among the parsers' hottest helpers.
 */
export function ipv4Number(buf: Uint8Array, s: number, e: number): number {
  const len = e - s;
  if (len < 7 || len > 15) return -1;
  let value = 0;
  let i = s;
  for (let part = 0; part < 4; part++) {
    if (part !== 0) {
      // A dot must close the previous part (a fourth digit or any other byte fails here).
      if (i >= e || buf[i] !== 46) return -1;
      i++;
    }
    if (i >= e) return -1;
    let v = buf[i] - 48;
    if (v < 0 || v > 9) return -1;
    i++;
    if (i < e) {
      const d1 = buf[i] - 48;
      if (d1 >= 0 && d1 <= 9) {
        v = v * 10 + d1;
        i++;
        if (i < e) {
          const d2 = buf[i] - 48;
          if (d2 >= 0 && d2 <= 9) {
            v = v * 10 + d2;
            i++;
          }
        }
      }
    }
    if (v > 255) return -1;
    value = value * 256 + v;
  }
  return i === e ? value : -1;
}

/**
 * True when [s, e) is IPv6 text: up to eight 1..4-digit hex groups, at most one `::` standing
 * for at least one zero group, optionally ending in dotted IPv4 (which counts as two groups).
 */
export function isIpv6(buf: Uint8Array, s: number, e: number): boolean {
  const len = e - s;
  if (len < 2 || len > 45) return false;
  let groups = 0;
  let compressed = false;
  let i = s;
  if (buf[i] === 58) {
    if (buf[i + 1] !== 58) return false;
    compressed = true;
    i += 2;
  }
  while (i < e) {
    let j = i;
    while (j < e && HEX[buf[j]] === 1 && j - i < 5) j++;
    if (j < e && buf[j] === 46) {
      if (groups > 6 || !isIpv4(buf, i, e)) return false;
      groups += 2;
      break;
    }
    const digits = j - i;
    if (digits === 0 || digits > 4) return false;
    groups++;
    if (j === e) break;
    if (buf[j] !== 58) return false;
    j++;
    if (j < e && buf[j] === 58) {
      if (compressed) return false;
      compressed = true;
      j++;
    } else if (j === e) {
      return false;
    }
    i = j;
  }
  return compressed ? groups <= 7 : groups === 8;
}

/** 4 or 6 for a valid address span, 0 otherwise. */
export function ipVersion(buf: Uint8Array, s: number, e: number): number {
  if (isIpv4(buf, s, e)) return 4;
  return isIpv6(buf, s, e) ? 6 : 0;
}

/**
 * End of the address part of [s, e): an IPv6 zone suffix (`fe80::1%eth0`) is cut off because
 * ClickHouse's IPv6 type has no zone; the zone stays visible in `raw`.
 */
export function addressEnd(buf: Uint8Array, s: number, e: number): number {
  for (let i = s; i < e; i++) if (buf[i] === 37) return i;
  return e;
}
