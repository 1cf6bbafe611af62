import { readyPart as ok, statusSpec, workerDeployment } from '../../../test/fixtures/status-testing';
import { toPodView } from './pod-view';
import { computeStatus } from './compute';

const spec = statusSpec();
const dep = workerDeployment(0);
const crashing = toPodView({
  metadata: {
    name: 'fw-worker-x',
    namespace: 'logs',
    resourceVersion: '3',
    labels: { 'logpipeline.io/pipeline': 'fw' },
  },
  status: {
    containerStatuses: [
      {
        ready: false,
        restartCount: 2,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: {
          terminated: { exitCode: 1, message: 'KafkaJSNotImplemented: Snappy compression not implemented' },
        },
      },
    ],
  },
});
const byType = (cs: Array<{ type: string }>) => new Map(cs.map((c) => [c.type, c]));

describe('computeStatus', () => {
  test('a crash-looping worker pod is WorkersReady False, Ready False with its words, and Stalled', () => {
    const c = byType(
      computeStatus(spec, dep, ok('TopicReady'), ok('TableReady'), undefined, undefined, { pods: [crashing] })
        .conditions,
    );
    const message =
      'worker pod fw-worker-x: CrashLoopBackOff, last exit 1: KafkaJSNotImplemented: Snappy compression not implemented, 2 restarts';
    expect(c.get('WorkersReady')).toEqual({
      type: 'WorkersReady',
      status: 'False',
      reason: 'WorkerCrashLoop',
      message,
    });
    expect(c.get('Ready')).toMatchObject({ status: 'False', reason: 'WorkersNotReady', message });
    expect(c.get('Stalled')).toMatchObject({ status: 'True', reason: 'WorkerCrashLoop', message });
    expect(c.get('Reconciling')).toMatchObject({ status: 'False' });
  });

  test('a stalled partition makes the pipeline Stalled; otherwise a not-ready pipeline is Reconciling', () => {
    const stall = { reason: 'PartitionStalled', message: 'partition 0 has not moved for 10m0s' };
    const stalled = byType(
      computeStatus(spec, dep, ok('TopicReady'), ok('TableReady'), undefined, undefined, {
        partitionStall: stall,
      }).conditions,
    );
    expect(stalled.get('Stalled')).toMatchObject({ status: 'True', ...stall });
    const waiting = byType(
      computeStatus(spec, dep, ok('TopicReady'), ok('TableReady'), undefined).conditions,
    );
    expect(waiting.get('Stalled')).toMatchObject({ status: 'False', reason: 'NoStall' });
    expect(waiting.get('Reconciling')).toMatchObject({ status: 'True', reason: 'WorkersNotReady' });
  });

  test('an unreachable Kafka is named in TopicReady, WorkersReady, Ready and Reconciling, not Stalled', () => {
    const cause = 'cannot connect to Kafka kafka:9092: Connection error: connect ECONNREFUSED';
    const c = byType(
      computeStatus(spec, dep, ok('TopicReady'), ok('TableReady'), undefined, undefined, {
        kafkaUnreachable: cause,
      }).conditions,
    );
    const named = `Kafka unreachable: ${cause}`;
    expect(c.get('TopicReady')).toMatchObject({
      status: 'False',
      reason: 'KafkaUnreachable',
      message: named,
    });
    expect(c.get('WorkersReady')).toMatchObject({
      status: 'False',
      reason: 'KafkaUnreachable',
      message: `${named} (0 of 1 workers ready)`,
    });
    expect(c.get('Ready')).toMatchObject({ status: 'False', reason: 'TopicNotReady', message: named });
    // An outage is waited out (kstatus InProgress), not a failed rollout.
    expect(c.get('Stalled')).toMatchObject({ status: 'False', reason: 'NoStall' });
    expect(c.get('Reconciling')).toMatchObject({ status: 'True', message: named });
    // A crash loop says more than the outage: its own words stay.
    const crash = byType(
      computeStatus(spec, dep, ok('TopicReady'), ok('TableReady'), undefined, undefined, {
        pods: [crashing],
        kafkaUnreachable: cause,
      }).conditions,
    );
    expect(crash.get('WorkersReady')).toMatchObject({ reason: 'WorkerCrashLoop' });
  });

  test('records lost to retention are named in WorkersReady; Ready stays True and nothing is Stalled', () => {
    const loss = 'topic logs.fw: 900 offsets deleted by retention before the pipeline consumed them (...)';
    const ready = byType(
      computeStatus(spec, workerDeployment(1), ok('TopicReady'), ok('TableReady'), undefined, undefined, {
        retentionLoss: loss,
      }).conditions,
    );
    expect(ready.get('WorkersReady')).toMatchObject({
      status: 'True',
      reason: 'RecordsExpiredUnconsumed',
      message: loss,
    });
    expect(ready.get('Ready')).toMatchObject({ status: 'True' });
    expect(ready.get('Stalled')).toMatchObject({ status: 'False' });
    // Workers not ready: their own reason explains why they fell behind; the loss is added.
    const down = byType(
      computeStatus(spec, dep, ok('TopicReady'), ok('TableReady'), undefined, undefined, {
        retentionLoss: loss,
      }).conditions,
    );
    expect(down.get('WorkersReady')).toMatchObject({ status: 'False', reason: 'WorkersUnavailable' });
    expect((down.get('WorkersReady') as unknown as { message: string }).message).toMatch(
      /; topic logs\.fw: 900 offsets/,
    );
  });
});
