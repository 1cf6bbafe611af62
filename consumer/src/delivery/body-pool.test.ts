import { BodyPool } from './body-pool';

describe('BodyPool', () => {
  it('copies bytes exactly and reuses released buffers of the same size class', () => {
    const pool = new BodyPool(4 * 128, 16);
    const src = Buffer.from('x'.repeat(100));
    const a = pool.copy(src);
    expect(a.bytes.equals(src)).toBe(true);
    expect(a.bytes.buffer).not.toBe(src.buffer);
    const backing = a.bytes.buffer;
    a.release();
    a.release(); // idempotent
    expect(pool.size).toBe(1);
    const b = pool.copy(Buffer.from('y'.repeat(120)));
    expect(b.bytes.buffer).toBe(backing);
    expect(b.bytes.toString()).toBe('y'.repeat(120));
    expect(pool.size).toBe(0);
  });

  it('never hands the same buffer to two holders and caps what it keeps', () => {
    const pool = new BodyPool(128, 16);
    const a = pool.copy(Buffer.alloc(100, 1));
    const b = pool.copy(Buffer.alloc(100, 2));
    expect(a.bytes.buffer).not.toBe(b.bytes.buffer);
    a.release();
    b.release();
    expect(pool.size).toBe(1);
  });

  it('does not pool small copies', () => {
    const pool = new BodyPool(4096, 1024);
    const c = pool.copy(Buffer.from('tiny'));
    expect(c.bytes.toString()).toBe('tiny');
    c.release();
    expect(pool.size).toBe(0);
  });

  it('adopts a handed-over buffer and gives it back whole to the next taker', () => {
    const pool = new BodyPool();
    const whole = Buffer.alloc(1 << 20, 7);
    const owned = pool.adopt(whole, 100);
    expect(owned.bytes.length).toBe(100);
    expect(owned.bytes.buffer).toBe(whole.buffer);
    expect(pool.size).toBe(0);
    owned.release();
    owned.release();
    expect(pool.size).toBe(1);
    expect(pool.takeWhole(1 << 20)).toBe(whole);
    expect(pool.size).toBe(0);
    // Not a power of two: dropped, never pooled under a wrong size class.
    pool.adopt(Buffer.alloc(3 << 19), 1).release();
    expect(pool.size).toBe(0);
  });
});
