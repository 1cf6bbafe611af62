import { ConfigSource, type ConfigEntries } from 'kafkajs';
import type { TopicSpec } from '../desired/topic';
import { maxMessageBytesOf } from './kafka-topic';

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
