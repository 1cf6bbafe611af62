import { kafkaLogCreator } from './worker-parts';
import { WorkerMetrics } from './observability/metrics';

describe('kafkajs offset reset', () => {
  test('the reset log line counts per partition; other lines only log', async () => {
    const metrics = new WorkerMetrics(false);
    const log = { warn: jest.fn() };
    const write = kafkaLogCreator(log as never, (partition) =>
      metrics.offsetResets.inc({ partition: String(partition) }),
    )();
    // As kafkajs 2.2.4 logs it (consumerGroup.js recoverFromOffsetOutOfRange): extra fields spread into the entry.
    const entry = (message: string, partition?: number) => ({
      namespace: 'ConsumerGroup',
      level: 1,
      label: 'ERROR',
      log: { timestamp: 't', logger: 'kafkajs', message, topic: 'logs.fw', partition, groupId: 'g' },
    });
    write(entry('Offset out of range, resetting to default offset', 3));
    write(entry('Offset out of range, resetting to default offset', 3));
    write(entry('Offset out of range, resetting to default offset', 0));
    write(entry('Offset out of range while fetching from follower, retrying with leader', 1));
    write(entry('Connection error', undefined));
    const text = await metrics.render();
    expect(text).toContain('logpipeline_worker_offset_resets_total{partition="3"} 2');
    expect(text).toContain('logpipeline_worker_offset_resets_total{partition="0"} 1');
    expect(text).not.toContain('logpipeline_worker_offset_resets_total{partition="1"}');
    expect(log.warn).toHaveBeenCalledTimes(5);
  });
});
