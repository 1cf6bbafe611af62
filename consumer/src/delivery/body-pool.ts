/**
 * Reusable buffers for encoded batch bodies. A batch's body must outlive the encoder's shared
 * output buffer (it is resent byte for byte on retries), so it is copied once per batch; copying
 * into a fresh multi-megabyte allocation costs page faults and GC pressure on every batch, so
 * bodies are copied into pooled buffers (power-of-two sizes) that come back when the batch is done.
 */

/** A pooled copy of some bytes; call release() exactly once when the bytes are no longer used. */
export interface PooledBytes {
  bytes: Buffer;
  release(): void;
}

/** A small free list of large buffers by power-of-two size. */
export class BodyPool {
  private readonly free = new Map<number, Buffer[]>();
  private pooled = 0;
  private pooledBytes = 0;

  /**
   * Keeps idle buffers up to `maxPooledBytes` in total (idle memory is not in the in-flight budget,
   * so it is capped separately); copies smaller than `minPooledBytes` are not pooled.
   */
  constructor(
    private readonly maxPooledBytes = 64 * 1024 * 1024,
    private readonly minPooledBytes = 64 * 1024,
  ) {}

  /** Copies `src` into a pooled buffer; `bytes` is exactly src.length long. */
  copy(src: Uint8Array): PooledBytes {
    const pooled = this.alloc(src.length);
    pooled.bytes.set(src, 0);
    return pooled;
  }

  /** A pooled buffer of exactly `length` bytes (contents undefined); release() returns it. */
  alloc(length: number): PooledBytes {
    if (length < this.minPooledBytes) return { bytes: Buffer.allocUnsafe(length), release: () => undefined };
    return this.adopt(this.takeWhole(2 ** Math.ceil(Math.log2(length))), length);
  }

  /**
   * Hands `src` (a full buffer someone else filled) to the caller as pooled bytes: release() puts
   * the whole buffer into the free list, so a body can be handed over instead of copied.
   */
  adopt(whole: Buffer, length: number): PooledBytes {
    let released = false;
    return {
      bytes: whole.subarray(0, length),
      release: () => {
        if (released) return;
        released = true;
        this.recycle(whole);
      },
    };
  }

  /** A whole idle buffer of exactly `size` bytes (a power of two) from the free list, or a new one. */
  takeWhole(size: number): Buffer {
    const buf = this.free.get(size)?.pop();
    if (!buf) return Buffer.allocUnsafeSlow(size);
    this.pooled--;
    this.pooledBytes -= size;
    return buf;
  }

  /**
   * Returns a whole buffer nobody else holds (e.g. one an encoder no longer writes into) to the
   * free list; buffers outside the size classes, or beyond the cap, go to the GC.
   */
  recycle(whole: Buffer): void {
    const size = whole.length;
    // Only power-of-two buffers fit the free list's size classes; others go to the GC.
    if (size < this.minPooledBytes || (size & (size - 1)) !== 0) return;
    if (this.pooledBytes + size > this.maxPooledBytes) return;
    const l = this.free.get(size) ?? [];
    l.push(whole);
    this.free.set(size, l);
    this.pooled++;
    this.pooledBytes += size;
  }

  /** Idle buffers held. */
  get size(): number {
    return this.pooled;
  }
}

/** An encoder whose output buffer can be exchanged (BatchEncoder). */
export interface SwappableOutput {
  /** Bytes of the buffer the next encode writes into. */
  readonly outputCapacity: number;
  /** Installs `next` as the output buffer and returns the previous one. */
  swapOutput(next: Buffer): Buffer;
}

/** Smallest pooled body buffer, and the buffer an encoder keeps while its last body is in flight. */
const MIN_BODY_BYTES = 64 * 1024;
const PLACEHOLDER_BYTES = 4 * 1024;

/**
 * Gives each batch's encode a pooled output buffer sized for it (input bytes times the output/input
 * ratio of the last batch), and hands the filled buffer over as the batch's body: no copy of the
 * body, no growth copies while encoding, and the pages of reused buffers are already mapped (a
 * fresh multi-megabyte buffer costs a page fault per 4 KiB on first write).
 */
export class BodyBuffers {
  /** Output bytes per input byte of the last batch (RowBinary of syslog lines: ~1.2). */
  private ratio = 1.5;

  /** `pool` holds the idle buffers (shared with any other users of the pool). */
  constructor(private readonly pool: BodyPool) {}

  /** Installs a pooled buffer big enough for `inputBytes` of messages; call right before encoding. */
  prepare(encoder: SwappableOutput, inputBytes: number): void {
    const estimate = Math.ceil(inputBytes * this.ratio * 1.05) + 4096;
    const size = 2 ** Math.ceil(Math.log2(Math.max(MIN_BODY_BYTES, estimate)));
    if (encoder.outputCapacity === size) return;
    this.pool.recycle(encoder.swapOutput(this.pool.takeWhole(size)));
  }

  /**
   * The batch's own copy of `data` (the encoder's output, `inputBytes` of messages): the whole
   * output buffer when the body fills at least half of it (the encoder gets a small placeholder
   * until the next prepare), else a pooled copy of its own size (no idle megabytes held).
   */
  own(encoder: SwappableOutput, data: Buffer, inputBytes: number): PooledBytes {
    if (inputBytes > 0) this.ratio = Math.min(8, Math.max(0.25, data.length / inputBytes));
    const capacity = encoder.outputCapacity;
    if (data.length * 2 < capacity || (capacity & (capacity - 1)) !== 0) return this.pool.copy(data);
    const whole = encoder.swapOutput(Buffer.allocUnsafe(PLACEHOLDER_BYTES));
    return this.pool.adopt(whole, data.length);
  }
}
