/**
 * What a new pipeline's Kafka requests cost the broker, by kind (issue 18, the creation storm):
 * `node dist/bench/kafka-topic-cost.js [--topics 300] [--batch 1]`. On a private bed broker (KRaft,
 * one JVM), one kind at a time so the broker's CPU (/proc, its process group) belongs to it:
 * CreateTopics of `batch` new one-partition topics per request, a Metadata and a DescribeConfigs
 * naming `batch` of them, an OffsetCommit of an owner-record-like offset for partition 0 of each
 * (one group, like the operator's owner records), then the broker at rest with every topic. Runs
 * `topics / batch` requests per kind; prints JSON: broker CPU-ms and wall-ms per topic, per kind.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Kafka } from 'kafkajs';
import { buildKafkaConfig } from '../operator/src/apply/kafka-client';
import { internalCluster } from '../operator/src/apply/kafka-owner';
import { startKafka, stopKafka } from '../test/env/kafka';
import { groupCpuSeconds } from './autoscale-support';
import { benchMachine, option, runBenchMain } from './clickhouse-bench';

const GROUP = 'bench-owner';

async function bench(argv: string[]) {
  const topics = option(argv, 'topics', 300);
  const batch = option(argv, 'batch', 1);
  const dir = fs.mkdtempSync(path.join(process.env.LP_SCRATCH ?? '/tmp', 'kafka-topic-cost-'));
  const bed = await startKafka(dir, process.pid);
  const pgid = bed.process.pid;
  const kafka = new Kafka(buildKafkaConfig({ brokers: [bed.bootstrap] }));
  const admin = kafka.admin();
  const cluster = internalCluster(kafka);
  await admin.connect();
  const names = Array.from({ length: topics }, (_, i) => `bench.cost-${i}`);
  const chunks: string[][] = [];
  for (let i = 0; i < names.length; i += batch) chunks.push(names.slice(i, i + batch));
  const measure = async (send: (chunk: string[]) => Promise<unknown>) => {
    const cpu0 = groupCpuSeconds(pgid);
    const t0 = performance.now();
    for (const c of chunks) await send(c);
    process.stderr.write('.');
    const wall = performance.now() - t0;
    const cpu = groupCpuSeconds(pgid) - cpu0;
    return {
      cpuMsPerTopic: Math.round((cpu * 1e5) / topics) / 100,
      wallMsPerTopic: Math.round((wall * 100) / topics) / 100,
    };
  };
  try {
    // Warm the connection and the group coordinator first (not counted). The owner record is
    // committed as the operator does (kafka-owner.ts): generation -1, through kafkajs' cluster.
    await admin.fetchTopicMetadata({ topics: [] });
    await cluster.connect();
    const coordinator = await cluster.findGroupCoordinator({ groupId: GROUP });
    const out = {
      createTopics: await measure((c) =>
        admin.createTopics({
          topics: c.map((topic) => ({ topic, numPartitions: 1 })),
          waitForLeaders: false,
        }),
      ),
      metadata: await measure((c) => admin.fetchTopicMetadata({ topics: c })),
      describeConfigs: await measure((c) =>
        admin.describeConfigs({ includeSynonyms: false, resources: c.map((name) => ({ type: 2, name })) }),
      ),
      offsetCommit: await measure((c) =>
        coordinator.offsetCommit({
          groupId: GROUP,
          groupGenerationId: -1,
          memberId: '',
          topics: c.map((topic) => ({
            topic,
            partitions: [{ partition: 0, offset: '0', metadata: 'owner' }],
          })),
        }),
      ),
      idle10s: await (async () => {
        const cpu0 = groupCpuSeconds(pgid);
        await new Promise((r) => setTimeout(r, 10_000));
        return { cpuMsPerSecond: Math.round((groupCpuSeconds(pgid) - cpu0) * 100) };
      })(),
    };
    return { machine: benchMachine(), topics, batch, ...out };
  } finally {
    await admin.disconnect();
    await cluster.disconnect().catch(() => undefined);
    await stopKafka(bed);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) runBenchMain(bench);
