import { ipVersion } from './ip';

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
