/**
 * Same-run A/B of the lag observer's rounds against another build, on a private Kafka broker (the
 * bed's), with one observed topic missing: `node dist/bench/observer-metadata.js --base
 * /tmp/old-tree [--topics 1000] [--others 0] [--missing 1] [--rounds 5] [--passes 3]`. `--base` is a checkout of
 * the other revision with its `dist/` built. The broker holds `topics` observed topics (one
 * partition each) and `others` topics nobody observes (other tenants'); each pass builds one
 * build's KafkaClusterObserver on a wire tap (test/env/kafka-wire-tap.ts), reads every observed
 * (topic, group) pair plus one pair whose topic does not exist (`--missing 0`: none) once to warm up (connection,
 * coordinator lookups), then `rounds` fresh rounds. Per round: Metadata requests, topics named,
 * requests for every topic, bytes received (all answers and Metadata answers), the client's CPU
 * (process.cpuUsage) and the broker's (/proc). The builds alternate, the order flipping every
 * pass. Prints JSON with each pass's medians per round and the medians of same-pass ratios
 * (base / this build).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import type { KafkaClusterObserver } from '../operator/src/autoscale/kafka-observer';
import type { KafkaConnection } from '../operator/src/apply/kafka-client';
import { startKafka, stopKafka } from '../test/env/kafka';
import { createTopicsWithLeaders } from '../test/env/kafka-topics';
import { wireTap } from '../test/env/kafka-wire-tap';
import { alternatePasses, baseOverThis, parseAbOptions } from './ab-support';
import { groupCpuSeconds, median } from './autoscale-support';
import { fixKafkaRequestQueueTimer } from '../common/src/kafka/request-queue-timer';

/** Settings (CLI flags of the same name in kebab-case). */
export interface ObserverBenchOptions {
  base: string;
  topics: number;
  others: number;
  /** Observe one topic that does not exist (1) or none (0: the steady case without a missing topic). */
  missing: number;
  rounds: number;
  passes: number;
}

/** The parts of one build a pass drives (loaded from its own dist/). */
interface Build {
  name: string;
  Observer: typeof KafkaClusterObserver;
  buildKafkaConfig: (conn: KafkaConnection) => KafkaConfig;
  internalCluster: (kafka: Kafka) => unknown;
}

/** One pass of one build: medians per round (CPU: mean per round). */
interface Pass {
  build: string;
  pass: number;
  metadataRequests: number;
  topicsNamed: number;
  allTopicsRequests: number;
  kibReceived: number;
  metadataKibReceived: number;
  clientCpuMs: number;
  brokerCpuMs: number;
  /** Pairs read per round (all but the missing one, which must fail). */
  pairsRead: number;
}

