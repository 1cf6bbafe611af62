import { StreamFramer, frameDatagram, type FrameDropReason, type FrameSink } from './framing';

class Collect implements FrameSink {
  frames: string[] = [];
  drops: Array<[FrameDropReason, number]> = [];
  frame(buf: Buffer, start: number, end: number): void {
    this.frames.push(buf.toString('latin1', start, end));
  }
  drop(reason: FrameDropReason, bytes: number): void {
    this.drops.push([reason, bytes]);
  }
}

/** Feeds `input` cut at every split point pattern given by `sizes` (cycled). */
function feed(input: string, sizes: number[], max = 64 * 1024, mode: 'auto' | 'lf' = 'auto'): Collect {
  const c = new Collect();
  const f = new StreamFramer(c, max, mode);
  const b = Buffer.from(input, 'latin1');
  let pos = 0;
  for (let i = 0; pos < b.length; i++) {
    const n = sizes[i % sizes.length];
    f.push(b.subarray(pos, pos + n));
    pos += n;
  }
  f.end();
  return c;
}

const octet = (m: string) => `${Buffer.byteLength(m, 'latin1')} ${m}`;

describe('StreamFramer', () => {
  const msgs = [
    '<189>date=2026-12-03 devname="FGT" x=1',
    '<13>1 2026-12-03T08:00:00Z h app - - - hi',
    'plain line',
  ];

  it('splits LF frames, drops CR/NUL terminators and empty frames', () => {
    const c = feed(`${msgs[0]}\r\n\n${msgs[1]}\n\0${msgs[2]}\0\n`, [1_000]);
    expect(c.frames).toEqual(msgs);
    expect(c.drops).toEqual([]);
  });

  it('reads octet-counted frames, including bodies with LF inside and a trailing LF', () => {
    const c = feed(octet('<1>a\nb') + octet('<2>c\n') + octet('<3>d'), [1_000]);
    expect(c.frames).toEqual(['<1>a\nb', '<2>c', '<3>d']);
  });

  it('gives the same frames for every chunking, mixed framings', () => {
    const input =
      octet(msgs[0]) + `${msgs[1]}\n` + octet(msgs[2]) + octet(msgs[1]) + `${msgs[0]}\n` + msgs[2];
    const want = [msgs[0], msgs[1], msgs[2], msgs[1], msgs[0], msgs[2]];
    for (const sizes of [[1], [2], [3], [7], [1, 5, 13], [40], [41], [1_000]]) {
      expect(feed(input, sizes).frames).toEqual(want);
    }
  });

  it('treats digits not followed by a space as the start of an LF frame', () => {
    expect(feed('2026-12-03 hello\n12345\n', [1, 3]).frames).toEqual(['2026-12-03 hello', '12345']);
  });

  it('lf mode never reads an octet count', () => {
    expect(feed('12 abc\n', [2], 1024, 'lf').frames).toEqual(['12 abc']);
    expect(feed('4 abc\n', [2], 1024, 'auto').frames).toEqual(['abc']);
  });

  it('skips oversize LF frames to their LF and counts them', () => {
    const big = 'x'.repeat(100);
    for (const sizes of [[1_000], [7], [60]]) {
      const c = feed(`a\n${big}\nb\n`, sizes, 50);
      expect(c.frames).toEqual(['a', 'b']);
      expect(c.drops).toEqual([['oversize', 100]]);
    }
  });

  it('skips oversize octet-counted frames by their length', () => {
    const c = feed(octet('y'.repeat(80)) + octet('ok'), [9], 50);
    expect(c.frames).toEqual(['ok']);
    expect(c.drops).toEqual([['oversize', 80]]);
  });

  it('emits an unterminated LF tail at end, drops a truncated counted frame', () => {
    expect(feed('a\nlast', [2]).frames).toEqual(['a', 'last']);
    const c = feed('10 abc', [2]);
    expect(c.frames).toEqual([]);
    expect(c.drops).toEqual([['framing', 3]]);
  });

  it('hands zero-copy views of the chunk for frames inside one chunk', () => {
    const seen: Buffer[] = [];
    const f = new StreamFramer({ frame: (b) => seen.push(b), drop: () => {} });
    const chunk = Buffer.from('a\nb\n');
    f.push(chunk);
    expect(seen).toEqual([chunk, chunk]);
  });
});

describe('frameDatagram', () => {
  it('one message per datagram, trailing LF dropped, embedded lines split, oversize counted', () => {
    const c = new Collect();
    frameDatagram(Buffer.from('<13>one\n'), c, 100);
    frameDatagram(Buffer.from('<13>two\r\n<13>three'), c, 100);
    frameDatagram(Buffer.alloc(101, 0x41), c, 100);
    frameDatagram(Buffer.alloc(0), c, 100);
    expect(c.frames).toEqual(['<13>one', '<13>two', '<13>three']);
    expect(c.drops).toEqual([['oversize', 101]]);
  });
});
