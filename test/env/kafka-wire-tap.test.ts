import { metadataRequest } from '../../operator/src/apply/kafka-metadata';
import { metadataAsk, responseHeads } from './kafka-wire-tap';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs ships its protocol as plain JS modules */
type Req = { apiKey: number; apiVersion: number; encode(): Promise<unknown> };
const frame = require('kafkajs/src/protocol/request') as (r: {
  correlationId: number;
  clientId: string;
  request: Req;
}) => Promise<{ buffer: Buffer }>;
const { protocol } = require('kafkajs/src/protocol/requests/metadata') as {
  protocol(v: { version: number }): (o: { topics: string[]; allowAutoTopicCreation: boolean }) => {
    request: Req;
  };
};
/* eslint-enable @typescript-eslint/no-require-imports */

const bytes = async (request: Req) => (await frame({ correlationId: 7, clientId: 'op', request })).buffer;

describe('wire tap: Metadata requests as written on the socket', () => {
  it("reads the topics our Metadata v6 names, and kafkajs's empty list as every topic", async () => {
    expect(metadataAsk(await bytes(metadataRequest(['a.b', 'c']).request))).toEqual(['a.b', 'c']);
    expect(metadataAsk(await bytes(metadataRequest([]).request))).toEqual([]);
    const ask = (topics: string[]) =>
      protocol({ version: 6 })({ topics, allowAutoTopicCreation: false }).request;
    expect(metadataAsk(await bytes(ask(['x'])))).toEqual(['x']);
    expect(metadataAsk(await bytes(ask([])))).toBe('all');
    const other = { apiKey: 2, apiVersion: 1, encode: metadataRequest(['a']).request.encode };
    expect(metadataAsk(await bytes(other))).toBeUndefined();
  });
});

describe('wire tap: responses as received', () => {
  it('finds each response frame however the stream is cut into chunks', () => {
    const response = (corr: number, body: number) => {
      const b = Buffer.alloc(8 + body, 0xee);
      b.writeInt32BE(4 + body, 0);
      b.writeInt32BE(corr, 4);
      return b;
    };
    const stream = Buffer.concat([response(1, 0), response(2, 70_000), response(3, 5)]);
    for (const cut of [1, 3, 7, 8, 1000, stream.length]) {
      const seen: Array<[number, number]> = [];
      const feed = responseHeads((corr, bytes) => seen.push([corr, bytes]));
      for (let at = 0; at < stream.length; at += cut) feed(stream.subarray(at, at + cut));
      expect(seen).toEqual([
        [1, 8],
        [2, 70_008],
        [3, 13],
      ]);
    }
  });
});
