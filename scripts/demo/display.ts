/**
 * Where the demo's output goes: on a terminal a live view repainted in place (hidden cursor,
 * restored on exit); elsewhere (CI, pipes) one plain status line every few seconds.
 */
import { renderLive, renderPlain, repaint } from './render';
import type { DemoView } from './stats';

const PLAIN_EVERY_MS = 5_000;

/** Live view or periodic lines, chosen once from the stream. */
export class Display {
  private drawn = 0;
  private lastPlainMs = 0;
  private readonly live: boolean;

  /** `plain` forces periodic lines even on a terminal. */
  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly title: string,
    plain: boolean,
  ) {
    this.live = !plain && out.isTTY === true;
    if (this.live) out.write('\x1b[?25l');
  }

  /** Shows the current picture (a live repaint, or a plain line when one is due). */
  show(view: DemoView, force = false): void {
    if (this.live) {
      const lines = renderLive(view, {
        width: Math.max(40, (this.out.columns || 100) - 1),
        color: true,
        title: this.title,
      });
      this.out.write(repaint(this.drawn, lines));
      this.drawn = lines.length;
      return;
    }
    const now = Date.now();
    if (force || now - this.lastPlainMs >= PLAIN_EVERY_MS) {
      this.lastPlainMs = now;
      this.out.write(renderPlain(view) + '\n');
    }
  }

  /** Leaves the last picture on screen and gives the cursor back. */
  close(): void {
    if (this.live) this.out.write('\x1b[?25h');
    this.drawn = 0;
  }
}