function loadBuild(name: string, root: string): Build {
  const dist = path.resolve(root, 'dist/operator/src');
  /* eslint-disable @typescript-eslint/no-require-imports -- each build is loaded from its own dist/ */
  return {
    name,
    Observer: (
      require(path.join(dist, 'autoscale/kafka-observer')) as { KafkaClusterObserver: Build['Observer'] }
    ).KafkaClusterObserver,
    buildKafkaConfig: (require(path.join(dist, 'apply/kafka-client')) as Pick<Build, 'buildKafkaConfig'>)
      .buildKafkaConfig,
    internalCluster: (require(path.join(dist, 'apply/kafka-owner')) as Pick<Build, 'internalCluster'>)
      .internalCluster,
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** One build's observer over `observed` (with `--missing 1` the last name is missing): a warm-up round, then `rounds` measured. */
async function pass(
  build: Build,
  bootstrap: string,
  brokerPid: number,
  observed: string[],
  o: ObserverBenchOptions,
  n: number,
) {
  const tap = wireTap();
  const observer = new build.Observer(
    { brokers: [bootstrap] },
    {
      gatherMs: 1,
      connect: (conn) =>
        build.internalCluster(
          new Kafka({ ...build.buildKafkaConfig(conn), socketFactory: tap.socketFactory }),
        ) as never,
    },
  );
  const round = async () => {
    const reads = await Promise.allSettled(observed.map((t) => observer.read(t, `${t}.g`, 0)));
    return reads.filter((r) => r.status === 'fulfilled').length;
  };
  await round();
  const per: Array<Omit<Pass, 'build' | 'pass' | 'clientCpuMs' | 'brokerCpuMs'>> = [];
  // CPU over all measured rounds (the broker's is read in 10 ms ticks), divided by their number.
  const cpu = process.cpuUsage();
  const broker = groupCpuSeconds(brokerPid);
  for (let r = 0; r < o.rounds; r++) {
    const asks = tap.metadata.length;
    const bytes = tap.bytesReceived;
    const metaBytes = tap.receivedByApi.get('Metadata') ?? 0;
    const pairsRead = await round();
    const asked = tap.metadata.slice(asks);
    per.push({
      metadataRequests: asked.length,
      topicsNamed: asked.reduce((s, a) => s + (a === 'all' ? 0 : a.length), 0),
      allTopicsRequests: asked.filter((a) => a === 'all').length,
      kibReceived: (tap.bytesReceived - bytes) / 1024,
      metadataKibReceived: ((tap.receivedByApi.get('Metadata') ?? 0) - metaBytes) / 1024,
      pairsRead,
    });
  }
  const used = process.cpuUsage(cpu);
  const brokerSeconds = groupCpuSeconds(brokerPid) - broker;
  await observer.close();
  const out = {
    build: build.name,
    pass: n,
    clientCpuMs: Math.round((used.user + used.system) / 1000 / o.rounds),
    brokerCpuMs: Math.round((brokerSeconds * 1000) / o.rounds),
  } as Pass;
  for (const k of Object.keys(per[0]) as Array<keyof (typeof per)[0]>)
    out[k] = Math.round(median(per.map((p) => p[k])) * 10) / 10;
  return out;
}

/** Creates the topics, 200 per request, each with its leader before returning, and the offsets topic. */
async function createTopics(bootstrap: string, names: string[]): Promise<void> {
  fixKafkaRequestQueueTimer();
  const admin = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  for (let i = 0; i < names.length; i += 200)
    await createTopicsWithLeaders(
      admin,
      names.slice(i, i + 200).map((topic) => ({ topic, numPartitions: 1 })),
    );
  // A fresh broker creates __consumer_offsets at the first coordinator lookup: wait for it here
  // (kafkajs's admin retries), so no pass measures it.
  await admin.fetchOffsets({ groupId: 'bench.warm-up', topics: [names[0]] });
  await admin.disconnect();
}

/**
 * Waits until every observed topic's offsets can be read: a KRaft broker lists a new partition's
 * leader in Metadata a moment before that leader answers ListOffsets (NOT_LEADER_OR_FOLLOWER).
 */
async function settle(build: Build, bootstrap: string, observed: string[]): Promise<void> {
  const observer = new build.Observer({ brokers: [bootstrap] }, { gatherMs: 1 });
  try {
    for (let attempt = 0; ; attempt++) {
      const reads = await Promise.allSettled(observed.map((t) => observer.read(t, `${t}.g`, 0)));
      if (reads.every((r) => r.status === 'fulfilled')) return;
      if (attempt === 120) throw new Error('observed topics still not readable after 60 s');
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await observer.close();
  }
}

async function main(): Promise<void> {
  const o = parseAbOptions<ObserverBenchOptions>(process.argv.slice(2), {
    base: '',
    topics: 1000,
    others: 0,
    missing: 1,
    rounds: 5,
    passes: 3,
  });
  const builds = [loadBuild('base', o.base), loadBuild('this', path.resolve(__dirname, '../..'))];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-bench-observer-'));
  const kafka = await startKafka(dir, process.pid);
  const passes: Pass[] = [];
  try {
    const observed = Array.from({ length: o.topics }, (_, i) => `bench.observed-${i}`);
    await createTopics(kafka.bootstrap, [
      ...observed,
      ...Array.from({ length: o.others }, (_, i) => `bench.other-${i}`),
    ]);
    await settle(builds[1], kafka.bootstrap, observed);
    if (o.missing) observed.push('bench.observed-missing');
    passes.push(
      ...(await alternatePasses(builds, o.passes, (b, n) =>
        pass(b, kafka.bootstrap, kafka.process.pid, observed, o, n),
      )),
    );
  } finally {
    await stopKafka(kafka);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const ratios = baseOverThis(passes, o.passes, [
    'metadataRequests',
    'kibReceived',
    'metadataKibReceived',
    'clientCpuMs',
    'brokerCpuMs',
  ]);
  process.stdout.write(`${JSON.stringify({ options: o, passes, baseOverThis: ratios }, null, 1)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
