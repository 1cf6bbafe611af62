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
