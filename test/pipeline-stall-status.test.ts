/**
 * Stalls are visible and GitOps-readable (issue 12, item 7), on the real bed: the operator with
 * every part, the pod runner filling Pod statuses like the kubelet, real workers, Kafka and
 * ClickHouse. The kstatus verdict comes from the real library (sigs.k8s.io/cli-utils).
 *
 * - a healthy pipeline is Current; one whose broker does not answer is InProgress;
 * - a worker that exits on a fatal error (an RSA signing key where Ed25519 is required) crash-loops:
 *   its termination message reaches the Pod, WorkersReady/Ready and a Warning Event, and the
 *   pipeline is Stalled (Failed);
 * - a partition whose inserts keep failing (the workers cut off ClickHouse) is Stalled after
 *   spec.workers.progressDeadline, naming the partition; it recovers once the inserts do.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { LogPipeline, LogPipelineSpec } from '../operator/src/api/types';
import { kstatus } from './env/kstatus';
import { readTestBed } from './env/testbed';
import { produce, scaleEvents, startLoop, stopLoop, TcpProxy, type Loop } from './autoscale-harness';
import {
  apis,
  condition,
  createPipeline,
  createSecret,
  getPipeline,
  pipeline,
  waitFor,
} from './operator-harness';

jest.setTimeout(300_000);

const proxy = new TcpProxy(new URL(readTestBed().clickhouse!.url));
let loop: Loop | undefined;

beforeAll(async () => {
  await proxy.open();
  // The workers reach ClickHouse through the proxy; crash back-off 1 s instead of the kubelet's 10 s.
  loop = await startLoop(
    'stall-st',
    { LP_CLICKHOUSE_URL: `http://127.0.0.1:${proxy.port}` },
    { crashBackoff: { baseMs: 1_000 } },
  );
});

afterAll(async () => {
  await proxy.open().catch(() => undefined);
  await stopLoop(loop);
  await proxy.cut();
});

function spec(l: Loop, name: string, extra: Partial<LogPipelineSpec> = {}): LogPipelineSpec {
  return {
    kafka: {
      bootstrapServers: [l.bed.kafka!.bootstrap],
      topic: { name: `${l.namespace}.${name}`, partitions: 1 },
    },
    clickhouse: {
      url: l.bed.clickhouse!.url,
      credentialsSecretRef: { name: 'ch' },
      database: l.database,
      table: name.replace(/-/g, '_'),
    },
    deletionPolicy: 'Delete',
    ...extra,
    workers: { replicas: 1, batch: { maxDelay: '300ms' }, ...extra.workers },
  };
}

async function create(l: Loop, name: string, s: LogPipelineSpec): Promise<void> {
  await createPipeline({ ...pipeline(l.namespace, name), spec: s });
}

/** Waits until the pipeline satisfies `pred`; returns it. */
function until(l: Loop, name: string, what: string, pred: (lp: LogPipeline) => boolean, ms = 120_000) {
  return waitFor(
    `${name}: ${what}`,
    async () => {
      const lp = await getPipeline(l.namespace, name);
      return lp && pred(lp) ? lp : undefined;
    },
    ms,
  );
}

test('a healthy pipeline is Current; one whose broker does not answer is InProgress', async () => {
  const l = loop!;
  await create(l, 'healthy', spec(l, 'healthy'));
  await create(l, 'nobroker', { ...spec(l, 'nobroker'), kafka: { bootstrapServers: ['127.0.0.1:1'] } });
  const healthy = await until(l, 'healthy', 'Ready', (lp) => condition(lp, 'Ready')?.status === 'True');
  expect(condition(healthy, 'Stalled')?.status).toBe('False');
  expect(condition(healthy, 'Reconciling')?.status).toBe('False');
  expect(kstatus(healthy).status).toBe('Current');

  const waiting = await until(
    l,
    'nobroker',
    'TopicReady False',
    (lp) => condition(lp, 'TopicReady')?.status === 'False',
  );
  expect(condition(waiting, 'Reconciling')).toMatchObject({ status: 'True', reason: 'TopicNotReady' });
  expect(kstatus(waiting).status).toBe('InProgress');
});

test('a worker that exits on a fatal error shows its reason in WorkersReady, Ready and an Event, and is Failed', async () => {
  const l = loop!;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await createSecret(l.namespace, 'rsa-key', {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  });
  await create(l, 'crash', {
    ...spec(l, 'crash'),
    integrity: { enabled: true, signingKeySecretRef: { name: 'rsa-key', key: 'key' } },
  });
  const lp = await until(
    l,
    'crash',
    'WorkerCrashLoop',
    (p) => condition(p, 'WorkersReady')?.reason === 'WorkerCrashLoop',
  );
  const workers = condition(lp, 'WorkersReady')!;
  expect(workers.status).toBe('False');
  expect(workers.message).toMatch(
    /^worker pod crash-worker-\S+: (CrashLoopBackOff|restarting), last exit 1: RangeError: signing key must be Ed25519, got rsa, \d+ restarts?$/,
  );
  expect(condition(lp, 'Ready')).toMatchObject({
    status: 'False',
    reason: 'WorkersNotReady',
    message: workers.message,
  });
  expect(condition(lp, 'Stalled')).toMatchObject({ status: 'True', reason: 'WorkerCrashLoop' });
  expect(kstatus(lp)).toEqual({ status: 'Failed', message: workers.message });

  // The kubelet's view, as the runner wrote it: restarts and the worker's own termination message.
  const pods = await apis().core.listNamespacedPod({
    namespace: l.namespace,
    labelSelector: 'logpipeline.io/pipeline=crash',
  });
  const cs = pods.items[0].status!.containerStatuses![0];
  expect(cs.restartCount).toBeGreaterThanOrEqual(1);
  expect(cs.lastState?.terminated).toMatchObject({
    exitCode: 1,
    reason: 'Error',
    message: 'RangeError: signing key must be Ed25519, got rsa',
  });

  const event = await waitFor('Stalled Event', async () =>
    (await scaleEvents(l, 'crash')).find((e) => e.reason === 'WorkerCrashLoop' && e.type === 'Warning'),
  );
  expect(event.message).toContain('signing key must be Ed25519, got rsa');
});

test('a partition whose inserts keep failing is Stalled after the progress deadline, and recovers', async () => {
  const l = loop!;
  await create(l, 'slow', spec(l, 'slow', { workers: { progressDeadline: '15s' } }));
  await until(l, 'slow', 'Ready', (lp) => condition(lp, 'Ready')?.status === 'True');
  await proxy.cut();
  try {
    await produce(l, 'slow', 200, 7, 1);
    const stalled = await until(l, 'slow', 'Stalled', (lp) => condition(lp, 'Stalled')?.status === 'True');
    const c = condition(stalled, 'Stalled')!;
    expect(c.reason).toBe('PartitionStalled');
    expect(c.message).toMatch(
      /^partition 0 has not moved for \d+m\d+s \((nothing committed yet|committed offset \d+), lag \d+\), progress deadline 15s; last error: /,
    );
    expect(condition(stalled, 'Reconciling')?.status).toBe('False');
    expect(kstatus(stalled).status).toBe('Failed');
  } finally {
    await proxy.open();
  }
  const recovered = await until(
    l,
    'slow',
    'recovered',
    (lp) => condition(lp, 'Stalled')?.status === 'False' && condition(lp, 'Ready')?.status === 'True',
  );
  expect(kstatus(recovered).status).toBe('Current');
});
