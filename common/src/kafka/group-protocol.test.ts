import {
  brokerSupports,
  findCoordinatorsRequest,
  generationCommitRequest,
  offsetFetchGroupsRequest,
  sendProtocolRequest,
  type ProtocolBroker,
} from './group-protocol';

/* eslint-disable @typescript-eslint/no-require-imports */
const Encoder = require('kafkajs/src/protocol/encoder');
const Decoder = require('kafkajs/src/protocol/decoder');
/* eslint-enable @typescript-eslint/no-require-imports */

const bytes = async (req: { request: { encode(): Promise<unknown> } }): Promise<Buffer> =>
  ((await req.request.encode()) as { buffer: Buffer }).buffer;

describe('FindCoordinator v4', () => {
  it('asks for every group in one request (request header v2 tagged fields first)', async () => {
    const req = findCoordinatorsRequest(['g1', 'g2']);
    expect(req.request).toMatchObject({ apiKey: 10, apiVersion: 4, apiName: 'FindCoordinator' });
    const d = new Decoder(await bytes(req));
    expect(d.readUVarInt()).toBe(0); // header tagged fields
    expect(d.readInt8()).toBe(0); // key type: group
    expect(d.readUVarIntArray((x: typeof d) => x.readUVarIntString())).toEqual(['g1', 'g2']);
    expect(d.readUVarInt()).toBe(0);
    expect(d.canReadBytes(1)).toBe(false);
  });

  it('decodes each key with its coordinator or error', async () => {
    const e = new Encoder().writeUVarInt(0).writeInt32(0).writeUVarInt(3);
    e.writeUVarIntString('g1').writeInt32(1).writeUVarIntString('h1').writeInt32(9092).writeInt16(0);
    e.writeUVarIntString(null).writeUVarInt(0);
    e.writeUVarIntString('g2').writeInt32(-1).writeUVarIntString('').writeInt32(-1).writeInt16(15);
    e.writeUVarIntString('not available').writeUVarInt(0);
    e.writeUVarInt(0);
    const out = await findCoordinatorsRequest([]).response.decode(e.buffer);
    expect(out).toEqual([
      { key: 'g1', nodeId: 1, host: 'h1', port: 9092 },
      expect.objectContaining({ key: 'g2', nodeId: -1, error: expect.objectContaining({ retriable: true }) }),
    ]);
  });
});

describe('OffsetFetch v8', () => {
  it('asks for many groups, each with its topics and partitions, in one request', async () => {
    const req = offsetFetchGroupsRequest([
      { groupId: 'a', topics: [{ topic: 't1', partitions: [0, 1] }] },
      { groupId: 'b', topics: [{ topic: 't2', partitions: [2] }] },
    ]);
    expect(req.request).toMatchObject({ apiKey: 9, apiVersion: 8, apiName: 'OffsetFetch' });
    const d = new Decoder(await bytes(req));
    expect(d.readUVarInt()).toBe(0);
    const groups = d.readUVarIntArray((g: typeof d) => {
      const id = g.readUVarIntString();
      const topics = g.readUVarIntArray((t: typeof d) => {
        const name = t.readUVarIntString();
        const parts = t.readUVarIntArray((p: typeof d) => p.readInt32());
        t.readTaggedFields();
        return [name, parts];
      });
      g.readTaggedFields();
      return [id, topics];
    });
    expect(groups).toEqual([
      ['a', [['t1', [0, 1]]]],
      ['b', [['t2', [2]]]],
    ]);
    expect(d.readBoolean()).toBe(false);
    expect(d.readUVarInt()).toBe(0);
    expect(d.canReadBytes(1)).toBe(false);
  });

  it('decodes per-group offsets, metadata and group errors', async () => {
    const e = new Encoder().writeUVarInt(0).writeInt32(0).writeUVarInt(3);
    e.writeUVarIntString('a').writeUVarInt(2).writeUVarIntString('t1').writeUVarInt(3);
    e.writeInt32(0)
      .writeInt64('42')
      .writeInt32(-1)
      .writeUVarIntString('journal')
      .writeInt16(0)
      .writeUVarInt(0);
    e.writeInt32(1).writeInt64('-1').writeInt32(-1).writeUVarIntString(null).writeInt16(0).writeUVarInt(0);
    e.writeUVarInt(0); // topic tags
    e.writeInt16(0).writeUVarInt(0);
    e.writeUVarIntString('b').writeUVarInt(1).writeInt16(16).writeUVarInt(0); // NOT_COORDINATOR
    e.writeUVarInt(0);
    const out = await offsetFetchGroupsRequest([]).response.decode(e.buffer);
    expect(out).toEqual([
      {
        groupId: 'a',
        partitions: [
          { topic: 't1', partition: 0, offset: '42', metadata: 'journal' },
          { topic: 't1', partition: 1, offset: '-1', metadata: null },
        ],
      },
      { groupId: 'b', partitions: [], error: expect.objectContaining({ type: 'NOT_COORDINATOR_FOR_GROUP' }) },
    ]);
  });
});

