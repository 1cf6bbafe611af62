import { describeBrokerLimit, TimedValue } from './kafka-broker-limit';
import type { BatchBroker, TopicConfigEntry } from './kafka-topic-wire';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs ships its protocol codec as plain JS modules */
const describeConfigs = require('kafkajs/src/protocol/requests/describeConfigs') as {
  protocol(v: { version: number }): (req: object) => {
    request: { encode(): Promise<{ buffer: Buffer }> };
  };
};
/* eslint-enable @typescript-eslint/no-require-imports */

type Ask = Parameters<BatchBroker['describeConfigs']>[0];

/** A broker that records what it was asked and answers with `entries`. */
function broker(nodeId: number | null, entries: TopicConfigEntry[], asked: Ask[] = []): BatchBroker {
  return {
    nodeId,
    createTopics: async () => {
      throw new Error('unused');
    },
    describeConfigs: async (req) => {
      asked.push(req);
      return { resources: [{ resourceName: String(nodeId), configEntries: entries }] };
    },
  };
}
const entry = (configName: string, configValue: string): TopicConfigEntry => ({
  configName,
  configValue,
  configSource: 4,
  isSensitive: false,
});

describe('describeBrokerLimit', () => {
  it('asks the answering broker for its own message.max.bytes (BROKER resource named by its id) and reads it', async () => {
    const asked: Ask[] = [];
    const limit = await describeBrokerLimit(broker(3, [entry('message.max.bytes', '2097152')], asked));
    expect(limit).toBe(2_097_152);
    expect(asked).toEqual([
      {
        includeSynonyms: false,
        resources: [{ type: 4, name: '3', configNames: ['message.max.bytes'] }],
      },
    ]);
    // What kafkajs puts on the wire for it (DescribeConfigs v0, the protocol's layout): one
    // resource, type int8 4, name "3", a one-element array of config names.
    const { request } = describeConfigs.protocol({ version: 0 })(asked[0]);
    const bytes = (await request.encode()).buffer;
    const name = Buffer.from('message.max.bytes');
    expect(bytes).toEqual(
      Buffer.concat([
        Buffer.from([0, 0, 0, 1]), // resources: 1
        Buffer.from([4]), // resource_type: BROKER
        Buffer.from([0, 1]),
        Buffer.from('3'), // resource_name
        Buffer.from([0, 0, 0, 1]), // config_names: 1
        Buffer.from([0, name.length]),
        name,
      ]),
    );
  });

  it('is undefined when the broker has no id or does not give a size', async () => {
    const asked: Ask[] = [];
    expect(await describeBrokerLimit(broker(null, [entry('message.max.bytes', '1')], asked))).toBeUndefined();
    expect(asked).toEqual([]);
    expect(await describeBrokerLimit(broker(1, []))).toBeUndefined();
    expect(await describeBrokerLimit(broker(1, [entry('message.max.bytes', 'x')]))).toBeUndefined();
    expect(await describeBrokerLimit(broker(1, [entry('message.max.bytes', '-1')]))).toBeUndefined();
  });
});

describe('TimedValue', () => {
  it('reads once per period; callers meanwhile share the read', async () => {
    let clock = 0;
    let reads = 0;
    const v = new TimedValue(
      async () => ++reads,
      1_000,
      () => clock,
    );
    expect(await Promise.all([v.get(), v.get(), v.get()])).toEqual([1, 1, 1]);
    clock = 999;
    expect(await v.get()).toBe(1);
    clock = 1_000;
    expect(await v.get()).toBe(2);
    v.clear();
    expect(await v.get()).toBe(3);
    expect(reads).toBe(3);
  });

  it('remembers a failed read as undefined for the period (the caller falls back), then reads again', async () => {
    let clock = 0;
    let fail = true;
    let reads = 0;
    const v = new TimedValue(
      async () => {
        reads++;
        if (fail) throw new Error('CLUSTER_AUTHORIZATION_FAILED');
        return 7;
      },
      1_000,
      () => clock,
    );
    expect(await v.get()).toBeUndefined();
    fail = false;
    expect(await v.get()).toBeUndefined();
    expect(reads).toBe(1);
    clock = 1_000;
    expect(await v.get()).toBe(7);
    expect(reads).toBe(2);
  });
});
