/**
 * Packs syslog lines into Kafka message values at the edge: one open buffer per sender address,
 * lines joined by LF (no trailing LF; the worker splits values exactly so, see sink/row-lines.ts),
 * cut at `maxLines`, before `maxBytes` would be exceeded, or `lingerMs` after the buffer's first
 * line. Each packed message carries its sender (the `sender` header), so one message never mixes
 * devices. A line is copied once, from the framer's chunk into the open buffer; an LF inside a line
 * (possible in an octet-counted frame) is written as a space so the worker sees one line.
 *
 * Memory: an open buffer starts near the typical cut size and doubles up to maxBytes; at most
 * `maxOpenSenders` buffers are open (opening one more flushes the oldest). Buffers come from a
 * BodyPool and go back when the message's owner calls `release()` (after Kafka's ack): fresh
 * ~1 MiB allocations per message cost a page fault per 4 KiB touched, measured as the dominant cost
 * (400k faults for 2M lines, 4-8x the CPU of the pooled path). What is packed but not yet
 * acknowledged by Kafka is bounded elsewhere (flow-gate.ts).
 */
import { BodyPool, type PooledBytes } from '../delivery/body-pool';

export interface PackingOptions {
  /** Lines per message (default 1024). */
  maxLines: number;
  /** Bytes of one message value (default 1 MiB, below Kafka's default max.message.bytes). */
  maxBytes: number;
  /** Longest a line waits for companions, in ms (default 100). */
  lingerMs: number;
  /** Open per-sender buffers at once (default 4096). */
  maxOpenSenders: number;
}

export const DEFAULT_PACKING: PackingOptions = {
  maxLines: 1024,
  maxBytes: 1024 * 1024,
  lingerMs: 100,
  maxOpenSenders: 4096,
};

/** One packed Kafka message. `value` is owned by the receiver of the callback. */
export interface PackedMessage {
  sender: string;
  value: Buffer;
  lines: number;
  /** Why it was cut: a metric label. */
  cause: FlushCause;
  /** Date.now() of the first line (produce latency metric). */
  firstLineMs: number;
  /** Returns `value`'s memory to the pool; call once, when Kafka no longer needs the bytes. */
  release(): void;
}

export type FlushCause = 'lines' | 'bytes' | 'linger' | 'evict' | 'shutdown';

const LF = 0x0a;
const SP = 0x20;
const INITIAL_CAPACITY = 16 * 1024;

class OpenBuffer {
  buf: Buffer;
  len = 0;
  lines = 0;
  firstLineMs = 0;
  timer?: NodeJS.Timeout;
  constructor(
    readonly sender: string,
    public mem: PooledBytes,
  ) {
    this.buf = mem.bytes;
  }
}

/** Smallest power of two >= n. */
const pow2 = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(1, n)));

export class Packer {
  private readonly open = new Map<string, OpenBuffer>();
  private readonly opts: PackingOptions;
  private closed = false;
  /** Moving average of cut sizes: new buffers start near it, so most never grow. */
  private typicalBytes = INITIAL_CAPACITY;

  constructor(
    private readonly onMessage: (m: PackedMessage) => void,
    opts: Partial<PackingOptions> = {},
    private readonly now: () => number = Date.now,
    private readonly pool = new BodyPool(64 * 1024 * 1024, INITIAL_CAPACITY),
  ) {
    this.opts = { ...DEFAULT_PACKING, ...opts };
    if (this.opts.maxLines < 1 || this.opts.maxBytes < 1)
      throw new RangeError('packing limits must be positive');
  }

  /** Bytes held in open buffers (allocated capacity), for the memory gauge. */
  get openBytes(): number {
    let n = 0;
    for (const b of this.open.values()) n += b.buf.length;
    return n;
  }

  get openSenders(): number {
    return this.open.size;
  }

  /**
   * Adds `src[start, end)` as one line from `sender`. Returns false (and keeps nothing) for a line
   * longer than maxBytes, which the caller counts as oversize.
   */
  add(sender: string, src: Buffer, start: number, end: number): boolean {
    const n = end - start;
    if (n > this.opts.maxBytes || this.closed) return false;
    let ob = this.open.get(sender);
    if (ob && ob.len + 1 + n > this.opts.maxBytes) {
      this.flush(ob, 'bytes');
      ob = undefined;
    }
    if (!ob) ob = this.openFor(sender, n);
    let at = ob.len;
    if (ob.lines > 0) {
      this.ensure(ob, at + 1 + n);
      ob.buf[at++] = LF;
    } else {
      this.ensure(ob, n);
      ob.firstLineMs = this.now();
      ob.timer = setTimeout(() => this.flushSender(sender, ob, 'linger'), this.opts.lingerMs);
      ob.timer.unref?.();
    }
    src.copy(ob.buf, at, start, end);
    // An LF inside the line would split it in two at the worker: write it as a space.
    let nl = ob.buf.indexOf(LF, at);
    while (nl >= 0 && nl < at + n) {
      ob.buf[nl] = SP;
      nl = ob.buf.indexOf(LF, nl + 1);
    }
    ob.len = at + n;
    ob.lines++;
    if (ob.lines >= this.opts.maxLines) this.flush(ob, 'lines');
    return true;
  }

  /** Cuts every open buffer now (shutdown); later adds are refused when `close` is set. */
  flushAll(cause: FlushCause = 'shutdown', close = false): void {
    for (const ob of [...this.open.values()]) this.flush(ob, cause);
    if (close) this.closed = true;
  }

  private openFor(sender: string, firstLine: number): OpenBuffer {
    if (this.open.size >= this.opts.maxOpenSenders) {
      // Map iteration order is insertion order: the first entry is the oldest open buffer.
      const oldest = this.open.values().next().value as OpenBuffer;
      this.flush(oldest, 'evict');
    }
    const cap = Math.min(
      pow2(this.opts.maxBytes),
      pow2(Math.max(INITIAL_CAPACITY, firstLine, this.typicalBytes)),
    );
    const ob = new OpenBuffer(sender, this.pool.alloc(cap));
    this.open.set(sender, ob);
    return ob;
  }

  private ensure(ob: OpenBuffer, need: number): void {
    if (need <= ob.buf.length) return;
    const grown = this.pool.alloc(Math.min(pow2(need), pow2(this.opts.maxBytes)));
    ob.buf.copy(grown.bytes, 0, 0, ob.len);
    ob.mem.release();
    ob.mem = grown;
    ob.buf = grown.bytes;
  }

  private flushSender(sender: string, ob: OpenBuffer, cause: FlushCause): void {
    if (this.open.get(sender) === ob) this.flush(ob, cause);
  }

  private flush(ob: OpenBuffer, cause: FlushCause): void {
    if (ob.timer) clearTimeout(ob.timer);
    this.open.delete(ob.sender);
    if (ob.lines === 0) {
      ob.mem.release();
      return;
    }
    if (cause === 'lines' || cause === 'bytes')
      this.typicalBytes = Math.ceil((this.typicalBytes * 7 + ob.len * 1.1) / 8);
    const value = ob.buf.subarray(0, ob.len);
    this.onMessage({
      sender: ob.sender,
      value,
      lines: ob.lines,
      cause,
      firstLineMs: ob.firstLineMs,
      release: ob.mem.release,
    });
  }
}
