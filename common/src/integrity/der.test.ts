import { execFileSync } from 'node:child_process';
import {
  childrenOf,
  contentOf,
  DerError,
  derBoolean,
  derInteger,
  derNull,
  derOctetString,
  derOid,
  derSequence,
  derSetOf,
  derTlv,
  parseDer,
  readBoolean,
  readGeneralizedTime,
  readInteger,
  readOid,
  TAG,
} from './der';

describe('DER writer', () => {
  it.each([
    [0, '020100'],
    [1, '020101'],
    [127, '02017f'],
    [128, '02020080'],
    [255, '020200ff'],
    [256, '02020100'],
    [-1, '0201ff'],
    [-128, '020180'],
    [-129, '0202ff7f'],
    [2n ** 64n - 1n, '020900ffffffffffffffff'],
  ])('encodes INTEGER %p minimally', (value, hex) => {
    expect(derInteger(value as number | bigint).toString('hex')).toBe(hex);
    expect(readInteger(parseDer(derInteger(value as number | bigint)))).toBe(BigInt(value));
  });

  it('encodes OIDs, including multi-byte arcs', () => {
    expect(derOid('2.16.840.1.101.3.4.2.1').toString('hex')).toBe('0609608648016503040201');
    expect(derOid('1.2.840.113549.1.7.2').toString('hex')).toBe('06092a864886f70d010702');
    expect(readOid(parseDer(derOid('1.3.6.1.5.5.7.3.8')))).toBe('1.3.6.1.5.5.7.3.8');
  });

  it('uses long-form lengths above 127 bytes', () => {
    const big = derOctetString(Buffer.alloc(300, 7));
    expect(big.subarray(0, 4).toString('hex')).toBe('0482012c');
    expect(contentOf(parseDer(big)).length).toBe(300);
  });

  it('sorts SET OF elements by encoding', () => {
    const set = derSetOf(derInteger(5), derInteger(1));
    expect(set.toString('hex')).toBe('3106020101020105');
  });

  it('builds a TimeStampReq byte-identical to what openssl ts -query emits for the same digest', () => {
    // openssl's request carries the same fields when asked for -cert and -no_nonce; compare structure.
    const digest = Buffer.alloc(32, 0xab);
    const ours = derSequence(
      derInteger(1),
      derSequence(derSequence(derOid('2.16.840.1.101.3.4.2.1'), derNull()), derOctetString(digest)),
      derBoolean(true),
    );
    const theirs = execFileSync('openssl', [
      'ts',
      '-query',
      '-digest',
      digest.toString('hex'),
      '-sha256',
      '-cert',
      '-no_nonce',
    ]);
    expect(ours.equals(theirs)).toBe(true);
  });
});

describe('DER reader', () => {
  it('walks nested structures', () => {
    const der = derSequence(
      derInteger(3),
      derSequence(derBoolean(true), derNull()),
      derTlv(TAG.GENERALIZED_TIME, Buffer.from('20260102030405.123Z')),
    );
    const [n, inner, time] = childrenOf(parseDer(der));
    expect(readInteger(n)).toBe(3n);
    expect(readBoolean(childrenOf(inner)[0])).toBe(true);
    expect(readGeneralizedTime(time)).toBe(Date.UTC(2026, 0, 2, 3, 4, 5, 123));
  });

  it.each([
    ['indefinite length', '3080020100'],
    ['non-minimal length', '308103020100'],
    ['truncated content', '300502010'],
    ['child running past its parent', '3003020201'],
    ['trailing bytes', '30000000'],
    ['non-minimal INTEGER', '30040202007f'],
  ])('rejects %s', (_name, hex) => {
    expect(() => {
      const top = parseDer(Buffer.from(hex, 'hex'));
      for (const c of childrenOf(top)) if (c.tag === TAG.INTEGER) readInteger(c);
    }).toThrow(DerError);
  });

  it('rejects a non-UTC GeneralizedTime', () => {
    expect(() =>
      readGeneralizedTime(parseDer(derTlv(TAG.GENERALIZED_TIME, Buffer.from('20260102030405+0100')))),
    ).toThrow(DerError);
  });
});
