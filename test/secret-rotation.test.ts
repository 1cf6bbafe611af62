/**
 * Rotating a referenced Secret under traffic, on the real bed: the operator (Secret informer,
 * metadata only) sees the new resourceVersion, the pod template's secrets hash changes, the
 * workers (local pod runner) roll and pick up the new password. The ClickHouse password is changed
 * in place first, as a DBA's `ALTER USER` would, so the old workers fail with 516 until they are
 * replaced. Checked: every produced line stored exactly once, the operator reacted, and the
 * server saw a bounded number of 516 errors (no storm), counted from the server's own log.
 */
import fs from 'node:fs';
import type { Producer } from 'kafkajs';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { SECRETS_HASH_ANNOTATION } from '../operator/src/desired/labels';
import { generateSampleLines } from './fixtures/samples';
import { setClickHousePassword } from './env/clickhouse';
import { PodRunner } from './env/pod-runner';
import { bedScratchDir, readTestBed, writeTestBed } from './env/testbed';
import {
  apis,
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  deletePipeline,
  getPipeline,
  mergePatch,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';
import { chClient, produceLines, testProducer } from './worker-support';

jest.setTimeout(300_000);

const PARTITIONS = 3;
const BATCHES = 40;
const PER_BATCH = 150;
// Bound on the rate of 516 answers while the workers roll: each old worker retries with capped
// backoff until it is replaced, a few answers per second at most. A storm (retries without backoff)
// runs at hundreds per second. A rate, not a count: on a loaded machine the roll takes longer and
// an old worker legitimately backs off for longer (a worker never rolled fails the
// "every produced line stored" wait instead).
const MAX_AUTH_FAILURES_PER_SECOND = 8;

let bed = readTestBed();
const originalPassword = bed.clickhouse!.password;
let ns: string;
let manager: Manager;
let external: ExternalClients;
let runner: PodRunner;
let producer: Producer;
const podDir = bedScratchDir('rotation-');
const database = `rot_${process.pid}`;

function authFailuresInServerLog(): number {
  const log = fs.readFileSync(bed.clickhouse!.process!.logFile, 'utf8');
  return log.split('\n').filter((l) => l.includes('failed: 516 AUTHENTICATION_FAILED')).length;
}

async function storedRows(): Promise<{ rows: number; distinct: number }> {
  const ch = chClient(bed);
  try {
    // Data rows and dead letters together: each produced line lands in exactly one of them.
    const rs = await ch.query({
      query:
        `SELECT count() AS c, uniqExact(p, o) AS u FROM (` +
        `SELECT kafka_partition AS p, kafka_offset AS o FROM ${database}.fw UNION ALL ` +
        `SELECT \`partition\` AS p, \`offset\` AS o FROM ${database}.fw_dlq)`,
      format: 'JSONEachRow',
    });
    const [r] = await rs.json<{ c: string; u: string }>();
    return { rows: Number(r.c), distinct: Number(r.u) };
  } finally {
    await ch.close();
  }
}

const secretsHash = async () =>
  (await apis().apps.readNamespacedDeployment({ namespace: ns, name: 'fw-worker' })).spec?.template?.metadata
    ?.annotations?.[SECRETS_HASH_ANNOTATION];

beforeAll(async () => {
  ns = await createNamespace('rotate');
  await createSecret(ns, 'ch', { username: bed.clickhouse!.username, password: originalPassword });
  manager = startManager(ns);
  external = registerExternalParts(manager);
  // Old workers go at once, as the 516 bound below was calibrated: under RollingUpdate each old
  // worker keeps retrying (with its back-off) until its replacement is ready, which measured
  // 5.7-7.0 answers per second for the two old workers on a loaded machine.
  runner = new PodRunner({
    kubeconfig: bed.kubernetes!.kubeconfig,
    dir: podDir,
    intervalMs: 500,
    replaceAtOnce: true,
  });
  runner.start();
  producer = await testProducer(bed);
});

afterAll(async () => {
  await producer?.disconnect();
  if (ns) await deletePipeline(ns, 'fw');
  await runner?.stop();
  await manager?.stop();
  await external?.close();
  if (bed.clickhouse!.password !== originalPassword) {
    bed = { ...bed, clickhouse: await setClickHousePassword(bed.clickhouse!, originalPassword) };
    writeTestBed(bed);
  }
  const ch = chClient(bed);
  await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` });
  await ch.close();
  if (ns) await deleteNamespace(ns);
});

it('rolls the workers on a password rotation under traffic: no row lost or duplicated, no 516 storm', async () => {
  await createPipeline({
    ...pipeline(ns, 'fw'),
    spec: {
      kafka: {
        bootstrapServers: [bed.kafka!.bootstrap],
        topic: { name: `${ns}.fw`, partitions: PARTITIONS },
      },
      clickhouse: { url: bed.clickhouse!.url, credentialsSecretRef: { name: 'ch' }, database, table: 'fw' },
      workers: { replicas: 2, batch: { maxDelay: '300ms' } },
      deletionPolicy: 'Delete',
    } as never,
  });
  await waitFor(
    'pipeline Ready with running workers',
    async () => condition(await getPipeline(ns, 'fw'), 'Ready')?.status === 'True',
    120_000,
  );
  const hashBefore = await secretsHash();
  expect(hashBefore).toBeTruthy();
  const failuresBefore = authFailuresInServerLog();

  let produced = 0;
  const traffic = (async () => {
    for (let i = 0; i < BATCHES; i++) {
      const lines = generateSampleLines('mix', PER_BATCH, { seed: 100 + i, startMs: Date.now() - PER_BATCH });
      produced += await produceLines(producer, `${ns}.fw`, PARTITIONS, lines, 1);
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  await waitFor('traffic flowing into the table', async () => (await storedRows()).rows > 0, 60_000);

  // The DBA rotates: the server takes the new password first, then the Secret follows.
  const rotatedAt = Date.now();
  const rotated = `rotated-${rotatedAt}-password`;
  bed = { ...bed, clickhouse: await setClickHousePassword(bed.clickhouse!, rotated) };
  writeTestBed(bed);
  await apis().core.patchNamespacedSecret(
    { namespace: ns, name: 'ch', body: { stringData: { password: rotated } } },
    mergePatch,
  );
  await waitFor('operator rolled the pod template', async () => (await secretsHash()) !== hashBefore, 30_000);
  await traffic;

  const total = BATCHES * PER_BATCH;
  expect(produced).toBe(total);
  const stored = await waitFor(
    'every produced line stored',
    async () => {
      const s = await storedRows();
      return s.rows >= total ? s : undefined;
    },
    180_000,
  );
  expect(stored).toEqual({ rows: total, distinct: total });
  const authFailures = authFailuresInServerLog() - failuresBefore;
  const rollSeconds = (Date.now() - rotatedAt) / 1000;
  console.log(
    `secret rotation: ${authFailures} AUTHENTICATION_FAILED answers during a ${rollSeconds.toFixed(1)} s roll`,
  );
  expect(authFailures / rollSeconds).toBeLessThan(MAX_AUTH_FAILURES_PER_SECOND);
  // The rolled workers report ready and the operator's own client uses the new password too.
  await waitFor(
    'Ready again after the roll',
    async () => {
      const lp = await getPipeline(ns, 'fw');
      return condition(lp, 'Ready')?.status === 'True' && condition(lp, 'TableReady')?.status === 'True';
    },
    60_000,
  );
});
