/**
 * Syslog stream framing (RFC 6587) over Buffers that arrive in arbitrary chunks. One `StreamFramer`
 * per TCP/TLS connection; it hands each complete message to a `FrameSink` as (buffer, start, end)
 * offsets, so a message that lies wholly inside one chunk is never copied or allocated here. Only a
 * message cut by a chunk boundary is assembled in the framer's carry buffer (reused, grown up to
 * maxFrameBytes). The sink must consume the bytes before returning (the packer copies them).
 *
 * Framing is detected per message, like rsyslog's imtcp: a frame starting with a digit 1-9 is
 * octet-counted (`MSG-LEN SP SYSLOG-MSG`), anything else is non-transparent (ends at LF; a trailing CR
 * and a NUL terminator are dropped). A digit run not followed by SP (or longer than the limit allows)
 * is no octet count: that frame is read as an LF-terminated one. A connection that ends inside an
 * octet-counted frame drops it as `framing`.
 * Oversize frames are skipped (to their LF, or past their announced length) and counted `oversize`.
 */
import type { FramingMode } from '../../../common/src/ingest-config';

/** Why a frame was not handed on. Label values of the drop counter. */
export type FrameDropReason = 'oversize' | 'framing';

/** Receives complete frames. `buf[start, end)` is valid only during the call. */
export interface FrameSink {
  frame(buf: Buffer, start: number, end: number): void;
  drop(reason: FrameDropReason, bytes: number): void;
}

/** `auto`: per frame, as described above; `lf`: never octet-counted (for raw lines that may start "123 "). */
export type { FramingMode };

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const NUL = 0x00;

const enum State {
  /** At a frame boundary: decide the framing from the first byte. */
  Start,
  /** Reading an octet count's digits. */
  Count,
  /** Reading the body of an octet-counted frame (`remaining` bytes to go). */
  Counted,
  /** Reading an LF-terminated frame. */
  Lf,
  /** Skipping an oversize LF frame up to its LF. */
  SkipLf,
  /** Skipping the rest of an oversize octet-counted frame (`remaining` bytes). */
  SkipCounted,
}

export class StreamFramer {
  private state = State.Start;
  private count = 0;
  private countDigits = 0;
  private remaining = 0;
  /** Partial frame bytes carried across chunks (LF body, counted body, or count digits). */
  private carry: Buffer;
  private carryLen = 0;
  private skipped = 0;
  private readonly maxCountDigits: number;

  constructor(
    private readonly sink: FrameSink,
    private readonly maxFrameBytes = 64 * 1024,
    private readonly mode: FramingMode = 'auto',
  ) {
    this.carry = Buffer.allocUnsafe(Math.min(4096, maxFrameBytes + 16));
    this.maxCountDigits = String(maxFrameBytes).length + 1;
  }

  /** Bytes held for an incomplete frame (memory accounting, tests). */
  get pendingBytes(): number {
    return this.carryLen;
  }

