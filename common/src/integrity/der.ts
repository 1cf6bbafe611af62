/**
 * A small DER (X.690 Distinguished Encoding Rules) reader and writer: just what RFC 3161 requests,
 * responses and CMS SignedData need. The reader is strict (definite lengths only, minimal length
 * encodings, bounds checked) because it parses data from the network: anything malformed throws
 * DerError rather than being interpreted loosely.
 */

/** Universal tags used here. */
export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  SEQUENCE: 0x30,
  SET: 0x31,
  PRINTABLE_STRING: 0x13,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
} as const;

/** Malformed or unexpected DER. */
export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DerError';
  }
}

/** One decoded TLV: identifier octet, where its content lies in `buf`, and where it ends. */
export interface DerNode {
  /** The identifier octet (single-byte tags only; high tag numbers are rejected). */
  tag: number;
  /** Offset of the identifier octet. */
  start: number;
  /** Offset of the first content byte. */
  contentStart: number;
  /** Offset just past the last content byte. */
  end: number;
  buf: Buffer;
}

/** True when the identifier octet has the constructed bit. */
export function isConstructed(node: DerNode): boolean {
  return (node.tag & 0x20) !== 0;
}

/** Context-specific tag octet `[n]` (constructed unless `primitive`). */
export function contextTag(n: number, primitive = false): number {
  return 0x80 | (primitive ? 0 : 0x20) | n;
}

/** Reads the TLV at `offset` (bounded by `limit`); throws DerError when it does not fit or is not DER. */
export function readNode(buf: Buffer, offset = 0, limit = buf.length): DerNode {
  if (offset + 2 > limit) throw new DerError(`truncated header at ${offset}`);
  const tag = buf[offset];
  if ((tag & 0x1f) === 0x1f) throw new DerError(`high tag number at ${offset} is not supported`);
  let pos = offset + 1;
  const first = buf[pos++];
  let length: number;
  if (first < 0x80) {
    length = first;
  } else {
    const n = first & 0x7f;
    if (n === 0) throw new DerError(`indefinite length at ${offset} is not DER`);
    if (n > 4) throw new DerError(`length of ${n} bytes at ${offset} is too large`);
    if (pos + n > limit) throw new DerError(`truncated length at ${offset}`);
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[pos++];
    if (length < 0x80 || buf[pos - n] === 0) throw new DerError(`non-minimal length at ${offset}`);
  }
  const end = pos + length;
  if (end > limit) throw new DerError(`content at ${offset} runs past its container (${end} > ${limit})`);
  return { tag, start: offset, contentStart: pos, end, buf };
}

/** Parses a whole buffer as exactly one TLV (trailing bytes are an error). */
export function parseDer(buf: Buffer): DerNode {
  const node = readNode(buf, 0, buf.length);
  if (node.end !== buf.length)
    throw new DerError(`${buf.length - node.end} trailing bytes after the top-level value`);
  return node;
}

/** The children of a constructed node, in order. */
export function childrenOf(node: DerNode): DerNode[] {
  if (!isConstructed(node))
    throw new DerError(`tag 0x${node.tag.toString(16)} at ${node.start} is not constructed`);
  const out: DerNode[] = [];
  for (let pos = node.contentStart; pos < node.end;) {
    const child = readNode(node.buf, pos, node.end);
    out.push(child);
    pos = child.end;
  }
  return out;
}

/** The content bytes of a node (a view, not a copy). */
export function contentOf(node: DerNode): Buffer {
  return node.buf.subarray(node.contentStart, node.end);
}

/** The full encoding (header and content) of a node (a view). */
export function encodingOf(node: DerNode): Buffer {
  return node.buf.subarray(node.start, node.end);
}

/** Throws unless `node` has tag `tag`; returns it for chaining. */
export function expectTag(node: DerNode | undefined, tag: number, what: string): DerNode {
  if (!node) throw new DerError(`${what}: missing`);
  if (node.tag !== tag)
    throw new DerError(`${what}: expected tag 0x${tag.toString(16)}, got 0x${node.tag.toString(16)}`);
  return node;
}

/** Decodes an INTEGER as a bigint (two's complement). */
export function readInteger(node: DerNode): bigint {
  expectTag(node, TAG.INTEGER, 'INTEGER');
  const bytes = contentOf(node);
  if (bytes.length === 0) throw new DerError('empty INTEGER');
  if (bytes.length > 1 && ((bytes[0] === 0 && bytes[1] < 0x80) || (bytes[0] === 0xff && bytes[1] >= 0x80))) {
    throw new DerError('non-minimal INTEGER');
  }
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  if (bytes[0] >= 0x80) value -= 1n << BigInt(bytes.length * 8);
  return value;
}

