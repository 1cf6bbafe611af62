import { metadataRequest } from '../../operator/src/apply/kafka-metadata';
import { metadataAsk } from './kafka-wire-tap';

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
