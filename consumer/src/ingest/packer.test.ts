import { Packer, type PackedMessage } from './packer';

const add = (p: Packer, sender: string, line: string) => {
  const b = Buffer.from(`xx${line}yy`);
  return p.add(sender, b, 2, b.length - 2);
};

describe('Packer', () => {
  afterEach(() => jest.useRealTimers());

  it('cuts at maxLines, per sender, LF-joined without a trailing LF', () => {
    const out: PackedMessage[] = [];
    const p = new Packer((m) => out.push(m), { maxLines: 3, lingerMs: 10_000 });
    for (let i = 0; i < 7; i++) add(p, i % 2 ? '10.0.0.2' : '10.0.0.1', `l${i}`);
    p.flushAll();
    expect(out.map((m) => [m.sender, m.value.toString(), m.lines, m.cause])).toEqual([
      ['10.0.0.1', 'l0\nl2\nl4', 3, 'lines'],
      ['10.0.0.2', 'l1\nl3\nl5', 3, 'lines'],
      ['10.0.0.1', 'l6', 1, 'shutdown'],
    ]);
  });

  it('cuts before maxBytes would be exceeded and refuses a line longer than maxBytes', () => {
    const out: PackedMessage[] = [];
    const p = new Packer((m) => out.push(m), { maxBytes: 10, lingerMs: 10_000 });
    expect(add(p, 's', 'aaaa')).toBe(true);
    expect(add(p, 's', 'bbbb')).toBe(true); // 9 bytes
    expect(add(p, 's', 'cc')).toBe(true); // 9 + 1 + 2 > 10: cut first
    expect(add(p, 's', 'x'.repeat(11))).toBe(false);
    p.flushAll();
    expect(out.map((m) => [m.value.toString(), m.cause])).toEqual([
      ['aaaa\nbbbb', 'bytes'],
      ['cc', 'shutdown'],
    ]);
    for (const m of out) expect(m.value.length).toBeLessThanOrEqual(10);
  });

  it('cuts after lingerMs from the first line', () => {
    jest.useFakeTimers();
    const out: PackedMessage[] = [];
    const p = new Packer((m) => out.push(m), { lingerMs: 100 });
    add(p, 's', 'a');
    jest.advanceTimersByTime(60);
    add(p, 's', 'b');
    expect(out).toHaveLength(0);
    jest.advanceTimersByTime(40);
    expect(out.map((m) => [m.value.toString(), m.cause])).toEqual([['a\nb', 'linger']]);
    add(p, 's', 'c');
    jest.advanceTimersByTime(100);
    expect(out.map((m) => m.value.toString())).toEqual(['a\nb', 'c']);
  });

  it('writes an LF inside a line as a space', () => {
    const out: PackedMessage[] = [];
    const p = new Packer((m) => out.push(m), { lingerMs: 10_000 });
    add(p, 's', 'a\nb');
    add(p, 's', 'c');
    p.flushAll();
    expect(out[0].value.toString()).toBe('a b\nc');
    expect(out[0].lines).toBe(2);
  });

  it('evicts the oldest open sender beyond maxOpenSenders', () => {
    const out: PackedMessage[] = [];
    const p = new Packer((m) => out.push(m), { maxOpenSenders: 2, lingerMs: 10_000 });
    add(p, 'a', '1');
    add(p, 'b', '2');
    add(p, 'c', '3');
    expect(out.map((m) => [m.sender, m.cause])).toEqual([['a', 'evict']]);
    expect(p.openSenders).toBe(2);
  });

  it('grows the buffer across many lines without losing bytes; refuses adds once closed', () => {
    const out: PackedMessage[] = [];
    const p = new Packer((m) => out.push(m), { maxLines: 5000, maxBytes: 1 << 20, lingerMs: 10_000 });
    const want: string[] = [];
    for (let i = 0; i < 4000; i++) {
      const l = `line-${i}-${'z'.repeat(i % 37)}`;
      want.push(l);
      add(p, 's', l);
    }
    p.flushAll('shutdown', true);
    expect(out[0].value.toString()).toBe(want.join('\n'));
    expect(add(p, 's', 'late')).toBe(false);
  });
});