/** Decodes an OBJECT IDENTIFIER to dotted text. */
export function readOid(node: DerNode): string {
  expectTag(node, TAG.OID, 'OBJECT IDENTIFIER');
  const bytes = contentOf(node);
  if (bytes.length === 0 || bytes[bytes.length - 1] >= 0x80)
    throw new DerError('malformed OBJECT IDENTIFIER');
  const arcs: bigint[] = [];
  let value = 0n;
  for (let i = 0; i < bytes.length; i++) {
    if (value === 0n && bytes[i] === 0x80) throw new DerError('non-minimal OID arc');
    value = (value << 7n) | BigInt(bytes[i] & 0x7f);
    if (bytes[i] < 0x80) {
      arcs.push(value);
      value = 0n;
    }
  }
  const first = arcs[0] < 80n ? arcs[0] / 40n : 2n;
  return [first, arcs[0] - first * 40n, ...arcs.slice(1)].join('.');
}

/** Decodes a GeneralizedTime (`YYYYMMDDhhmmss[.f…]Z`) to epoch milliseconds (sub-ms digits dropped). */
export function readGeneralizedTime(node: DerNode): number {
  expectTag(node, TAG.GENERALIZED_TIME, 'GeneralizedTime');
  const text = contentOf(node).toString('latin1');
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d+))?Z$/.exec(text);
  if (!m) throw new DerError(`GeneralizedTime ${JSON.stringify(text)} is not UTC DER form`);
  const ms = m[7] ? Number((m[7] + '00').slice(0, 3)) : 0;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], ms);
}

/** Decodes a BOOLEAN. */
export function readBoolean(node: DerNode): boolean {
  expectTag(node, TAG.BOOLEAN, 'BOOLEAN');
  const bytes = contentOf(node);
  if (bytes.length !== 1 || (bytes[0] !== 0 && bytes[0] !== 0xff)) throw new DerError('malformed BOOLEAN');
  return bytes[0] === 0xff;
}

// ---- writer ----

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** Encodes one TLV with the given identifier octet and content. */
export function derTlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

/** SEQUENCE of already-encoded children. */
export function derSequence(...children: Buffer[]): Buffer {
  return derTlv(TAG.SEQUENCE, Buffer.concat(children));
}

/** SET OF already-encoded children, sorted by encoding as DER requires. */
export function derSetOf(...children: Buffer[]): Buffer {
  return derTlv(TAG.SET, Buffer.concat([...children].sort(Buffer.compare)));
}

/** INTEGER from a bigint or number (minimal two's complement). */
export function derInteger(value: bigint | number): Buffer {
  const v = BigInt(value);
  // Smallest n whose signed range holds v, then v mod 2^(8n) as n big-endian bytes.
  let n = 1;
  while (v >= 1n << BigInt(8 * n - 1) || v < -(1n << BigInt(8 * n - 1))) n++;
  const hex = (v < 0n ? v + (1n << BigInt(8 * n)) : v).toString(16).padStart(2 * n, '0');
  return derTlv(TAG.INTEGER, Buffer.from(hex, 'hex'));
}

/** OBJECT IDENTIFIER from dotted text. */
export function derOid(oid: string): Buffer {
  const arcs = oid.split('.').map((a) => BigInt(a));
  if (arcs.length < 2 || arcs[0] > 2n || (arcs[0] < 2n && arcs[1] >= 40n))
    throw new DerError(`bad OID ${oid}`);
  const out: number[] = [];
  for (const arc of [arcs[0] * 40n + arcs[1], ...arcs.slice(2)]) {
    const group: number[] = [Number(arc & 0x7fn)];
    for (let v = arc >> 7n; v > 0n; v >>= 7n) group.unshift(Number(v & 0x7fn) | 0x80);
    out.push(...group);
  }
  return derTlv(TAG.OID, Buffer.from(out));
}

/** NULL. */
export function derNull(): Buffer {
  return Buffer.from([TAG.NULL, 0]);
}

/** OCTET STRING. */
export function derOctetString(bytes: Buffer): Buffer {
  return derTlv(TAG.OCTET_STRING, bytes);
}

/** BOOLEAN. */
export function derBoolean(value: boolean): Buffer {
  return Buffer.from([TAG.BOOLEAN, 1, value ? 0xff : 0]);
}
