/**
 * Shared parts of the receiver benchmarks: a Kafka (the bench bed's when LP_TESTBED_FILE is set,
 * else a private one), the receiver entry point as its own process (its CPU is its own), metric
 * scrapes and the receiver's CPU from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { RECEIVER_ENTRY, type ListenerConfig } from '../common/src/ingest-config';
import { registerKafkaCodecs } from '../common/src/kafka/codecs';
import { startKafka, stopKafka } from '../test/env/kafka';
import { freePort } from '../test/env/process';
import { readTestBed } from '../test/env/testbed';
import { createTopicsWithLeaders } from '../test/env/kafka-topics';

/** A Kafka bootstrap and how to let it go. */
export async function benchKafka(dir: string): Promise<{ bootstrap: string; release(): Promise<void> }> {
  registerKafkaCodecs();
  if (process.env.LP_TESTBED_FILE)
    return { bootstrap: readTestBed().kafka!.bootstrap, release: async () => {} };
  const bed = await startKafka(path.join(dir, 'kafka'), process.pid);
  return { bootstrap: bed.bootstrap, release: () => stopKafka(bed) };
}

/** Creates `topic` with `partitions`. */
export async function createTopic(bootstrap: string, topic: string, partitions: number): Promise<void> {
  const admin = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await createTopicsWithLeaders(admin, [{ topic, numPartitions: partitions }]);
  await admin.disconnect();
}

/** A receiver process under benchmark. */
export interface BenchReceiver {
  child: ChildProcess;
  httpPort: number;
  logFile: string;
  metrics(): Promise<string>;
  /** utime + stime so far, seconds (/proc/<pid>/stat; USER_HZ 100). */
  cpuSeconds(): number;
  /** stime alone (the kernel's share: socket reads and writes, page faults). */
  systemCpuSeconds(): number;
  stop(): Promise<void>;
}

/** Starts the receiver entry point on `listeners` for `topic`; NODE_ARGS passes V8 flags (e.g. --max-semi-space-size=64). */
export async function startBenchReceiver(
  dir: string,
  bootstrap: string,
  topic: string,
  listeners: ListenerConfig[],
  extra: Record<string, unknown> = {},
): Promise<BenchReceiver> {
  const httpPort = await freePort();
  const cfgFile = path.join(dir, `ingest-${httpPort}.json`);
  fs.writeFileSync(
    cfgFile,
    JSON.stringify({
      pipeline: { namespace: 'bench', name: 'fw', uid: 'u' },
      kafka: { brokers: [bootstrap], topic, groupId: 'unused', clientId: 'ingest-bench' },
      listeners: listeners.map((l) => ({ ...l, host: '127.0.0.1' })),
      httpPort,
      ...extra,
    }),
  );
  const logFile = path.join(dir, `receiver-${httpPort}.log`);
  const out = fs.openSync(logFile, 'a');
  const nodeArgs = process.env.NODE_ARGS ? process.env.NODE_ARGS.split(' ').filter(Boolean) : [];
  const child = spawn(
    process.execPath,
    [...nodeArgs, path.join(__dirname, '..', '..', RECEIVER_ENTRY), '--config', cfgFile],
    {
      stdio: ['ignore', out, out],
      env: { ...process.env, LP_EXIT_WITH_PARENT: String(process.pid) },
    },
  );
  fs.closeSync(out);
  const exited = new Promise((r) => child.once('exit', r));
  const get = (p: string) => fetch(`http://127.0.0.1:${httpPort}${p}`, { signal: AbortSignal.timeout(5000) });
  for (let i = 0; ; i++) {
    if (
      await get('/readyz').then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 600) throw new Error(`receiver not ready:\n${fs.readFileSync(logFile, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    httpPort,
    logFile,
    // One retry: a keep-alive connection the probe server just closed fails the first fetch.
    metrics: () =>
      get('/metrics')
        .catch(() => get('/metrics'))
        .then((r) => r.text()),
    cpuSeconds() {
      const f = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(f[11]) + Number(f[12])) / 100;
    },
    systemCpuSeconds() {
      const f = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(f[12]) / 100;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Sum of a metric's samples (optionally only lines containing `label`). */
export function metric(text: string, name: string, label?: string): number {
  return text
    .split('\n')
    .filter((l) => (l.startsWith(`${name} `) || l.startsWith(`${name}{`)) && (!label || l.includes(label)))
    .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Median of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