describe('OffsetCommit v7 with a fixed generation', () => {
  const commit = {
    groupId: 'g',
    generationId: 7,
    memberId: 'm-1',
    topics: [{ topic: 't', partitions: [{ partition: 3, offset: '100', metadata: 'j' }] }],
  };

  it('carries the generation and member it was built with', async () => {
    const req = generationCommitRequest(commit);
    expect(req.request).toMatchObject({ apiKey: 8, apiVersion: 7 });
    const d = new Decoder(await bytes(req));
    expect([d.readString(), d.readInt32(), d.readString(), d.readString()]).toEqual(['g', 7, 'm-1', null]);
    const topics = d.readArray((t: typeof d) => [
      t.readString(),
      t.readArray((p: typeof d) => [p.readInt32(), p.readInt64().toString(), p.readInt32(), p.readString()]),
    ]);
    expect(topics).toEqual([['t', [[3, '100', -1, 'j']]]]);
  });

  const response = (code: number) =>
    new Encoder().writeInt32(0).writeInt32(1).writeString('t').writeInt32(1).writeInt32(3).writeInt16(code)
      .buffer as Buffer;

  it('resolves when the broker accepted every partition', async () => {
    const r = generationCommitRequest(commit).response;
    await expect(r.parse(await r.decode(response(0)))).resolves.toBeUndefined();
  });

  it.each([
    [22, 'ILLEGAL_GENERATION'],
    [25, 'UNKNOWN_MEMBER_ID'],
    [27, 'REBALANCE_IN_PROGRESS'],
  ])('throws the refusal %i as %s (the committer fences on it)', async (code, type) => {
    const r = generationCommitRequest(commit).response;
    await expect(r.parse(await r.decode(response(code)))).rejects.toMatchObject({ type });
  });
});

describe('broker capabilities and sending', () => {
  it('uses a version only when the broker advertises it', () => {
    const broker: ProtocolBroker = { versions: { 9: { minVersion: 1, maxVersion: 7 } } };
    expect(brokerSupports(broker, 9, 8)).toBe(false);
    expect(brokerSupports(broker, 9, 7)).toBe(true);
    expect(brokerSupports(broker, 10, 4)).toBe(false);
    expect(brokerSupports({ versions: null }, 9, 1)).toBe(false);
  });

  it("sends through the broker's private send when present, else its connection pool", async () => {
    const sym = Symbol('private:Broker:sendRequest');
    class FakeBroker {
      sent: unknown[] = [];
      async [sym](req: unknown) {
        this.sent.push(req);
        return 'via-broker';
      }
    }
    const b = new FakeBroker();
    const req = findCoordinatorsRequest(['g']);
    await expect(sendProtocolRequest(b as unknown as ProtocolBroker, req)).resolves.toBe('via-broker');
    expect(b.sent).toEqual([req]);
    const pool = { send: jest.fn(async () => 'via-pool') };
    await expect(sendProtocolRequest({ connectionPool: pool }, req)).resolves.toBe('via-pool');
  });
});
