import { parseEpochDigits } from './time';

const epoch = (text: string): number => {
  const b = Buffer.from(`=${text} `);
  return parseEpochDigits(b, 1, b.length - 1);
};

describe('parseEpochDigits (FortiGate eventtime: s, ms, µs or ns since the epoch)', () => {
  it.each([
    ['1705303425', 1705303425000],
    ['1705303425123', 1705303425123],
    ['1705303425123456', 1705303425123],
    ['1705303425123456789', 1705303425123],
    ['170530342', 170530342000],
    ['17053034251234', 17053034251],
  ])('%s -> %d ms', (text, ms) => expect(epoch(text)).toBe(ms));
  it.each([
    '',
    '12345678',
    '12345678901234567890',
    '170530342x',
    '1705303425123x56',
    '170530342512345678x',
    '-705303425',
  ])('rejects %j', (text) => expect(epoch(text)).toBeNaN());
});

describe('parseEpochDigits agrees with the plain reading of its leading digits', () => {
  /** The definition: the leading 13 digits as one number, scaled by the length's unit. */
  function reference(text: string): number {
    const n = text.length;
    const v = Number(text.slice(0, 13));
    if (n <= 10) return v * 1000;
    if (n <= 13) return v;
    return Math.floor(v / 10 ** ((n <= 16 ? 16 : 19) - n));
  }

  it('on random digit runs of every length 9..19 (extremes included)', () => {
    let seed = 12345;
    const digit = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return String(seed % 10);
    };
    for (let n = 9; n <= 19; n++) {
      const runs = ['9'.repeat(n), '0'.repeat(n), `1${'0'.repeat(n - 1)}`];
      for (let k = 0; k < 300; k++) runs.push(Array.from({ length: n }, digit).join(''));
      for (const text of runs) expect(epoch(text)).toBe(reference(text));
    }
  });
});
