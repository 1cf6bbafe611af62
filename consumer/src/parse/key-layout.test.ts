import { KeyLayout } from './key-layout';

describe('KeyLayout', () => {
  it('matches a remembered key of every length exactly, and no key differing in any byte', () => {
    const layout = new KeyLayout();
    for (let len = 1; len <= 32; len++) {
      const key = Buffer.from(
        Array.from({ length: len }, (_, i) => String.fromCharCode(97 + ((i * 7 + len) % 26))).join(''),
      );
      const line = Buffer.concat([Buffer.from(' '), key, Buffer.from('=v')]);
      layout.remember(len, line, 1, 1 + len, 100 + len);
      layout.use(line);
      expect(layout.match(len, line, 1, line.length, 61)).toBe(1 + len);
      expect(layout.id).toBe(100 + len);
      // Another separator after the same bytes, or the key cut short, is no match.
      expect(layout.match(len, line, 1, line.length, 58)).toBe(-1);
      expect(layout.match(len, line, 1, 1 + len, 61)).toBe(-1);
      for (let i = 0; i < len; i++) {
        const changed = Buffer.from(line);
        changed[1 + i] ^= 0x20;
        layout.use(changed);
        expect(layout.match(len, changed, 1, changed.length, 61)).toBe(-1);
      }
      // The same bytes at another offset of another buffer still match.
      const shiftedWithValue = Buffer.concat([Buffer.from('xx '), key, Buffer.from('=1')]);
      layout.use(shiftedWithValue);
      expect(layout.match(len, shiftedWithValue, 3, shiftedWithValue.length, 61)).toBe(3 + len);
    }
  });

  it('forgets nothing it did not remember: an empty position and a longer key never match', () => {
    const layout = new KeyLayout();
    const line = Buffer.from('srcip=1');
    layout.use(line);
    expect(layout.match(0, line, 0, line.length, 61)).toBe(-1);
    const long = Buffer.from(`${'k'.repeat(33)}=1`);
    layout.remember(1, long, 0, 33, 7);
    layout.use(long);
    expect(layout.match(1, long, 0, long.length, 61)).toBe(-1);
  });

  it('reads each buffer at its own offset, whether or not buffers share memory', () => {
    const layout = new KeyLayout();
    const first = Buffer.from('sessionid=1');
    layout.remember(0, first, 0, 9, 5);
    // Views into one larger allocation at odd offsets, then a buffer of its own, then back.
    const block = Buffer.from('zz sessionid=2 sessionix=3 sessionid=4');
    for (const [s, want] of [
      [3, 12],
      [15, -1],
      [27, 36],
    ] as const) {
      const view = block.subarray(s);
      layout.use(view);
      expect(layout.match(0, view, 0, view.length, 61)).toBe(want === -1 ? -1 : want - s);
    }
    const own = Uint8Array.from(Buffer.from('sessionid=5'));
    layout.use(own);
    expect(layout.match(0, own, 0, own.length, 61)).toBe(9);
    layout.use(first);
    expect(layout.match(0, first, 0, first.length, 61)).toBe(9);
  });
});
