/**
 * Same-run A/B of the Topic part's describes in a creation storm against another build, on a
 * private Kafka broker (the bed's): `node dist/bench/topic-describe.js --base /tmp/old-tree
 * [--topics 1000] [--batch 32] [--rounds 3]`. `--base` is a checkout of the other revision with
 * its `dist/` built. Each pass plays what the operator's reconciles ask in a storm through one
 * build's TopicBatcher: every step describes `batch` new topics (missing) together with the
 * previous step's (created a moment ago), then creates the new ones, until `topics` exist; then its
 * topics are deleted so every pass starts from the same cluster. The builds alternate, the order
 * flipping every round. Per pass: Metadata requests, bytes the client received (all requests),
 * the client's CPU (process.cpuUsage) and the broker's CPU (/proc). Prints JSON with every pass
 * and the medians of same-round ratios (base / this build).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type ISocketFactory, type KafkaConfig } from 'kafkajs';
import type { BatchCluster } from '../operator/src/apply/kafka-topic-batch';
import type { TopicBatchers as Batchers } from '../operator/src/apply/kafka-topic-batchers';
import type { KafkaConnection } from '../operator/src/apply/kafka-client';
import type { CountMap } from '../operator/src/apply/request-counts';
import { startKafka, stopKafka } from '../test/env/kafka';
import { alternatePasses, baseOverThis, parseAbOptions } from './ab-support';
import { groupCpuSeconds } from './autoscale-support';

/** Settings (CLI flags of the same name in kebab-case). */
export interface DescribeBenchOptions {
  base: string;
  topics: number;
  batch: number;
  rounds: number;
}

/** The parts of one build the pass drives (loaded from its own dist/). */
interface Build {
  name: string;
  TopicBatchers: typeof Batchers;
  buildKafkaConfig: (conn: KafkaConnection) => KafkaConfig;
  internalCluster: (kafka: Kafka) => unknown;
  kafkaRequests: CountMap;
}

/** One pass of one build. */
interface Pass {
  build: string;
  pass: number;
  metadataRequests: number;
  clientMiBReceived: number;
  clientCpuSeconds: number;
  brokerCpuSeconds: number;
}

function loadBuild(name: string, root: string): Build {
  const dist = path.resolve(root, 'dist/operator/src/apply');
  /* eslint-disable @typescript-eslint/no-require-imports -- each build is loaded from its own dist/ */
  return {
    name,
    // kafka-topic-batchers.js since stop 30; older builds kept the class in kafka-topic-batch.js.
    TopicBatchers: (
      require(
        path.join(
          dist,
          fs.existsSync(path.join(dist, 'kafka-topic-batchers.js'))
            ? 'kafka-topic-batchers'
            : 'kafka-topic-batch',
        ),
      ) as { TopicBatchers: typeof Batchers }
    ).TopicBatchers,
    buildKafkaConfig: (require(path.join(dist, 'kafka-client')) as Pick<Build, 'buildKafkaConfig'>)
      .buildKafkaConfig,
    internalCluster: (require(path.join(dist, 'kafka-owner')) as Pick<Build, 'internalCluster'>)
      .internalCluster,
    kafkaRequests: (require(path.join(dist, 'request-counts')) as Pick<Build, 'kafkaRequests'>).kafkaRequests,
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** kafkajs's plain socket, with the bytes it receives added to `received.bytes`. */
function countingSockets(received: { bytes: number }): ISocketFactory {
  return ({ host, port, onConnect }) => {
    const socket = net.connect({ host, port }, onConnect);
    socket.on('data', (chunk: Buffer) => (received.bytes += chunk.length));
    return socket;
  };
}

/** The storm of one build: describe (new + previous step), create the new, until `topics` exist. */
async function pass(
  build: Build,
  bootstrap: string,
  brokerPid: number,
  o: DescribeBenchOptions,
  round: number,
) {
  const received = { bytes: 0 };
  const batchers = new build.TopicBatchers({
    connect: (conn) =>
      build.internalCluster(
        new Kafka({ ...build.buildKafkaConfig(conn), socketFactory: countingSockets(received) }),
      ) as BatchCluster,
  });
  const batch = batchers.for({ brokers: [bootstrap] });
  const names = Array.from({ length: o.topics }, (_, i) => `bench.describe-${build.name}-${round}-${i}`);
  const metadataBefore = build.kafkaRequests.get('Metadata');
  const cpu = process.cpuUsage();
  const broker = groupCpuSeconds(brokerPid);
  for (let i = 0; i < o.topics; i += o.batch) {
    const fresh = names.slice(i, i + o.batch);
    const asked = [...names.slice(Math.max(0, i - o.batch), i), ...fresh];
    await Promise.all(asked.map((n) => batch.describes.get(n)));
    await Promise.all(
      fresh.map((topic) =>
        batch.creates.get({ topic, numPartitions: 1, replicationFactor: 1, configEntries: [] }),
      ),
    );
  }
  const used = process.cpuUsage(cpu);
  const out: Pass = {
    build: build.name,
    pass: round,
    metadataRequests: build.kafkaRequests.get('Metadata') - metadataBefore,
    clientMiBReceived: Math.round((received.bytes / 2 ** 20) * 100) / 100,
    clientCpuSeconds: (used.user + used.system) / 1e6,
    brokerCpuSeconds: Math.round((groupCpuSeconds(brokerPid) - broker) * 100) / 100,
  };
  await batchers.close();
  const admin = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  for (let i = 0; i < names.length; i += 200) await admin.deleteTopics({ topics: names.slice(i, i + 200) });
  await admin.disconnect();
  return out;
}

async function main(): Promise<void> {
  const o = parseAbOptions<DescribeBenchOptions>(process.argv.slice(2), {
    base: '',
    topics: 1000,
    batch: 32,
    rounds: 3,
  });
  const builds = [loadBuild('base', o.base), loadBuild('this', path.resolve(__dirname, '../..'))];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-bench-describe-'));
  const kafka = await startKafka(dir, process.pid);
  const passes: Pass[] = [];
  try {
    passes.push(
      ...(await alternatePasses(builds, o.rounds, (b, round) =>
        pass(b, kafka.bootstrap, kafka.process.pid, o, round),
      )),
    );
  } finally {
    await stopKafka(kafka);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const ratios = baseOverThis(passes, o.rounds, [
    'metadataRequests',
    'clientMiBReceived',
    'clientCpuSeconds',
    'brokerCpuSeconds',
  ]);
  process.stdout.write(`${JSON.stringify({ options: o, passes, baseOverThis: ratios }, null, 1)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
