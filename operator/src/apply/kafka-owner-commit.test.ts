import { decodeOwnerCommit, ownerCommitRequest } from './kafka-owner-commit';
import { coordinatorMoved } from './kafka-topic-wire';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs ships its protocol codec as plain JS modules */
const Encoder = require('kafkajs/src/protocol/encoder') as new () => {
  writeInt16(v: number): unknown;
  writeInt32(v: number): unknown;
  writeString(v: string): unknown;
  buffer: Buffer;
};
/* eslint-enable @typescript-eslint/no-require-imports */

const str = (s: string) => {
  const b = Buffer.from(s);
  const len = Buffer.alloc(2);
  len.writeInt16BE(b.length);
  return Buffer.concat([len, b]);
};
const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const i16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};

describe('ownerCommitRequest', () => {
  it('is OffsetCommit v7 of partition 0, offset 0, generation -1, no member, byte for byte as the protocol lays it out', async () => {
    const req = ownerCommitRequest('logpipeline.owners', [
      { topic: 'a', record: 'rec-a' },
      { topic: 'b', record: 'rec-b' },
    ]);
    expect(req.request).toMatchObject({ apiKey: 8, apiVersion: 7, apiName: 'OffsetCommit' });
    const bytes = ((await req.request.encode()) as unknown as { buffer: Buffer }).buffer;
    const partition0 = (record: string) =>
      Buffer.concat([i32(1), i32(0), Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]), i32(-1), str(record)]);
    expect(bytes).toEqual(
      Buffer.concat([
        str('logpipeline.owners'), // group_id
        i32(-1), // generation_id
        str(''), // member_id
        i16(-1), // group_instance_id: null
        i32(2), // topics
        str('a'),
        partition0('rec-a'), // [partition_index, committed_offset, committed_leader_epoch -1, metadata]
        str('b'),
        partition0('rec-b'),
      ]),
    );
  });
});

describe('decodeOwnerCommit', () => {
  /** A response body: throttle, then each topic with one partition and its error code. */
  const response = (topics: Array<[string, number]>) => {
    const e = new Encoder();
    e.writeInt32(0);
    e.writeInt32(topics.length);
    for (const [t, code] of topics) {
      e.writeString(t);
      e.writeInt32(1);
      e.writeInt32(0);
      e.writeInt16(code);
    }
    return e.buffer;
  };

  it('answers each topic with its own error: one the coordinator does not know fails alone', async () => {
    const answer = decodeOwnerCommit(
      response([
        ['a', 0],
        ['new', 3],
        ['c', 0],
      ]),
    );
    expect([...answer.keys()]).toEqual(['new']);
    expect(answer.get('new')).toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' });
  });

  it('reports nothing when every record was stored, and keeps a coordinator move per topic', async () => {
    expect(decodeOwnerCommit(response([['a', 0]])).size).toBe(0);
    const moved = decodeOwnerCommit(response([['a', 16]]));
    expect(moved.get('a')).toMatchObject({ type: 'NOT_COORDINATOR_FOR_GROUP' });
    expect(coordinatorMoved(moved.get('a')?.type)).toBe(true);
    expect(coordinatorMoved('GROUP_COORDINATOR_NOT_AVAILABLE')).toBe(true);
    expect(coordinatorMoved('UNKNOWN_TOPIC_OR_PARTITION')).toBe(false);
    expect(coordinatorMoved(undefined)).toBe(false);
    const req = ownerCommitRequest('g', [{ topic: 'a', record: 'r' }]);
    await expect(req.response.parse(await req.response.decode(response([['a', 3]])))).resolves.toBeInstanceOf(
      Map,
    );
  });
});
