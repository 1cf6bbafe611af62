/**
 * The Kafka client's floor: CPU per line of consuming the end-to-end benchmark's topic with the
 * worker's kafkajs consumer and nothing else (no parse, encode or insert), so fetch settings and
 * the record decoder can be compared A/B without the rest of the pipeline's noise.
 * `node dist/bench/e2e-kafka.js [--lines 30000] [--per-message 1] [--runs 3] [--variants a,b]`
 * Each variant is a named set of consumer options (VARIANTS below), with `+fastDecode` appended
 * to use the worker's record decoder (common/src/kafka/record-decoder.ts) instead of kafkajs's, and
 * `+napiLz4` to read LZ4 batches as the worker did before (lz4-napi's frame reader, large batches on
 * the threadpool), `+napiSyncLz4` with the same reader on the event loop, `+kafkajsTimer` to keep
 * kafkajs's perpetual 1 ms request-queue timer (common/src/kafka/request-queue-timer.ts), `+fastBatch`
 * to build fetched batches with common/src/kafka/fetch-batch.ts instead of kafkajs's Batch,
 * `+kafkajsAssembly` to put responses together with kafkajs's own concat
 * (common/src/kafka/response-assembly.ts), e.g.
 * `--variants worker+fastDecode,worker+fastDecode+napiLz4`; variants run alternating in
 * one process, each with its own group, CPU (process.cpuUsage) counted from the group join to the
 * last message handed to eachBatch. Reuses a running bed (LP_TESTBED_FILE) or starts Kafka alone.
 */
import '../common/src/kafka/kafkajs-preload';
import { CompressionCodecs, CompressionTypes, Kafka, logLevel, type ConsumerConfig } from 'kafkajs';
import { decompressFrame, decompressFrameSync } from 'lz4-napi';
import { generateSampleLines } from '../test/fixtures/samples';
import type { TestBed } from '../test/env/testbed';
import * as s from '../test/worker-support';
import { registerKafkaCodecs } from '../common/src/kafka/codecs';
import { LZ4_ASYNC_THRESHOLD_BYTES, lz4Codec } from '../common/src/kafka/lz4-codec';
import { fixKafkaRequestQueueTimer } from '../common/src/kafka/request-queue-timer';
import { installFastRecordDecoder } from '../common/src/kafka/record-decoder';
import { installFastFetchBatch } from '../common/src/kafka/fetch-batch';
import { assembleKafkaResponses } from '../common/src/kafka/response-assembly';
import { median } from './e2e';
import { benchMachine, runBenchMain, withKafkaBed } from './clickhouse-bench';

const MiB = 1024 * 1024;

/** A consumer configuration under test. */
interface Variant {
  consumer: Omit<ConsumerConfig, 'groupId'>;
  partitionsConsumedConcurrently: number;
}

/** The worker's defaults and the alternatives measured against them. */
const VARIANTS: Record<string, Variant> = {
  worker: {
    consumer: { maxBytesPerPartition: 16 * MiB, maxBytes: 64 * MiB, minBytes: MiB, maxWaitTimeInMs: 500 },
    partitionsConsumedConcurrently: 4,
  },
  kafkajsDefaults: { consumer: {}, partitionsConsumedConcurrently: 1 },
  small: {
    consumer: { maxBytesPerPartition: MiB, maxBytes: 10 * MiB, minBytes: 1, maxWaitTimeInMs: 500 },
    partitionsConsumedConcurrently: 4,
  },
  huge: {
    consumer: { maxBytesPerPartition: 64 * MiB, maxBytes: 128 * MiB, minBytes: MiB, maxWaitTimeInMs: 500 },
    partitionsConsumedConcurrently: 4,
  },
  serial: {
    consumer: { maxBytesPerPartition: 16 * MiB, maxBytes: 64 * MiB, minBytes: MiB, maxWaitTimeInMs: 500 },
    partitionsConsumedConcurrently: 1,
  },
};

/** The worker's LZ4 reading before lz4-frame.ts: lz4-napi's frame reader, large batches on the threadpool. */
const napiLz4 = {
  ...lz4Codec,
  decompress: (b: Buffer) =>
    b.length >= LZ4_ASYNC_THRESHOLD_BYTES / 4 ? decompressFrame(b) : Promise.resolve(decompressFrameSync(b)),
};

