/**
 * Say why, across a Kafka outage (house rule "every failure a user can hit ends as a condition
 * message + Event naming the cause"), on the real bed: the operator with every part, the pod
 * runner, a real worker and a real syslog receiver, Kafka stopped under them.
 *
 * The worker and the receiver retry an unreachable Kafka without limit and only turn unready; the
 * operator's own Kafka observer finds the cluster unreachable, so TopicReady, WorkersReady and
 * IngestReady say KafkaUnreachable with the broker error, Ready's and Reconciling's messages name
 * it (kstatus InProgress: an outage is waited out, not a failed rollout), and a Warning Event does
 * too. Once Kafka is back, the pipeline is Ready again and rows flow.
 */
import type { LogPipeline, LogPipelineSpec } from '../operator/src/api/types';
import { restartKafka, stopKafka } from './env/kafka';
import { kstatus } from './env/kstatus';
import { freePort } from './env/process';
import { readTestBed, writeTestBed } from './env/testbed';
import { produce, scaleEvents, startLoop, stopLoop, storedRows, type Loop } from './autoscale-harness';
import { condition, createPipeline, getPipeline, pipeline, waitFor } from './operator-harness';

jest.setTimeout(420_000);

let loop: Loop | undefined;
let kafkaStopped = false;

beforeAll(async () => {
  loop = await startLoop('kout');
});

afterAll(async () => {
  if (kafkaStopped) writeTestBed({ ...readTestBed(), kafka: await restartKafka(readTestBed().kafka!) });
  await stopLoop(loop);
});

function spec(l: Loop, port: number): LogPipelineSpec {
  return {
    kafka: {
      bootstrapServers: [l.bed.kafka!.bootstrap],
      topic: { name: `${l.namespace}.fw`, partitions: 1 },
    },
    clickhouse: {
      url: l.bed.clickhouse!.url,
      credentialsSecretRef: { name: 'ch' },
      database: l.database,
      table: 'fw',
    },
    deletionPolicy: 'Delete',
    // A short progress deadline makes the operator observe Kafka every 5 s (a quarter of it).
    workers: { replicas: 1, batch: { maxDelay: '300ms' }, progressDeadline: '20s' },
    ingest: { syslog: { listeners: [{ name: 'tcp', protocol: 'TCP', port }], replicas: 1 } },
  };
}

function until(l: Loop, what: string, pred: (lp: LogPipeline) => boolean, ms = 180_000) {
  return waitFor(
    what,
    async () => {
      const lp = await getPipeline(l.namespace, 'fw');
      return lp && pred(lp) ? lp : undefined;
    },
    ms,
  );
}

test('an unreachable Kafka is named in the conditions and an Event, and the pipeline recovers', async () => {
  const l = loop!;
  await createPipeline({ ...pipeline(l.namespace, 'fw'), spec: spec(l, await freePort()) });
  await until(l, 'Ready with the receiver', (lp) => condition(lp, 'Ready')?.status === 'True');

  await stopKafka(l.bed.kafka!);
  kafkaStopped = true;
  const down = await until(l, 'KafkaUnreachable on topic, workers and receiver', (lp) =>
    ['TopicReady', 'WorkersReady', 'IngestReady'].every(
      (t) => condition(lp, t)?.reason === 'KafkaUnreachable',
    ),
  );
  const named = /^Kafka unreachable: \S.*/;
  expect(condition(down, 'TopicReady')).toMatchObject({
    status: 'False',
    message: expect.stringMatching(named),
  });
  expect(condition(down, 'WorkersReady')).toMatchObject({
    status: 'False',
    message: expect.stringMatching(/^Kafka unreachable: \S.* \(0 of 1 workers ready\)$/),
  });
  expect(condition(down, 'IngestReady')).toMatchObject({
    status: 'False',
    message: expect.stringMatching(/^Kafka unreachable: \S.* \(0 of 1 receivers ready/),
  });
  expect(condition(down, 'Ready')).toMatchObject({ status: 'False', message: expect.stringMatching(named) });
  // An outage is waited out: InProgress with the cause, not a failed rollout.
  expect(condition(down, 'Stalled')).toMatchObject({ status: 'False' });
  expect(condition(down, 'Reconciling')).toMatchObject({
    status: 'True',
    message: expect.stringMatching(named),
  });
  expect(kstatus(down).status).toBe('InProgress');
  // The broker's own words are in it: the address the operator could not reach.
  expect(condition(down, 'TopicReady')?.message).toContain(l.bed.kafka!.bootstrap);
  const event = await waitFor(
    'KafkaUnreachable Event',
    async () =>
      (await scaleEvents(l, 'fw')).find((e) => e.reason === 'KafkaUnreachable' && e.type === 'Warning'),
    60_000,
  );
  expect(event.message).toMatch(/Kafka unreachable: \S/);

  writeTestBed({ ...readTestBed(), kafka: await restartKafka(l.bed.kafka!) });
  kafkaStopped = false;
  const back = await until(
    l,
    'Ready again',
    (lp) => condition(lp, 'Ready')?.status === 'True' && condition(lp, 'Stalled')?.status === 'False',
  );
  for (const t of ['TopicReady', 'WorkersReady', 'IngestReady'])
    expect(condition(back, t)).toMatchObject({ status: 'True' });
  await produce(l, 'fw', 50, 1, 1);
  await waitFor(
    'rows stored after the outage',
    async () => (await storedRows(l, 'fw')).rows >= 50 || undefined,
    120_000,
  );
});
