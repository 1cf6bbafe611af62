/**
 * The autoscaler's Kafka reads cost O(clusters), not O(pipelines) (issue 18, PLAN decisions 3 and 4),
 * pinned with the operator's own request counters, never with timings: on one Kafka cluster, a
 * steady fleet of 5 and of 20 autoscaled pipelines costs the same Metadata, ListOffsets and
 * OffsetFetch requests per observer round, and a steady poll costs no reconcile at all (decisions
 * run in memory after each round; only a changed outcome queues its pipeline). The observer alone
 * reads 5 and 50 consumer groups with the same requests per round (OffsetFetch v8, one request per
 * coordinator; FindCoordinator v4 once for all new groups).
 */
import { Kafka } from 'kafkajs';
import { KafkaObservers } from '../operator/src/autoscale/kafka-observers';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { kafkaRequests } from '../operator/src/apply/request-counts';
import { workerName } from '../operator/src/desired/labels';
import {
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';
import { readTestBed } from './env/testbed';
import { createTopicsWithLeaders } from './env/kafka-topics';

const bed = readTestBed();
const POLL = '1s';
const ROUNDS = 4;

let namespace: string;
let manager: Manager;
let external: ExternalClients;

beforeAll(async () => {
  namespace = await createNamespace('fleet');
  await createSecret(namespace, 'ch', {
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
  });
  manager = startManager(namespace, { concurrency: 4 });
  external = registerExternalParts(manager);
});

afterAll(async () => {
  await manager.stop();
  await external.close();
  await deleteNamespace(namespace);
});

const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `p${from + i}`);

async function createFleet(list: string[]): Promise<void> {
  const db = `fleet_${namespace.replace(/[^a-z0-9]/g, '_')}`;
  for (const name of list)
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
          database: db,
          table: name,
        },
        workers: {
          autoscaling: {
            enabled: true,
            minReplicas: 0,
            maxReplicas: 1,
            lagPerReplica: 10_000,
            pollInterval: POLL,
            scaleDownStabilization: '0s',
          },
        },
      } as never,
    });
}

/** Every pipeline has its topic and table, a Scaling decision, and its idle workers scaled to zero. */
function settled(list: string[]): boolean {
  return list.every((name) => {
    const lp = manager.pipelines.get(namespace, name);
    const dep = manager.deployments.get(namespace, workerName(name));
    return (
      condition(lp, 'TopicReady')?.status === 'True' &&
      condition(lp, 'TableReady')?.status === 'True' &&
      condition(lp, 'Scaling') !== undefined &&
      dep?.replicas === 0
    );
  });
}

/** Waits until no reconcile ran for 3 s (the queue drained: nothing left to do but sampling). */
async function quiet(): Promise<void> {
  let last = -1;
  let since = Date.now();
  await waitFor(
    'no reconciles for 3 s',
    async () => {
      if (manager.reconcileCount !== last) {
        last = manager.reconcileCount;
        since = Date.now();
      }
      return Date.now() - since >= 3_000;
    },
    180_000,
  );
}

interface Snapshot {
  rounds: number;
  reconciles: number;
  at: number;
  kafka: Map<string, number>;
}

/** Counters at a round boundary (no observer round running or gathering). */
async function boundary(afterRounds: number): Promise<Snapshot> {
  return waitFor(
    `observer round ${afterRounds} finished`,
    async () =>
      external.observers.rounds() >= afterRounds && external.observers.idle()
        ? {
            rounds: external.observers.rounds(),
            reconciles: manager.reconcileCount,
            at: Date.now(),
            kafka: new Map(kafkaRequests.entries()),
          }
        : undefined,
    60_000,
  );
}

/** Kafka requests per observer round and reconciles over ROUNDS steady rounds. */
async function steadyWindow() {
  const a = await boundary(0);
  const b = await boundary(a.rounds + ROUNDS);
  const rounds = b.rounds - a.rounds;
  const per = (api: string) => ((b.kafka.get(api) ?? 0) - (a.kafka.get(api) ?? 0)) / rounds;
  return {
    rounds,
    metadata: per('Metadata'),
    listOffsets: per('ListOffsets'),
    offsetFetch: per('OffsetFetch'),
    reconciles: b.reconciles - a.reconciles,
    seconds: (b.at - a.at) / 1000,
  };
}