/** lz4-napi's frame reader on the event loop for every batch size. */
const napiSyncLz4 = { ...lz4Codec, decompress: (b: Buffer) => Promise.resolve(decompressFrameSync(b)) };

interface Options {
  lines: number;
  perMessage: number;
  runs: number;
  variants: string;
  partitions: number;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { lines: 30_000, perMessage: 1, runs: 3, variants: 'worker,small', partitions: 3 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (!(key in o)) throw new Error(`unknown option ${argv[i]}`);
    (o as unknown as Record<string, unknown>)[key] = key === 'variants' ? argv[i + 1] : Number(argv[i + 1]);
  }
  return o;
}

/** One consumption of the whole topic; CPU seconds from the join to the last message. */
async function consumeOnce(bed: TestBed, topic: string, expected: number, name: string, run: number) {
  const v = VARIANTS[name];
  if (!v) throw new Error(`unknown variant ${name} (${Object.keys(VARIANTS).join(', ')})`);
  const kafka = new Kafka({ clientId: 'bench', brokers: [bed.kafka!.bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `floor-${name}-${run}-${Date.now()}`, ...v.consumer });
  let cpuAtJoin: NodeJS.CpuUsage | undefined;
  consumer.on(consumer.events.GROUP_JOIN, () => (cpuAtJoin ??= process.cpuUsage()));
  let seen = 0;
  let bytes = 0;
  let done!: (cpu: NodeJS.CpuUsage) => void;
  const finished = new Promise<NodeJS.CpuUsage>((r) => (done = r));
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: v.partitionsConsumedConcurrently,
    eachBatch: async ({ batch }) => {
      const messages = batch.messages;
      for (let i = 0; i < messages.length; i++) bytes += messages[i].value?.length ?? 0;
      seen += messages.length;
      if (seen >= expected) done(process.cpuUsage(cpuAtJoin));
    },
  });
  const cpu = await finished;
  await consumer.disconnect();
  return { cpuSeconds: (cpu.user + cpu.system) / 1e6, messages: seen, bytes };
}

async function bench(bed: TestBed, o: Options) {
  const p = s.newPipeline('floor', o.partitions);
  await s.createPipeline(bed, p);
  try {
    const lines = generateSampleLines('fortigate', o.lines, { seed: 6 });
    const producer = await s.testProducer(bed);
    await s.produceLines(producer, p.topic, o.partitions, lines, o.perMessage);
    await producer.disconnect();
    const expected = Math.ceil(o.lines / o.perMessage);
    const names = o.variants.split(',');
    const runs = new Map<string, number[]>(names.map((n) => [n, []]));
    for (let i = 0; i < o.runs; i++) {
      for (const name of i % 2 === 0 ? names : [...names].reverse()) {
        const [base, ...hooks] = name.split('+');
        installFastRecordDecoder(hooks.includes('fastDecode'));
        fixKafkaRequestQueueTimer(!hooks.includes('kafkajsTimer'));
        installFastFetchBatch(hooks.includes('fastBatch'));
        assembleKafkaResponses(!hooks.includes('kafkajsAssembly'));
        const lz4 = hooks.includes('napiLz4')
          ? napiLz4
          : hooks.includes('napiSyncLz4')
            ? napiSyncLz4
            : lz4Codec;
        CompressionCodecs[CompressionTypes.LZ4] = () => lz4;
        const r = await consumeOnce(bed, p.topic, expected, base, i);
        runs.get(name)!.push(o.lines / r.cpuSeconds);
      }
    }
    const out: Record<string, unknown> = {};
    for (const [n, r] of runs) out[n] = { linesPerCpuSecond: Math.round(median(r)), runs: r.map(Math.round) };
    return out;
  } finally {
    await s.dropPipeline(bed, p);
  }
}

if (require.main === module) {
  runBenchMain(async (argv) => {
    const o = parseOptions(argv);
    registerKafkaCodecs();
    return withKafkaBed('lp-bench-kafka-', async (bed) => {
      const results = await bench(bed, o);
      return { benchmark: 'e2e-kafka-floor', options: o, machine: benchMachine(), results };
    });
  });
}
