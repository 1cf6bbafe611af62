/**
 * Bounds what the receiver holds between packing and Kafka's acknowledgement (bytes of packed
 * messages queued or in flight). Over `highBytes` the gate is closed: TCP/TLS connections pause
 * (the kernel's receive window then pushes back on the sender, whose own queue holds the lines)
 * and UDP datagrams are dropped as `queue_full`, never buffered. It reopens below `lowBytes`.
 * Memory is bounded by highBytes + one message per open sender + one read chunk per connection.
 */
import { EventEmitter } from 'node:events';

export class FlowGate extends EventEmitter {
  private held = 0;
  private closedFlag = false;

  constructor(
    readonly highBytes: number,
    readonly lowBytes = Math.floor(highBytes / 2),
  ) {
    super();
    if (!(lowBytes < highBytes)) throw new RangeError('lowBytes must be below highBytes');
  }

  get bytes(): number {
    return this.held;
  }

  /** True while new input must wait (TCP) or be dropped (UDP). */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** A packed message of `n` bytes entered the produce queue. */
  acquire(n: number): void {
    this.held += n;
    if (!this.closedFlag && this.held >= this.highBytes) {
      this.closedFlag = true;
      this.emit('close');
    }
  }

  /** Kafka acknowledged (or the receiver gave up on) `n` bytes. */
  release(n: number): void {
    this.held = Math.max(0, this.held - n);
    if (this.closedFlag && this.held <= this.lowBytes) {
      this.closedFlag = false;
      this.emit('open');
    }
  }
}
