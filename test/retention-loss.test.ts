/**
 * Records deleted by Kafka's retention before the pipeline consumed them are said loudly (doctrine
 * "Say why"), on the real bed: the group has a committed offset, the records past it are deleted
 * (kafka-delete-records, as retention does when the workers lag past retention.ms or are stopped
 * too long), and the operator's observation names the loss in WorkersReady and a Warning Event
 * RecordsExpiredUnconsumed (topic, partition, offsets lost). Progress is not stopped, so the
 * pipeline stays Ready and not Stalled; once the group is past the log start the condition clears.
 */
import { produce, scaleEvents, startLoop, stopLoop, type Loop } from './autoscale-harness';
import { condition, createPipeline, getPipeline, pipeline, waitFor } from './operator-harness';
import { kafkaClient } from './worker-support';
import type { LogPipeline } from '../operator/src/api/types';

jest.setTimeout(240_000);

let loop: Loop | undefined;

beforeAll(async () => {
  loop = await startLoop('retloss');
});

afterAll(async () => {
  await stopLoop(loop);
});

function until(l: Loop, name: string, what: string, pred: (lp: LogPipeline) => boolean) {
  return waitFor(
    `${name}: ${what}`,
    async () => {
      const lp = await getPipeline(l.namespace, name);
      return lp && pred(lp) ? lp : undefined;
    },
    120_000,
  );
}

test('records deleted before they were consumed: WorkersReady names them, a Warning Event records them', async () => {
  const l = loop!;
  const name = 'expire';
  const topic = `${l.namespace}.${name}`;
  const group = `logpipeline.${l.namespace}.${name}`;
  await createPipeline({
    ...pipeline(l.namespace, name),
    spec: {
      kafka: { bootstrapServers: [l.bed.kafka!.bootstrap], topic: { name: topic, partitions: 1 } },
      clickhouse: {
        url: l.bed.clickhouse!.url,
        credentialsSecretRef: { name: 'ch' },
        database: l.database,
        table: name,
      },
      deletionPolicy: 'Delete',
      // No worker runs: the group's committed offset stays where the test puts it (a stopped worker).
      workers: { replicas: 0, autoscaling: { enabled: false, pollInterval: '1s' } },
    },
  });
  await until(l, name, 'Ready', (lp) => condition(lp, 'Ready')?.status === 'True');
  await produce(l, name, 20, 7, 1);

  const admin = kafkaClient(l.bed, 'retloss-admin').admin();
  await admin.connect();
  try {
    const [{ high }] = await admin.fetchTopicOffsets(topic);
    const end = Number(high);
    expect(end).toBeGreaterThanOrEqual(20);
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '3' }] });
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(end) }] });

    const lost = await until(
      l,
      name,
      'WorkersReady RecordsExpiredUnconsumed',
      (lp) => condition(lp, 'WorkersReady')?.reason === 'RecordsExpiredUnconsumed',
    );
    const words = `topic ${topic}: ${end - 3} offsets deleted by retention before the pipeline consumed them (partition 0: committed 3, log start ${end}, ${end - 3} lost)`;
    expect(condition(lost, 'WorkersReady')).toMatchObject({ status: 'True' });
    expect(condition(lost, 'WorkersReady')!.message).toContain(words);
    expect(condition(lost, 'Ready')?.status).toBe('True');
    expect(condition(lost, 'Stalled')?.status).toBe('False');
    const event = await waitFor('RecordsExpiredUnconsumed Event', async () =>
      (await scaleEvents(l, name)).find((e) => e.reason === 'RecordsExpiredUnconsumed'),
    );
    expect(event.type).toBe('Warning');
    expect(event.message).toContain(words);

    // The group moves past the log start (a worker resumed there): the condition clears.
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: String(end) }] });
    await until(l, name, 'WorkersReady back to ScaledToZero', (lp) => {
      const c = condition(lp, 'WorkersReady');
      return c?.reason === 'ScaledToZero' && c.status === 'True';
    });
    expect((await scaleEvents(l, name)).filter((e) => e.reason === 'RecordsExpiredUnconsumed')).toHaveLength(
      1,
    );

    // What kafkajs commits when a running worker's fetch finds its position deleted: -2 without
    // metadata (test/worker-offset-reset.test.ts shows the real worker doing it). A new occurrence.
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '-2' }] });
    const reset = await until(l, name, 'WorkersReady names the reset', (lp) =>
      /jumped to the log start/.test(condition(lp, 'WorkersReady')?.message ?? ''),
    );
    expect(condition(reset, 'WorkersReady')).toMatchObject({
      status: 'True',
      reason: 'RecordsExpiredUnconsumed',
    });
    expect(condition(reset, 'WorkersReady')!.message).toContain(
      `topic ${topic}: an unknown number of offsets deleted by retention before the pipeline consumed them (partition 0: a worker found its position deleted and jumped to the log start ${end})`,
    );
    const events = await waitFor('second RecordsExpiredUnconsumed Event', async () => {
      const list = (await scaleEvents(l, name)).filter((e) => e.reason === 'RecordsExpiredUnconsumed');
      return list.length === 2 ? list : undefined;
    });
    expect(events[1].type).toBe('Warning');
  } finally {
    await admin.disconnect();
  }
});
