import { resolveSpec } from '../api/defaults';
import type { KafkaSpec } from '../api/types';
import { pipeline } from '../../../test/fixtures/clickhouse-testing';
import { buildDeadLetterTopicSpec, buildTopicSpec } from './topic';

function spec(topic: KafkaSpec['topic'], deadLetter?: { enabled?: boolean; topic?: string }) {
  const lp = pipeline({}, deadLetter ? { deadLetter } : {});
  lp.spec.kafka.topic = topic;
  return resolveSpec(lp);
}

describe('buildTopicSpec', () => {
  it('defaults the name, partitions, replication and lz4 compression', () => {
    expect(buildTopicSpec(spec(undefined))).toEqual({
      ok: true,
      value: {
        topic: 'isp.fw',
        numPartitions: 6,
        replicationFactor: 1,
        configEntries: [{ name: 'compression.type', value: 'lz4' }],
      },
    });
  });

  it('manages exactly the configured keys plus compression.type, sorted', () => {
    const r = buildTopicSpec(
      spec({
        name: 'fw-logs',
        partitions: 48,
        replicationFactor: 3,
        config: { 'retention.ms': '604800000', 'compression.type': 'zstd' },
      }),
    );
    expect(r.ok && r.value).toEqual({
      topic: 'fw-logs',
      numPartitions: 48,
      replicationFactor: 3,
      configEntries: [
        { name: 'compression.type', value: 'zstd' },
        { name: 'retention.ms', value: '604800000' },
      ],
    });
  });

  it.each([
    [{ name: 'a b' }, 'InvalidTopic'],
    [{ name: '..' }, 'InvalidTopic'],
    [{ name: 'x'.repeat(250) }, 'InvalidTopic'],
    [{ partitions: 0 }, 'InvalidTopic'],
    [{ partitions: 1.5 }, 'InvalidTopic'],
    [{ replicationFactor: 0 }, 'InvalidTopic'],
    [{ config: { 'Retention.MS': '1' } }, 'InvalidTopicConfig'],
    [{ config: { 'retention.ms\n': '1' } }, 'InvalidTopicConfig'],
  ])('rejects %j with %s', (topic, reason) => {
    const r = buildTopicSpec(spec(topic as KafkaSpec['topic']));
    expect(r.ok ? 'ok' : r.reason).toBe(reason);
  });
});

describe('buildDeadLetterTopicSpec', () => {
  it('mirrors the partition count and manages compression only', () => {
    const r = buildDeadLetterTopicSpec(spec({ partitions: 12, config: { 'retention.ms': '1' } }));
    expect(r).toEqual({
      ok: true,
      value: {
        topic: 'isp.fw.dlq',
        numPartitions: 12,
        replicationFactor: 1,
        configEntries: [{ name: 'compression.type', value: 'lz4' }],
      },
    });
  });

  it('is absent when the dead-letter queue is disabled', () => {
    expect(buildDeadLetterTopicSpec(spec(undefined, { enabled: false }))).toBeUndefined();
  });
});
