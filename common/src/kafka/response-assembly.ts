/**
 * How a kafkajs broker connection puts responses together from socket reads, without kafkajs's
 * doubling. kafkajs 2.2.4's `Connection.processData` keeps every 64 KiB socket read of a response
 * in a list and, once all bytes are there, `Buffer.concat`s the list: a fetch response of 48 MiB
 * (three partitions at the worker's 16 MiB) holds 96 MiB at its peak, all of it freshly touched
 * memory (page faults: system time the CPU profile does not show). Worse, what follows a response
 * is kept as a slice of the concatenated buffer — an empty slice when nothing follows, which still
 * pins the whole previous response (tens of MiB) until the next one has arrived.
 *
 * This replacement reads the 4-byte size first, then copies each read straight into one buffer of
 * exactly that size (or, when a read holds the whole response, takes a view of the read: no copy),
 * and holds no slice of a finished response. It hands kafkajs's request queue exactly what the
 * original hands it (size, correlation id, payload bytes), response by response. SASL
 * authentication keeps kafkajs's own code: it runs before any other request and shares this path
 * only through bytes the original may leave buffered, which are taken over first.
 */
/* eslint-disable @typescript-eslint/no-require-imports */

const CONNECTION = 'kafkajs/src/network/connection';
const SIZE_BYTES = 4;

/** One response as kafkajs's RequestQueue.fulfillRequest takes it. */
export interface KafkaResponse {
  size: number;
  correlationId: number;
  payload: Buffer;
}

/** The fields of kafkajs's Connection the assembly reads and writes. */
interface ConnectionLike {
  authHandlers: unknown;
  socket: unknown;
  chunks: Buffer[];
  bytesBuffered: number;
  bytesNeeded: number;
  requestQueue: { fulfillRequest(r: KafkaResponse): void };
  /** Our state (undefined until the first read through this path) and the socket it reads. */
  lpAssembly?: ResponseAssembly;
  lpAssemblySocket?: unknown;
}

/**
 * Puts size-prefixed responses together from reads of any size: each byte is copied at most once,
 * into a buffer of the response's own size; a response inside one read is a view of that read.
 */
export class ResponseAssembly {
  /** The size prefix while it is incomplete (a read may end inside it). */
  private readonly head = Buffer.alloc(SIZE_BYTES);
  private headBytes = 0;
  /** The response being filled, once its size is known and it spans reads. */
  private body: Buffer | undefined;
  private filled = 0;

  /** `deliver` gets every complete response (payload after the correlation id), in order. */
  constructor(private readonly deliver: (r: KafkaResponse) => void) {}

  /** Takes one socket read. */
  push(data: Buffer): void {
    let pos = 0;
    while (pos < data.length) {
      if (this.body !== undefined) {
        const n = Math.min(this.body.length - this.filled, data.length - pos);
        data.copy(this.body, this.filled, pos, pos + n);
        this.filled += n;
        pos += n;
        if (this.filled === this.body.length) {
          const body = this.body;
          this.body = undefined;
          this.filled = 0;
          this.complete(body);
        }
        continue;
      }
      if (this.headBytes === 0 && data.length - pos >= SIZE_BYTES) {
        const size = data.readInt32BE(pos);
        pos += SIZE_BYTES;
        if (data.length - pos >= size) {
          // The whole response is inside this read: a view, as kafkajs's single-chunk case.
          this.complete(data.subarray(pos, pos + size));
          pos += size;
        } else this.begin(size);
        continue;
      }
      const n = Math.min(SIZE_BYTES - this.headBytes, data.length - pos);
      data.copy(this.head, this.headBytes, pos, pos + n);
      this.headBytes += n;
      pos += n;
      if (this.headBytes === SIZE_BYTES) {
        this.headBytes = 0;
        this.begin(this.head.readInt32BE(0));
      }
    }
  }

  /** Bytes taken but not yet handed over (a partial response). */
  pendingBytes(): number {
    return this.body !== undefined ? SIZE_BYTES + this.filled : this.headBytes;
  }

  /** The partial response's bytes as read (size prefix included), forgetting them. */
  takePending(): Buffer {
    const out = Buffer.allocUnsafe(this.pendingBytes());
    if (this.body !== undefined) {
      out.writeInt32BE(this.body.length, 0);
      this.body.copy(out, SIZE_BYTES, 0, this.filled);
    } else this.head.copy(out, 0, 0, this.headBytes);
    this.body = undefined;
    this.filled = 0;
    this.headBytes = 0;
    return out;
  }

  private begin(size: number): void {
    if (size === 0) this.complete(Buffer.alloc(0));
    else this.body = Buffer.allocUnsafeSlow(size);
  }

  private complete(response: Buffer): void {
    // As kafkajs: Decoder.readInt32 (throws on a response too short to hold it), then the rest.
    const correlationId = response.readInt32BE(0);
    this.deliver({ size: response.length, correlationId, payload: response.subarray(SIZE_BYTES) });
  }
}

/** The replacement `processData` (see the module comment); `original` serves SASL authentication. */
function assemblingProcessData(original: (this: ConnectionLike, data: Buffer) => unknown) {
  return function processData(this: ConnectionLike, data: Buffer): unknown {
    let assembly = this.lpAssembly;
    if (this.authHandlers) {
      // SASL (re-)authentication reads through kafkajs's own path, after any partial response of ours.
      if (assembly !== undefined && assembly.pendingBytes() > 0) original.call(this, assembly.takePending());
      return original.call(this, data);
    }
    if (assembly === undefined || this.lpAssemblySocket !== this.socket) {
      // A new socket (kafkajs reconnects on the same Connection) starts at a response boundary.
      this.lpAssemblySocket = this.socket;
      assembly = this.lpAssembly = new ResponseAssembly((r) => this.requestQueue.fulfillRequest(r));
    }
    if (this.bytesBuffered > 0) {
      // Bytes kafkajs's own path kept after authentication: they come first.
      const left = this.chunks;
      this.chunks = [];
      this.bytesBuffered = 0;
      this.bytesNeeded = SIZE_BYTES;
      for (const chunk of left) assembly.push(chunk);
    }
    assembly.push(data);
    return undefined;
  };
}

let original: ((this: ConnectionLike, data: Buffer) => unknown) | undefined;

/**
 * Installs the assembly on kafkajs's Connection (process-wide, idempotent); `enabled=false` puts
 * kafkajs's own back (A/B runs).
 */
export function assembleKafkaResponses(enabled = true): void {
  const proto = (require(CONNECTION) as { prototype: Record<string, unknown> }).prototype;
  original ??= proto.processData as typeof original;
  proto.processData = enabled ? assemblingProcessData(original!) : original;
}
