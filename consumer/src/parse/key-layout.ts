/**
 * The key order of the previous line, for key=value formats whose producers write the same keys
 * in the same order line after line (a FortiGate's traffic logs, one device's event type). The
 * n-th key of a line is first compared with the n-th key of the previous one: when the bytes and
 * the separator after them match, the key's end and its keyword id are known without scanning for
 * the separator or looking the key up. A mismatch scans and looks up as before and remembers the
 * new key for the next line, so the result never depends on what was remembered — only the speed.
 */

/** Keys longer than this are never remembered (they are looked up every time). */
const SLOT = 32;
/** Key positions remembered per line. */
const POSITIONS = 96;
/** 32-bit words of a remembered key (SLOT / 4). */
const WORDS = SLOT / 4;

/** Bytes o..o+3 of `buf` as one little-endian 32-bit word (signed, as an Int32Array holds it). */
function word(buf: Uint8Array, o: number): number {
  return buf[o] | (buf[o + 1] << 8) | (buf[o + 2] << 16) | (buf[o + 3] << 24);
}

/** Remembered keys of one parser: bytes, length and keyword id per key position. */
export class KeyLayout {
  private readonly bytes = new Uint8Array(POSITIONS * SLOT);
  /**
   * Keys of 4 bytes or more as words: at offsets 0, 4, … below len - 4, and the last 4 bytes in
   * `tails` (overlapping the one before): one compare per 4 bytes instead of one per byte.
   */
  private readonly words = new Int32Array(POSITIONS * WORDS);
  private readonly tails = new Int32Array(POSITIONS);
  /** Length of the key at each position; 0 = nothing remembered there. */
  private readonly lengths = new Int32Array(POSITIONS);
  private readonly ids = new Int32Array(POSITIONS);
  /** Keyword id of the last successful match(). */
  id = -1;
  /** The buffer memory of the current line as a DataView (one unaligned 32-bit load per word). */
  private view = new DataView(new ArrayBuffer(0));
  private viewOf: ArrayBufferLike | null = null;
  /** Byte offset of the current line's buffer inside `view`. */
  private base = 0;

  /**
   * Sets the buffer the next match() calls read. Lines of one message (and messages cut from one
   * fetch or decompressed block) share an ArrayBuffer, so the view is made once per buffer.
   */
  use(buf: Uint8Array): void {
    const ab = buf.buffer;
    if (ab !== this.viewOf) {
      this.viewOf = ab;
      this.view = new DataView(ab as ArrayBuffer);
    }
    this.base = buf.byteOffset;
  }

  /**
   * End of the key at position `n` starting at `s` when it is the remembered one followed by `sep`
   * (its id is then in `this.id`), else -1. The remembered key holds neither `sep` nor a space,
   * so a match ends exactly where a scan for the separator would. `buf` must be the buffer last
   * given to use(): keys of 4 bytes or more are compared through its DataView.
   */
  match(n: number, buf: Uint8Array, s: number, e: number, sep: number): number {
    if (n >= POSITIONS) return -1;
    const len = this.lengths[n];
    const end = s + len;
    if (len === 0 || end >= e || buf[end] !== sep) return -1;
    if (len >= 4) {
      const words = this.words;
      const view = this.view;
      const o = this.base + s;
      const at = n * WORDS;
      const full = (len - 1) >> 2;
      for (let k = 0; k < full; k++) if (view.getInt32(o + (k << 2), true) !== words[at + k]) return -1;
      if (view.getInt32(o + len - 4, true) !== this.tails[n]) return -1;
    } else {
      const bytes = this.bytes;
      const at = n * SLOT;
      for (let i = 0; i < len; i++) if (buf[s + i] !== bytes[at + i]) return -1;
    }
    this.id = this.ids[n];
    return end;
  }

  /** Remembers [s, e) (a key already scanned: no separator, no space) with id `id` at position `n`. */
  remember(n: number, buf: Uint8Array, s: number, e: number, id: number): void {
    const len = e - s;
    if (n >= POSITIONS || len > SLOT) return;
    const bytes = this.bytes;
    const at = n * SLOT;
    for (let i = 0; i < len; i++) bytes[at + i] = buf[s + i];
    if (len >= 4) {
      const full = (len - 1) >> 2;
      for (let k = 0; k < full; k++) this.words[n * WORDS + k] = word(buf, s + (k << 2));
      this.tails[n] = word(buf, e - 4);
    }
    this.lengths[n] = len;
    this.ids[n] = id;
  }
}
