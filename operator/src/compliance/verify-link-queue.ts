/**
 * The link side of the row pass: an ordered link stream pulled only as far as the current block of
 * rows needs, with exact duplicates (a link row stored twice) dropped. Separate from verify-rows.ts
 * because it is the pass's buffering and back-pressure on the link stream, not digest checking.
 */
import type { LinkRecord } from '../../../common/src/integrity/chain';

/** Pulls links in order, skipping exact duplicates (a link row stored twice). */
export class LinkQueue {
  private readonly buf: LinkRecord[] = [];
  private head = 0;
  private done = false;
  private last: LinkRecord | undefined;

  /** Wraps an ordered link iterator. */
  constructor(private readonly source: AsyncIterator<LinkRecord>) {}

  private async pull(): Promise<boolean> {
    for (;;) {
      const r = await this.source.next();
      if (r.done) {
        this.done = true;
        return false;
      }
      const l = r.value;
      const p = this.last;
      if (
        p &&
        p.partition === l.partition &&
        p.firstOffset === l.firstOffset &&
        p.lastOffset === l.lastOffset &&
        p.link === l.link
      )
        continue;
      this.last = l;
      if (this.head > 1024 && this.head * 2 > this.buf.length) {
        this.buf.splice(0, this.head);
        this.head = 0;
      }
      this.buf.push(l);
      return true;
    }
  }

  /** Buffers links until one starts after (partition, offset) or the stream ends. */
  async fillThrough(partition: number, offset: number): Promise<void> {
    while (!this.done) {
      const l = this.buf[this.buf.length - 1];
      if (
        this.head < this.buf.length &&
        (l.partition > partition || (l.partition === partition && l.firstOffset > offset))
      )
        return;
      await this.pull();
    }
  }

  /** The next buffered link, or undefined (sync: call fillThrough/fillOne first). */
  shift(): LinkRecord | undefined {
    return this.head < this.buf.length ? this.buf[this.head++] : undefined;
  }

  /** Buffers at least one more link unless the stream ended; false when none is left. */
  async fillOne(): Promise<boolean> {
    return this.head < this.buf.length || (await this.pull());
  }
}
