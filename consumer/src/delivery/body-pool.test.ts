import { BodyBuffers, BodyPool, type SwappableOutput } from './body-pool';

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

/** A stand-in encoder: writes `n` bytes of `fill` into whatever buffer it holds, growing like the real one. */
class FakeEncoder implements SwappableOutput {
  buf: Buffer = Buffer.alloc(4 << 20);
  get outputCapacity(): number {
    return this.buf.length;
  }
  swapOutput(next: Buffer): Buffer {
    const prev = this.buf;
    this.buf = next;
    return prev;
  }
  encode(n: number, fill: number): Buffer {
    if (n > this.buf.length) this.buf = Buffer.alloc(Math.max(n, this.buf.length * 2));
    this.buf.fill(fill, 0, n);
    return this.buf.subarray(0, n);
  }
}

describe('BodyBuffers', () => {
  it('encodes into a pooled buffer sized for the batch and hands it over without a copy', () => {
    const pool = new BodyPool();
    const buffers = new BodyBuffers(pool);
    const enc = new FakeEncoder();
    buffers.prepare(enc, 300_000);
    // 300 kB in at the initial ratio 1.5: a 512 KiB buffer, the 4 MiB one back in the pool.
    expect(enc.outputCapacity).toBe(512 * 1024);
    expect(pool.size).toBe(1);
    const target = enc.buf;
    const data = enc.encode(360_000, 1);
    const body = buffers.own(enc, data, 300_000);
    expect(body.bytes.buffer).toBe(target.buffer);
    expect(body.bytes.length).toBe(360_000);
    expect(body.bytes.every((b) => b === 1)).toBe(true);
    // The encoder never writes into the body again: it holds a placeholder until the next prepare.
    expect(enc.buf.buffer).not.toBe(target.buffer);
    enc.encode(1000, 2);
    expect(body.bytes[0]).toBe(1);
    // Released, the same buffer serves the next batch of that size (pages already mapped).
    body.release();
    buffers.prepare(enc, 300_000);
    expect(enc.buf).toBe(target);
  });

  it('learns the output/input ratio and copies a body that fills less than half its buffer', () => {
    const pool = new BodyPool();
    const buffers = new BodyBuffers(pool);
    const enc = new FakeEncoder();
    buffers.prepare(enc, 100_000);
    // Most lines dead-lettered: a small body is copied into a buffer of its own size class.
    const small = buffers.own(enc, enc.encode(20_000, 3), 100_000);
    expect(small.bytes.length).toBe(20_000);
    expect(small.bytes.buffer).not.toBe(enc.buf.buffer);
    expect(small.bytes.every((b) => b === 3)).toBe(true);
    // Ratio now 0.2 (bounded below by 0.25): the next buffer is sized from it.
    buffers.prepare(enc, 1_000_000);
    expect(enc.outputCapacity).toBe(512 * 1024);
    // A body larger than the estimate still fits: the encoder grows its buffer.
    const big = buffers.own(enc, enc.encode(900_000, 4), 1_000_000);
    expect(big.bytes.length).toBe(900_000);
    expect(big.bytes.every((b) => b === 4)).toBe(true);
    small.release();
    big.release();
  });
});
