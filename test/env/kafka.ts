/**
 * The Kafka part of the test bed: one real Apache Kafka node in KRaft combined mode
 * (broker + controller) on 127.0.0.1, run from Maven jars fetched by scripts/fetch-kafka.sh.
 *
 * Version: 4.4.0. kafkajs 2.2.4 negotiates API versions through ApiVersions and every API it uses
 * still has a supported version after KIP-896 (checked: produce incl. idempotent/transactional,
 * fetch, consumer groups, createTopics, createPartitions, describe/alterConfigs, fetchOffsets,
 * fetchTopicOffsets, set/resetOffsets, deleteGroups, deleteTopicRecords, describeCluster).
 *
 * Start time is dominated by JVM class loading, so both JVMs (storage format, broker) run with
 * an AppCDS archive kept beside the jars (see kafka-jvm.ts), SerialGC and C1 only: a faster
 * warm-up on 2 shared cores, at some peak throughput the broker never needs in a test.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { registerKafkaCodecs } from '../../common/src/kafka/codecs';
import { cdsArgs, classpath, settleDump, stopBrokerJvm } from './kafka-jvm';
import { cacheDir, freePort, requireTool, startProcess, stopProcess, tailLog, waitUntil } from './process';
import type { KafkaBed } from './testbed';

const execFileAsync = promisify(execFile);
// Run from test/env (jest) or dist/test/env (compiled CLI).
const REPO = path.resolve(
  __dirname,
  fs.existsSync(path.join(__dirname, '../../scripts/fetch-kafka.sh')) ? '../..' : '../../..',
);
const KAFKA_VERSION = process.env.KAFKA_VERSION ?? '4.4.0';
const HEAP = ['-Xms128m', '-Xmx768m'];
const JVM_FLAGS = [
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:+ExitOnOutOfMemoryError',
  '-Djava.awt.headless=true',
];
const START_TIMEOUT_MS = 90_000;

function libsDir(): string {
  return path.join(cacheDir(), `kafka-${KAFKA_VERSION}`, 'libs');
}

/** Makes sure the jars are in the cache, running scripts/fetch-kafka.sh (mvn) on a cold cache. */
async function ensureJars(): Promise<string> {
  requireTool('java', 'the Kafka broker is a Java 17+ program');
  const libs = libsDir();
  if (fs.existsSync(path.join(libs, '.complete'))) return libs;
  requireTool('mvn', 'the Kafka jars are fetched from Maven on first use');
  try {
    await execFileAsync('bash', [path.join(REPO, 'scripts/fetch-kafka.sh')], {
      env: { ...process.env, KAFKA_VERSION },
      maxBuffer: 16 << 20,
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kafka: scripts/fetch-kafka.sh failed: ${e.stderr || e.message}`);
  }
  return libs;
}

/** A random cluster id in Kafka's format (16 random bytes, URL-safe base64 without padding). */
function newClusterId(): string {
  return crypto.randomBytes(16).toString('base64url');
}

function serverProperties(dir: string, brokerPort: number, controllerPort: number): string {
  return `# Written by test/env/kafka.ts: one node that is both broker and (sole) controller.
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://127.0.0.1:${brokerPort},CONTROLLER://127.0.0.1:${controllerPort}
advertised.listeners=PLAINTEXT://127.0.0.1:${brokerPort}
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
# A static voter set keeps the controller address out of the formatted storage.
controller.quorum.voters=1@127.0.0.1:${controllerPort}
log.dirs=${path.join(dir, 'data')}
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
`;
}

/** Kafka's own logs go to stdout, i.e. into the supervisor's log file next to JVM messages. */
const LOG4J2 = `status = warn
# Log4j's own shutdown hook would stop logging before Kafka finishes shutting down.
shutdownHook = disable
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
# Config dumps (~450 lines per start) drown the lines that explain a failure.
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
`;

function writeConfig(dir: string, brokerPort: number, controllerPort: number): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'server.properties'), serverProperties(dir, brokerPort, controllerPort));
  fs.writeFileSync(path.join(dir, 'log4j2.properties'), LOG4J2);
}

/** Formats the data directory for `clusterId` (storage must be formatted before a KRaft start). */
async function formatStorage(dir: string, libs: string, clusterId: string): Promise<void> {
  const cds = cdsArgs(libs, 'format', JVM_FLAGS);
  const args = [
    ...JVM_FLAGS,
    ...cds.args,
    `-Dlog4j2.configurationFile=${path.join(dir, 'log4j2.properties')}`,
  ];
  args.push(
    '-cp',
    classpath(libs),
    'kafka.tools.StorageTool',
    'format',
    // One token: a random base64url id may start with '-', which would read as an option.
    `--cluster-id=${clusterId}`,
    '-c',
    path.join(dir, 'server.properties'),
  );
  let ok = false;
  try {
    const out = await execFileAsync('java', args, { timeout: 60_000, maxBuffer: 16 << 20 });
    fs.appendFileSync(path.join(dir, 'format.log'), out.stdout + out.stderr);
    ok = true;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`kafka: storage format failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  } finally {
    settleDump(cds.dump, ok);
  }
}

function brokerArgs(dir: string, libs: string): string[] {
  const flags = [...HEAP, ...JVM_FLAGS];
  const cds = cdsArgs(libs, 'broker', flags);
  const log4j = `-Dlog4j2.configurationFile=${path.join(dir, 'log4j2.properties')}`;
  return [
    ...flags,
    ...cds.args,
    log4j,
    '-cp',
    classpath(libs),
    'kafka.Kafka',
    path.join(dir, 'server.properties'),
  ];
}

/** True once the broker at `bootstrap` answers describeCluster with our cluster id. */
async function answersAs(bootstrap: string, clusterId: string): Promise<boolean> {
  registerKafkaCodecs();
  const kafka = new Kafka({
    clientId: 'testbed-probe',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  // kafkajs refuses an idempotent producer without retries; one quick retry keeps the probe short.
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 1, initialRetryTime: 100 },
  });
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    if (cluster.clusterId !== clusterId)
      throw new Error(`a broker with cluster id ${cluster.clusterId} answers`);
    // The first consumer group creates __consumer_offsets and the first idempotent producer
    // waits for a producer-id block; both answer "coordinator loading" for a while. Doing them
    // here keeps those retries (and kafkajs' ERROR lines about them) out of the first test.
    await admin.fetchOffsets({ groupId: 'testbed-warmup', topics: [] });
    await producer.connect();
    return true;
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}

/** Starts the JVM on the already formatted `dir` and waits until the broker serves clients. */
async function launch(
  dir: string,
  ownerPid: number,
  bootstrap: string,
  clusterId: string,
): Promise<KafkaBed> {
  const libs = await ensureJars();
  const logFile = path.join(dir, 'kafka.log');
  const proc = startProcess(
    { name: 'kafka', command: 'java', args: brokerArgs(dir, libs), env: {}, logFile },
    ownerPid,
  );
  try {
    await waitUntil(`kafka ${KAFKA_VERSION} at ${bootstrap}`, () => answersAs(bootstrap, clusterId), {
      timeoutMs: START_TIMEOUT_MS,
      logFile,
      pid: proc.pid,
    });
  } catch (err) {
    await stopProcess(proc, 'SIGKILL', 5_000);
    throw err;
  }
  return { bootstrap, version: KAFKA_VERSION, clusterId, process: proc };
}

async function twoFreePorts(): Promise<[number, number]> {
  const broker = await freePort();
  let controller = await freePort();
  while (controller === broker) controller = await freePort();
  return [broker, controller];
}

/**
 * Starts a fresh single-node Kafka with its data, config and log under `dir`; it dies with
 * `ownerPid` (0: never). Retries with new ports when another process took one meanwhile.
 */
export async function startKafka(dir: string, ownerPid: number): Promise<KafkaBed> {
  const libs = await ensureJars();
  const clusterId = newClusterId();
  for (let attempt = 1; ; attempt++) {
    const [brokerPort, controllerPort] = await twoFreePorts();
    fs.rmSync(path.join(dir, 'data'), { recursive: true, force: true });
    writeConfig(dir, brokerPort, controllerPort);
    await formatStorage(dir, libs, clusterId);
    try {
      return await launch(dir, ownerPid, `127.0.0.1:${brokerPort}`, clusterId);
    } catch (err) {
      const bindFailure = /BindException|Address already in use/.test(
        tailLog(path.join(dir, 'kafka.log'), 200),
      );
      if (!bindFailure || attempt >= 3) throw err;
    }
  }
}

/** Stops the broker (SIGTERM: a clean shutdown, so a restart recovers nothing). */
export async function stopKafka(bed: KafkaBed): Promise<void> {
  await stopBrokerJvm(bed.process);
}

/** Owner recorded in the supervisor's command line (`supervise.js <owner> <log> -- ...`). */
function ownerOf(pid: number): number | undefined {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const i = argv.findIndex((a) => a.endsWith('supervise.js'));
    const owner = Number(argv[i + 1]);
    return i >= 0 && Number.isInteger(owner) ? owner : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stops and starts the broker on the same ports, data and cluster id; returns the bed with the
 * new process (persist it with writeTestBed). The new process keeps the original owner.
 */
export async function restartKafka(bed: KafkaBed): Promise<KafkaBed> {
  const dir = path.dirname(bed.process.logFile);
  const ownerPid = ownerOf(bed.process.pid) ?? process.pid;
  await stopKafka(bed);
  return launch(dir, ownerPid, bed.bootstrap, bed.clusterId);
}
