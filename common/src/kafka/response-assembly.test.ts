/* eslint-disable @typescript-eslint/no-require-imports */
import { assembleKafkaResponses, ResponseAssembly, type KafkaResponse } from './response-assembly';

type ProcessData = (this: object, data: Buffer) => unknown;
const Connection = require('kafkajs/src/network/connection') as { prototype: { processData: ProcessData } };
const kafkajsProcessData = Connection.prototype.processData;

/** A size-prefixed response: correlation id then `payloadBytes` bytes of a pattern. */
function response(correlationId: number, payloadBytes: number): Buffer {
  const b = Buffer.alloc(8 + payloadBytes);
  b.writeInt32BE(4 + payloadBytes, 0);
  b.writeInt32BE(correlationId, 4);
  for (let i = 0; i < payloadBytes; i++) b[8 + i] = (i * 31 + correlationId) & 0xff;
  return b;
}

/** Splits `bytes` into reads at pseudo-random points (including 1-3 byte reads inside a size prefix). */
function reads(bytes: Buffer, seed: number): Buffer[] {
  const out: Buffer[] = [];
  let x = seed;
  for (let pos = 0; pos < bytes.length;) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const n = Math.min(bytes.length - pos, x % 7 === 0 ? 1 + (x % 3) : 1 + (x % 70_000));
    // Fresh buffers, as socket reads are.
    out.push(Buffer.from(bytes.subarray(pos, pos + n)));
    pos += n;
  }
  return out;
}

/** What a connection hands its request queue for these reads, through `processData`. */
function delivered(
  processData: ProcessData,
  chunks: Buffer[],
): Array<Omit<KafkaResponse, 'payload'> & { payload: string }> {
  const got: Array<Omit<KafkaResponse, 'payload'> & { payload: string }> = [];
  const connection = {
    authHandlers: null,
    socket: {},
    chunks: [] as Buffer[],
    bytesBuffered: 0,
    bytesNeeded: 4,
    requestQueue: {
      fulfillRequest: (r: KafkaResponse) =>
        got.push({ size: r.size, correlationId: r.correlationId, payload: r.payload.toString('hex') }),
    },
  };
  for (const c of chunks) processData.call(connection, c);
  return got;
}

describe('kafkajs response assembly', () => {
  afterAll(() => assembleKafkaResponses(false));

  const stream = Buffer.concat([
    response(1, 0),
    response(2, 10),
    response(3, 200_000),
    response(4, 3),
    response(5, 65_536 - 8),
    response(6, 1_000_000),
    response(7, 1),
  ]);

  it('shows the defect first: kafkajs keeps an empty slice that pins the whole previous response', () => {
    const c = {
      authHandlers: null,
      chunks: [] as Buffer[],
      bytesBuffered: 0,
      bytesNeeded: 4,
      requestQueue: { fulfillRequest: () => undefined },
    };
    for (const chunk of reads(response(1, 5_000_000), 3)) kafkajsProcessData.call(c, chunk);
    expect(c.bytesBuffered).toBe(0);
    expect(c.chunks[0].length).toBe(0);
    // Held until the next response has been read whole.
    expect(c.chunks[0].buffer.byteLength).toBeGreaterThanOrEqual(5_000_008);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    'hands the request queue exactly what kafkajs does (chunking %i)',
    (seed) => {
      const chunks = reads(stream, seed);
      const expected = delivered(kafkajsProcessData, chunks);
      assembleKafkaResponses();
      const actual = delivered(Connection.prototype.processData, chunks);
      assembleKafkaResponses(false);
      expect(expected.map((r) => r.correlationId)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(actual).toEqual(expected);
    },
  );

  it('copies a response spanning reads once into a buffer of its own size and keeps no read', () => {
    const sizes: number[] = [];
    const a = new ResponseAssembly((r) => sizes.push(r.payload.buffer.byteLength));
    const r = response(9, 300_000);
    for (const c of reads(r, 11)) a.push(c);
    expect(sizes).toEqual([300_004]);
    expect(a.pendingBytes()).toBe(0);
  });

  it('takes a response inside one read as a view of that read (no copy)', () => {
    const read = Buffer.concat([response(1, 5), response(2, 7)]);
    const views: Buffer[] = [];
    new ResponseAssembly((r) => views.push(r.payload)).push(read);
    expect(views.map((v) => v.buffer)).toEqual([read.buffer, read.buffer]);
  });

  it('gives a partial response back as read, for kafkajs’s own path during SASL authentication', () => {
    const r = response(3, 1000);
    const a = new ResponseAssembly(() => undefined);
    a.push(r.subarray(0, 2));
    expect(a.takePending()).toEqual(r.subarray(0, 2));
    a.push(r.subarray(0, 600));
    expect(a.pendingBytes()).toBe(600);
    expect(a.takePending()).toEqual(r.subarray(0, 600));
    expect(a.pendingBytes()).toBe(0);
  });

  it('starts over at a response boundary on a new socket and reads through kafkajs while authenticating', () => {
    assembleKafkaResponses();
    try {
      const got: number[] = [];
      const auth: Buffer[] = [];
      const c = {
        authHandlers: null as null | { onSuccess(b: Buffer): void },
        authExpectResponse: true,
        socket: {},
        chunks: [] as Buffer[],
        bytesBuffered: 0,
        bytesNeeded: 4,
        requestQueue: { fulfillRequest: (r: KafkaResponse) => got.push(r.correlationId) },
      };
      const pd = Connection.prototype.processData;
      pd.call(c, response(1, 50).subarray(0, 20)); // a partial response, then the socket is replaced
      c.socket = {};
      pd.call(c, response(2, 50));
      c.authHandlers = { onSuccess: (b) => auth.push(b) };
      pd.call(c, response(3, 10));
      c.authHandlers = null;
      pd.call(c, response(4, 10));
      expect(got).toEqual([2, 4]);
      expect(auth.map((b) => b.readInt32BE(4))).toEqual([3]);
    } finally {
      assembleKafkaResponses(false);
    }
  });
});
