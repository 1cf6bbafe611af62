/**
 * What creating a pipeline costs the apiserver (issue 18, the creation storm): new autoscaled
 * pipelines on real Kafka and ClickHouse, made Ready, and every write the operator sent for them
 * counted where it lands (the apiserver's audit log) — per pipeline, by verb and resource — plus
 * the Events they carry. Counters, not timings: the budget is what a storm of 1000 multiplies.
 */
import type { Manager } from '../operator/src/controller/manager';
import { deferredTopicWork, kafkaRequests } from '../operator/src/apply/request-counts';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { readTestBed } from './env/testbed';
import { auditMark, writesSince } from './fleet-support';
import {
  apis,
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  getPipeline,
  pipeline,
  setDeploymentStatus,
  startManager,
  waitFor,
} from './operator-harness';

jest.setTimeout(300_000);

const bed = readTestBed();
const PIPELINES = 4;
let namespace: string;
let manager: Manager;
let external: ExternalClients;

beforeAll(async () => {
  namespace = await createNamespace('fleet-create');
  manager = startManager(namespace);
  external = registerExternalParts(manager);
});

afterAll(async () => {
  await manager.stop();
  await external.close();
  await deleteNamespace(namespace);
});

/** Plays the Deployment controller for scaled-to-zero workers until `stop` (the bed runs none). */
function zeroReplicaStatus(ns: string): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      const list = await apis().apps.listNamespacedDeployment({ namespace: ns });
      for (const d of list.items) {
        if (d.spec?.replicas !== 0 || d.status?.observedGeneration === d.metadata?.generation) continue;
        await setDeploymentStatus(ns, d.metadata!.name!, {
          observedGeneration: d.metadata!.generation,
          replicas: 0,
          readyReplicas: 0,
          updatedReplicas: 0,
          availableReplicas: 0,
        }).catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

it('creates autoscaled pipelines with a bounded number of writes each', async () => {
  await createSecret(namespace, 'ch', {
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
  });
  // The Secret's own watch event must not arrive after the pipelines' (it queues them again).
  await waitFor('the Secret in the cache', async () => manager.secrets.get(namespace, 'ch'));
  const mark = auditMark();
  const reconcilesBefore = manager.reconcileCount;
  const describeConfigsBefore = kafkaRequests.get('DescribeConfigs');
  const deferredBefore = deferredTopicWork.total();
  // Work the broker could not take yet for a topic created a moment ago (its owner record) is left
  // to one reconcile 2 s later, which reads the now existing topic back: how many depends on the
  // broker's timing, so each one counted is allowed one reconcile and one DescribeConfigs more.
  const deferred = () => deferredTopicWork.total() - deferredBefore;
  const names = Array.from({ length: PIPELINES }, (_, i) => `cr-${i}`);
  // No Deployment controller answers until every pipeline is Ready: a Deployment created with zero
  // replicas never asked for a pod, so the reconcile that created everything knows the state.
  let writer: { stop(): Promise<void> } | undefined;
  try {
    for (const name of names) {
      await createPipeline({
        ...pipeline(namespace, name),
        spec: {
          kafka: {
            bootstrapServers: [bed.kafka!.bootstrap],
            topic: { name: `${namespace}.${name}`, partitions: 1 },
          },
          clickhouse: {
            url: bed.clickhouse!.url,
            credentialsSecretRef: { name: 'ch' },
            database: namespace.replace(/-/g, '_'),
            table: name.replace(/-/g, '_'),
          },
          workers: {
            batch: { maxDelay: '300ms' },
            autoscaling: {
              enabled: true,
              minReplicas: 0,
              maxReplicas: 1,
              lagPerReplica: 10_000,
              scaleDownStabilization: '0s',
            },
          },
          deadLetter: { enabled: false },
        } as never,
      });
    }
    for (const name of names)
      await waitFor(
        `${name} Ready`,
        async () => condition(await getPipeline(namespace, name), 'Ready')?.status === 'True',
        90_000,
      ).catch(async (err) => {
        const lp = await getPipeline(namespace, name);
        const deps = await apis().apps.listNamespacedDeployment({ namespace });
        console.log(
          JSON.stringify({ status: lp?.status, deps: deps.items.map((d) => [d.spec, d.status]) }, null, 1),
        );
        throw err;
      });
    // A new topic's max.message.bytes (status.topic, judged by IngestReady) is the broker's
    // message.max.bytes, read once for the cluster: no DescribeConfigs per new topic, which the
    // broker often could not answer yet (a 2 s requeue and one more reconcile each).
    expect(external.topics.batchCounts().configs).toBeLessThanOrEqual(deferred());
    expect(kafkaRequests.get('DescribeConfigs') - describeConfigsBefore).toBeLessThanOrEqual(1 + deferred());
    for (const name of names)
      expect((await getPipeline(namespace, name))?.status?.topic?.maxMessageBytes).toBeGreaterThan(0);
    // One reconcile each made them Ready: no watch event of our own writes queued another (one
    // stray reconcile is tolerated, e.g. an autoscaler sample under load; two each was the old way).
    expect(manager.reconcileCount - reconcilesBefore).toBeLessThanOrEqual(PIPELINES + 1 + deferred());
    // The controller's answer (observedGeneration, no pods) changes nothing the reconcile reads:
    // it queues no reconcile (it queued one more each, which wrote nothing).
    writer = zeroReplicaStatus(namespace);
    await waitFor('the Deployment controller stand-in answered, in the cache', async () =>
      names.every((n) => manager.deployments.get(namespace, `${n}-worker`)?.status.observedGeneration === 1),
    );
    // The informer's handlers run when the cache takes the event: a reconcile it queued is counted
    // (taken) or still waiting in the queue now.
    const queue = (manager as unknown as { queue: { len(): number; processingLen(): number } }).queue;
    await waitFor('the queue idle', async () => queue.len() === 0 && queue.processingLen() === 0);
    expect(manager.reconcileCount - reconcilesBefore).toBeLessThanOrEqual(PIPELINES + 1 + deferred());
  } finally {
    await writer?.stop();
  }
  // Events go out in the background (the reconcile does not wait for them): wait until all are in.
  await manager.reconciler.flushEvents();
  await waitFor('the Events of every pipeline', async () => {
    const items = (await apis().core.listNamespacedEvent({ namespace })).items;
    return items.length >= PIPELINES;
  });
  const writes = writesSince(mark, namespace);
  const reconciles = manager.reconcileCount - reconcilesBefore;
  console.log(`reconciles per pipeline: ${reconciles / PIPELINES}`);
  const count = (verb: string, resource: string) =>
    writes.filter(
      (w) => `${w.verb} ${w.resource}${w.subresource ? `/${w.subresource}` : ''}` === `${verb} ${resource}`,
    ).length;
  // One server-side apply of the Deployment and no scale: it is created with minReplicas (0), so no
  // worker is started only to be stopped; nothing sent twice for a cache that lags behind.
  expect(count('patch', 'deployments')).toBe(PIPELINES);
  // No ConfigMap and no PodDisruptionBudget yet: a Deployment that never asked for a pod needs
  // neither (the first scale-up applies the ConfigMap before the scale and the PDB with it;
  // test/autoscale-zero.test.ts).
  expect(count('patch', 'configmaps')).toBe(0);
  expect(count('patch', 'poddisruptionbudgets')).toBe(0);
  expect(count('patch', 'deployments/scale')).toBe(0);
  // The finalizer, then one status write: Ready, from the reconcile that created everything (it was
  // two: pending, then Ready once the Deployment controller had answered).
  expect(count('patch', 'logpipelines')).toBe(PIPELINES);
  expect(count('patch', 'logpipelines/status')).toBeLessThanOrEqual(PIPELINES + 1);
  // Events that say something new, once: what the topic and table parts created (one Event for
  // both). A first Ready is no Event (the Ready condition says it; nothing failed on the way) and
  // there is no scale, so no ScaledDown.
  const events = (await apis().core.listNamespacedEvent({ namespace })).items;
  for (const name of names) {
    const mine = events.filter((e) => e.involvedObject.name === name);
    expect(mine.map((e) => `${e.type} ${e.reason} x${e.count}`).sort()).toEqual([
      'Normal TopicAndTableChanged x1',
    ]);
    const created = mine.find((e) => e.reason === 'TopicAndTableChanged')!.message;
    expect(created).toContain(
      `created table \`${namespace.replace(/-/g, '_')}\`.\`${name.replace(/-/g, '_')}\``,
    );
    expect(created).toContain(`topic ${namespace}.${name}: created`);
  }
  expect(count('create', 'events')).toBe(PIPELINES);
  // The finalizer and the status are written as the operator's one field manager.
  type Entry = { manager: string; subresource?: string; fieldsV1?: unknown };
  const managers = new Set(
    (await Promise.all(names.map((n) => getPipeline(namespace, n)))).flatMap((lp) =>
      ((lp?.metadata as { managedFields?: Entry[] }).managedFields ?? [])
        .filter((m) => m.subresource === 'status' || JSON.stringify(m.fieldsV1).includes('f:finalizers'))
        .map((m) => m.manager),
    ),
  );
  expect([...managers]).toEqual(['logpipeline-operator']);
});
