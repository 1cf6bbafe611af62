import {
  VALUE_ENCODING_HEADER,
  VALUE_ENCODING_NAMES,
  decodeValue,
  encodeValue,
  valueEncodingOf,
} from './value-codec';

const body = Buffer.from(
  Array.from(
    { length: 500 },
    (_, i) => `<189>date=2026-12-03 devname=fw-01 srcip=10.0.0.${i % 250} action=accept`,
  ).join('\n'),
);

describe('value codec', () => {
  it.each(['zstd', 'lz4'] as const)('round-trips a packed body with %s and shrinks it', (enc) => {
    const wire = encodeValue(body, enc);
    expect(wire.length).toBeLessThan(body.length / 4);
    const header = { [VALUE_ENCODING_HEADER]: Buffer.from(VALUE_ENCODING_NAMES[enc]) };
    expect(decodeValue(wire, header).equals(body)).toBe(true);
  });

  it('passes values without the header through untouched (every other producer)', () => {
    expect(decodeValue(body, undefined)).toBe(body);
    expect(decodeValue(body, { sender: Buffer.from('10.0.0.1') })).toBe(body);
  });

  it('refuses an unknown codec and a corrupt body instead of guessing', () => {
    expect(() => decodeValue(body, { [VALUE_ENCODING_HEADER]: 'brotli' })).toThrow(
      /unknown content-encoding/,
    );
    expect(() => decodeValue(body, { [VALUE_ENCODING_HEADER]: 'zstd' })).toThrow();
  });

  it('reads the header as a string, a Buffer or the first of repeated values', () => {
    expect(valueEncodingOf({ [VALUE_ENCODING_HEADER]: [Buffer.from('lz4-block'), 'zstd'] })).toBe(
      'lz4-block',
    );
    expect(valueEncodingOf({})).toBeUndefined();
  });
});