  /** Feeds one chunk; emits every frame it completes. */
  push(chunk: Buffer): void {
    let pos = 0;
    const len = chunk.length;
    while (pos < len) {
      switch (this.state) {
        case State.Start: {
          const b = chunk[pos];
          if (b === LF || b === NUL || b === CR) {
            pos++; // empty frame / stray terminator between frames
            continue;
          }
          if (this.mode !== 'lf' && b >= 0x31 && b <= 0x39) {
            this.state = State.Count;
            this.count = 0;
            this.countDigits = 0;
            this.carryLen = 0;
            continue;
          }
          this.state = State.Lf;
          this.carryLen = 0;
          continue;
        }
        case State.Count: {
          // Digits in a tight loop; they are carried only when a chunk ends inside the count.
          const from = pos;
          let b = chunk[pos];
          while (b >= 0x30 && b <= 0x39 && this.countDigits < this.maxCountDigits) {
            this.count = this.count * 10 + (b - 0x30);
            this.countDigits++;
            if (++pos === len) break;
            b = chunk[pos];
          }
          if (pos === len) {
            this.appendCarry(chunk, from, pos); // kept in case it is no count after all
            continue;
          }
          if (b === SP && this.countDigits > 0) {
            pos++;
            this.carryLen = 0;
            this.remaining = this.count;
            if (this.count > this.maxFrameBytes) {
              this.sink.drop('oversize', this.count);
              this.state = State.SkipCounted;
            } else {
              this.state = State.Counted;
            }
            continue;
          }
          // Digits then something else: an LF frame that starts with digits (e.g. "2026-12-03 ...").
          // Its digits so far are in the carry (earlier chunks) or still in this chunk (from..pos).
          if (this.carryLen === 0) pos = from;
          else this.appendCarry(chunk, from, pos);
          this.state = State.Lf;
          continue;
        }
        case State.Counted: {
          const avail = len - pos;
          if (this.carryLen === 0 && avail >= this.remaining) {
            // Whole body in this chunk: zero-copy.
            const end = pos + this.remaining;
            this.emit(chunk, pos, end);
            pos = end;
            this.state = State.Start;
            continue;
          }
          const take = Math.min(avail, this.remaining);
          this.appendCarry(chunk, pos, pos + take);
          pos += take;
          this.remaining -= take;
          if (this.remaining === 0) {
            this.emit(this.carry, 0, this.carryLen);
            this.carryLen = 0;
            this.state = State.Start;
          }
          continue;
        }
        case State.SkipCounted: {
          const take = Math.min(len - pos, this.remaining);
          pos += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = State.Start;
          continue;
        }
        case State.Lf: {
          const nl = chunk.indexOf(LF, pos);
          if (nl < 0) {
            if (this.carryLen + (len - pos) > this.maxFrameBytes) {
              this.skipped = this.carryLen + (len - pos);
              this.carryLen = 0;
              this.state = State.SkipLf;
            } else {
              this.appendCarry(chunk, pos, len);
            }
            pos = len;
            continue;
          }
          if (this.carryLen + (nl - pos) > this.maxFrameBytes) {
            this.sink.drop('oversize', this.carryLen + (nl - pos));
          } else if (this.carryLen === 0) {
            this.emitLf(chunk, pos, nl);
          } else {
            this.appendCarry(chunk, pos, nl);
            this.emitLf(this.carry, 0, this.carryLen);
          }
          this.carryLen = 0;
          pos = nl + 1;
          this.state = State.Start;
          continue;
        }
        case State.SkipLf: {
          const nl = chunk.indexOf(LF, pos);
          if (nl < 0) {
            this.skipped += len - pos;
            pos = len;
            continue;
          }
          this.sink.drop('oversize', this.skipped + (nl - pos));
          this.skipped = 0;
          pos = nl + 1;
          this.state = State.Start;
          continue;
        }
      }
    }
  }

  /**
   * The connection ended: an unterminated LF frame is still a message (rsyslog imtcp does the same);
   * a truncated octet-counted frame is dropped as `framing`.
   */
  end(): void {
    if (this.state === State.Lf || (this.state === State.Count && this.carryLen > 0)) {
      if (this.carryLen > 0) this.emitLf(this.carry, 0, this.carryLen);
    } else if (this.state === State.Counted || this.state === State.SkipCounted) {
      this.sink.drop('framing', this.carryLen);
    } else if (this.state === State.SkipLf) {
      this.sink.drop('oversize', this.skipped);
    }
    this.carryLen = 0;
    this.state = State.Start;
  }

  private emitLf(buf: Buffer, start: number, end: number): void {
    while (end > start && (buf[end - 1] === CR || buf[end - 1] === NUL)) end--;
    if (end > start) this.sink.frame(buf, start, end);
  }

  private emit(buf: Buffer, start: number, end: number): void {
    // RFC 5425 senders often end the counted body with LF anyway; it is not part of the message.
    while (end > start && (buf[end - 1] === LF || buf[end - 1] === CR || buf[end - 1] === NUL)) end--;
    if (end > start) this.sink.frame(buf, start, end);
  }

  private appendCarry(src: Buffer, start: number, end: number): void {
    const need = this.carryLen + (end - start);
    if (need > this.carry.length) {
      const grown = Buffer.allocUnsafe(
        Math.min(Math.max(need, this.carry.length * 2), this.maxFrameBytes + 16),
      );
      this.carry.copy(grown, 0, 0, this.carryLen);
      this.carry = grown;
    }
    src.copy(this.carry, this.carryLen, start, end);
    this.carryLen = need;
  }
}

/**
 * One UDP datagram (RFC 5426: one message per datagram). Trailing LF/CR/NUL are dropped; a
 * datagram holding several LF-separated lines (some relays batch) yields each line.
 */
export function frameDatagram(msg: Buffer, sink: FrameSink, maxFrameBytes: number): void {
  if (msg.length > maxFrameBytes) {
    sink.drop('oversize', msg.length);
    return;
  }
  let pos = 0;
  const len = msg.length;
  while (pos < len) {
    let nl = msg.indexOf(LF, pos);
    if (nl < 0) nl = len;
    let end = nl;
    while (end > pos && (msg[end - 1] === CR || msg[end - 1] === NUL)) end--;
    if (end > pos) sink.frame(msg, pos, end);
    pos = nl + 1;
  }
}
