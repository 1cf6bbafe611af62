import {
  VALUE_ENCODING_HEADER,
  VALUE_ENCODING_NAMES,
  ValueDecodeError,
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
    expect(() => decodeValue(body, { [VALUE_ENCODING_HEADER]: 'zstd' })).toThrow(ValueDecodeError);
  });

  it.each(['zstd', 'lz4'] as const)('never decodes %s past the bound it is given', (enc) => {
    const wire = encodeValue(body, enc);
    const header = { [VALUE_ENCODING_HEADER]: VALUE_ENCODING_NAMES[enc] };
    expect(decodeValue(wire, header, body.length).equals(body)).toBe(true);
    let err: unknown;
    try {
      decodeValue(wire, header, body.length - 1);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValueDecodeError);
    expect((err as ValueDecodeError).kind).toBe('too_large');
  });

  it('reads the header as a string, a Buffer or the first of repeated values', () => {
    expect(valueEncodingOf({ [VALUE_ENCODING_HEADER]: [Buffer.from('lz4-block'), 'zstd'] })).toBe(
      'lz4-block',
    );
    expect(valueEncodingOf({})).toBeUndefined();
  });
});