// First, while the manager has no pipelines: the process-wide counters then count this observer only.
it('reads 5 and 50 consumer groups with one OffsetFetch and no coordinator lookup per round', async () => {
  const topic = `${namespace}.groups`;
  const kafka = new Kafka({ brokers: [bed.kafka!.bootstrap], logLevel: 0 });
  const admin = kafka.admin();
  await admin.connect();
  const observers = new KafkaObservers({ gatherMs: 5 });
  try {
    await createTopicsWithLeaders(admin, [{ topic, numPartitions: 2 }]);
    const group = (i: number) => `${namespace}.g${i}`;
    await admin.setOffsets({
      groupId: group(3),
      topic,
      partitions: [
        { partition: 0, offset: '0' },
        { partition: 1, offset: '0' },
      ],
    });
    const observer = observers.for({ brokers: [bed.kafka!.bootstrap] });
    /** One round reading `n` groups (maxAge 0: a fresh round); the requests it sent by API. */
    const round = async (n: number) => {
      const before = new Map(kafkaRequests.entries());
      const rounds = observer.rounds;
      const reads = await Promise.all(Array.from({ length: n }, (_, i) => observer.read(topic, group(i), 0)));
      expect(observer.rounds).toBe(rounds + 1);
      const sent = (api: string) => (kafkaRequests.get(api) ?? 0) - (before.get(api) ?? 0);
      return {
        reads,
        offsetFetch: sent('OffsetFetch'),
        coordinators: sent('FindCoordinator') + sent('GroupCoordinator'),
      };
    };
    const firstSmall = await round(5);
    expect(firstSmall.coordinators).toBe(1); // one FindCoordinator v4 for the 5 new groups
    expect(firstSmall.reads[3].offsets.map((o) => o.committed)).toEqual([0, 0]);
    expect(firstSmall.reads[4].offsets.map((o) => o.committed)).toEqual([-1, -1]);
    const small = await round(5);
    const firstLarge = await round(50);
    expect(firstLarge.coordinators).toBe(1); // the 45 new groups, in one request
    const large = await round(50);
    console.log(
      JSON.stringify({ groupsPerRound: { small, large } }, (k, v) => (k === 'reads' ? undefined : v)),
    );
    expect(small.offsetFetch).toBe(1);
    expect(large.offsetFetch).toBe(small.offsetFetch);
    expect(small.coordinators).toBe(0);
    expect(large.coordinators).toBe(0);
    expect(large.reads).toHaveLength(50);
  } finally {
    await observers.close();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
});

it('samples 5 and 20 pipelines of one cluster with the same Metadata/ListOffsets/OffsetFetch per round and no reconcile per poll', async () => {
  const five = names(0, 5);
  await createFleet(five);
  await waitFor('5 pipelines settled', async () => settled(five), 240_000);
  await quiet();
  const small = await steadyWindow();

  const twenty = names(0, 20);
  await createFleet(names(5, 20));
  await waitFor('20 pipelines settled', async () => settled(twenty), 300_000);
  await quiet();
  const large = await steadyWindow();
  console.log(JSON.stringify({ fleetObserver: { small, large } }));

  // One Metadata request for all topics and one ListOffsets per leader for log-end and log-start
  // offsets (the bed has one broker), whatever the number of pipelines.
  expect(small.metadata).toBe(1);
  expect(small.listOffsets).toBe(2);
  expect(large.metadata).toBe(small.metadata);
  expect(large.listOffsets).toBe(small.listOffsets);
  // One OffsetFetch v8 per coordinator for every group (the bed has one broker).
  expect(small.offsetFetch).toBe(1);
  expect(large.offsetFetch).toBe(small.offsetFetch);
  // Idle pipelines' outcomes do not change: sampling them wakes no reconcile.
  expect(small.reconciles).toBe(0);
  expect(large.reconciles).toBe(0);
});
