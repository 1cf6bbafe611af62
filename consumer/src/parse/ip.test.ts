import { ipv4Number, ipVersion } from './ip';
import { ipv4Value } from '../../../common/src/integrity/canonical-ip';
import { Span } from './record';

const v = (text: string): number => {
  const b = Buffer.from(text);
  return ipVersion(b, 0, b.length);
};

describe('ipVersion', () => {
  it.each(['0.0.0.0', '255.255.255.255', '192.168.010.001', '8.8.8.8'])('IPv4 %s', (ip) =>
    expect(v(ip)).toBe(4),
  );
  it.each([
    '::',
    '::1',
    '1::',
    '2001:db8::1',
    'fe80::abcd:1',
    '1:2:3:4:5:6:7:8',
    '::ffff:10.0.0.1',
    '64:ff9b::192.0.2.33',
    '1:2:3:4:5:6::8',
    'ABCD:EF01::',
  ])('IPv6 %s', (ip) => expect(v(ip)).toBe(6));
  it.each([
    '',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '1.2.3.',
    '.1.2.3',
    '1..2.3',
    '1.2.3.4 ',
    'a.b.c.d',
    '1234.1.1.1',
    ':',
    ':::',
    '1:2',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    '12345::',
    '1:2:3:4:5:6:7::8',
    '::1.2.3',
    'g::1',
    '1:',
  ])('invalid %j', (ip) => expect(v(ip)).toBe(0));
});

describe('ipv4Number (the value the parser carries to the encoder)', () => {
  const n = (text: string): number => {
    const b = Buffer.from(`x${text}y`);
    return ipv4Number(b, 1, b.length - 1);
  };
  it.each(['0.0.0.0', '255.255.255.255', '192.168.010.001', '8.8.8.8', '10.20.30.40', '1.2.3.4'])(
    'reads %s exactly as the encoder would',
    (ip) => {
      const b = Buffer.from(ip);
      expect(n(ip)).toBe(ipv4Value(b, 0, b.length));
      expect(n(ip)).toBeGreaterThanOrEqual(0);
    },
  );
  it('is the unsigned big-endian value', () => expect(n('255.1.2.3')).toBe(0xff010203));
  it.each(['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '1.2.3.', '1..2.3', '1.2.3.4 ', '1234.1.1.1', '::1'])(
    'is -1 for %j',
    (ip) => expect(n(ip)).toBe(-1),
  );
  it.each([
    '1.2.3.4.',
    '0001.2.3.4',
    '1.2.3.-4',
    '1.2.3.4/',
    '1/2.3.4.5',
    '300.2.3.4',
    '1.2.3.256',
    '...1.2',
  ])('is -1 for %j (single-pass edges)', (ip) => expect(n(ip)).toBe(-1));
  it('never reads past the span end (digits right after it do not count)', () => {
    const b = Buffer.from('1.2.3.45');
    expect(ipv4Number(b, 0, 7)).toBe(0x01020304);
    expect(ipv4Number(b, 0, 6)).toBe(-1); // "1.2.3." then a digit outside the span
    expect(ipv4Number(Buffer.from('10.0.0.1999'), 0, 8)).toBe(0x0a000001);
    expect(ipv4Number(Buffer.from('255.255.255.2555'), 0, 15)).toBe(0xffffffff);
  });
  it('agrees with a dotted-quad regular expression on 20,000 random and near-quad spans', () => {
    const alphabet = '0123456789....../:a -';
    const dottedQuad = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
    let seed = 12345;
    const rand = (k: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % k;
    };
    let valid = 0;
    for (let t = 0; t < 20_000; t++) {
      let text = '';
      if (t % 2 === 0) {
        for (let len = 5 + rand(13); text.length < len;) text += alphabet[rand(alphabet.length)];
      } else {
        // Near-quads: 3..5 parts of 0..4 digits, mostly joined by dots.
        const parts = 3 + rand(3);
        for (let k = 0; k < parts; k++) {
          if (k > 0) text += rand(20) === 0 ? alphabet[rand(alphabet.length)] : '.';
          for (let d = rand(5); d > 0; d--) text += String(rand(10) < 3 ? rand(3) : rand(10));
        }
      }
      const m = dottedQuad.exec(text);
      const parts = m ? m.slice(1).map(Number) : [];
      const want =
        m && parts.every((p) => p <= 255)
          ? ((parts[0] * 256 + parts[1]) * 256 + parts[2]) * 256 + parts[3]
          : -1;
      if (want >= 0) valid++;
      expect([text, n(text)]).toEqual([text, want]);
    }
    expect(valid).toBeGreaterThan(50);
  });
  it('is forgotten whenever the span is pointed elsewhere, kept by copy', () => {
    const a = new Span();
    a.set(0, 7);
    a.ipv4 = 16909060;
    const b = new Span();
    b.copy(a);
    expect(b.ipv4).toBe(16909060);
    a.set(1, 8);
    expect(a.ipv4).toBe(-1);
    b.setScratch(0, 7);
    expect(b.ipv4).toBe(-1);
    a.ipv4 = 5;
    a.clear();
    expect(a.ipv4).toBe(-1);
  });
});
