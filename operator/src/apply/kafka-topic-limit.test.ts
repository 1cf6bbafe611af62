import { ConfigSource, type ConfigEntries } from 'kafkajs';
import type { TopicSpec } from '../desired/topic';
import { ensureTopicBatched } from './kafka-topic';
import { maxMessageBytesOf } from './kafka-topic-config';
import type { TopicBatcher, TopicConfigEntry } from './kafka-topic-batch';

const entry = (configName: string, configValue: string, configSource: ConfigSource): ConfigEntries =>
  ({
    configName,
    configValue,
    configSource,
    readOnly: false,
    isDefault: false,
    isSensitive: false,
  }) as ConfigEntries;

const spec = (configEntries: TopicSpec['configEntries']) =>
  ({ topic: 't', numPartitions: 1, replicationFactor: 1, configEntries }) as TopicSpec;

describe('maxMessageBytesOf', () => {
  it("takes the spec's managed value (just written), else the broker's effective value", () => {
    const broker = [entry('max.message.bytes', '1048588', ConfigSource.DEFAULT_CONFIG)];
    expect(maxMessageBytesOf(broker, spec([]))).toBe(1_048_588);
    expect(maxMessageBytesOf(broker, spec([{ name: 'max.message.bytes', value: '2097152' }]))).toBe(
      2_097_152,
    );
    const own = [entry('max.message.bytes', '524288', ConfigSource.TOPIC_CONFIG)];
    expect(maxMessageBytesOf(own, spec([]))).toBe(524_288);
  });

  it('is undefined when the broker did not say or said something that is not a size', () => {
    expect(maxMessageBytesOf([], spec([]))).toBeUndefined();
    expect(
      maxMessageBytesOf([entry('max.message.bytes', 'x', ConfigSource.DEFAULT_CONFIG)], spec([])),
    ).toBeUndefined();
  });
});

/** A batcher that creates every topic and answers configs with the broker default 1048588. */
function creatingBatcher(reads: string[]): TopicBatcher {
  const fake = {
    creates: { get: async () => ({ created: true }) },
    describes: { get: async () => undefined },
    configs: {
      get: async (topic: string): Promise<TopicConfigEntry[]> => {
        reads.push(topic);
        return [
          { configName: 'max.message.bytes', configValue: '1048588', configSource: 5, isSensitive: false },
        ];
      },
    },
  };
  return fake as unknown as TopicBatcher;
}

const fwSpec = (configEntries: TopicSpec['configEntries'] = []): TopicSpec => ({
  topic: 'fw.logs',
  numPartitions: 3,
  replicationFactor: 1,
  configEntries,
});
const noAdmin = async () => {
  throw new Error('no admin call expected');
};

describe('ensureTopicBatched: the max.message.bytes of a topic created just now', () => {
  it('is read from the broker (batched configs) when a receiver needs it and the spec leaves it to the default', async () => {
    const reads: string[] = [];
    const out = await ensureTopicBatched(creatingBatcher(reads), noAdmin, fwSpec(), undefined, 'c1', true);
    expect(out.created).toBe(true);
    expect(reads).toEqual(['fw.logs']);
    expect(out.maxMessageBytes).toBe(1048588);
    expect(out.changes).toEqual(['created with 3 partitions']);
  });

  it('is taken from the spec without a read when the spec sets it', async () => {
    const reads: string[] = [];
    const out = await ensureTopicBatched(
      creatingBatcher(reads),
      noAdmin,
      fwSpec([{ name: 'max.message.bytes', value: '2097152' }]),
      undefined,
      'c1',
      true,
    );
    expect(reads).toEqual([]);
    expect(out.maxMessageBytes).toBe(2097152);
  });

  it('is not read for a pipeline without a receiver (creation stays one batched CreateTopics)', async () => {
    const reads: string[] = [];
    const out = await ensureTopicBatched(creatingBatcher(reads), noAdmin, fwSpec(), undefined, 'c1', false);
    expect(reads).toEqual([]);
    expect(out.maxMessageBytes).toBeUndefined();
    expect(out.ready).toBe(true);
  });
});

describe("ensureTopicBatched: a new topic's limit is the broker's message.max.bytes", () => {
  /** creatingBatcher whose broker says `limit` (newTopicLimit), counting the asks. */
  const withBroker = (reads: string[], limit: number | undefined, asks: { n: number }) =>
    ({
      ...(creatingBatcher(reads) as unknown as Record<string, unknown>),
      newTopicLimit: async () => {
        asks.n++;
        return limit;
      },
    }) as unknown as TopicBatcher;

  it('takes it without reading the topic back (no DescribeConfigs of the topic, nothing pending)', async () => {
    const reads: string[] = [];
    const asks = { n: 0 };
    const out = await ensureTopicBatched(
      withBroker(reads, 2_000_000, asks),
      noAdmin,
      fwSpec(),
      undefined,
      'c1',
      true,
    );
    expect(reads).toEqual([]);
    expect(asks.n).toBe(1);
    expect(out).toMatchObject({ ready: true, created: true, maxMessageBytes: 2_000_000 });
    expect(out.limitPending).toBeUndefined();
    expect(out.changes).toEqual(['created with 3 partitions']);
  });

  it('is not asked for when the spec sets the limit, nor for a topic that already existed', async () => {
    const asks = { n: 0 };
    const set = await ensureTopicBatched(
      withBroker([], 2_000_000, asks),
      noAdmin,
      fwSpec([{ name: 'max.message.bytes', value: '2097152' }]),
      undefined,
      'c1',
      true,
    );
    expect(set.maxMessageBytes).toBe(2_097_152);
    // An existing topic may carry someone's override: its own configs are read.
    const reads: string[] = [];
    const existing = await ensureTopicBatched(
      withBroker(reads, 2_000_000, asks),
      noAdmin,
      fwSpec(),
      { partitions: 3, replicas: 1 },
      'c1',
      true,
    );
    expect(reads).toEqual(['fw.logs']);
    expect(existing.maxMessageBytes).toBe(1_048_588);
    expect(asks.n).toBe(0);
  });

  it('falls back to reading the new topic back when the broker did not say', async () => {
    const reads: string[] = [];
    const out = await ensureTopicBatched(
      withBroker(reads, undefined, { n: 0 }),
      noAdmin,
      fwSpec(),
      undefined,
      'c1',
      true,
    );
    expect(reads).toEqual(['fw.logs']);
    expect(out.maxMessageBytes).toBe(1_048_588);
  });
});

describe('ensureTopicBatched: a topic the broker cannot describe right after creating it', () => {
  it('is not a failure when the broker cannot describe the new topic yet (read next time)', async () => {
    const batch = {
      ...(creatingBatcher([]) as unknown as Record<string, unknown>),
      configs: {
        get: async () => {
          throw new Error('UNKNOWN_TOPIC_OR_PARTITION');
        },
      },
    } as unknown as TopicBatcher;
    const created: string[] = [];
    const out = await ensureTopicBatched(batch, noAdmin, fwSpec(), undefined, 'c1', true, () =>
      created.push('fw.logs'),
    );
    // Said as soon as it was created: the caller keeps the topic as its own for the owner record.
    expect(created).toEqual(['fw.logs']);
    expect(out).toMatchObject({ ready: true, created: true, limitPending: true });
    expect(out.maxMessageBytes).toBeUndefined();
  });
});
